"""Indexing: gathers and scatters, one_hot, trilu, reverse_sequence, non_zero and unique.

Indices are checked against their axis ([-size, size)) and made non-negative before numpy sees
them, so that an index out of range is an error rather than numpy's wrap-around or exception.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import describe, get_flag, get_int
from ge.errors import GeError

from .base import Compute, Implementation, Prepared

_REDUCE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


@Prepared
def _gather(op: ops.GatherOp) -> Compute:
    given = get_int(op, "axis", 0)

    def gather(data: np.ndarray, indices: np.ndarray) -> np.ndarray:
        axis = _normalized(given, data.ndim)
        return np.take(data, _checked(op, indices, data.shape[axis]), axis=axis)

    return gather


@Prepared
def _gather_elements(op: ops.GatherElementsOp) -> Compute:
    given = get_int(op, "axis", 0)

    def gather_elements(data: np.ndarray, indices: np.ndarray) -> np.ndarray:
        axis = _normalized(given, data.ndim)
        # Off the axis, indices may be shorter than data: only the leading part of data is read.
        window = tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(indices.shape))
        return np.take_along_axis(data[window], _checked(op, indices, data.shape[axis]), axis=axis)

    return gather_elements


@Prepared
def _gather_nd(op: ops.GatherNDOp) -> Compute:
    batch = get_int(op, "batch_dims", 0)

    def gather_nd(data: np.ndarray, indices: np.ndarray) -> np.ndarray:
        depth = indices.shape[-1]
        batches = math.prod(data.shape[:batch])
        flat_data = data.reshape((batches, *data.shape[batch:]))
        flat_indices = indices.reshape(batches, -1, depth)
        position = [np.arange(batches)[:, None]]
        for k in range(depth):
            position.append(_checked(op, flat_indices[..., k], data.shape[batch + k]))
        gathered = flat_data[tuple(position)]  # batches, points, *slice
        return gathered.reshape(indices.shape[:-1] + data.shape[batch + depth :])

    return gather_nd


@Prepared
def _scatter_elements(op: ops.ScatterElementsOp) -> Compute:
    given, reduction = get_int(op, "axis", 0), _reduction(op)

    def scatter_elements(data: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
        axis = _normalized(given, data.ndim)
        position: list[np.ndarray] = list(np.indices(indices.shape, sparse=True))
        position[axis] = _checked(op, indices, data.shape[axis])
        return _scatter(reduction, data, tuple(position), updates)

    return scatter_elements


@Prepared
def _scatter_nd(op: ops.ScatterNDOp) -> Compute:
    reduction = _reduction(op)

    def scatter_nd(data: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
        depth = indices.shape[-1]
        position = tuple(_checked(op, indices[..., k], data.shape[k]) for k in range(depth))
        return _scatter(reduction, data, position, updates)

    return scatter_nd


def _scatter(
    reduction: str, data: np.ndarray, position: tuple[np.ndarray, ...], updates: np.ndarray
) -> np.ndarray:
    """`data` with `updates` written (or combined by `reduction`) at `position`."""
    result = data.copy()
    if reduction == "none":
        result[position] = updates
    else:
        # `ufunc.at` applies duplicates one after another, as the reduction requires.
        _REDUCE[reduction].at(result, position, updates)
    return result


@Prepared
def _one_hot(op: ops.OneHotOp) -> Compute:
    depth, given = get_int(op, "depth"), get_int(op, "axis", -1)

    def one_hot(indices: np.ndarray, values: np.ndarray) -> np.ndarray:
        axis = _normalized(given, indices.ndim + 1)
        # Float indices are truncated, as ONNX casts them to int64.
        index = indices.astype(np.int64)
        index = np.where(index < 0, index + depth, index)
        positions = np.arange(depth).reshape((depth,) + (1,) * (indices.ndim - axis))
        hits = np.expand_dims(index, axis) == positions
        return np.where(hits, values[1], values[0])

    return one_hot


@Prepared
def _trilu(op: ops.TriluOp) -> Compute:
    return partial(np.triu if get_flag(op, "upper") else np.tril, k=get_int(op, "k", 0))


@Prepared
def _reverse_sequence(op: ops.ReverseSequenceOp) -> Compute:
    batch_given, time_given = get_int(op, "batch_axis", 1), get_int(op, "time_axis", 0)

    def reverse_sequence(x: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        batch_axis, time_axis = _normalized(batch_given, x.ndim), _normalized(time_given, x.ndim)
        steps = x.shape[time_axis]
        lengths = lengths.astype(np.int64)
        if lengths.size and (lengths.min() < 0 or lengths.max() > steps):
            raise GeError(
                f"{describe(op)}: sequence lengths must lie in [0, {steps}], got {lengths.tolist()}"
            )
        time = np.arange(steps)
        source = np.where(time < lengths[:, None], lengths[:, None] - 1 - time, time)  # batch, time
        if batch_axis > time_axis:
            source = source.T
        shape = [1] * x.ndim
        shape[batch_axis], shape[time_axis] = x.shape[batch_axis], steps
        source = np.broadcast_to(source.reshape(shape), x.shape)
        return np.take_along_axis(x, source, axis=time_axis)

    return reverse_sequence


@Prepared
def _non_zero(op: ops.NonZeroOp) -> Compute:
    count = get_int(op, "count")

    def non_zero(x: np.ndarray) -> np.ndarray:
        found = np.array(np.nonzero(x), dtype=np.int64) if x.ndim else np.zeros((0, int(x != 0)), np.int64)
        _check_count(op, found.shape[1], count)
        return found

    return non_zero


@Prepared
def _unique(op: ops.UniqueOp) -> Compute:
    given = None if op.axis is None else get_int(op, "axis", 0)
    ordered, count = get_flag(op, "sorted"), get_int(op, "count")

    def unique(x: np.ndarray) -> tuple[np.ndarray, ...]:
        axis = None if given is None else _normalized(given, x.ndim)
        source = x.reshape(-1) if axis is None else x
        values, first, inverse, counts = np.unique(
            source, return_index=True, return_inverse=True, return_counts=True, axis=axis
        )
        inverse = inverse.reshape(-1)
        if not ordered:
            # Order of first occurrence: renumber the sorted entries by where each first appears.
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            values = np.take(values, order, axis=0 if axis is None else axis)
            first, counts, inverse = first[order], counts[order], rank[inverse]
        _check_count(op, first.size, count)
        return values, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)

    return unique


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _normalized(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _reduction(op: ops.ScatterOp) -> str:
    return op.reduction.data if op.reduction is not None else "none"


def _checked(op: ops.GraphOp, indices: np.ndarray, size: int) -> np.ndarray:
    """`indices` as non-negative int64, after checking that each lies in [-size, size)."""
    index = indices.astype(np.int64)
    if index.size and (index.min() < -size or index.max() >= size):
        bad = index[(index < -size) | (index >= size)][0]
        raise GeError(f"{describe(op)}: index {bad} is out of range for an axis of {size}")
    return np.where(index < 0, index + size, index)


def _check_count(op: ops.NonZeroOp | ops.UniqueOp, found: int, count: int) -> None:
    """That the input holds the `count` entries the graph was specialized on."""
    if found != count:
        raise GeError(
            f"{describe(op)}: the input holds {found} entries, but the graph was specialized on "
            f"{count}: specialize it again on this input"
        )


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.GatherOp: _gather,
    ops.GatherElementsOp: _gather_elements,
    ops.GatherNDOp: _gather_nd,
    ops.ScatterElementsOp: _scatter_elements,
    ops.ScatterNDOp: _scatter_nd,
    ops.OneHotOp: _one_hot,
    ops.TriluOp: _trilu,
    ops.ReverseSequenceOp: _reverse_sequence,
    ops.NonZeroOp: _non_zero,
    ops.UniqueOp: _unique,
}
