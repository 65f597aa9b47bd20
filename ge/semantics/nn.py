"""Convolution, pooling and normalization over NCHW tensors, vectorized with strided windows.

Every sliding-window op pads its input, views the windows with `sliding_window_view` (no copy),
then reduces them: a batched matrix product per group for conv2d, max or sum for the pools.
`pads` are [top, left, bottom, right], as in ONNX.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ge.dialects.common import get_float, get_int, get_ints
from ge.dialects.graph import (
    AvgPoolOp,
    BatchNormOp,
    Conv2DOp,
    GemmOp,
    GlobalAvgPoolOp,
    MatMulOp,
    MaxPoolOp,
)

from .base import Implementation

Pair = tuple[int, int]


def conv2d(op: Conv2DOp, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """Cross-correlation of NCHW `x` with OIHW `w` (I = C / groups), plus an optional bias."""
    kernel = (w.shape[2], w.shape[3])
    strides = _pair(get_ints(op, "strides", (1, 1)))
    pads = get_ints(op, "pads", (0, 0, 0, 0))
    dilations = _pair(get_ints(op, "dilations", (1, 1)))
    groups = get_int(op, "groups", 1)
    out = _output_size(x.shape, kernel, strides, pads, dilations, ceil=False)
    padded = _pad(x, pads, out, kernel, strides, dilations, 0)
    windows = _windows(padded, kernel, strides, dilations, out)  # N, C, OH, OW, KH, KW
    n, c = x.shape[:2]
    o = w.shape[0]
    # im2col per group: rows are output pixels, columns are (channel, kh, kw) of one group.
    columns = windows.reshape(n, groups, c // groups, *out, *kernel)
    columns = columns.transpose(1, 0, 3, 4, 2, 5, 6).reshape(groups, n * out[0] * out[1], -1)
    filters = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    y = np.matmul(columns, filters)  # groups, N*OH*OW, O/groups
    y = y.reshape(groups, n, *out, o // groups).transpose(1, 0, 4, 2, 3).reshape(n, o, *out)
    y = np.ascontiguousarray(y)
    if bias is not None:
        y += bias.reshape(1, o, 1, 1)
    return y


def batch_norm(
    op: BatchNormOp,
    x: np.ndarray,
    scale: np.ndarray,
    bias: np.ndarray,
    mean: np.ndarray,
    var: np.ndarray,
) -> np.ndarray:
    """Inference-mode batch normalization over axis 1."""
    epsilon = get_float(op, "epsilon", 1e-5)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    scale, bias, mean, var = (p.reshape(shape) for p in (scale, bias, mean, var))
    return scale * (x - mean) / np.sqrt(var + x.dtype.type(epsilon)) + bias


def max_pool(op: MaxPoolOp, x: np.ndarray) -> np.ndarray:
    dilations = _pair(get_ints(op, "dilations", (1, 1)))
    kernel, strides, pads, out = _pool_window(op, x, dilations)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    padded = _pad(x, pads, out, kernel, strides, dilations, lowest)
    return _windows(padded, kernel, strides, dilations, out).max(axis=(-2, -1))


def avg_pool(op: AvgPoolOp, x: np.ndarray) -> np.ndarray:
    """Mean over each window; `count_include_pad` decides whether explicit pads are counted.

    Cells added only so that ceil mode has a full last window are never counted (as in ONNX
    Runtime and PyTorch).
    """
    kernel, strides, pads, out = _pool_window(op, x, (1, 1))
    padded = _pad(x, pads, out, kernel, strides, (1, 1), 0)
    total = _windows(padded, kernel, strides, (1, 1), out).sum(axis=(-2, -1))
    height, width = x.shape[2:]
    counted = np.zeros((1, 1, *padded.shape[2:]), dtype=total.dtype)
    if get_int(op, "count_include_pad", 0):
        counted[..., : pads[0] + height + pads[2], : pads[1] + width + pads[3]] = 1
    else:
        counted[..., pads[0] : pads[0] + height, pads[1] : pads[1] + width] = 1
    count = _windows(counted, kernel, strides, (1, 1), out).sum(axis=(-2, -1))
    return (total / count).astype(x.dtype, copy=False)


def global_avg_pool(op: GlobalAvgPoolOp, x: np.ndarray) -> np.ndarray:
    return x.mean(axis=tuple(range(2, x.ndim)), keepdims=True).astype(x.dtype, copy=False)


# --------------------------------------------------------------------------------------------
# Windows
# --------------------------------------------------------------------------------------------


def _pool_window(
    op: MaxPoolOp | AvgPoolOp, x: np.ndarray, dilations: Pair
) -> tuple[Pair, Pair, tuple[int, ...], Pair]:
    """Kernel, strides, pads and output size of a pool."""
    kernel = _pair(get_ints(op, "kernel_shape"))
    strides = _pair(get_ints(op, "strides", (1, 1)))
    pads = get_ints(op, "pads", (0, 0, 0, 0))
    ceil = bool(get_int(op, "ceil_mode", 0))
    return kernel, strides, pads, _output_size(x.shape, kernel, strides, pads, dilations, ceil)


def _output_size(
    shape: tuple[int, ...],
    kernel: Pair,
    strides: Pair,
    pads: tuple[int, ...],
    dilations: Pair,
    ceil: bool,
) -> Pair:
    """Number of windows along H and W (ONNX's formula, with PyTorch's ceil-mode rule)."""
    sizes = []
    for axis in range(2):
        size, stride = shape[2 + axis], strides[axis]
        before, after = pads[axis], pads[axis + 2]
        room = size + before + after - dilations[axis] * (kernel[axis] - 1) - 1
        count = (-(-room // stride) if ceil else room // stride) + 1
        # In ceil mode, a last window starting in the trailing padding is dropped.
        if ceil and (count - 1) * stride >= size + before:
            count -= 1
        sizes.append(count)
    return sizes[0], sizes[1]


def _pad(
    x: np.ndarray,
    pads: tuple[int, ...],
    out: Pair,
    kernel: Pair,
    strides: Pair,
    dilations: Pair,
    value: float,
) -> np.ndarray:
    """`x` padded with `value` by `pads`, plus whatever the last of `out` windows still needs."""
    widths = [(0, 0), (0, 0)]
    for axis in range(2):
        span = dilations[axis] * (kernel[axis] - 1) + 1
        needed = (out[axis] - 1) * strides[axis] + span
        before, after = pads[axis], pads[axis + 2]
        after += max(0, needed - (x.shape[2 + axis] + before + after))
        widths.append((before, after))
    if not any(before or after for before, after in widths):
        return x
    return np.pad(x, widths, constant_values=value)


def _windows(padded: np.ndarray, kernel: Pair, strides: Pair, dilations: Pair, out: Pair) -> np.ndarray:
    """A (N, C, OH, OW, KH, KW) view of the windows of a padded NCHW array."""
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilations, strict=True))
    view = sliding_window_view(padded, spans, axis=(2, 3))
    view = view[:, :, :: strides[0], :: strides[1], :: dilations[0], :: dilations[1]]
    return view[:, :, : out[0], : out[1]]


def _pair(values: tuple[int, ...]) -> Pair:
    return values[0], values[1]


def _matmul(op: MatMulOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return np.matmul(lhs, rhs)


def _gemm(op: GemmOp, a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None) -> np.ndarray:
    if get_int(op, "trans_a", 0):
        a = a.T
    if get_int(op, "trans_b", 0):
        b = b.T
    alpha, beta = get_float(op, "alpha", 1.0), get_float(op, "beta", 1.0)
    # Scalings by 1.0 are skipped so integer gemms stay integer.
    product = np.matmul(a, b)
    if alpha != 1.0:
        product = product * product.dtype.type(alpha)
    if c is None:
        return product
    return product + (c if beta == 1.0 else c * c.dtype.type(beta))


IMPLEMENTATIONS: dict[type, Implementation] = {
    MatMulOp: _matmul,
    GemmOp: _gemm,
    Conv2DOp: conv2d,
    BatchNormOp: batch_norm,
    MaxPoolOp: max_pool,
    AvgPoolOp: avg_pool,
    GlobalAvgPoolOp: global_avg_pool,
}

IN_STORED_DTYPE: tuple[type, ...] = ()
