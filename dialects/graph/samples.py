"""Which ops compute each sample of a batch from that sample alone, as a trait on the op.

A gear compiled for batch 8 can serve a run of batch 5 by padding the batch with zeros and
dropping the padded rows of every output, but only when no op mixes samples: a softmax over the
batch axis, a reduction over it or a reshape that regroups rows would let the padding leak into
the real rows. `sample_axes(op, axes)` answers for one op: given, for each operand, the axis
that indexes samples (None for an operand that is the same for every sample, such as a weight),
it gives that axis for each result, or None when the op may mix samples or ge does not know that
it does not. The answer comes from the op's `Samplewise` trait (its rule reads the op's own
properties) or, for an elementwise op, from numpy's broadcasting; every other op gives None, so
an op nobody described is never assumed safe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.traits import OpTrait

from ..common import get_flag, get_int, get_ints
from .traits import Elementwise

Axes = Sequence[int | None]
"""Per operand (or result): the axis that indexes samples, or None if the value does not vary
with the sample."""

Rule = Callable[[Operation, Axes], Sequence[int | None] | None]


@dataclass(frozen=True)
class Samplewise(OpTrait):
    """The op computes each sample from that sample alone, along the axes `rule(op, axes)` gives
    for its results (None when these operand axes would mix samples)."""

    rule: Rule


def sample_axes(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """The sample axis of each of `op`'s results given those of its operands, or None when the
    op may mix samples (or nothing describes it)."""
    if all(axis is None for axis in axes):
        return [None] * len(op.results)
    trait = op.get_trait(Samplewise)
    if trait is not None:
        return trait.rule(op, axes)
    if op.has_trait(Elementwise):
        return broadcast(op, axes)
    return None


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


def broadcast(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """Numpy broadcasting: operands align from the last axis; every operand that varies with the
    sample must have its sample axis at the same aligned position, and the others extent 1 there
    (or no axis at all), so they broadcast to every sample alike."""
    rank = max(_rank(v) for v in (*op.operands, *op.results))
    position: int | None = None
    for operand, axis in zip(op.operands, axes, strict=True):
        if axis is not None:
            aligned = axis + rank - _rank(operand)
            if position not in (None, aligned):
                return None
            position = aligned
    assert position is not None, "some operand varies with the sample"
    for operand, axis in zip(op.operands, axes, strict=True):
        offset = position - (rank - _rank(operand))
        if axis is None and offset >= 0 and _shape(operand)[offset] != 1:
            return None
    return [position + _rank(result) - rank for result in op.results]


def leading(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """Ops over NCHW-style data (convolution, pooling, per-sample normalization): samples along
    axis 0 of the first operand, every other operand (weights, bias, statistics) the same for
    all samples; each result keeps the sample axis first."""
    if axes[0] != 0 or any(axis is not None for axis in axes[1:]):
        return None
    return [0] * len(op.results)


def outside(property_name: str, default: int | None = None) -> Rule:
    """An op over the axes of property `property_name` of its one input (an int or an array; a
    missing int property means `default`): safe when the sample axis is not among them; when
    the reduced axes are dropped, the result's sample axis moves down by those before it."""

    def rule(op: Operation, axes: Axes) -> Sequence[int | None] | None:
        axis = axes[0]
        if axis is None or any(a is not None for a in axes[1:]):
            return None
        rank = _rank(op.operands[0])
        worked = _axes(op, property_name, default, rank)
        if worked is None or axis in worked:
            return None
        kept = _rank(op.results[0]) == rank  # keepdims, or an op that keeps the shape
        moved = axis if kept else axis - sum(a < axis for a in worked)
        return [moved] * len(op.results)

    return rule


def from_axis(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """An op over the axes from `axis` (default -1) to the last (layer, RMS and Lp norms): safe
    when the sample axis comes before them; results keep the input's rank."""
    axis = axes[0]
    if axis is None or any(a is not None for a in axes[1:]):
        return None
    rank = _rank(op.operands[0])
    start = get_int(op, "axis", -1)
    start = start + rank if start < 0 else start
    return [axis] * len(op.results) if axis < start else None


def permuted(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """Transpose: the sample axis goes where the permutation puts it."""
    if axes[0] is None:
        return None
    return [list(get_ints(op, "perm")).index(axes[0])]


def rows_kept(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """Reshape and flatten keep row-major order: with samples along axis 0 and the result's first
    extent equal to the input's, result row i holds exactly input row i."""
    if axes[0] != 0 or _shape(op.results[0])[:1] != _shape(op.operands[0])[:1]:
        return None
    return [0]


def joined(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """Concat: every input varies with the sample along the same axis, which is not the one
    joined along."""
    axis = axes[0]
    if axis is None or any(a != axis for a in axes):
        return None
    joined_axis = get_int(op, "axis", 0)
    rank = _rank(op.operands[0])
    return None if (joined_axis + rank if joined_axis < 0 else joined_axis) == axis else [axis]


def matrix_rows(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """A (batched) matrix product A @ B with numpy's matmul broadcasting: samples along A's rows
    or a batch axis of A, with B the same for every sample; or along the same batch axis of
    both. The contracted axis never holds samples."""
    a, b = axes[0], axes[1]
    rank_a, rank_b, rank = _rank(op.operands[0]), _rank(op.operands[1]), _rank(op.results[0])
    if a is None or rank_a < 2 or a == rank_a - 1 or any(x is not None for x in axes[2:]):
        return None
    position = a + rank - rank_a
    if b is None:
        offset = position - (rank - rank_b)
        if a < rank_a - 2 and offset >= 0 and _shape(op.operands[1])[offset] != 1:
            return None
        return [position]
    same = a < rank_a - 2 and b < rank_b - 2 and b + rank - rank_b == position
    return [position] if same else None


def gathered(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """Gather (an embedding lookup): samples along an axis of the indices, with the data (the
    table) the same for every sample, land at `axis` plus that axis; samples along an axis of
    the data other than the gathered one keep it (moved past the indices' axes when after it)."""
    data_axis, index_axis = axes[0], axes[1]
    rank = _rank(op.operands[0])
    gathered_axis = get_int(op, "axis", 0)
    gathered_axis = gathered_axis + rank if gathered_axis < 0 else gathered_axis
    if data_axis is None and index_axis is not None:
        return [gathered_axis + index_axis]
    if index_axis is not None or data_axis == gathered_axis:
        return None
    assert data_axis is not None
    moved = _rank(op.operands[1]) - 1 if data_axis > gathered_axis else 0
    return [data_axis + moved]


def gemm_rows(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """Gemm alpha * A' @ B' + beta * C: samples along the rows of an untransposed A, with B and C
    the same for every sample and C one row (or none) that broadcasts to all."""
    if axes[0] != 0 or any(x is not None for x in axes[1:]) or get_flag(op, "trans_a"):
        return None
    if len(op.operands) > 2 and _rank(op.operands[2]) == 2 and _shape(op.operands[2])[0] != 1:
        return None
    return [0]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _rank(value: SSAValue) -> int:
    return len(_shape(value))


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else ()


def _axes(op: Operation, name: str, default: int | None, rank: int) -> set[int] | None:
    attr = op.properties.get(name)
    if isinstance(attr, DenseArrayBase):
        values = [int(a) for a in attr.get_values()]
    elif isinstance(attr, IntegerAttr):
        values = [attr.value.data]
    elif default is not None:
        values = [default]
    else:
        return None
    return {a + rank if a < 0 else a for a in values}
