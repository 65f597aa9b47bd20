"""Vector-unit work of graph ops, as sweeps: one sweep is one vector instruction over every element
it covers, and counts one FLOP per element.

Elementwise ops sweep their result once; the ops in `TRANSCENDENTAL` run their sweep at the
profile's transcendental rate; reductions, scans, softmax and norms sweep their input (softmax:
max, subtract, exp, sum, divide); pooling sweeps every window element (output elements x window
size); data reordering (transpose, pad, gather, cast, ...) sweeps its result without arithmetic;
`MTE_ONLY` ops (reshape, slice, concat, ...) are strided copies the data movers do alone, at no
vector cost.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from ge.dialects import graph
from ge.dialects.graph.traits import MovesData

from .work import OpView, Sweep, element_bytes, elements, widest

TRANSCENDENTAL: tuple[type[Operation], ...] = (
    graph.ExpOp,
    graph.LogOp,
    graph.ErfOp,
    graph.TanhOp,
    graph.SigmoidOp,
    graph.GeluOp,
    graph.PowOp,
    graph.SqrtOp,
    graph.ReciprocalOp,
    graph.DivOp,
    graph.ModOp,
    graph.SinOp,
    graph.CosOp,
    graph.TanOp,
    graph.AsinOp,
    graph.AcosOp,
    graph.AtanOp,
    graph.SinhOp,
    graph.CoshOp,
    graph.AsinhOp,
    graph.AcoshOp,
    graph.AtanhOp,
    graph.SoftplusOp,
    graph.SoftsignOp,
    graph.MishOp,
    graph.SwishOp,
    graph.EluOp,
    graph.SeluOp,
    graph.CeluOp,
)
"""Elementwise ops whose vector sweep runs at `vector_transcendental_rate`: exponentials,
logarithms, roots, divisions and the functions built on them. Softmax, log_softmax,
reduce_log_sum_exp, lp pools, LRN, attention and recurrent gates have one such sweep among
their simple ones."""

MTE_ONLY: tuple[type[Operation], ...] = (
    graph.ReshapeOp,
    graph.FlattenOp,
    graph.ConcatOp,
    graph.SplitOp,
    graph.SliceOp,
    graph.ExpandOp,
    graph.TileOp,
    graph.ShapeOp,
)
"""Ops the data movers carry out alone (strided or repeated block copies): no vector time."""

# (simple sweeps, transcendental sweeps) of the ops that sweep their input.
_INPUT_SWEEPS: tuple[tuple[type[Operation], float, float], ...] = (
    (graph.SoftmaxOp, 4, 1),
    (graph.LogSoftmaxOp, 4, 1),
    (graph.HardmaxOp, 2, 0),
    (graph.ReduceLogSumExpOp, 3, 1),
    (graph.ReduceL1Op, 2, 0),
    (graph.ReduceL2Op, 2, 0),
    (graph.ReduceSumSquareOp, 2, 0),
    (graph.ReduceOp, 1, 0),
    (graph.ArgReduceOp, 1, 0),
    (graph.ScanOp, 1, 0),
    (graph.TopKOp, 1, 0),
    (graph.BatchNormOp, 2, 0),
    (graph.LayerNormOp, 5, 0),
    (graph.GroupNormOp, 5, 0),
    (graph.MeanVarianceNormOp, 4, 0),
    (graph.RMSNormOp, 3, 0),
    (graph.LpNormOp, 2, 0),
    (graph.LRNOp, 3, 1),
)

_REORDERING: tuple[type[Operation], ...] = (
    graph.TransposeOp,
    graph.PadOp,
    graph.GatherOp,
    graph.GatherElementsOp,
    graph.GatherNDOp,
    graph.ScatterOp,
    graph.OneHotOp,
    graph.TriluOp,
    graph.ReverseSequenceOp,
    graph.WhereOp,
)


def vector_sweeps(view: OpView) -> tuple[Sweep, ...]:
    """The vector sweeps of an op that is not a matrix product."""
    if view.is_a(*MTE_ONLY) or not view.results:
        return ()
    for cls, simple, transcendental in _INPUT_SWEEPS:
        if view.is_a(cls):
            return (
                Sweep(elements(view.operands[0]), widest(view, inputs_only=True), simple, transcendental),
            )
    if view.is_a(graph.PoolOp):
        window = math.prod(view.props["kernel_shape"].get_values())  # type: ignore[union-attr]
        return (_pool_sweep(view, elements(view.results[0]) * window),)
    if view.is_a(graph.GlobalPoolOp):
        return (_pool_sweep(view, elements(view.operands[0])),)
    if view.is_a(graph.ResizeOp):
        return (_resize_sweep(view),)
    if view.is_a(graph.CastOp):
        return (Sweep(elements(view.results[0]), widest(view), 1, arithmetic=False),)
    if view.is_a(*_REORDERING) or _moves_data(view.cls):
        return (Sweep(elements(view.results[0]), _result_bytes(view), 1, arithmetic=False),)
    if view.is_a(graph.NonZeroOp, graph.UniqueOp):
        return (Sweep(elements(view.operands[0]), widest(view, inputs_only=True), 1, arithmetic=False),)
    if view.is_a(*TRANSCENDENTAL):
        return (Sweep(elements(view.results[0]), widest(view), 0, 1),)
    return (Sweep(elements(view.results[0]), widest(view), 1),)


def _pool_sweep(view: OpView, count: int) -> Sweep:
    lp = view.is_a(graph.LpPoolOp, graph.LpPool3DOp, graph.GlobalLpPoolOp)
    return Sweep(count, widest(view, inputs_only=True), 1, float(lp))


def _resize_sweep(view: OpView) -> Sweep:
    mode = view.props.get("mode")
    mode = mode.data if isinstance(mode, StringAttr) else "nearest"
    out = view.results[0]
    if mode == "nearest":
        return Sweep(elements(out), _result_bytes(view), 1, arithmetic=False)
    resized = sum(a != b for a, b in zip(view.shape(0), out.get_shape(), strict=True))
    taps = (4 if mode == "cubic" else 2) ** resized
    # A multiply and an add per tap.
    return Sweep(elements(out), widest(view), 2 * taps)


def _moves_data(cls: type[Operation]) -> bool:
    return cls.has_trait(MovesData)


def _result_bytes(view: OpView) -> int:
    return max((element_bytes(t.element_type) for t in view.results), default=1)
