"""Normalizations: statistics over some axes, then the input rescaled by them.

Statistics are computed in the compute dtype (float32 for 16-bit floats, float64 for float64)
with the two-pass variance `mean((x - mean)^2)`, which cannot go negative as `E[x^2] - E[x]^2`
can.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ge.dialects import graph as ops
from ge.dialects.common import get_float, get_int, get_ints

from .base import Compute, Implementation, Prepared, mean_over


@Prepared
def layer_norm(op: ops.LayerNormOp) -> Compute:
    axis, epsilon = get_int(op, "axis", -1), get_float(op, "epsilon", 1e-5)

    def normalize(
        x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        mean, centered, inv_std_dev = _standardize(x, _trailing_axes(axis, x), epsilon)
        y = centered * inv_std_dev * scale
        if bias is not None:
            y = y + bias
        return y.astype(x.dtype, copy=False), mean.astype(np.float32), inv_std_dev.astype(np.float32)

    return normalize


@Prepared
def rms_norm(op: ops.RMSNormOp) -> Compute:
    axis, epsilon = get_int(op, "axis", -1), get_float(op, "epsilon", 1e-5)

    def normalize(x: np.ndarray, scale: np.ndarray) -> np.ndarray:
        mean_square = mean_over(x * x, _trailing_axes(axis, x))
        return (x / np.sqrt(mean_square + x.dtype.type(epsilon)) * scale).astype(x.dtype, copy=False)

    return normalize


@Prepared
def group_norm(op: ops.GroupNormOp) -> Compute:
    groups, epsilon = get_int(op, "num_groups"), get_float(op, "epsilon", 1e-5)
    return lambda x, scale, bias: _group_norm(x, scale, bias, groups, epsilon)


def _group_norm(
    x: np.ndarray, scale: np.ndarray, bias: np.ndarray, groups: int, epsilon: float
) -> np.ndarray:
    n, c = x.shape[:2]
    grouped = x.reshape(n, groups, -1)
    _, centered, inv_std_dev = _standardize(grouped, (2,), epsilon)
    per_channel = (1, c) + (1,) * (x.ndim - 2)
    y = (centered * inv_std_dev).reshape(x.shape) * scale.reshape(per_channel) + bias.reshape(per_channel)
    return y.astype(x.dtype, copy=False)


@Prepared
def mean_variance_norm(op: ops.MeanVarianceNormOp) -> Compute:
    axes = get_ints(op, "axes")

    def normalize(x: np.ndarray) -> np.ndarray:
        centered = x - mean_over(x, axes)
        std = np.sqrt(mean_over(centered * centered, axes))
        return (centered / (std + x.dtype.type(1e-9))).astype(x.dtype, copy=False)

    return normalize


@Prepared
def lp_norm(op: ops.LpNormOp) -> Compute:
    axis, p = get_int(op, "axis", -1), get_int(op, "p", 2)

    def normalize(x: np.ndarray) -> np.ndarray:
        if p == 1:
            norm = np.sum(np.abs(x), axis=axis, keepdims=True)
        else:
            norm = np.sqrt(np.sum(x * x, axis=axis, keepdims=True))
        # A zero vector stays zero rather than 0 / 0.
        zero = norm == 0
        return np.where(zero, x.dtype.type(0), x / np.where(zero, x.dtype.type(1), norm))

    return normalize


@Prepared
def lrn(op: ops.LRNOp) -> Compute:
    """Each channel c sums the squares of channels c - (size - 1) // 2 to c + ceil((size - 1) / 2)."""
    size = get_int(op, "size")
    alpha = get_float(op, "alpha", 1e-4)
    beta = get_float(op, "beta", 0.75)
    bias = get_float(op, "bias", 1.0)
    before = (size - 1) // 2

    def normalize(x: np.ndarray) -> np.ndarray:
        # A window reaching more than C - 1 channels past either end reads only zeros there, so
        # the zeros are capped at C - 1 a side: a size of 2^31 allocates no more than 3 C planes.
        reach = max(x.shape[1] - 1, 0)
        widths = [(0, 0)] * x.ndim
        widths[1] = (min(before, reach), min(size - 1 - before, reach))
        squares = np.pad(x * x, widths)
        square_sum = sliding_window_view(squares, sum(widths[1]) + 1, axis=1).sum(axis=-1)
        base = x.dtype.type(bias) + x.dtype.type(alpha / size) * square_sum
        return (x / base ** x.dtype.type(beta)).astype(x.dtype, copy=False)

    return normalize


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.LayerNormOp: layer_norm,
    ops.RMSNormOp: rms_norm,
    ops.GroupNormOp: group_norm,
    ops.MeanVarianceNormOp: mean_variance_norm,
    ops.LpNormOp: lp_norm,
    ops.LRNOp: lrn,
}


def _trailing_axes(axis: int, x: np.ndarray) -> tuple[int, ...]:
    """The axes of `x` from `axis` to its last."""
    return tuple(range(axis + x.ndim if axis < 0 else axis, x.ndim))


def _standardize(
    x: np.ndarray, axes: tuple[int, ...], epsilon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, `x - mean` and `1 / sqrt(variance + epsilon)` over `axes` (kept as size 1)."""
    mean = mean_over(x, axes)
    centered = x - mean
    variance = mean_over(centered * centered, axes)
    return mean, centered, 1 / np.sqrt(variance + x.dtype.type(epsilon))
