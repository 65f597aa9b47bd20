"""The work of each graph op: `op_work` and `op_flops`, and the matrix products of cube ops.

- matrix products (cube): matmul / matmul_integer (batched), gemm, einsum of two operands that
  contracts an index, conv as an implicit GEMM (M = N * out pixels, K = Cin/groups per kernel
  position, N = Cout/groups, `groups` products), conv_transpose as a GEMM then a col2im
  scatter-add (M = N * in pixels, K = Cin/groups, N = Cout/groups * kernel positions), attention
  as its two matmuls, recurrent layers as their input and recurrence matmuls. A fused op is its
  base product plus its epilogue.
- bias, alpha and residual adds of cube ops are vector sweeps over the result; every other op is
  vector work (`ge.cost.vector`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Operation
from xdsl.traits import IsTerminator

from ge.dialects import graph
from ge.dialects.graph.products import einsum_sizes, parse_einsum

from .vector import vector_sweeps
from .work import MatrixProduct, OpView, OpWork, Sweep, element_bytes, elements, result_sweep, widest


def op_flops(op: Operation) -> int:
    """Useful FLOPs of one graph op from its operand and result shapes: 2 per multiply-add of its
    matrix products, plus one per element of every arithmetic vector sweep (see the module
    docstring); 0 for ops that only move data."""
    return op_work(op).flops


def op_work(op: Operation) -> OpWork:
    """The matrix products and vector sweeps of `op` (a fused op: its base op and its epilogue)."""
    if isinstance(op, graph.FusedOp):
        base = OpView.of_fused(op)
        work = _work(base)
        epilogue = [op_work(inner) for inner in op.epilogue.block.ops if not isinstance(inner, graph.YieldOp)]
        return OpWork(
            products=work.products + tuple(p for w in epilogue for p in w.products),
            sweeps=work.sweeps + tuple(s for w in epilogue for s in w.sweeps),
            matrix_operands=work.matrix_operands,
            groups=work.groups,
            accumulator=work.accumulator,
        )
    if isinstance(op, graph.ConstOp) or op.has_trait(IsTerminator) or not op.name.startswith("ascend.graph."):
        return OpWork()
    return _work(OpView.of(op))


def _work(view: OpView) -> OpWork:
    interface = view.cls.get_trait(graph.MatrixProductInterface)
    if interface is None:
        return OpWork(sweeps=vector_sweeps(view))
    products = interface.products(view.operands, view.props)
    element = view.operands[0].element_type
    priced = tuple(_priced(p, element) for p in products)
    family = next(_CUBE_FAMILIES[cls] for cls in view.cls.__mro__ if cls in _CUBE_FAMILIES)
    return family(view, priced)


def _priced(product: graph.MatrixProduct, element: Attribute) -> MatrixProduct:
    """The cost model's record of one of the op's matrix products (`graph.matrix_products`)."""
    k_channels = product.k // product.positions
    return MatrixProduct(
        product.batch,
        product.m,
        k_channels,
        product.positions,
        product.n,
        product.macs,
        element,
        product.steps,
    )


def _matmul(view: OpView, products: tuple[MatrixProduct, ...]) -> OpWork:
    sweeps: tuple[Sweep, ...] = ()
    if view.is_a(graph.MatMulIntegerOp):
        # Subtracting the zero points is a vector sweep over each matrix before the cube reads it.
        sweeps = tuple(Sweep(elements(view.operands[i]), 1, 1) for i in (0, 1))
    return OpWork(products, sweeps, view.values[:2], accumulator="FRACTAL_NZ")


def _gemm(view: OpView, products: tuple[MatrixProduct, ...]) -> OpWork:
    scale = view.float_prop("alpha", 1.0) != 1.0
    passes = int(scale) + int(len(view.operands) == 3)
    sweeps = (result_sweep(view, passes),) if passes else ()
    return OpWork(products, sweeps, view.values[:2], accumulator="FRACTAL_NZ")


def _einsum(view: OpView, products: tuple[MatrixProduct, ...]) -> OpWork:
    if products:
        return OpWork(products, (), view.values[:2], accumulator="FRACTAL_NZ")
    # Nothing to contract between two matrices: elementwise products and sums on the vector unit.
    equation = view.props["equation"]
    assert isinstance(equation, StringAttr)
    terms, _ = parse_einsum(equation.data, len(view.operands))
    sizes, ellipsis = einsum_sizes(terms, [t.get_shape() for t in view.operands])
    everything = math.prod(sizes.values()) * ellipsis
    return OpWork(sweeps=(Sweep(everything, widest(view), len(terms)),))


def _conv(view: OpView, products: tuple[MatrixProduct, ...]) -> OpWork:
    sweeps = (result_sweep(view, 1),) if len(view.operands) == 3 else ()
    return OpWork(products, sweeps, view.values[:2], view.int_prop("groups", 1), "NC1HWC0")


def _conv_transpose(view: OpView, products: tuple[MatrixProduct, ...]) -> OpWork:
    (product,) = products
    col2im = Sweep(product.m * product.n * product.batch, widest(view), 1)
    sweeps = (col2im, result_sweep(view, 1)) if len(view.operands) == 3 else (col2im,)
    return OpWork(products, sweeps, view.values[:2], view.int_prop("groups", 1), "NC1HWC0")


def _attention(view: OpView, products: tuple[MatrixProduct, ...]) -> OpWork:
    (batch, heads, q_seq, _), v = view.shape(0), view.shape(2)
    kv_seq = v[2]
    element = view.operands[0].element_type
    softmax_type = view.props.get("softmax_type")
    width = element_bytes(softmax_type if softmax_type is not None else element)
    scores = batch * heads * q_seq * kv_seq
    masked = len(view.operands) == 4 or view.flag("is_causal")
    capped = view.float_prop("softcap", 0.0) > 0
    # scale, then the mask, the soft cap (divide, tanh, multiply), and softmax.
    simple = 1 + int(bool(masked)) + 2 * int(capped) + 4
    sweep = Sweep(scores, width, simple, 1 + int(capped))
    return OpWork(products, (sweep,), view.values[:3], accumulator="FRACTAL_NZ")


def _recurrent(view: OpView, products: tuple[MatrixProduct, ...]) -> OpWork:
    (seq, batch, _), (directions, gate_rows, hidden) = view.shape(0), view.shape(2)
    element = view.operands[0].element_type
    width = element_bytes(element)
    # Per step: add the two products and the biases, apply each gate's activation, update the state.
    gates = Sweep(directions * seq * batch * gate_rows, width, 2, 1)
    state = Sweep(directions * seq * batch * hidden, width, 3)
    return OpWork(products, (gates, state), view.values[:3], accumulator="FRACTAL_NZ")


_CUBE_FAMILIES: dict[type[Operation], Callable[[OpView, tuple[MatrixProduct, ...]], OpWork]] = {
    graph.MatMulOp: _matmul,
    graph.MatMulIntegerOp: _matmul,
    graph.GemmOp: _gemm,
    graph.EinsumOp: _einsum,
    graph.ConvOp: _conv,
    graph.ConvTransposeOp: _conv_transpose,
    graph.AttentionOp: _attention,
    graph.RecurrentOp: _recurrent,
}
"""Per op family built on matrix products (`graph.matrix_products` gives those), the rest of its
work: bias and scale sweeps, the operands the cube reads, the layout it accumulates in."""
