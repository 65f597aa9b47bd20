"""The cube unit's arithmetic: convolution and matrix product on fractal tiles, accumulated as in L0C.

A second implementation beside `ge.semantics`, working on device-format data: the left operand is cut
into 16 x C0 fractals (L0A), the right one into C0 x 16 fractals (L0B), and the products are summed
k-step by k-step, as the compiled tiling contracts K (`k_step` elements at a time, `ceil(K / k_step)`
steps; the whole K in one step without a tiling). Each step is one BLAS product over every (m, n) tile
and block at once, as the kernel's tiles and cores compute it in parallel, added into an fp32
accumulator (int32 for 8-bit integer inputs). fp16 and bf16 inputs are widened to fp32 first, which is
exact; fp32 inputs stay fp32. 8-bit integers multiply in fp32 too: a step's partial sums are exact
integers while k_step x max|a| x max|b| < 2**24, and are then added into the int32 accumulator.
Products below `ONE_THREAD_PRODUCTS` multiply-adds run on one BLAS thread (numpy's bundled
OpenBLAS); larger ones on as many as BLAS is configured for.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import numpy as np

from ge.dialects.formats import FRACTAL, device_shape
from ge.dtypes import bfloat16
from ge.layout import from_device

from . import blas

_FLOAT_INPUTS = (np.dtype(np.float16), bfloat16, np.dtype(np.float32))
_INTEGER_INPUTS = (np.dtype(np.int8), np.dtype(np.uint8))
EXACT_FP32_INTEGER = 2**24
"""Integers up to this magnitude are exact in fp32, so are the sums of a k-step that stay below it."""
ONE_THREAD_PRODUCTS = 2**20
"""Multiply-adds below which a k-step's product runs on one BLAS thread: below about 20 us of work a
second thread's start-up eats its gain (measured: 0.5 M multiply-adds take 13.7 us on one thread and
12.7 us on two; 4 M take 153 us and 77 us)."""


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    *,
    out_channels: int,
    in_channels: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    groups: int,
    bias: np.ndarray | None = None,
    k_step: int | None = None,
) -> np.ndarray:
    """The accumulator of a 2-D convolution (cross-correlation, as ONNX Conv) run on the cube.

    `x` is NC1HWC0 (N, C1, H, W, c0) holding `in_channels` channels; `w` is FRACTAL_Z of the logical
    weights (out_channels, in_channels // groups, kh, kw) with the same c0; `pads` are (top, left, bottom,
    right); `bias`, logical (out_channels,), is added to the accumulator; `k_step` is the K elements
    contracted per step (the kernel's `tiling` k; None: all of K at once). K is the device K: each
    group's channels padded to whole c0 blocks, times the kernel window. Returns NC1HWC0
    (N, ceil(out_channels / c0), Ho, Wo, c0) in float32 (int32 for 8-bit integer inputs), padded channels
    zero. Groups are a batch of independent products; narrow groups (depthwise convolutions) sum over
    their real channels only, which gives the same sums without the fractals' zero padding.
    """
    compute, accumulator = _accumulation_dtypes(x.dtype, w.dtype)
    largest = _largest_product(x.dtype, w.dtype) if accumulator == np.int32 else 1
    if x.ndim != 5:
        raise ValueError(f"conv2d: x must be NC1HWC0 (N, C1, H, W, C0), got shape {x.shape}")
    n, c1, h, width, c0 = x.shape
    kh, kw = kernel
    if groups <= 0 or in_channels % groups or out_channels % groups:
        raise ValueError(
            f"conv2d: {in_channels} -> {out_channels} channels do not split into {groups} groups"
        )
    if c1 != -(-in_channels // c0):
        raise ValueError(
            f"conv2d: x of shape {x.shape} does not hold {in_channels} channels in blocks of {c0}"
        )
    cin_group, cout_group = in_channels // groups, out_channels // groups
    expected_w = device_shape((out_channels, cin_group, kh, kw), "FRACTAL_Z", c0, groups)
    if w.shape != expected_w:
        raise ValueError(f"conv2d: FRACTAL_Z weights must have shape {expected_w}, got {w.shape}")
    (sh, sw), (dh, dw), (top, left, bottom, right) = strides, dilations, pads
    if min(sh, sw, dh, dw) <= 0 or min(pads) < 0:
        raise ValueError(
            f"conv2d: strides {strides} and dilations {dilations} must be positive, pads {pads} >= 0"
        )
    span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    ho, wo = (h + top + bottom - span_h) // sh + 1, (width + left + right - span_w) // sw + 1
    if ho <= 0 or wo <= 0:
        raise ValueError(f"conv2d: a {kh}x{kw} kernel (dilations {dilations}) does not fit the padded input")

    if groups > 1 and cin_group == 1 and kh * kw * largest < EXACT_FP32_INTEGER:
        # Depthwise convolutions: each output channel reads one input channel, so a step's product
        # is a sum over its window taps, computed for every channel and pixel at once.
        out = _depthwise(x, w, out_channels, groups, kernel, strides, pads, dilations, (ho, wo), k_step)
        out = out.reshape(n * ho * wo, out_channels)
    elif (groups > 1 and cin_group * cout_group < c0 * FRACTAL) or cin_group < c0:
        # Narrow groups (depthwise convolutions above all), or fewer channels than a block (an
        # image's 3): the padded fractals would be mostly zeros, so the products are summed over
        # the real channels only; the sums are the same.
        out = _narrow_groups(
            x,
            w,
            in_channels,
            out_channels,
            groups,
            kernel,
            strides,
            pads,
            dilations,
            (ho, wo),
            k_step,
            largest,
        ).reshape(n * ho * wo, out_channels)
    else:
        rows = _im2col(x, in_channels, groups, kernel, strides, pads, dilations, (ho, wo), compute)
        columns = _loaded(w, ("columns", groups, compute), lambda: _columns(w, groups, compute))
        steps = [slice(start, start + width) for start, width in k_steps(rows.shape[-1], k_step)]
        out = accumulate(rows, columns, steps, accumulator, largest)  # (groups, N * Ho * Wo, N1 * 16)
        if groups == 1:
            out = out[0]
        else:
            out = (
                out[:, :, :cout_group]
                .reshape(groups, n * ho * wo, cout_group)
                .transpose(1, 0, 2)
                .reshape(n * ho * wo, out_channels)
            )
    return _stored_nc1hwc0(out, (n, ho, wo), out_channels, c0, bias)


def matmul(
    a: np.ndarray,
    b: np.ndarray,
    *,
    a_format: str,
    b_format: str,
    m: int,
    k: int,
    n: int,
    trans_a: bool = False,
    trans_b: bool = False,
    k_step: int | None = None,
) -> np.ndarray:
    """The accumulator of the product (..., M, K) x (..., K, N) run on the cube.

    `a` is logical (..., M, K), or (..., K, M) when `trans_a`, if `a_format` is "ND", else the
    FRACTAL_NZ form of that matrix; `b` likewise with (..., K, N) / (..., N, K) when `trans_b`. Batch
    dims broadcast as in numpy. `k_step` is the K elements contracted per step (the kernel's `tiling`
    k; None: all of K at once). Returns the logical (..., M, N) in float32 (int32 for 8-bit integers).
    """
    compute, accumulator = _accumulation_dtypes(a.dtype, b.dtype)
    largest = _largest_product(a.dtype, b.dtype) if accumulator == np.int32 else 1
    left = _logical_operand(a, a_format, (k, m) if trans_a else (m, k), "a")
    right = _logical_operand(b, b_format, (n, k) if trans_b else (k, n), "b")
    if trans_a:
        left = left.swapaxes(-1, -2)
    if trans_b:
        right = right.swapaxes(-1, -2)
    # The fractals' padded rows and columns hold zeros whose products the store drops, so the
    # accumulator's real (M, N) is computed from the real rows and columns alone.
    steps = [slice(start, start + width) for start, width in k_steps(k, k_step)]
    rows, columns = left.astype(compute, copy=False), right.astype(compute, copy=False)
    return accumulate(rows, columns, steps, accumulator, largest)


def k_steps(k_total: int, k_step: int | None) -> list[tuple[int, int]]:
    """(first K element, K elements) of each step contracting `k_total` elements `k_step` at a time:
    ceil(k_total / k_step) steps, the last one short; one step of everything when `k_step` is None."""
    if k_step is not None and k_step < 1:
        raise ValueError(f"a k-step must contract at least one element, got {k_step}")
    if k_step is None or k_step >= k_total:
        return [(0, k_total)]
    return [(start, min(k_step, k_total - start)) for start in range(0, k_total, k_step)]


def accumulate(
    rows: np.ndarray,
    columns: np.ndarray,
    steps: Sequence[slice | np.ndarray],
    accumulator: np.dtype,
    largest_product: int = 1,
) -> np.ndarray:
    """sum over `steps` of rows[..., step] @ columns[..., step, :]: one BLAS product per k-step over
    the whole (..., M, N) (`step_product`), each added into the `accumulator` (float32 or int32) in
    step order.

    `rows` and `columns` hold fp32 values (8-bit integers widened exactly); a step selects its K
    columns of `rows` and rows of `columns`. An integer step's fp32 sums are exact while its K times
    `largest_product` (2**14 for int8, 255**2 for uint8) stays below 2**24, which every tiling
    the compiler chooses (k <= 256) satisfies; a wider step (an untiled kernel) is contracted in
    exact pieces, which gives the same integers. The int32 accumulator wraps as the hardware's does.
    """
    if accumulator == np.int32:
        exact = max(1, (EXACT_FP32_INTEGER - 1) // largest_product)
        steps = [piece for step in steps for piece in _pieces(step, exact)]
    batch = np.broadcast_shapes(rows.shape[:-2], columns.shape[:-2])
    m, n = rows.shape[-2], columns.shape[-1]
    if not steps:
        return np.zeros((*batch, m, n), accumulator)
    total = np.empty((*batch, m, n), accumulator)
    out = total
    if int(np.prod(batch)) == 1:  # one matrix: the 2-D product BLAS adds into L0C in place
        rows, columns = rows.reshape(rows.shape[-2:]), columns.reshape(columns.shape[-2:])
        out = out.reshape(m, n)
    width = max(_width(step) for step in steps)
    restore = blas.set_threads(1) if int(np.prod(batch)) * m * width * n < ONE_THREAD_PRODUCTS else None
    try:
        for number, step in enumerate(steps):  # the first step writes L0C, the next ones add into it
            step_product(rows[..., step], columns[..., step, :], out, number > 0)
    finally:
        if restore is not None:
            blas.set_threads(restore)
    return total


def step_product(a: np.ndarray, b: np.ndarray, out: np.ndarray, add: bool) -> None:
    """One k-step's product on the cube, `out` = a @ b, or `out` += a @ b when `add`: one BLAS call,
    OpenBLAS's sgemm adding into an fp32 `out` in place where it can (`ge.emulator.blas`), else
    numpy's matmul (over every matrix of a batch at once) and an add."""
    if out.dtype == np.float32 and blas.add_product(a, b, out, add):
        return
    product = np.matmul(a, b)
    if out.dtype == np.int32:
        product = product.astype(np.int32)  # exact: the step's sums are integers below 2**24
    if add:
        np.add(out, product, out=out)
    else:
        out[...] = product


def _im2col(
    x: np.ndarray,
    in_channels: int,
    groups: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    out_size: tuple[int, int],
    compute: np.dtype,
) -> np.ndarray:
    """The L0A matrix (groups, N * Ho * Wo, K) of NC1HWC0 `x` as the cube's im2col load reads it:
    one row per output pixel (n, ho, wo), columns ordered (c1, i, j, k0) as the rows of FRACTAL_Z,
    each group's channels starting a new c0 block, padded lanes zero whatever `x` holds there."""
    n, c1, h, width, c0 = x.shape
    (kh, kw), (sh, sw), (dh, dw), (top, left, bottom, right) = kernel, strides, dilations, pads
    ho, wo = out_size
    cin_group = in_channels // groups
    k1_channels = -(-cin_group // c0)
    if (kh, kw) == (1, 1) and groups == 1 and not any(pads):
        # A pointwise convolution reads its input's pixels in place: the rows are the strided pixels.
        rows = np.empty((1, n, ho, wo, c1, c0), compute)
        rows[0] = x[:, :, : (ho - 1) * sh + 1 : sh, : (wo - 1) * sw + 1 : sw].transpose(0, 2, 3, 1, 4)
        if in_channels < c1 * c0:
            rows[..., -1, in_channels - (c1 - 1) * c0 :] = 0
        return rows.reshape(1, n * ho * wo, c1 * c0)
    padded = np.zeros((n, h + top + bottom, width + left + right, groups, k1_channels * c0), compute)
    channels = x.transpose(0, 2, 3, 1, 4).reshape(n, h, width, c1 * c0)[..., :in_channels]
    padded[:, top : top + h, left : left + width, :, :cin_group] = channels.reshape(n, h, width, groups, -1)

    windows = np.lib.stride_tricks.sliding_window_view(padded, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), (1, 2))
    windows = windows[:, : (ho - 1) * sh + 1 : sh, : (wo - 1) * sw + 1 : sw, :, :, ::dh, ::dw]
    rows = np.empty((groups, n, ho, wo, k1_channels, kh, kw, c0), compute)
    rows[...] = windows.reshape(n, ho, wo, groups, k1_channels, c0, kh, kw).transpose(3, 0, 1, 2, 4, 6, 7, 5)
    return rows.reshape(groups, n * ho * wo, k1_channels * kh * kw * c0)


def _columns(w: np.ndarray, groups: int, compute: np.dtype) -> np.ndarray:
    """The L0B matrix (groups, K, N1 * 16) of FRACTAL_Z weights (groups * K1, N1, 16, c0)."""
    k1, n1, _, c0 = w.shape
    tiles = w.reshape(groups, k1 // groups, n1, FRACTAL, c0).transpose(0, 1, 4, 2, 3)
    return np.ascontiguousarray(tiles, compute).reshape(groups, k1 // groups * c0, n1 * FRACTAL)


def _stored_nc1hwc0(
    out: np.ndarray, pixels: tuple[int, int, int], channels: int, c0: int, bias: np.ndarray | None
) -> np.ndarray:
    """The NC1HWC0 result (N, C1, Ho, Wo, c0) of the accumulator rows `out` (N * Ho * Wo, at least
    `channels` columns), `bias` added to the real channels and the padded lanes zero."""
    width = -(-channels // c0) * c0
    if out.shape[1] < width:
        wider = np.zeros((out.shape[0], width), out.dtype)
        wider[:, : out.shape[1]] = out
        out = wider
    out = out[:, :width]
    if channels < width:
        out[:, channels:] = 0
    if bias is not None:
        out[:, :channels] += np.asarray(bias).astype(out.dtype).reshape(channels)
    return np.ascontiguousarray(out.reshape(*pixels, width // c0, c0).transpose(0, 3, 1, 2, 4))


def _loaded(array: np.ndarray, key: tuple, build: Callable[[], np.ndarray]) -> np.ndarray:
    """`build()`, the form the cube reads `array` in, computed once for an array in read-only memory
    (a model's weights, which the run plan binds read-only and no kernel writes) and kept while the
    array lives; computed at every call for writable memory, whose bytes a run may change."""
    if array.flags.writeable:
        return build()
    identity = id(array)
    entry = _LOADED.get(identity)
    if entry is None or entry[0]() is not array:
        entry = _LOADED[identity] = (weakref.ref(array, lambda _: _LOADED.pop(identity, None)), {})
    forms = entry[1]
    if key not in forms:
        forms[key] = build()
    return forms[key]


_LOADED: dict[int, tuple[weakref.ref, dict[tuple, np.ndarray]]] = {}
"""The loaded forms of read-only arrays, by the array's id (checked against a weak reference)."""


def _depthwise(
    x: np.ndarray,
    w: np.ndarray,
    out_channels: int,
    groups: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    out_size: tuple[int, int],
    k_step: int | None,
) -> np.ndarray:
    """The products (N, Ho, Wo, out_channels) in the accumulator dtype of a convolution whose groups
    hold one input channel each. Window tap (i, j) sits at device K index (i * kw + j) * c0 (FRACTAL_Z
    pads the group's one channel to c0), so a k-step holds the taps of its K range; each step's fp32
    sum over its taps, for every pixel and output channel at once, is added into the accumulator."""
    n, c1, h, width, c0 = x.shape
    kh, kw = kernel
    cout_group = out_channels // groups
    (sh, sw), (dh, dw), (top, left, bottom, right), (ho, wo) = strides, dilations, pads, out_size
    compute, accumulator = _accumulation_dtypes(x.dtype, w.dtype)
    channels = x.transpose(0, 2, 3, 1, 4).reshape(n, h, width, c1 * c0)[..., :groups]
    padded = np.zeros((n, h + top + bottom, width + left + right, groups), compute)
    padded[:, top : top + h, left : left + width] = channels
    if cout_group > 1:
        padded = padded[..., np.arange(out_channels) // cout_group]  # each output channel's input
    # With unit width strides a window's row of Wo pixels is Wo x out_channels contiguous values,
    # so each tap multiplies whole rows by its weights tiled Wo times.
    rows_of = wo if sw == 1 else 1
    taps = _loaded(  # (kh * kw, out_channels), tiled rows_of times
        w,
        ("taps", out_channels, groups, kernel, compute, rows_of),
        lambda: np.tile(
            from_device(w, "FRACTAL_Z", (out_channels, 1, kh, kw), groups).reshape(out_channels, kh * kw).T,
            (1, rows_of),
        ).astype(compute),
    )
    shape = (n, ho, wo * out_channels) if sw == 1 else (n, ho, wo, out_channels)
    total: np.ndarray | None = None
    partial = np.empty(shape, compute)
    term = np.empty_like(partial)
    for start, count in k_steps(kh * kw * c0, k_step):
        first = True
        for tap in range(-(-start // c0), -(-(start + count) // c0)):
            i, j = divmod(tap, kw)
            rows = slice(i * dh, i * dh + (ho - 1) * sh + 1, sh)
            window = padded[:, rows, j * dw : j * dw + (wo - 1) * sw + 1 : sw].reshape(shape)
            if first:
                np.multiply(window, taps[tap], out=partial)
                first = False
            else:
                np.add(partial, np.multiply(window, taps[tap], out=term), out=partial)
        if first:
            continue  # a step holding only padded channels adds nothing
        if total is None:
            total = partial.astype(accumulator)  # the first step writes L0C, the next ones add into it
        else:
            np.add(total, partial.astype(accumulator, copy=False), out=total)
    assert total is not None, "a window has at least one tap"
    return total.reshape(n, ho, wo, out_channels)


def _narrow_groups(
    x: np.ndarray,
    w: np.ndarray,
    in_channels: int,
    out_channels: int,
    groups: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    out_size: tuple[int, int],
    k_step: int | None,
    largest_product: int,
) -> np.ndarray:
    """The grouped products (N, Ho, Wo, out_channels) in the accumulator dtype, over each group's real
    channels, k-step by k-step: a tap (channel c, window position i, j) sits at device K index
    (c // c0, i, j, c % c0) as in FRACTAL_Z, and each step sums the taps of its K range (a step
    holding only padded channels adds nothing and is skipped)."""
    n, _, h, width, c0 = x.shape
    kh, kw = kernel
    cin_group, cout_group = in_channels // groups, out_channels // groups
    (sh, sw), (dh, dw), (top, left, bottom, right), (ho, wo) = strides, dilations, pads, out_size
    compute, accumulator = _accumulation_dtypes(x.dtype, w.dtype)
    # Columns in device K order, (c // c0, i, j, c % c0) as in FRACTAL_Z, so each k-step's real
    # taps are one run of columns: for a group of at most c0 channels that is the (i, j, c) order.
    channel, position = np.divmod(np.arange(cin_group * kh * kw), kh * kw)
    device_k = ((channel // c0) * kh * kw + position) * c0 + channel % c0  # of taps ordered (c, i, j)
    order = np.argsort(device_k, kind="stable")
    within_block = cin_group <= c0
    columns = _loaded(
        w,
        ("device order", out_channels, cin_group, groups, kernel, compute),
        lambda: (
            from_device(w, "FRACTAL_Z", (out_channels, cin_group, kh, kw), groups)
            .astype(compute)
            .reshape(groups, cout_group, cin_group * kh * kw)[:, :, order]
            .transpose(0, 2, 1)
            .copy()
        ),
    )
    padded = np.zeros((n, h + top + bottom, width + left + right, in_channels), compute)
    channels = x.transpose(0, 2, 3, 1, 4).reshape(n, h, width, -1)[..., :in_channels]
    padded[:, top : top + h, left : left + width] = channels
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    windows = np.lib.stride_tricks.sliding_window_view(padded, span, axis=(1, 2))
    windows = windows[:, : sh * ho : sh, : sw * wo : sw, :, ::dh, ::dw]  # (N, Ho, Wo, C, kh, kw)
    taps = windows.reshape(n, ho, wo, groups, cin_group, kh, kw)
    if within_block:  # (g, N, Ho, Wo, i, j, c): device order already
        rows = np.ascontiguousarray(taps.transpose(3, 0, 1, 2, 5, 6, 4)).reshape(groups, n * ho * wo, -1)
    else:
        rows = taps.transpose(3, 0, 1, 2, 4, 5, 6).reshape(groups, n * ho * wo, -1)[..., order]
    ordered = device_k[order]
    k_total = -(-cin_group // c0) * c0 * kh * kw
    steps = []
    for start, count in k_steps(k_total, k_step):
        first, last = np.searchsorted(ordered, [start, start + count])
        if last > first:
            steps.append(slice(int(first), int(last)))
    out = accumulate(rows, columns, steps, accumulator, largest_product)  # (groups, N * Ho * Wo, cout_group)
    return (
        out.reshape(groups, n, ho, wo, cout_group).transpose(1, 2, 3, 0, 4).reshape(n, ho, wo, out_channels)
    )


def _accumulation_dtypes(a: np.dtype, b: np.dtype) -> tuple[np.dtype, np.dtype]:
    """(dtype the products are computed in, accumulator dtype) for cube inputs of dtypes `a` and `b`."""
    if a in _FLOAT_INPUTS and b in _FLOAT_INPUTS:
        return np.dtype(np.float32), np.dtype(np.float32)
    if a in _INTEGER_INPUTS and b in _INTEGER_INPUTS:
        # fp32 holds every 8-bit value exactly and multiplies through BLAS; a step's sums stay exact
        # (see `accumulate`).
        return np.dtype(np.float32), np.dtype(np.int32)
    raise ValueError(f"the cube takes float16, bfloat16, float32, int8 or uint8 inputs, got {a} and {b}")


def _largest_product(a: np.dtype, b: np.dtype) -> int:
    """The largest |x * y| of integers x of dtype `a` and y of dtype `b` (2**14 for int8)."""
    return max(abs(int(np.iinfo(a).min)), int(np.iinfo(a).max)) * max(
        abs(int(np.iinfo(b).min)), int(np.iinfo(b).max)
    )


def _width(step: slice | np.ndarray) -> int:
    """The K elements a step contracts."""
    return step.stop - step.start if isinstance(step, slice) else len(step)


def _pieces(step: slice | np.ndarray, width: int) -> list[slice | np.ndarray]:
    """`step` cut into runs of at most `width` K elements."""
    if isinstance(step, slice):
        return [slice(start, min(start + width, step.stop)) for start in range(step.start, step.stop, width)]
    return [step[start : start + width] for start in range(0, len(step), width)]


def _logical_operand(array: np.ndarray, fmt: str, matrix: tuple[int, int], name: str) -> np.ndarray:
    """The stored matrix (..., rows, cols) of a matmul operand given in ND or FRACTAL_NZ."""
    if fmt == "ND":
        if array.ndim < 2 or array.shape[-2:] != matrix:
            raise ValueError(f"matmul: ND operand {name} must end in {matrix}, got shape {array.shape}")
        return array
    if fmt == "FRACTAL_NZ":
        if array.ndim < 4:
            raise ValueError(
                f"matmul: FRACTAL_NZ operand {name} must have rank >= 4, got shape {array.shape}"
            )
        return _loaded(array, ("nz", matrix), lambda: _fractal_nz_load(array, matrix, name))
    raise ValueError(f"matmul: operand {name} must be ND or FRACTAL_NZ, got {fmt!r}")


def _fractal_nz_load(array: np.ndarray, matrix: tuple[int, int], name: str) -> np.ndarray:
    """The (..., rows, cols) matrix held by FRACTAL_NZ tiles (..., cols / 16, rows / 16, 16, 16), read
    fractal by fractal as the cube's tile load does (a second reading of the layout beside
    `ge.layout.from_device`, so a wrong layout does not cancel out)."""
    rows, cols = matrix
    tiles = (-(-cols // FRACTAL), -(-rows // FRACTAL), FRACTAL, FRACTAL)
    if array.shape[-4:] != tiles:
        raise ValueError(
            f"matmul: FRACTAL_NZ operand {name} of {matrix} must end in {tiles}, got {array.shape}"
        )
    fractals = array.swapaxes(-4, -3)  # (..., row block, column block, 16 rows, 16 columns)
    padded = fractals.swapaxes(-3, -2).reshape(*array.shape[:-4], tiles[1] * FRACTAL, tiles[0] * FRACTAL)
    return padded[..., :rows, :cols]
