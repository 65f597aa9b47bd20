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
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from ge.dialects import graph
from ge.dialects.graph.nn import parse_einsum

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
    if isinstance(op, graph.YieldOp | graph.ConstOp) or not op.name.startswith("ascend.graph."):
        return OpWork()
    return _work(OpView.of(op))


def _work(view: OpView) -> OpWork:
    for classes, family in _CUBE_FAMILIES:
        if view.is_a(*classes):
            return family(view)
    return OpWork(sweeps=vector_sweeps(view))


def _matmul(view: OpView) -> OpWork:
    a, b = view.shape(0), view.shape(1)
    a = (1, *a) if len(a) == 1 else a
    b = (*b, 1) if len(b) == 1 else b
    batch = math.prod(graph.broadcast_shapes(a[:-2], b[:-2]))
    m, k, n = a[-2], a[-1], b[-1]
    product = MatrixProduct(batch, m, k, 1, n, batch * m * k * n, view.operands[0].element_type)
    sweeps: tuple[Sweep, ...] = ()
    if view.is_a(graph.MatMulIntegerOp):
        # Subtracting the zero points is a vector sweep over each matrix before the cube reads it.
        sweeps = tuple(Sweep(elements(view.operands[i]), 1, 1) for i in (0, 1))
    return OpWork((product,), sweeps, view.values[:2], accumulator="FRACTAL_NZ")


def _gemm(view: OpView) -> OpWork:
    a, b = view.shape(0), view.shape(1)
    a = a[::-1] if view.flag("trans_a") else a
    b = b[::-1] if view.flag("trans_b") else b
    m, k, n = a[0], a[1], b[1]
    product = MatrixProduct(1, m, k, 1, n, m * k * n, view.operands[0].element_type)
    scale = view.float_prop("alpha", 1.0) != 1.0
    passes = int(scale) + int(len(view.operands) == 3)
    sweeps = (result_sweep(view, passes),) if passes else ()
    return OpWork((product,), sweeps, view.values[:2], accumulator="FRACTAL_NZ")


def _einsum(view: OpView) -> OpWork:
    equation = view.props["equation"]
    assert isinstance(equation, StringAttr)
    terms, output = parse_einsum(equation.data, len(view.operands))
    sizes, ellipsis = _einsum_sizes(terms, [t.get_shape() for t in view.operands])
    everything = math.prod(sizes.values()) * ellipsis
    letters = [set(t.replace("...", "")) for t in terms]
    out = set(output.replace("...", ""))
    if len(terms) != 2 or not (letters[0] & letters[1]) - out:
        # Nothing to contract between two matrices: elementwise products and sums on the vector unit.
        return OpWork(sweeps=(Sweep(everything, widest(view), len(terms)),))
    a, b = letters
    batch = math.prod(sizes[c] for c in a & b & out) * ellipsis
    k = math.prod(sizes[c] for c in (a & b) - out)
    m = math.prod(sizes[c] for c in a - b)
    n = math.prod(sizes[c] for c in b - a)
    product = MatrixProduct(batch, m, k, 1, n, everything, view.operands[0].element_type)
    return OpWork((product,), (), view.values[:2], accumulator="FRACTAL_NZ")


def _einsum_sizes(terms: Sequence[str], shapes: Sequence[tuple[int, ...]]) -> tuple[dict[str, int], int]:
    """Each letter's size, and the element count of the broadcast `...` dimensions."""
    sizes: dict[str, int] = {}
    ellipsis: tuple[int, ...] = ()
    for term, shape in zip(terms, shapes, strict=True):
        letters = term.replace("...", "")
        before = term.index("...") if "..." in term else len(term)
        spread = len(shape) - len(letters)
        dims = list(shape[:before]) + list(shape[before + spread :])
        ellipsis = graph.broadcast_shapes(ellipsis, shape[before : before + spread])
        for letter, dim in zip(letters, dims, strict=True):
            sizes[letter] = max(sizes.get(letter, 1), dim)
    return sizes, math.prod(ellipsis)


