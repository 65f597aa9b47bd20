"""Reductions and the ops built on them: reductions over axes, arg-reductions, scans, top-k and
the softmax family.

Sums and products of integers stay in the integer dtype (wrapping as the hardware does);
reductions whose definition leaves the integers (L2, logs) compute in float64 and truncate
back. An empty set reduces to the operation's identity: 0, 1, -inf for log-sums, the dtype's
lowest value for max and its highest for min.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import get_flag, get_int, get_ints

from .base import Compute, Implementation, Prepared

# --------------------------------------------------------------------------------------------
# Reductions over a set of axes
# --------------------------------------------------------------------------------------------

Reducer = Callable[[np.ndarray, tuple[int, ...]], np.ndarray]
"""`f(x, axes) -> reduced`, with the reduced axes kept as size 1."""


def _reduction(reducer: Reducer) -> Prepared:
    def prepare(op: ops.ReduceOp) -> Compute:
        axes, keepdims = get_ints(op, "axes"), get_flag(op, "keepdims")

        def reduction(x: np.ndarray) -> np.ndarray:
            y = np.asarray(reducer(x, axes))
            if not keepdims:
                y = y.reshape([d for i, d in enumerate(x.shape) if i not in axes])
            return y.astype(x.dtype, copy=False)

        return reduction

    return Prepared(prepare)


def _sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.sum(x, axis=axes, keepdims=True, dtype=x.dtype)


def _mean(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    # The mean of an empty set is 0 (ONNX leaves it undefined; onnxruntime gives 0).
    count = max(int(np.prod([x.shape[a] for a in axes])), 1)
    if x.dtype.kind == "f":
        return _sum(x, axes) / x.dtype.type(count)
    # Integer division truncating toward zero, as C does.
    total = _sum(x, axes)
    quotient = np.abs(total) // count
    return np.where(total < 0, -quotient, quotient) if x.dtype.kind == "i" else quotient


def _max(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.max(x, axis=axes, keepdims=True, initial=_lowest(x.dtype))


def _min(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.min(x, axis=axes, keepdims=True, initial=_highest(x.dtype))


def _prod(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.prod(x, axis=axes, keepdims=True, dtype=x.dtype)


def _l1(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return _sum(np.abs(x), axes)


def _l2(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.sqrt(_sum(_as_float(x) ** 2, axes))


def _log_sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(_sum(_as_float(x), axes))


def _log_sum_exp(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    x = _as_float(x)
    peak = np.max(x, axis=axes, keepdims=True, initial=-np.inf)
    # An all -inf (or empty) set has no finite peak to take out.
    peak = np.where(np.isfinite(peak), peak, 0)
    with np.errstate(divide="ignore"):
        return np.log(_sum(np.exp(x - peak), axes)) + peak


def _sum_square(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return _sum(x * x, axes)


# --------------------------------------------------------------------------------------------
# Ops along one axis
# --------------------------------------------------------------------------------------------


def _arg_reduction(pick: Callable[..., np.ndarray]) -> Prepared:
    def prepare(op: ops.ArgReduceOp) -> Compute:
        given, keepdims = get_int(op, "axis", 0), get_flag(op, "keepdims")
        last = get_flag(op, "select_last_index")

        def arg_reduction(x: np.ndarray) -> np.ndarray:
            axis = _axis(given, x)
            if last:
                # The first extreme of the reversed axis is the last one of the original.
                flipped = pick(np.flip(x, axis), axis=axis, keepdims=keepdims)
                return (x.shape[axis] - 1 - flipped).astype(np.int64)
            return pick(x, axis=axis, keepdims=keepdims).astype(np.int64)

        return arg_reduction

    return Prepared(prepare)


def _scan(accumulate: Callable[..., np.ndarray], identity: float) -> Prepared:
    """A running `accumulate`; `identity` (clipped to the dtype's range: -inf is an integer's
    smallest) starts an exclusive scan."""

    def prepare(op: ops.ScanOp) -> Compute:
        given, reverse, exclusive = get_int(op, "axis", 0), get_flag(op, "reverse"), get_flag(op, "exclusive")

        def scan(x: np.ndarray) -> np.ndarray:
            axis = _axis(given, x)
            source = np.flip(x, axis) if reverse else x
            y = accumulate(source, axis=axis, dtype=x.dtype)
            if exclusive:
                # Each element gets the running value before it: shift by one, the identity first.
                first = np.full_like(np.take(y, [0], axis=axis), _in_range(identity, x.dtype))
                y = np.concatenate([first, np.take(y, np.arange(x.shape[axis] - 1), axis=axis)], axis=axis)
            return np.flip(y, axis) if reverse else y

        return scan

    return Prepared(prepare)


@Prepared
def _top_k(op: ops.TopKOp) -> Compute:
    given, k, largest = get_int(op, "axis", -1), get_int(op, "k"), get_flag(op, "largest")

    def top_k(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        axis = _axis(given, x)
        size = x.shape[axis]
        if largest:
            # A stable ascending sort of the reversed axis, read backwards, is descending with
            # equal values in index order.
            order = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
            order = size - 1 - np.flip(order, axis)
        else:
            order = np.argsort(x, axis=axis, kind="stable")
        indices = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(x, indices, axis=axis), indices.astype(np.int64)

    return top_k


@Prepared
def _softmax(op: ops.SoftmaxOp) -> Compute:
    axis = get_int(op, "axis", -1)

    def softmax(x: np.ndarray) -> np.ndarray:
        # A row of -inf gives NaN, as ONNX says (inf - inf): no warning for an intended result.
        with np.errstate(invalid="ignore"):
            exponentials = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
            return exponentials / exponentials.sum(axis=axis, keepdims=True)

    return softmax


@Prepared
def _log_softmax(op: ops.LogSoftmaxOp) -> Compute:
    axis = get_int(op, "axis", -1)

    def log_softmax(x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            shifted = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
            return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))

    return log_softmax


@Prepared
def _hardmax(op: ops.HardmaxOp) -> Compute:
    given = get_int(op, "axis", -1)

    def hardmax(x: np.ndarray) -> np.ndarray:
        axis = _axis(given, x)
        y = np.zeros_like(x)
        if x.shape[axis]:
            np.put_along_axis(y, np.argmax(x, axis=axis, keepdims=True), 1, axis=axis)
        return y

    return hardmax


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.ReduceSumOp: _reduction(_sum),
    ops.ReduceMeanOp: _reduction(_mean),
    ops.ReduceMaxOp: _reduction(_max),
    ops.ReduceMinOp: _reduction(_min),
    ops.ReduceProdOp: _reduction(_prod),
    ops.ReduceL1Op: _reduction(_l1),
    ops.ReduceL2Op: _reduction(_l2),
    ops.ReduceLogSumOp: _reduction(_log_sum),
    ops.ReduceLogSumExpOp: _reduction(_log_sum_exp),
    ops.ReduceSumSquareOp: _reduction(_sum_square),
    ops.ArgMaxOp: _arg_reduction(np.argmax),
    ops.ArgMinOp: _arg_reduction(np.argmin),
    ops.CumSumOp: _scan(np.cumsum, 0),
    ops.CumProdOp: _scan(np.cumprod, 1),
    ops.CumMaxOp: _scan(np.maximum.accumulate, -math.inf),
    ops.CumMinOp: _scan(np.minimum.accumulate, math.inf),
    ops.LogCumSumExpOp: _scan(np.logaddexp.accumulate, -math.inf),
    ops.TopKOp: _top_k,
    ops.SoftmaxOp: _softmax,
    ops.LogSoftmaxOp: _log_softmax,
    ops.HardmaxOp: _hardmax,
}


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _axis(axis: int, x: np.ndarray) -> int:
    """`axis` made non-negative by `x`'s rank."""
    return axis + x.ndim if axis < 0 else axis


def _as_float(x: np.ndarray) -> np.ndarray:
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def _lowest(dtype: np.dtype) -> bool | int | float:
    if dtype == np.bool_:
        return False
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


def _highest(dtype: np.dtype) -> bool | int | float:
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).max if dtype.kind in "iu" else np.inf


def _in_range(value: float, dtype: np.dtype) -> float | int:
    """`value`, an integer dtype's smallest or largest for an infinity."""
    if dtype.kind in "iu" and math.isinf(value):
        limits = np.iinfo(dtype)
        return int(limits.min if value < 0 else limits.max)
    return value
