"""Matrix products, convolutions, pooling and batch normalization, vectorized with strided windows.

Every sliding-window op pads its input, views the windows with `sliding_window_view` (no copy),
then reduces them: a batched matrix product per group for convolutions, max, sum or p-norm for
the pools. The ops work on any number of spatial axes; `pads` list every axis's leading padding,
then every trailing one, as in ONNX.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.ir import Operation

from ge.dialects.common import get_flag, get_float, get_int, get_ints
from ge.dialects.graph import (
    AvgPool3DOp,
    AvgPoolOp,
    BatchNormOp,
    Conv2DOp,
    Conv3DOp,
    ConvTranspose2DOp,
    ConvTranspose3DOp,
    EinsumOp,
    GemmOp,
    GlobalAvgPoolOp,
    GlobalLpPoolOp,
    GlobalMaxPoolOp,
    GraphOp,
    LpPool3DOp,
    LpPoolOp,
    MatMulIntegerOp,
    MatMulOp,
    MaxPool3DOp,
    MaxPoolOp,
    MaxPoolWithArgmaxOp,
)

from .base import Compute, Implementation, Prepared, Product, mean_over

Sizes = tuple[int, ...]


# --------------------------------------------------------------------------------------------
# Matrix products
# --------------------------------------------------------------------------------------------


def _matmul(op: MatMulOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return np.matmul(lhs, rhs)


def _matmul_integer(
    op: MatMulIntegerOp, a: np.ndarray, b: np.ndarray, a_zero: np.ndarray, b_zero: np.ndarray
) -> np.ndarray:
    wide = np.int32
    return np.matmul(a.astype(wide) - a_zero.astype(wide), b.astype(wide) - b_zero.astype(wide))


@Prepared
def _gemm(op: GemmOp) -> Compute:
    trans_a, trans_b, scale = get_flag(op, "trans_a"), get_flag(op, "trans_b"), gemm_scale(op)

    def gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None) -> np.ndarray:
        return scale(np.matmul(a.T if trans_a else a, b.T if trans_b else b), c)

    return gemm


def gemm_scale(op: Operation) -> Callable[[np.ndarray, np.ndarray | None], np.ndarray]:
    """`f(product, c) = alpha * product + beta * c`: what Gemm `op` (or a fused op built on one)
    adds to the matrix product `op(A) @ op(B)`, its alpha and beta read once."""
    alpha, beta = get_float(op, "alpha", 1.0), get_float(op, "beta", 1.0)

    def scale(product: np.ndarray, c: np.ndarray | None) -> np.ndarray:
        # Scalings by 1.0 are skipped so integer gemms stay integer.
        if alpha != 1.0:
            product = product * product.dtype.type(alpha)
        if c is None:
            return product
        return product + (c if beta == 1.0 else c * c.dtype.type(beta))

    return scale


@Prepared
def _einsum(op: EinsumOp) -> Compute:
    equation = op.equation.data

    def einsum(*inputs: np.ndarray) -> np.ndarray:
        result = np.einsum(equation, *inputs, optimize=len(inputs) > 2)
        return np.asarray(result, dtype=inputs[0].dtype)

    return einsum


# --------------------------------------------------------------------------------------------
# Convolutions
# --------------------------------------------------------------------------------------------


@Prepared
def conv(op: Conv2DOp | Conv3DOp) -> Compute:
    """Cross-correlation of N, C, spatial... `x` with O, C / groups, kernel... `w`, plus a bias."""
    return partial(_conv, _window_props(op), get_int(op, "groups", 1))


def _conv(
    given: tuple[Sizes, Sizes, Sizes],
    groups: int,
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None = None,
    *,
    product: Product | None = None,
) -> np.ndarray:
    n = x.ndim - 2
    strides, pads, dilations = _or_defaults(given, n)
    kernel = w.shape[2:]
    out = _output_size(x.shape[2:], kernel, strides, pads, dilations, ceil=False)
    padded = _pad(x, pads, out, kernel, strides, dilations, 0)
    windows = _windows(padded, kernel, strides, dilations, out)  # N, C, out..., kernel...
    batch, channels = x.shape[:2]
    o = w.shape[0]
    # im2col per group: rows are output pixels, columns are (channel, kernel...) of one group.
    columns = windows.reshape(batch, groups, channels // groups, *out, *kernel)
    spatial = tuple(range(3, 3 + n))
    columns = columns.transpose(1, 0, *spatial, 2, *(a + n for a in spatial))
    columns = columns.reshape(groups, batch * math.prod(out), -1)
    filters = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    # groups, N * prod(out), O / groups; `product` is the cube's when the emulator runs it
    y = _float64_product(columns, filters) if product is None else product(columns, filters)
    y = y.reshape(groups, batch, *out, o // groups).transpose(1, 0, n + 2, *range(2, n + 2))
    y = np.ascontiguousarray(y, dtype=x.dtype).reshape(batch, o, *out)
    if bias is not None:
        y += bias.reshape(1, o, *(1,) * n)
    return y


@Prepared
def conv_transpose(op: ConvTranspose2DOp | ConvTranspose3DOp) -> Compute:
    """Scatters each input pixel times the kernel into the output (col2im), then crops the pads;
    sums in float64, as `conv` does."""
    given, extra = _window_props(op), get_ints(op, "output_padding", ())
    return partial(_conv_transpose, given, extra, get_int(op, "groups", 1))


def _conv_transpose(
    given: tuple[Sizes, Sizes, Sizes],
    extra: Sizes,
    groups: int,
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None = None,
    *,
    product: Product | None = None,
) -> np.ndarray:
    n = x.ndim - 2
    strides, pads, dilations = _or_defaults(given, n)
    extra = extra or (0,) * n
    batch, channels, *sizes = x.shape
    kernel = w.shape[2:]
    per_group = w.shape[1]
    # Every input pixel times every kernel tap: groups, N, in..., O / groups, kernel....
    pixels = x.reshape(batch, groups, channels // groups, -1).transpose(1, 0, 3, 2)
    kernels = w.reshape(groups, 1, channels // groups, -1)
    taps = _float64_product(pixels, kernels) if product is None else product(pixels, kernels)
    taps = taps.reshape(groups, batch, *sizes, per_group, *kernel)
    taps = taps.transpose(1, 0, n + 2, *range(n + 3, 2 * n + 3), *range(2, n + 2))  # N, g, O/g, k..., in...
    out = [
        strides[i] * (sizes[i] - 1) + extra[i] + dilations[i] * (kernel[i] - 1) + 1 - pads[i] - pads[i + n]
        for i in range(n)
    ]
    full = [
        max(strides[i] * (sizes[i] - 1) + dilations[i] * (kernel[i] - 1) + 1, pads[i] + out[i])
        for i in range(n)
    ]
    y = np.zeros((batch, groups, per_group, *full), dtype=taps.dtype)
    for tap in np.ndindex(*kernel):
        target = tuple(
            slice(tap[i] * dilations[i], tap[i] * dilations[i] + strides[i] * (sizes[i] - 1) + 1, strides[i])
            for i in range(n)
        )
        y[(Ellipsis, *target)] += taps[(slice(None), slice(None), slice(None), *tap)]
    crop = tuple(slice(pads[i], pads[i] + out[i]) for i in range(n))
    y = np.ascontiguousarray(y[(Ellipsis, *crop)], dtype=x.dtype).reshape(batch, groups * per_group, *out)
    if bias is not None:
        y += bias.reshape(1, -1, *(1,) * n)
    return y


# --------------------------------------------------------------------------------------------
# Normalization and pooling
# --------------------------------------------------------------------------------------------


@Prepared
def batch_norm(op: BatchNormOp) -> Compute:
    """Inference-mode batch normalization over axis 1. The parameters are [C] vectors, or already
    of `x`'s rank and broadcasting against it (as the vector unit lays them out on NC1HWC0)."""
    epsilon = get_float(op, "epsilon", 1e-5)

    def normalize(
        x: np.ndarray, scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, var: np.ndarray
    ) -> np.ndarray:
        shape = (1, -1) + (1,) * (x.ndim - 2)
        scale, bias, mean, var = (
            p if p.ndim == x.ndim else p.reshape(shape) for p in (scale, bias, mean, var)
        )
        return scale * (x - mean) / np.sqrt(var + x.dtype.type(epsilon)) + bias

    return normalize