def _conv(view: OpView) -> OpWork:
    x, w, y = view.shape(0), view.shape(1), view.results[0].get_shape()
    groups = view.int_prop("groups", 1)
    cout, cin_group, window = w[0], w[1], math.prod(w[2:])
    pixels = x[0] * math.prod(y[2:])
    macs = pixels * cout * cin_group * window
    product = MatrixProduct(
        groups, pixels, cin_group, window, cout // groups, macs, view.operands[0].element_type
    )
    sweeps = (result_sweep(view, 1),) if len(view.operands) == 3 else ()
    return OpWork((product,), sweeps, view.values[:2], groups, "NC1HWC0")


def _conv_transpose(view: OpView) -> OpWork:
    x, w = view.shape(0), view.shape(1)
    groups = view.int_prop("groups", 1)
    cin, cout_group, window = w[0], w[1], math.prod(w[2:])
    pixels = x[0] * math.prod(x[2:])
    columns = cout_group * window
    macs = pixels * cin * columns
    product = MatrixProduct(groups, pixels, cin // groups, 1, columns, macs, view.operands[0].element_type)
    col2im = Sweep(pixels * columns * groups, widest(view), 1)
    sweeps = (col2im, result_sweep(view, 1)) if len(view.operands) == 3 else (col2im,)
    return OpWork((product,), sweeps, view.values[:2], groups, "NC1HWC0")


def _attention(view: OpView) -> OpWork:
    (batch, heads, q_seq, dim), v = view.shape(0), view.shape(2)
    kv_seq, v_dim = v[2], v[3]
    element = view.operands[0].element_type
    products = (
        MatrixProduct(batch * heads, q_seq, dim, 1, kv_seq, batch * heads * q_seq * dim * kv_seq, element),
        MatrixProduct(
            batch * heads, q_seq, kv_seq, 1, v_dim, batch * heads * q_seq * kv_seq * v_dim, element
        ),
    )
    softmax_type = view.props.get("softmax_type")
    width = element_bytes(softmax_type if softmax_type is not None else element)
    scores = batch * heads * q_seq * kv_seq
    masked = len(view.operands) == 4 or view.flag("is_causal")
    capped = view.float_prop("softcap", 0.0) > 0
    # scale, then the mask, the soft cap (divide, tanh, multiply), and softmax.
    simple = 1 + int(bool(masked)) + 2 * int(capped) + 4
    sweep = Sweep(scores, width, simple, 1 + int(capped))
    return OpWork(products, (sweep,), view.values[:3], accumulator="FRACTAL_NZ")


def _recurrent(view: OpView) -> OpWork:
    (seq, batch, size), (directions, gate_rows, hidden) = view.shape(0), view.shape(2)
    element = view.operands[0].element_type
    products = (
        MatrixProduct(
            directions, seq * batch, size, 1, gate_rows, directions * seq * batch * size * gate_rows, element
        ),
        MatrixProduct(
            directions,
            batch,
            hidden,
            1,
            gate_rows,
            directions * seq * batch * hidden * gate_rows,
            element,
            seq,
        ),
    )
    width = element_bytes(element)
    # Per step: add the two products and the biases, apply each gate's activation, update the state.
    gates = Sweep(directions * seq * batch * gate_rows, width, 2, 1)
    state = Sweep(directions * seq * batch * hidden, width, 3)
    return OpWork(products, (gates, state), view.values[:3], accumulator="FRACTAL_NZ")


_CUBE_FAMILIES: tuple[tuple[tuple[type[Operation], ...], Callable[[OpView], OpWork]], ...] = (
    ((graph.MatMulOp, graph.MatMulIntegerOp), _matmul),
    ((graph.GemmOp,), _gemm),
    ((graph.EinsumOp,), _einsum),
    ((graph.ConvOp,), _conv),
    ((graph.ConvTransposeOp,), _conv_transpose),
    ((graph.AttentionOp,), _attention),
    ((graph.RecurrentOp,), _recurrent),
)
"""The ops built on matrix products, and the function that gives each family's work."""
