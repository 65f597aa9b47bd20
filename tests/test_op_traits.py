"""The traits and the matrix-product interface on `ascend.graph` ops: a few named ops per trait,
with the answer the op's meaning gives, and matrix products worked out by hand."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import StringAttr, TensorType, f32
from xdsl.parser import Parser

import ge
from ge.context import make_context
from ge.dialects import graph
from ge.dialects.graph import MatrixProduct, ProductOperands, matrix_product, matrix_products
from ge.dialects.kernel import CubeKernelOp
from ge.passes.conversion.lower_graph_to_kernel import unit_of
from ge.passes.kernel.tile_kernels import TileKernelsPass

HAS = [
    (graph.Elementwise, [graph.AddOp, graph.ReluOp, graph.CastOp, graph.BatchNormOp, graph.WhereOp]),
    (graph.PerChannel, [graph.MulOp, graph.MaxPoolOp, graph.GlobalAvgPoolOp, graph.LRNOp, graph.CastOp]),
    (graph.Reduction, [graph.ReduceSumOp, graph.SoftmaxOp, graph.LayerNormOp, graph.GlobalMaxPoolOp]),
    (
        graph.Transcendental,
        [graph.ExpOp, graph.DivOp, graph.TanhOp, graph.SqrtOp, graph.LpPoolOp, graph.GlobalLpPoolOp],
    ),
    (graph.ValueShaped, [graph.NonZeroOp, graph.UniqueOp]),
    (graph.Broadcasts, [graph.AddOp, graph.WhereOp, graph.ReluOp, graph.CastOp]),
    (graph.ChannelOperands, [graph.BatchNormOp]),
    (graph.ChannelWindow, [graph.LRNOp]),
    (graph.WithinPlane, [graph.MaxPoolOp, graph.AvgPoolOp, graph.GlobalAvgPoolOp, graph.GlobalLpPoolOp]),
    (graph.MovesData, [graph.TransposeOp, graph.ReshapeOp, graph.GatherOp, graph.CastOp]),
    (graph.CopiedByDataMovers, [graph.ReshapeOp, graph.SliceOp, graph.ConcatOp, graph.ShapeOp]),
    (graph.IsView, [graph.ReshapeOp, graph.FlattenOp]),
    (graph.Reorders, [graph.TransposeOp, graph.PadOp, graph.ScatterNDOp, graph.WhereOp]),
    (graph.Permutes, [graph.ReshapeOp, graph.FlattenOp, graph.TransposeOp]),
    (graph.Scales, [graph.MulOp, graph.DivOp]),
    (graph.Shifts, [graph.AddOp, graph.SubOp]),
    (graph.Involution, [graph.NegOp, graph.NotOp, graph.BitwiseNotOp]),
    (
        graph.NoOpWhenTypeKept,
        [graph.ReshapeOp, graph.FlattenOp, graph.TransposeOp, graph.ExpandOp, graph.CastOp],
    ),
    (graph.PerChannelWhen, [graph.ReduceMeanOp, graph.ReduceMaxOp, graph.ConcatOp, graph.GroupNormOp]),
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
    (graph.Transcendental, [graph.AddOp, graph.ReluOp, graph.MaxOp, graph.AvgPoolOp, graph.MaxPoolOp]),
    (graph.ValueShaped, [graph.GatherOp, graph.NonMaxSuppressionOp, graph.DetOp]),
    (graph.Broadcasts, [graph.BatchNormOp, graph.LayerNormOp, graph.MatMulOp]),
    # their parameters span the normalized axes, or are tensors broadcast with numpy's rules
    (graph.ChannelOperands, [graph.GroupNormOp, graph.LayerNormOp, graph.AddOp, graph.PReluOp]),
    (graph.WithinPlane, [graph.MaxPool3DOp, graph.LRNOp, graph.ReduceSumOp]),
    (graph.ChannelWindow, [graph.BatchNormOp, graph.MaxPoolOp, graph.ReduceSumOp, graph.GroupNormOp]),
    (graph.MovesData, [graph.AddOp, graph.ShapeOp, graph.SoftmaxOp]),
    (graph.CopiedByDataMovers, [graph.TransposeOp, graph.AddOp]),
    # pad adds elements, gather repeats or drops them, slice drops them, concat joins several
    (graph.Permutes, [graph.PadOp, graph.GatherOp, graph.SliceOp, graph.ConcatOp, graph.AddOp]),
    (graph.PerChannelWhen, [graph.AddOp, graph.SoftmaxOp, graph.TransposeOp, graph.SliceOp]),
    (graph.Scales, [graph.AddOp, graph.PowOp, graph.MatMulOp]),
    (graph.Shifts, [graph.MulOp, graph.MaxOp]),
    # abs and relu applied twice equal them applied once, not their operand
    (graph.Involution, [graph.AbsOp, graph.ReluOp, graph.SubOp]),
    # slice and pad may keep the type yet reverse or shift elements
    (graph.NoOpWhenTypeKept, [graph.SliceOp, graph.PadOp, graph.ReluOp, graph.GatherOp]),
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


def test_scales_and_shifts_say_which_operand_inverts():
    assert graph.MulOp.get_trait(graph.Scales) == graph.Scales(reciprocal=False)
    assert graph.DivOp.get_trait(graph.Scales) == graph.Scales(reciprocal=True)
    assert graph.AddOp.get_trait(graph.Shifts) == graph.Shifts(negated=False)
    assert graph.SubOp.get_trait(graph.Shifts) == graph.Shifts(negated=True)


def test_only_max_and_min_join_an_epilogue_with_a_constant_alone():
    # relu6 and clip are max / min with a constant; a bias or residual add takes any value.
    assert graph.MaxOp.get_trait(graph.Epilogue).constant_operand
    assert graph.MinOp.get_trait(graph.Epilogue).constant_operand
    assert not graph.AddOp.get_trait(graph.Epilogue).constant_operand


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
    image = ProductOperands.IMAGE
    assert matrix_product(conv) == MatrixProduct(m=128, n=6, k=36, batch=1, positions=9, operands=image)
    assert matrix_product(conv).flops == 2 * 128 * 6 * 36


def test_grouped_conv_is_one_product_per_group():
    g = ge.Graph()
    x = _value(g, (1, 8, 4, 4))
    w = _value(g, (8, 2, 1, 1))  # 4 groups of 2 input channels, 2 output channels each
    conv = graph.Conv2DOp.build_inferred([x, w], {"groups": graph.int_attr(4)})
    image = ProductOperands.IMAGE
    assert matrix_product(conv) == MatrixProduct(m=16, n=2, k=2, batch=4, positions=1, operands=image)


def test_batched_matmul_broadcasts_its_batch():
    g = ge.Graph()
    a, b = _value(g, (3, 1, 5, 7)), _value(g, (4, 7, 2))
    matmul = graph.MatMulOp.build_inferred([a, b])
    product = matrix_product(matmul)
    assert product == MatrixProduct(m=5, n=2, k=7, batch=12, lhs=0, rhs=1, operands=ProductOperands.MATRICES)
    assert product.flops == 2 * 5 * 2 * 7 * 12


def test_gemm_reads_its_transposes():
    g = ge.Graph()
    a, b = _value(g, (7, 5)), _value(g, (3, 7))  # A^T is 5 x 7, B^T is 7 x 3
    gemm = graph.GemmOp.build_inferred([a, b], {"trans_a": True, "trans_b": True})
    assert matrix_product(gemm) == MatrixProduct(m=5, n=3, k=7, operands=ProductOperands.MATRICES)
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
    assert fused.products(types, extras) == (MatrixProduct(m=4, n=3, k=6, operands=ProductOperands.MATRICES),)


# --------------------------------------------------------------------------------------------
# How a product's operands hold its matrices, and the K the cube reads
# --------------------------------------------------------------------------------------------

OPERANDS = [
    (ProductOperands.IMAGE, [graph.Conv2DOp, graph.Conv3DOp]),
    (ProductOperands.MATRICES, [graph.MatMulOp, graph.GemmOp]),
    (
        ProductOperands.GATHERED,
        [graph.MatMulIntegerOp, graph.ConvTranspose2DOp, graph.AttentionOp, graph.LSTMOp],
    ),
]


@pytest.mark.parametrize(("operands", "ops"), OPERANDS, ids=[o.value for o, _ in OPERANDS])
def test_each_product_family_says_how_its_operands_hold_the_matrices(operands, ops):
    types = {
        graph.Conv2DOp: [(1, 3, 8, 8), (4, 3, 3, 3)],
        graph.Conv3DOp: [(1, 3, 4, 4, 4), (4, 3, 3, 3, 3)],
        graph.MatMulOp: [(4, 6), (6, 3)],
        graph.GemmOp: [(4, 6), (6, 3)],
        graph.MatMulIntegerOp: [(4, 6), (6, 3), (), ()],
        graph.ConvTranspose2DOp: [(1, 3, 8, 8), (3, 4, 3, 3)],
        graph.AttentionOp: [(1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)],
        graph.LSTMOp: [(5, 1, 6), (1, 12, 6), (1, 12, 3)],
    }
    for op in ops:
        interface = op.get_trait(graph.MatrixProductInterface)
        products = interface.products([TensorType(f32, shape) for shape in types[op]], {})
        assert {p.operands for p in products} == {operands}, op.__name__


def test_a_fused_op_holds_its_operands_as_its_base_op():
    fused = graph.FusedConv2DOp.get_trait(graph.MatrixProductInterface)
    types = [TensorType(f32, [1, 3, 8, 8]), TensorType(f32, [4, 3, 3, 3])]
    assert fused.products(types, {})[0].operands is ProductOperands.IMAGE


def test_device_k_pads_each_kernel_positions_channels_for_an_image_only():
    # 3 channels at 9 positions: one C0 block of 16 (fp16, fp32) or 32 (int8) at each position.
    conv = MatrixProduct(m=64, n=16, k=27, positions=9, operands=ProductOperands.IMAGE)
    assert conv.device_k(16) == 144
    assert conv.device_k(32) == 288
    # 32 channels are two whole blocks of 16: nothing to pad.
    assert MatrixProduct(m=1, n=1, k=288, positions=9, operands=ProductOperands.IMAGE).device_k(16) == 288
    # A plain matrix product is laid out as fractal tiles by the kernel's load: K as it is.
    assert MatrixProduct(m=4, n=4, k=27, operands=ProductOperands.MATRICES).device_k(16) == 27


# --------------------------------------------------------------------------------------------
# Ops that work per channel for some instances only
# --------------------------------------------------------------------------------------------


def _reduce_mean(shape, axes, keepdims=True):
    g = ge.Graph()
    props = {"axes": graph.ints_attr(axes), "keepdims": keepdims}
    return graph.ReduceMeanOp.build_inferred([_value(g, shape)], props)


def test_a_reduction_over_the_plane_alone_works_per_channel():
    holds = graph.ReduceMeanOp.get_trait(graph.PerChannelWhen).holds
    assert holds(_reduce_mean((1, 16, 7, 7), [2, 3]), 16)
    assert holds(_reduce_mean((1, 16, 7, 7), [3]), 16)
    assert not holds(_reduce_mean((1, 16, 7, 7), [1]), 16)  # over the channels
    assert not holds(_reduce_mean((1, 16, 7, 7), [2, 3], keepdims=False), 16)  # 2-D result
    assert not holds(_reduce_mean((16, 7, 7), [1, 2]), 16)  # not 4-D


def test_a_concat_of_whole_channel_blocks_works_per_channel():
    holds = graph.ConcatOp.get_trait(graph.PerChannelWhen).holds

    def concat(channels, axis=1):
        g = ge.Graph()
        values = [_value(g, (1, c, 4, 4)) for c in channels]
        return graph.ConcatOp.build_inferred(values, {"axis": graph.int_attr(axis)})

    assert holds(concat([16, 32]), 16)
    assert not holds(concat([16, 32]), 32)  # 16 channels are half an int8 block
    assert not holds(concat([3, 16]), 16)
    assert not holds(concat([16, 16], axis=2), 16)


def test_a_group_norm_of_4d_data_works_per_channel():
    holds = graph.GroupNormOp.get_trait(graph.PerChannelWhen).holds

    def group_norm(shape, groups):
        g = ge.Graph()
        vector = _value(g, (shape[1],))
        props = {"num_groups": graph.int_attr(groups)}
        return graph.GroupNormOp.build_inferred([_value(g, shape), vector, vector], props)

    assert holds(group_norm((2, 20, 5, 5), 20), 16)  # instance normalization
    assert holds(group_norm((2, 20, 5, 5), 10), 16)  # groups of two channels
    assert holds(group_norm((2, 20, 5, 5), 1), 16)
    assert not holds(group_norm((2, 20, 5), 20), 16)  # not 4-D
    assert not holds(group_norm((2, 20, 5, 5, 5), 20), 16)


# --------------------------------------------------------------------------------------------
# Tiling reads K as the cube does
# --------------------------------------------------------------------------------------------

TARGET = (
    '#ascend.target<"Ascend910B2", {cube_cores = 24 : i64, vector_cores = 48 : i64, l0a_bytes = 65536 : i64,'
    " l0b_bytes = 65536 : i64, l0c_bytes = 131072 : i64, ub_bytes = 196608 : i64}>"
)


def _tiled_conv(element: str, kernel: int) -> str:
    """The cube tiling of a conv of a 1x3x8x8 image (3 channels) by 16 filters, `kernel` square."""
    x, w = f"tensor<1x3x8x8x{element}>", f"tensor<16x3x{kernel}x{kernel}x{element}>"
    pad = (kernel - 1) // 2
    pads = f"array<i64: {pad}, {pad}, {pad}, {pad}>"
    y = f"tensor<1x16x8x8x{element}>"
    text = f"""
    builtin.module attributes {{ascend.target = {TARGET}}} {{
      func.func @main(%x: {x}, %w: {w}) -> {y} {{
        %c = ascend.kernel.cube(%x, %w) : ({x}, {w}) -> {y} {{
        ^bb0(%a: {x}, %b: {w}):
          %0 = ascend.graph.conv2d %a, %b {{pads = {pads}}} : ({x}, {w}) -> {y}
          ascend.kernel.yield %0 : {y}
        }}
        func.return %c : {y}
      }}
    }}"""
    module = Parser(make_context(), text).parse_module()
    TileKernelsPass().apply(make_context(), module)
    kernel = next(op for op in module.walk() if isinstance(op, CubeKernelOp))
    return str(kernel.tiling)


def test_tiling_pads_a_convolutions_channels_to_the_block_of_its_type():
    # fp16, 3x3: M = 64 pixels, N = 16 filters, K = 3 channels padded to C0 = 16, at 9 positions:
    # 144 (not 27 rounded to 32). Two 64 x 144 fp16 tiles fill 36 KiB of L0A: all fit at once.
    assert _tiled_conv("f16", 3) == "#ascend.cube_tiling<m = 64, n = 16, k = 144, db = 2, tiles = 1>"
    # int8, 1x1: C0 = 32, so K = 32 (not 3 rounded to 16).
    assert _tiled_conv("i8", 1) == "#ascend.cube_tiling<m = 64, n = 16, k = 32, db = 2, tiles = 1>"
