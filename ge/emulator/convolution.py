"""2-D convolution on the emulated cube: checked and planned once per shape, then run per launch.

The cube computes a convolution as the product of its im2col matrix (L0A: one row per output
pixel, columns in FRACTAL_Z's device K order (c1, i, j, k0)) and its FRACTAL_Z weights (L0B),
k-step by k-step into the fp32 (int32 for 8-bit inputs) accumulator (`ge.emulator.cube.accumulate`).
Three shapes of work take three routes to the same sums:

- the general route builds the im2col rows from the NC1HWC0 input (padded lanes zero whatever the
  input holds there) and multiplies them by the weights laid out as an L0B matrix;
- depthwise convolutions (one input channel per group) sum their window taps for every channel
  and pixel at once, each k-step taking the taps its K range holds;
- narrow groups, and images with fewer channels than a block (an image's 3), would be mostly the
  fractals' zero padding, so their products are summed over the real channels only, in device K
  order, each k-step over the real taps of its K range.

`plan_conv2d` checks the shapes and decides everything a launch needs (route, output size, k-step
ranges); the returned `Convolution` is called with the operands. Weights in read-only memory are
laid out once (`ge.emulator.cube.loaded`). The result is NC1HWC0 with its padded lanes zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ge.dialects.formats import FRACTAL, device_shape
from ge.layout import from_device

from .cube import (
    EXACT_FP32_INTEGER,
    accumulate,
    accumulation_dtypes,
    k_steps,
    largest_product,
    loaded,
)

GENERAL, DEPTHWISE, NARROW = "general", "depthwise", "narrow"


@dataclass(frozen=True)
class Convolution:
    """One 2-D convolution (cross-correlation, as ONNX Conv) on the cube for one input shape, as
    `plan_conv2d` planned it; call it with the NC1HWC0 input, the FRACTAL_Z weights and the logical
    bias (or None) to get the NC1HWC0 accumulator."""

    x_shape: tuple[int, ...]
    w_shape: tuple[int, ...]
    in_channels: int
    out_channels: int
    kernel: tuple[int, int]
    strides: tuple[int, int]
    pads: tuple[int, int, int, int]
    dilations: tuple[int, int]
    groups: int
    out_size: tuple[int, int]
    compute: np.dtype
    accumulator: np.dtype
    largest: int
    route: str
    steps: list = field(repr=False)
    """The k-steps: K column ranges of the rows (general, narrow), or each step's window taps (depthwise)."""
    order: np.ndarray | None = field(default=None, repr=False)
    """Narrow route: the (c, i, j) taps in device K order."""

    def __call__(self, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
        if x.shape != self.x_shape or w.shape != self.w_shape:
            raise ValueError(
                f"conv2d: planned for x {self.x_shape} and w {self.w_shape}, got {x.shape} and {w.shape}"
            )
        n, ho, wo = self.x_shape[0], *self.out_size
        if self.route == DEPTHWISE and self.out_channels == self.groups and self.strides[1] == 1:
            return self._depthwise_blocks(x, w, bias)  # measured faster for unit width strides only
        if self.route == DEPTHWISE:
            out = self._depthwise(x, w).reshape(n * ho * wo, self.out_channels)
        elif self.route == NARROW:
            out = self._narrow(x, w).reshape(n * ho * wo, self.out_channels)
        else:
            out = self._general(x, w)
        return _stored_nc1hwc0(out, (n, ho, wo), self.out_channels, self.x_shape[-1], bias)

    # ----------------------------------------------------------------------------------------

    def _general(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        groups, compute = self.groups, self.compute
        rows = _im2col(x, self, compute)
        columns = loaded(w, ("columns", groups, compute), lambda: _columns(w, groups, compute))
        out = accumulate(rows, columns, self.steps, self.accumulator, self.largest)  # (g, N Ho Wo, N1 16)
        if groups == 1:
            return out[0]
        cout_group = self.out_channels // groups
        return out[:, :, :cout_group].transpose(1, 0, 2).reshape(-1, self.out_channels)

    def _depthwise_blocks(self, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
        """A depthwise convolution with one output channel per group, on the NC1HWC0 blocks
        themselves: output lane c of block c1 reads input lane c of block c1, so each window tap
        multiplies the shifted input blocks by its weights laid out as (C1, C0) lanes (zero in the
        padded lanes, whose inputs are zeroed too), whole rows of Wo x C0 values at a time (the
        width stride is 1). Returns the NC1HWC0 accumulator, bias added."""
        n, c1, h, width, c0 = x.shape
        kw, channels = self.kernel[1], self.out_channels
        sh, (dh, dw), (top, left, bottom, right) = self.strides[0], self.dilations, self.pads
        ho, wo = self.out_size
        compute, accumulator = self.compute, self.accumulator
        padded = np.zeros((n, c1, h + top + bottom, width + left + right, c0), compute)
        padded[:, :, top : top + h, left : left + width] = x
        if channels < c1 * c0:
            padded[:, -1, ..., channels - (c1 - 1) * c0 :] = 0  # whatever x holds in padded lanes
        taps = loaded(  # (kh * kw, 1, C1, 1, Wo * C0)
            w,
            ("block taps", channels, self.kernel, compute, wo),
            lambda: _block_taps(w, channels, self.kernel, c1, c0, wo).astype(compute),
        )
        shape = (n, c1, ho, wo * c0)
        total: np.ndarray | None = None
        partial = np.empty(shape, compute)
        term = np.empty_like(partial)
        for step_taps in self.steps:
            for number, tap in enumerate(step_taps):
                i, j = divmod(tap, kw)
                rows = slice(i * dh, i * dh + (ho - 1) * sh + 1, sh)
                window = padded[:, :, rows, j * dw : j * dw + wo].reshape(shape)
                if number == 0:
                    np.multiply(window, taps[tap], out=partial)
                else:
                    np.add(partial, np.multiply(window, taps[tap], out=term), out=partial)
            if total is None:
                total = partial.astype(accumulator)  # the first step writes L0C, the next ones add into it
            else:
                np.add(total, partial.astype(accumulator, copy=False), out=total)
        assert total is not None, "a window has at least one tap"
        total = total.reshape(n, c1, ho, wo, c0)
        if bias is not None:
            lanes = np.zeros(c1 * c0, accumulator)
            lanes[:channels] = np.asarray(bias).astype(accumulator).reshape(channels)
            total += lanes.reshape(1, c1, 1, 1, c0)
        return total

    def _depthwise(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The products (N, Ho, Wo, out_channels) of a convolution whose groups hold one input
        channel each. Window tap (i, j) sits at device K index (i * kw + j) * c0 (FRACTAL_Z pads
        the group's one channel to c0), so a k-step holds the taps of its K range; each step's fp32
        sum over its taps, for every pixel and output channel at once, is added into the
        accumulator."""
        n, c1, h, width, c0 = x.shape
        (kh, kw), groups, channels = self.kernel, self.groups, self.out_channels
        cout_group = channels // groups
        (sh, sw), (dh, dw), (top, left, bottom, right) = self.strides, self.dilations, self.pads
        ho, wo = self.out_size
        compute, accumulator = self.compute, self.accumulator
        padded = np.zeros((n, h + top + bottom, width + left + right, groups), compute)
        padded[:, top : top + h, left : left + width] = x.transpose(0, 2, 3, 1, 4).reshape(n, h, width, -1)[
            ..., :groups
        ]
        if cout_group > 1:
            padded = padded[..., np.arange(channels) // cout_group]  # each output channel's input
        # With unit width strides a window's row of Wo pixels is Wo x out_channels contiguous
        # values, so each tap multiplies whole rows by its weights tiled Wo times.
        rows_of = wo if sw == 1 else 1
        taps = loaded(  # (kh * kw, out_channels), tiled rows_of times
            w,
            ("taps", channels, groups, self.kernel, compute, rows_of),
            lambda: np.tile(
                from_device(w, "FRACTAL_Z", (channels, 1, kh, kw), groups).reshape(channels, kh * kw).T,
                (1, rows_of),
            ).astype(compute),
        )
        shape = (n, ho, wo * channels) if sw == 1 else (n, ho, wo, channels)
        total: np.ndarray | None = None
        partial = np.empty(shape, compute)
        term = np.empty_like(partial)
        for step_taps in self.steps:
            for number, tap in enumerate(step_taps):
                i, j = divmod(tap, kw)
                rows = slice(i * dh, i * dh + (ho - 1) * sh + 1, sh)
                window = padded[:, rows, j * dw : j * dw + (wo - 1) * sw + 1 : sw].reshape(shape)
                if number == 0:
                    np.multiply(window, taps[tap], out=partial)
                else:
                    np.add(partial, np.multiply(window, taps[tap], out=term), out=partial)
            if total is None:
                total = partial.astype(accumulator)  # the first step writes L0C, the next ones add into it
            else:
                np.add(total, partial.astype(accumulator, copy=False), out=total)
        assert total is not None, "a window has at least one tap"
        return total

    def _narrow(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The grouped products (N, Ho, Wo, out_channels) over each group's real channels, in
        device K order (c // c0, i, j, c % c0), k-step by k-step (a step holding only padded
        channels adds nothing and is left out of `steps`)."""
        n, _, h, width, c0 = x.shape
        (kh, kw), groups, channels = self.kernel, self.groups, self.out_channels
        cin_group, cout_group = self.in_channels // groups, channels // groups
        (sh, sw), (dh, dw), (top, left, bottom, right) = self.strides, self.dilations, self.pads
        ho, wo = self.out_size
        compute, order = self.compute, self.order
        assert order is not None
        columns = loaded(
            w,
            ("device order", channels, cin_group, groups, self.kernel, compute),
            lambda: (
                from_device(w, "FRACTAL_Z", (channels, cin_group, kh, kw), groups)
                .astype(compute)
                .reshape(groups, cout_group, cin_group * kh * kw)[:, :, order]
                .transpose(0, 2, 1)
                .copy()
            ),
        )
        padded = np.zeros((n, h + top + bottom, width + left + right, self.in_channels), compute)
        padded[:, top : top + h, left : left + width] = x.transpose(0, 2, 3, 1, 4).reshape(n, h, width, -1)[
            ..., : self.in_channels
        ]
        span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
        windows = np.lib.stride_tricks.sliding_window_view(padded, span, axis=(1, 2))
        windows = windows[:, : sh * ho : sh, : sw * wo : sw, :, ::dh, ::dw]  # (N, Ho, Wo, C, kh, kw)
        taps = windows.reshape(n, ho, wo, groups, cin_group, kh, kw)
        if cin_group <= c0:  # (g, N, Ho, Wo, i, j, c): device order already
            rows = np.ascontiguousarray(taps.transpose(3, 0, 1, 2, 5, 6, 4)).reshape(groups, n * ho * wo, -1)
        else:
            rows = taps.transpose(3, 0, 1, 2, 4, 5, 6).reshape(groups, n * ho * wo, -1)[..., order]
        out = accumulate(rows, columns, self.steps, self.accumulator, self.largest)  # (g, N Ho Wo, Cg)
        return out.transpose(1, 0, 2).reshape(n, ho, wo, channels)


def plan_conv2d(
    x_shape: tuple[int, ...],
    x_dtype: np.dtype,
    w_shape: tuple[int, ...],
    w_dtype: np.dtype,
    *,
    out_channels: int,
    in_channels: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    groups: int,
    k_step: int | None = None,
) -> Convolution:
    """The `Convolution` of an NC1HWC0 input of `x_shape` (N, C1, H, W, c0) holding `in_channels`
    channels and FRACTAL_Z weights of `w_shape` for logical (out_channels, in_channels // groups,
    kh, kw), with the same c0; `pads` are (top, left, bottom, right); `k_step` is the K elements
    contracted per step (the kernel's `tiling` k; None: all of K at once). K is the device K: each
    group's channels padded to whole c0 blocks, times the kernel window.

    Raises ValueError when the shapes, dtypes or parameters do not make a convolution."""
    compute, accumulator = accumulation_dtypes(np.dtype(x_dtype), np.dtype(w_dtype))
    largest = largest_product(np.dtype(x_dtype), np.dtype(w_dtype)) if accumulator == np.int32 else 1
    if len(x_shape) != 5:
        raise ValueError(f"conv2d: x must be NC1HWC0 (N, C1, H, W, C0), got shape {x_shape}")
    _, c1, h, width, c0 = x_shape
    kh, kw = kernel
    if groups <= 0 or in_channels % groups or out_channels % groups:
        raise ValueError(
            f"conv2d: {in_channels} -> {out_channels} channels do not split into {groups} groups"
        )
    if c1 != -(-in_channels // c0):
        raise ValueError(
            f"conv2d: x of shape {x_shape} does not hold {in_channels} channels in blocks of {c0}"
        )
    cin_group, cout_group = in_channels // groups, out_channels // groups
    expected_w = device_shape((out_channels, cin_group, kh, kw), "FRACTAL_Z", c0, groups)
    if tuple(w_shape) != expected_w:
        raise ValueError(f"conv2d: FRACTAL_Z weights must have shape {expected_w}, got {w_shape}")
    (sh, sw), (dh, dw), (top, left, bottom, right) = strides, dilations, pads
    if min(sh, sw, dh, dw) <= 0 or min(pads) < 0:
        raise ValueError(
            f"conv2d: strides {strides} and dilations {dilations} must be positive, pads {pads} >= 0"
        )
    span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    ho, wo = (h + top + bottom - span_h) // sh + 1, (width + left + right - span_w) // sw + 1
    if ho <= 0 or wo <= 0:
        raise ValueError(f"conv2d: a {kh}x{kw} kernel (dilations {dilations}) does not fit the padded input")
    order = None
    if groups > 1 and cin_group == 1 and kh * kw * largest < EXACT_FP32_INTEGER:
        # Depthwise: each output channel reads one input channel; a step sums its window taps.
        route = DEPTHWISE
        steps = [
            list(range(-(-start // c0), -(-(start + count) // c0)))
            for start, count in k_steps(kh * kw * c0, k_step)
        ]
        steps = [taps for taps in steps if taps]  # a step holding only padded channels adds nothing
    elif (groups > 1 and cin_group * cout_group < c0 * FRACTAL) or cin_group < c0:
        # Mostly padding in the fractals: the products run over the real channels only.
        route = NARROW
        channel, position = np.divmod(np.arange(cin_group * kh * kw), kh * kw)
        device_k = ((channel // c0) * kh * kw + position) * c0 + channel % c0  # of taps ordered (c, i, j)
        order = np.argsort(device_k, kind="stable")
        ordered = device_k[order]
        steps = []
        for start, count in k_steps(-(-cin_group // c0) * c0 * kh * kw, k_step):
            first, last = (int(i) for i in np.searchsorted(ordered, [start, start + count]))
            if last > first:
                steps.append(slice(first, last))
    else:
        route = GENERAL
        k_total = -(-cin_group // c0) * c0 * kh * kw
        steps = [slice(start, start + count) for start, count in k_steps(k_total, k_step)]
    return Convolution(
        tuple(x_shape),
        tuple(w_shape),
        in_channels,
        out_channels,
        kernel,
        strides,
        pads,
        dilations,
        groups,
        (ho, wo),
        compute,
        accumulator,
        largest,
        route,
        steps,
        order,
    )


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    *,
    bias: np.ndarray | None = None,
    **parameters,
) -> np.ndarray:
    """The accumulator of a 2-D convolution run on the cube: `plan_conv2d(x.shape, x.dtype,
    w.shape, w.dtype, **parameters)` applied to `x`, `w` and the logical `bias` (out_channels,),
    which is added to the accumulator. Returns NC1HWC0 (N, ceil(out_channels / c0), Ho, Wo, c0) in
    float32 (int32 for 8-bit integer inputs), padded channels zero."""
    return plan_conv2d(x.shape, x.dtype, w.shape, w.dtype, **parameters)(x, w, bias)


# --------------------------------------------------------------------------------------------


def _im2col(x: np.ndarray, conv: Convolution, compute: np.dtype) -> np.ndarray:
    """The L0A matrix (groups, N * Ho * Wo, K) of NC1HWC0 `x` as the cube's im2col load reads it:
    one row per output pixel (n, ho, wo), columns ordered (c1, i, j, k0) as the rows of FRACTAL_Z,
    each group's channels starting a new c0 block, padded lanes zero whatever `x` holds there."""
    n, c1, h, width, c0 = x.shape
    (kh, kw), (sh, sw), (dh, dw) = conv.kernel, conv.strides, conv.dilations
    (top, left, bottom, right), (ho, wo) = conv.pads, conv.out_size
    groups, in_channels = conv.groups, conv.in_channels
    cin_group = in_channels // groups
    k1_channels = -(-cin_group // c0)
    if (kh, kw) == (1, 1) and groups == 1 and not any(conv.pads):
        # A pointwise convolution reads its input's pixels in place: the rows are the strided pixels.
        rows = np.empty((1, n, ho, wo, c1, c0), compute)
        rows[0] = x[:, :, : (ho - 1) * sh + 1 : sh, : (wo - 1) * sw + 1 : sw].transpose(0, 2, 3, 1, 4)
        if in_channels < c1 * c0:
            rows[..., -1, in_channels - (c1 - 1) * c0 :] = 0
        return rows.reshape(1, n * ho * wo, c1 * c0)
    if groups == 1:
        return _im2col_blocks(x.astype(compute, copy=False), conv)
    padded = np.zeros((n, h + top + bottom, width + left + right, groups, k1_channels * c0), compute)
    channels = x.transpose(0, 2, 3, 1, 4).reshape(n, h, width, c1 * c0)[..., :in_channels]
    padded[:, top : top + h, left : left + width, :, :cin_group] = channels.reshape(n, h, width, groups, -1)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), (1, 2))
    windows = windows[:, : (ho - 1) * sh + 1 : sh, : (wo - 1) * sw + 1 : sw, :, :, ::dh, ::dw]
    rows = np.empty((groups, n, ho, wo, k1_channels, kh, kw, c0), compute)
    rows[...] = windows.reshape(n, ho, wo, groups, k1_channels, c0, kh, kw).transpose(3, 0, 1, 2, 4, 6, 7, 5)
    return rows.reshape(groups, n * ho * wo, k1_channels * kh * kw * c0)


def _im2col_blocks(x: np.ndarray, conv: Convolution) -> np.ndarray:
    """`_im2col` of one group: its (c1, i, j, k0) columns are whole C0 blocks of the padded input,
    so the rows are gathered block by block (c0 lanes moved as one element)."""
    n, c1, h, width, c0 = x.shape
    (kh, kw), (sh, sw), (dh, dw) = conv.kernel, conv.strides, conv.dilations
    (top, left, bottom, right), (ho, wo) = conv.pads, conv.out_size
    block = np.dtype((np.void, c0 * x.itemsize))
    padded = np.zeros((n, h + top + bottom, width + left + right, c1, c0), x.dtype)
    pixels = x.view(block)[..., 0].transpose(0, 2, 3, 1)  # (N, H, W, C1) blocks
    padded.view(block)[:, top : top + h, left : left + width, :, 0] = pixels
    if conv.in_channels < c1 * c0:
        padded[..., -1, conv.in_channels - (c1 - 1) * c0 :] = 0  # padded lanes, whatever x holds there
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    windows = np.lib.stride_tricks.sliding_window_view(padded.view(block)[..., 0], span, axis=(1, 2))
    windows = windows[:, : (ho - 1) * sh + 1 : sh, : (wo - 1) * sw + 1 : sw, :, ::dh, ::dw]
    rows = np.empty((n, ho, wo, c1, kh, kw, c0), x.dtype)  # the windows (N, Ho, Wo, C1, kh, kw) of blocks
    rows.view(block)[..., 0] = windows
    return rows.reshape(1, n * ho * wo, c1 * kh * kw * c0)


def _block_taps(
    w: np.ndarray, channels: int, kernel: tuple[int, int], c1: int, c0: int, rows_of: int
) -> np.ndarray:
    """A depthwise convolution's weights (one channel per group) as (kh * kw, 1, C1, 1,
    rows_of * C0): each tap's weights in NC1HWC0 lanes, zero past `channels`, repeated for
    `rows_of` pixels of a row."""
    kh, kw = kernel
    logical = from_device(w, "FRACTAL_Z", (channels, 1, kh, kw), channels).reshape(channels, kh * kw)
    lanes = np.zeros((c1 * c0, kh * kw), w.dtype)
    lanes[:channels] = logical
    blocks = lanes.T.reshape(kh * kw, 1, c1, 1, c0)
    return np.tile(blocks, (1, 1, 1, 1, rows_of))


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
    width = math.ceil(channels / c0) * c0
    if out.shape[1] < width:
        wider = np.zeros((out.shape[0], width), out.dtype)
        wider[:, : out.shape[1]] = out
        out = wider
    out = out[:, :width]
    if channels < width:
        out[:, channels:] = 0
    if bias is not None:
        out[:, :channels] += np.asarray(bias).astype(out.dtype).reshape(channels)
    n, ho, wo = pixels
    if not out.flags.c_contiguous:
        return np.ascontiguousarray(out.reshape(n, ho, wo, width // c0, c0).transpose(0, 3, 1, 2, 4))
    # Each pixel's C0 lanes move as one element of c0 * itemsize bytes: the same bytes in half
    # the time of an element-by-element transpose.
    blocks = out.view(np.dtype((np.void, c0 * out.itemsize))).reshape(n, ho * wo, width // c0)
    moved = np.ascontiguousarray(blocks.transpose(0, 2, 1))
    return moved.view(out.dtype).reshape(n, width // c0, ho, wo, c0)
