"""The traits and the matrix-product interface on `ascend.graph` ops: a few named ops per trait,
with the answer the op's meaning gives, and matrix products worked out by hand."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import StringAttr, TensorType, f32

import ge
from ge.dialects import graph
from ge.dialects.graph import MatrixProduct, matrix_product, matrix_products
from ge.passes.conversion.lower_graph_to_kernel import unit_of

HAS = [
    (graph.Elementwise, [graph.AddOp, graph.ReluOp, graph.CastOp, graph.BatchNormOp, graph.WhereOp]),
    (graph.PerChannel, [graph.MulOp, graph.MaxPoolOp, graph.GlobalAvgPoolOp, graph.LRNOp, graph.CastOp]),
    (graph.Reduction, [graph.ReduceSumOp, graph.SoftmaxOp, graph.LayerNormOp, graph.GlobalMaxPoolOp]),
    (graph.Transcendental, [graph.ExpOp, graph.DivOp, graph.TanhOp, graph.SqrtOp]),
    (graph.MovesData, [graph.TransposeOp, graph.ReshapeOp, graph.GatherOp, graph.CastOp]),
    (graph.CopiedByDataMovers, [graph.ReshapeOp, graph.SliceOp, graph.ConcatOp, graph.ShapeOp]),
    (graph.IsView, [graph.ReshapeOp, graph.FlattenOp]),
    (graph.Reorders, [graph.TransposeOp, graph.PadOp, graph.ScatterNDOp, graph.WhereOp]),
    (graph.NeedsAiCpu, [graph.NonZeroOp, graph.NonMaxSuppressionOp]),
    (graph.Epilogue, [graph.ReluOp, graph.AddOp, graph.MaxOp, graph.GeluOp]),
    (graph.KeepsPrecision, [graph.SoftmaxOp, graph.ReduceSumOp, graph.ExpOp, graph.LayerNormOp]),
    (graph.PrefersLowPrecision, [graph.AddOp, graph.ReluOp, graph.MaxPoolOp]),
    (graph.ComputesNothing, [graph.ConstOp, graph.CastOp, graph.ShapeOp]),
    (graph.ExactInStoredType, [graph.MaxOp, graph.LessOp, graph.ReluOp, graph.ArgMaxOp, graph.MaxPoolOp]),
    (graph.FusionOnly, [graph.FusedConv2DOp, graph.FusedMatMulOp]),
    (
        graph.MatrixProductInterface,
        [graph.Conv2DOp, graph.ConvTranspose3DOp, graph.MatMulIntegerOp, graph.EinsumOp, graph.LSTMOp],
    ),
]

HAS_NOT = [
    (graph.Elementwise, [graph.SoftmaxOp, graph.MatMulOp, graph.TransposeOp]),
    (graph.PerChannel, [graph.SoftmaxOp, graph.TransposeOp, graph.Conv2DOp]),
    (graph.Reduction, [graph.AddOp, graph.CumSumOp, graph.MatMulOp]),
    (graph.Transcendental, [graph.AddOp, graph.ReluOp, graph.MaxOp]),
    (graph.MovesData, [graph.AddOp, graph.ShapeOp, graph.SoftmaxOp]),
    (graph.CopiedByDataMovers, [graph.TransposeOp, graph.AddOp]),
    (graph.NeedsAiCpu, [graph.AddOp, graph.GatherOp]),
    (graph.Epilogue, [graph.SubOp, graph.ExpOp, graph.SoftmaxOp]),
    (graph.KeepsPrecision, [graph.AddOp, graph.MatMulOp, graph.ReluOp]),
    (graph.PrefersLowPrecision, [graph.SoftmaxOp, graph.ExpOp]),
    (graph.ComputesNothing, [graph.AddOp, graph.ReshapeOp]),
    (graph.ExactInStoredType, [graph.AddOp, graph.ReduceSumOp, graph.AvgPoolOp, graph.UniqueOp]),
    (graph.FusionOnly, [graph.Conv2DOp, graph.AddOp]),
    (graph.MatrixProductInterface, [graph.AddOp, graph.BatchNormOp, graph.MaxPoolOp]),
]


@pytest.mark.parametrize(("trait", "ops"), HAS, ids=[t.__name__ for t, _ in HAS])
def test_trait_is_on_the_ops_it_describes(trait, ops):
    assert [op.__name__ for op in ops if not op.has_trait(trait)] == []


@pytest.mark.parametrize(("trait", "ops"), HAS_NOT, ids=[t.__name__ for t, _ in HAS_NOT])
def test_trait_is_not_on_other_ops(trait, ops):
    assert [op.__name__ for op in ops if op.has_trait(trait)] == []


def test_epilogue_kinds_and_vector_sweeps():
    assert graph.ReluOp.get_trait(graph.Epilogue).kind is graph.EpilogueKind.UNARY
    assert graph.AddOp.get_trait(graph.Epilogue).kind is graph.EpilogueKind.BINARY
    # softmax: max, subtract, sum and divide, plus one exp
    assert graph.SoftmaxOp.get_trait(graph.VectorSweeps) == graph.VectorSweeps(4, 1)
    # reduce_l1: abs, then sum
    assert graph.ReduceL1Op.get_trait(graph.VectorSweeps) == graph.VectorSweeps(2, 0)
    assert graph.ReduceSumOp.get_trait(graph.VectorSweeps) == graph.VectorSweeps(1, 0)


def _value(g: ge.Graph, shape):
    return g.add_input(f"x{len(g.inputs)}", shape=list(shape)).value


def test_conv2d_is_an_implicit_gemm():
    g = ge.Graph()
    x = g.add_input("x", shape=[2, 4, 8, 8])
    y = g.add_conv2d(x, out_channels=6, kernel_size=3, stride=1, padding=1)
    conv = y.value.owner
    assert isinstance(conv, graph.Conv2DOp)
    # M = 2 images x 8 x 8 output pixels; N = 6 output channels; K = 4 channels x 3 x 3 positions
    assert matrix_product(conv) == MatrixProduct(m=128, n=6, k=36, batch=1, positions=9)
    assert matrix_product(conv).flops == 2 * 128 * 6 * 36


def test_grouped_conv_is_one_product_per_group():
    g = ge.Graph()
    x = _value(g, (1, 8, 4, 4))
    w = _value(g, (8, 2, 1, 1))  # 4 groups of 2 input channels, 2 output channels each
    conv = graph.Conv2DOp.build_inferred([x, w], {"groups": graph.int_attr(4)})
    assert matrix_product(conv) == MatrixProduct(m=16, n=2, k=2, batch=4, positions=1)


def test_batched_matmul_broadcasts_its_batch():
    g = ge.Graph()
    a, b = _value(g, (3, 1, 5, 7)), _value(g, (4, 7, 2))
    matmul = graph.MatMulOp.build_inferred([a, b])
    product = matrix_product(matmul)
    assert product == MatrixProduct(m=5, n=2, k=7, batch=12, lhs=0, rhs=1)
    assert product.flops == 2 * 5 * 2 * 7 * 12


def test_gemm_reads_its_transposes():
    g = ge.Graph()
    a, b = _value(g, (7, 5)), _value(g, (3, 7))  # A^T is 5 x 7, B^T is 7 x 3
    gemm = graph.GemmOp.build_inferred([a, b], {"trans_a": True, "trans_b": True})
    assert matrix_product(gemm) == MatrixProduct(m=5, n=3, k=7)
    assert matrix_product(gemm).flops == 210


def test_einsum_batched_matrix_product():
    g = ge.Graph()
    a, b = _value(g, (2, 3, 4)), _value(g, (2, 4, 5))
    einsum = graph.EinsumOp.build_inferred([a, b], {"equation": StringAttr("bij,bjk->bik")})
    assert matrix_product(einsum) == MatrixProduct(m=3, n=5, k=4, batch=2)
    assert matrix_product(einsum).flops == 240
    assert unit_of(einsum) == "cube"


def test_einsum_without_a_contraction_is_no_product():
    g = ge.Graph()
    a, b = _value(g, (3, 4)), _value(g, (3, 4))
    einsum = graph.EinsumOp.build_inferred([a, b], {"equation": StringAttr("ij,ij->ij")})
    assert matrix_product(einsum) is None
    assert unit_of(einsum) == "vector"


def test_attention_is_two_products_and_a_fused_op_is_its_base():
    g = ge.Graph()
    q, k, v = _value(g, (2, 4, 16, 8)), _value(g, (2, 4, 32, 8)), _value(g, (2, 4, 32, 8))
    attention = graph.AttentionOp.build_inferred([q, k, v])
    assert matrix_products(attention) == (
        MatrixProduct(m=16, n=32, k=8, batch=8, lhs=0, rhs=1),
        MatrixProduct(m=16, n=8, k=32, batch=8, lhs=None, rhs=2),
    )
    fused = graph.FusedMatMulOp.get_trait(graph.MatrixProductInterface)
    types = [TensorType(f32, [4, 6]), TensorType(f32, [6, 3]), TensorType(f32, [4, 3])]
    extras = {"extras": graph.int_attr(1)}
    assert fused.products(types, extras) == (MatrixProduct(m=4, n=3, k=6),)
