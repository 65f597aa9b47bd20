"""Vector-unit work of graph ops, as sweeps: one sweep is one vector instruction over every element
it covers, and counts one FLOP per element.

What each op asks is on the op (`ge.dialects.graph.traits`): elementwise ops sweep their result
once, `Transcendental` ones at the profile's transcendental rate; reductions, scans, softmax and
norms sweep their input as their `VectorSweeps` say (softmax: max, subtract, exp, sum, divide);
pooling sweeps every window element (output elements x window size); ops that `Reorders` or
`MovesData` (transpose, pad, gather, cast, ...) sweep their result without arithmetic; ops
`CopiedByDataMovers` (reshape, slice, concat, ...) are strided copies the data movers do alone,
at no vector cost.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import DenseArrayBase, StringAttr

from ge.dialects import graph

from .work import OpView, Sweep, element_bytes, elements, widest


def vector_sweeps(view: OpView) -> tuple[Sweep, ...]:
    """The vector sweeps of an op that is not a matrix product."""
    if view.cls.has_trait(graph.CopiedByDataMovers) or not view.results:
        return ()
    sweeps = view.cls.get_trait(graph.VectorSweeps)
    if sweeps is not None:
        return (
            Sweep(
                elements(view.operands[0]),
                widest(view, inputs_only=True),
                sweeps.simple,
                sweeps.transcendental,
            ),
        )
    if view.is_a(graph.PoolOp):
        kernel_shape = view.props["kernel_shape"]
        assert isinstance(kernel_shape, DenseArrayBase), "a pool's definition makes kernel_shape an array"
        window = math.prod(kernel_shape.get_values())
        return (_pool_sweep(view, elements(view.results[0]) * window),)
    if view.is_a(graph.GlobalPoolOp):
        return (_pool_sweep(view, elements(view.operands[0])),)
    if view.is_a(graph.ResizeOp):
        return (_resize_sweep(view),)
    if view.is_a(graph.CastOp):
        return (Sweep(elements(view.results[0]), widest(view), 1, arithmetic=False),)
    if view.cls.has_trait(graph.Reorders) or view.cls.has_trait(graph.MovesData):
        return (Sweep(elements(view.results[0]), _result_bytes(view), 1, arithmetic=False),)
    if view.cls.has_trait(graph.ValueShaped):
        return (Sweep(elements(view.operands[0]), widest(view, inputs_only=True), 1, arithmetic=False),)
    if view.cls.has_trait(graph.Transcendental):
        return (Sweep(elements(view.results[0]), widest(view), 0, 1),)
    return (Sweep(elements(view.results[0]), widest(view), 1),)


def _pool_sweep(view: OpView, count: int) -> Sweep:
    root = view.cls.has_trait(graph.Transcendental)  # Lp pools: a power per element, a root per window
    return Sweep(count, widest(view, inputs_only=True), 1, float(root))


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


def _result_bytes(view: OpView) -> int:
    return max((element_bytes(t.element_type) for t in view.results), default=1)