@Prepared
def max_pool(op: MaxPoolOp | MaxPool3DOp) -> Compute:
    window = _pool_window(op)

    def pool(x: np.ndarray) -> np.ndarray:
        kernel, strides, pads, dilations, out = window(x)
        x, kernel, pads, _ = _reaching(x, kernel, strides, pads, dilations, out)
        padded = _pad(x, pads, out, kernel, strides, dilations, _lowest(x.dtype))
        windows = _windows(padded, kernel, strides, dilations, out)
        # The maximum of each window, one window position at a time: a pass over the output per
        # position is many times faster than numpy's reduction over small strided axes, and exact.
        positions = itertools.product(*(range(k) for k in kernel))
        result = windows[(Ellipsis, *next(positions))].copy(order="K")  # in the input's memory order
        for position in positions:
            np.maximum(result, windows[(Ellipsis, *position)], out=result)
        return result

    return pool


@Prepared
def max_pool_with_argmax(op: MaxPoolWithArgmaxOp) -> Compute:
    """The max pool and, for each window, the flat input index of its first maximum."""
    return partial(_max_pool_with_argmax, _pool_window(op))


def _max_pool_with_argmax(window: Window, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    kernel, strides, pads, dilations, out = window(x)
    where = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    x, kept, kept_pads, crop = _reaching(x, kernel, strides, pads, dilations, out)
    kernel, pads, where = kept, kept_pads, where[crop]
    padded = _pad(x, pads, out, kernel, strides, dilations, _lowest(x.dtype))
    where = _pad(where, pads, out, kernel, strides, dilations, -1)
    flat = (*x.shape[:2], *out, -1)
    values = _windows(padded, kernel, strides, dilations, out).reshape(flat)
    indices = _windows(where, kernel, strides, dilations, out).reshape(flat)
    best = values.max(axis=-1)
    # The first real cell holding the maximum: padding never wins, even against equal values. A
    # window holding a NaN has NaN as its maximum (as `max_pool`), and its first NaN's index.
    hits = (values == best[..., None]) | ((values != values) & (best != best)[..., None])
    first = np.argmax(hits & (indices >= 0), axis=-1)
    return best, np.take_along_axis(indices, first[..., None], axis=-1)[..., 0]


@Prepared
def avg_pool(op: AvgPoolOp | AvgPool3DOp) -> Compute:
    """Mean over each window; `count_include_pad` decides whether explicit pads are counted.

    Cells added only so that ceil mode has a full last window are never counted (as in ONNX
    Runtime and PyTorch).
    """
    return partial(_avg_pool, _pool_window(op), get_flag(op, "count_include_pad"))


def _avg_pool(window: Window, include: bool, x: np.ndarray) -> np.ndarray:
    kernel, strides, pads, dilations, out = window(x)
    n = len(kernel)
    cropped, kept, kept_pads, _ = _reaching(x, kernel, strides, pads, dilations, out)
    padded = _pad(cropped, kept_pads, out, kept, strides, dilations, 0)
    total = _windows(padded, kept, strides, dilations, out).sum(axis=_last(n))
    # The counted cells are a product of one interval per axis, so the counts are too: per
    # window, its taps within the input (and its explicit pads, when they count).
    count = np.ones((), dtype=total.dtype)
    for axis in range(n):
        size, before, after = x.shape[2 + axis], pads[axis], pads[axis + n]
        low, high = (-before, size + after) if include else (0, size)
        starts = np.arange(out[axis], dtype=np.int64) * strides[axis] - before
        first = np.maximum(0, -((starts - low) // dilations[axis]))
        last = np.minimum(kernel[axis] - 1, (high - 1 - starts) // dilations[axis])
        count = np.multiply.outer(count, np.maximum(last - first + 1, 0).astype(total.dtype))
    return (total / count).astype(x.dtype, copy=False)


@Prepared
def lp_pool(op: LpPoolOp | LpPool3DOp) -> Compute:
    """`(sum |x| ^ p) ^ (1 / p)` over each window; padding adds nothing."""
    window, p = _pool_window(op), get_int(op, "p", 2)

    def pool(x: np.ndarray) -> np.ndarray:
        kernel, strides, pads, dilations, out = window(x)
        x, kernel, pads, _ = _reaching(x, kernel, strides, pads, dilations, out)
        padded = _pad(np.abs(x), pads, out, kernel, strides, dilations, 0)
        powers = _windows(padded, kernel, strides, dilations, out) ** p
        return _root(powers.sum(axis=_last(len(kernel))), p).astype(x.dtype, copy=False)

    return pool


def global_avg_pool(op: GlobalAvgPoolOp, x: np.ndarray) -> np.ndarray:
    return mean_over(x, tuple(range(2, x.ndim))).astype(x.dtype, copy=False)


def global_max_pool(op: GlobalMaxPoolOp, x: np.ndarray) -> np.ndarray:
    return x.max(axis=tuple(range(2, x.ndim)), keepdims=True)


@Prepared
def global_lp_pool(op: GlobalLpPoolOp) -> Compute:
    p = get_int(op, "p", 2)

    def pool(x: np.ndarray) -> np.ndarray:
        total = (np.abs(x) ** p).sum(axis=tuple(range(2, x.ndim)), keepdims=True)
        return _root(total, p).astype(x.dtype, copy=False)

    return pool


# --------------------------------------------------------------------------------------------
# Windows
# --------------------------------------------------------------------------------------------


def _float64_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The reference product of a convolution: in float64, so each output channel's sums do not
    depend on how BLAS tiles the channels."""
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def _window_props(op: GraphOp) -> tuple[Sizes, Sizes, Sizes]:
    """strides, pads and dilations of a window op, () where absent (`_or_defaults`)."""
    return get_ints(op, "strides", ()), get_ints(op, "pads", ()), get_ints(op, "dilations", ())


def _or_defaults(window: tuple[Sizes, Sizes, Sizes], n: int) -> tuple[Sizes, Sizes, Sizes]:
    """`_window_props` with the defaults for `n` spatial axes where absent."""
    strides, pads, dilations = window
    return strides or (1,) * n, pads or (0,) * 2 * n, dilations or (1,) * n


Window = Callable[[np.ndarray], tuple[Sizes, Sizes, Sizes, Sizes, Sizes]]
"""A pool's kernel, strides, pads, dilations and output size over an input."""


def _pool_window(op: GraphOp) -> Window:
    """The pool's `Window`, its properties read once."""
    kernel = get_ints(op, "kernel_shape")
    strides, pads, dilations = _or_defaults(_window_props(op), len(kernel))
    ceil = get_flag(op, "ceil_mode")

    def window(x: np.ndarray) -> tuple[Sizes, Sizes, Sizes, Sizes, Sizes]:
        out = _output_size(x.shape[2:], kernel, strides, pads, dilations, ceil)
        return kernel, strides, pads, dilations, out

    return window


def _output_size(
    sizes: Sequence[int],
    kernel: Sizes,
    strides: Sizes,
    pads: Sizes,
    dilations: Sizes,
    ceil: bool,
) -> Sizes:
    """Number of windows along each spatial axis (ONNX's formula, with PyTorch's ceil-mode rule)."""
    n = len(kernel)
    counts = []
    for axis in range(n):
        size, stride = sizes[axis], strides[axis]
        before, after = pads[axis], pads[axis + n]
        room = size + before + after - dilations[axis] * (kernel[axis] - 1) - 1
        count = (-(-room // stride) if ceil else room // stride) + 1
        # In ceil mode, a last window starting in the trailing padding is dropped.
        if ceil and (count - 1) * stride >= size + before:
            count -= 1
        counts.append(count)
    return tuple(counts)


def _reaching(
    x: np.ndarray, kernel: Sizes, strides: Sizes, pads: Sizes, dilations: Sizes, out: Sizes
) -> tuple[np.ndarray, Sizes, Sizes, tuple[slice, ...]]:
    """The window taps that read the input in some window, for a pool whose padding is its
    reduction's identity: the other taps read padding in every window, so they are left out (a
    kernel of 2^31 over 5 rows pads a few rows, not 2^31). Returns `x` without the leading cells
    no window reads, the kernel and leading pads of the kept taps (trailing pads are what the
    windows still need, `_pad`'s to add), and the crop as an index of `x`."""
    n = len(kernel)
    kept, before, crop = [], [], [slice(None), slice(None)]
    for axis in range(n):
        size, k, s, d, o, pad = (
            x.shape[2 + axis],
            kernel[axis],
            strides[axis],
            dilations[axis],
            out[axis],
            pads[axis],
        )
        first = max(0, -((pad - (o - 1) * s) // -d))  # the last window's first tap inside
        last = min(k - 1, (size - 1 + pad) // d)  # the first window's last tap inside
        if first > last:  # no tap reads the input: one that reads only padding
            first = last = min(first, k - 1)
        lead = pad - first * d
        kept.append(last - first + 1)
        before.append(max(lead, 0))
        crop.append(slice(max(-lead, 0), None))
    if tuple(kept) == tuple(kernel) and tuple(before) == tuple(pads[:n]):
        return x, kernel, pads, tuple(crop)
    return x[tuple(crop)], tuple(kept), (*before, *(0,) * n), tuple(crop)


def _pad(
    x: np.ndarray,
    pads: Sizes,
    out: Sizes,
    kernel: Sizes,
    strides: Sizes,
    dilations: Sizes,
    value: float,
) -> np.ndarray:
    """`x` padded with `value` by `pads`, plus whatever the last of `out` windows still needs."""
    n = len(kernel)
    widths = [(0, 0), (0, 0)]
    for axis in range(n):
        span = dilations[axis] * (kernel[axis] - 1) + 1
        needed = (out[axis] - 1) * strides[axis] + span
        before, after = pads[axis], pads[axis + n]
        after += max(0, needed - (x.shape[2 + axis] + before + after))
        widths.append((before, after))
    if not any(before or after for before, after in widths):
        return x
    # Filled and copied rather than `np.pad`, which lays its result out in C order: this keeps
    # the memory order of `x` (a channels-last view stays channels-last), so the windows read it
    # with unit strides.
    shape = tuple(size + before + after for size, (before, after) in zip(x.shape, widths, strict=True))
    padded = np.full_like(x, value, shape=shape)
    padded[tuple(slice(before, before + size) for size, (before, _) in zip(x.shape, widths, strict=True))] = x
    return padded


def _windows(padded: np.ndarray, kernel: Sizes, strides: Sizes, dilations: Sizes, out: Sizes) -> np.ndarray:
    """An (N, C, out..., kernel...) view of the windows of a padded N, C, spatial... array."""
    n = len(kernel)
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilations, strict=True))
    view = sliding_window_view(padded, spans, axis=tuple(range(2, 2 + n)))
    view = view[
        (slice(None), slice(None), *(slice(None, o * s, s) for o, s in zip(out, strides, strict=True)))
    ]
    return view[(Ellipsis, *(slice(None, None, d) for d in dilations))]


def _last(n: int) -> tuple[int, ...]:
    return tuple(range(-n, 0))


def _lowest(dtype: np.dtype) -> float | int:
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


def _root(total: np.ndarray, p: int) -> np.ndarray:
    return np.sqrt(total) if p == 2 else total ** (1.0 / p)


IMPLEMENTATIONS: dict[type, Implementation] = {
    MatMulOp: _matmul,
    MatMulIntegerOp: _matmul_integer,
    GemmOp: _gemm,
    EinsumOp: _einsum,
    Conv2DOp: conv,
    Conv3DOp: conv,
    ConvTranspose2DOp: conv_transpose,
    ConvTranspose3DOp: conv_transpose,
    BatchNormOp: batch_norm,
    MaxPoolOp: max_pool,
    MaxPool3DOp: max_pool,
    MaxPoolWithArgmaxOp: max_pool_with_argmax,
    AvgPoolOp: avg_pool,
    AvgPool3DOp: avg_pool,
    LpPoolOp: lp_pool,
    LpPool3DOp: lp_pool,
    GlobalAvgPoolOp: global_avg_pool,
    GlobalMaxPoolOp: global_max_pool,
    GlobalLpPoolOp: global_lp_pool,
}
