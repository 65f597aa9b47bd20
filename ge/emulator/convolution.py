"""2-D convolution on the emulated cube: checked and planned once per shape, then run per launch.

The cube computes a convolution as the product of its im2col matrix (L0A: one row per output
pixel, columns in FRACTAL_Z's device K order (c1, i, j, k0)) and its FRACTAL_Z weights (L0B),
k-step by k-step into the fp32 (int32 for 8-bit inputs) accumulator (`ge.emulator.cube.accumulate`).
Three shapes of work take three routes to the same sums:

- the general route builds the im2col rows from the NC1HWC0 input (padded lanes zero whatever the
  input holds there) and multiplies them by the weights laid out as an L0B matrix;
- depthwise convolutions (one input channel per group) sum their window taps for every channel
  and pixel at once, each k-step taking the taps its K range holds; with one output channel per
  group, on the NC1HWC0 blocks themselves, a row of Wo x C0 lanes per tap (`DEPTHWISE_ROWS`; a
  W stride reads the input split into that many column phases, so a row is contiguous still);
- narrow groups, and images with fewer channels than a block (an image's 3), would be mostly the
  fractals' zero padding, so their products are summed over the real channels only, in device K
  order, each k-step over the real taps of its K range.

`plan_conv2d` checks the shapes and decides everything a launch needs (route, output size, k-step
ranges); the returned `Convolution` is called with the operands. Weights in read-only memory are
laid out once (`ge.emulator.cube.LoadedForm`); the loads themselves are `ge.emulator.cube_loads`,
planned with the convolution, which keep a small padded input and its views from call to call
(runs of one model are one at a time). The result is NC1HWC0 with its padded lanes zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ge.dialects.formats import FRACTAL, device_shape
from ge.layout import from_device, reshaped_view

from .cube import EXACT_FP32_INTEGER, LoadedForm, accumulate, accumulation_dtypes, k_steps, largest_product
from .cube_loads import (
    BlockRows,
    DepthwiseRows,
    Load,
    PixelRows,
    Window,
    depthwise_taps,
    im2col,
    l0b_columns,
    padded_channels,
    stored_nc1hwc0,
    sum_taps,
)

GENERAL, DEPTHWISE, DEPTHWISE_ROWS, NARROW = "general", "depthwise", "depthwise rows", "narrow"


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
    ranges: list[slice] = field(repr=False)
    """The k-steps as K column ranges of the rows (general and narrow routes)."""
    taps: list[list[int]] = field(repr=False)
    """The k-steps as the window taps each one sums (depthwise routes)."""
    order: np.ndarray | None = field(default=None, repr=False)
    """Narrow route: the (c, i, j) taps in device K order."""
    weights: LoadedForm = field(default_factory=LoadedForm, repr=False, compare=False)
    """The weights in the form the route reads them (L0B columns, taps), kept for read-only ones."""
    biases: LoadedForm = field(default_factory=LoadedForm, repr=False, compare=False)
    """A read-only bias laid out as the accumulator's lanes (depthwise rows route)."""
    load: Load | None = field(default=None, repr=False, compare=False)
    """How the route loads its input (`ge.emulator.cube_loads`: one group's rows, an image's
    pixels, a depthwise product's padded blocks), with the buffers it keeps between calls."""

    def __call__(
        self, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None = None, into: np.ndarray | None = None
    ) -> np.ndarray:
        """The NC1HWC0 accumulator, stored in `into` if given (of its shape and dtype)."""
        if x.shape != self.x_shape or w.shape != self.w_shape:
            raise ValueError(
                f"conv2d: planned for x {self.x_shape} and w {self.w_shape}, got {x.shape} and {w.shape}"
            )
        n, ho, wo = self.x_shape[0], *self.out_size
        if self.in_channels == 0:  # a sum over no channels: the bias alone, as onnxruntime has it
            out = np.zeros((n * ho * wo, self.out_channels), self.accumulator)
            return stored_nc1hwc0(out, (n, ho, wo), self.out_channels, self.x_shape[-1], bias, into)
        if self.route == DEPTHWISE_ROWS:
            return self._depthwise_rows(x, w, bias, into)
        if self.route == DEPTHWISE:
            out = self._depthwise(x, w).reshape(n * ho * wo, self.out_channels)
        elif self.route == NARROW:
            out = self._narrow(x, w).reshape(n * ho * wo, self.out_channels)
        else:
            out = self._general(x, w)
        return stored_nc1hwc0(out, (n, ho, wo), self.out_channels, self.x_shape[-1], bias, into)

    # ----------------------------------------------------------------------------------------

    @property
    def _window(self) -> Window:
        return (self.kernel, self.strides, self.pads, self.dilations, self.out_size)

    def _general(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        groups, compute = self.groups, self.compute
        if groups == 1:
            assert isinstance(self.load, BlockRows)
            rows = self.load.rows_of(x)
        else:
            rows = im2col(x, self.in_channels, groups, *self._window, compute)
        columns = self.weights(w, lambda: l0b_columns(w, groups, compute))
        out = accumulate(rows, columns, self.ranges, self.accumulator, self.largest)  # (g, N Ho Wo, N1 16)
        if groups == 1:
            return out[0]
        cout_group = self.out_channels // groups
        return out[:, :, :cout_group].transpose(1, 0, 2).reshape(-1, self.out_channels)

    def _depthwise_rows(
        self, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, into: np.ndarray | None
    ) -> np.ndarray:
        """A depthwise convolution with one output channel per group, on the NC1HWC0 blocks
        themselves: output lane c of block c1 reads input lane c of block c1, so each window tap
        multiplies the shifted input blocks, a row of Wo x C0 lanes at a time, by its weights laid
        out as (C1, C0) lanes (zero in the padded lanes, whose inputs are zeroed too). Returns the
        NC1HWC0 accumulator, bias added, summed in `into` when its rows allow.

        The padded input (`DepthwiseRows`: zero borders, the interior copied in, split into the W
        stride's column phases) and its window views are kept from call to call when small, so a
        call copies the input once and runs two ufuncs per tap."""
        n, c1, _, _, c0 = x.shape
        (kh, kw), channels, compute = self.kernel, self.out_channels, self.compute
        ho, wo = self.out_size
        assert isinstance(self.load, DepthwiseRows)
        windows = self.load.windows_of(x)

        def lanes() -> np.ndarray:  # (kh * kw, 1, C1, 1, Wo * C0)
            weights = np.zeros((c1 * c0, kh * kw), compute)
            weights[:channels] = depthwise_taps(w, channels, channels, self.kernel).T
            return np.tile(weights.T.reshape(kh * kw, 1, c1, 1, c0), (1, 1, 1, 1, wo))

        taps = self.weights(w, lanes)
        shape = (n, c1, ho, wo * c0)
        out = None
        if into is not None and self.accumulator == into.dtype:
            try:
                out = reshaped_view(into, shape)
            except ValueError:  # C0 lanes and W not contiguous
                out = None
        total = sum_taps(windows.__getitem__, taps, self.taps, shape, compute, self.accumulator, out)
        total = total.reshape(n, c1, ho, wo, c0)
        if bias is not None:
            total += self.biases(bias, lambda: _lanes(bias, channels, c1, c0, self.accumulator))
        if into is None:
            return total
        if out is None:  # summed apart
            into[...] = total
        return into

    def _depthwise(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The products (N, Ho, Wo, out_channels) of a convolution whose groups hold one input
        channel each. Window tap (i, j) sits at device K index (i * kw + j) * c0 (FRACTAL_Z pads
        the group's one channel to c0), so a k-step holds the taps of its K range; each step's fp32
        sum over its taps, for every pixel and output channel at once, is added into the
        accumulator."""
        n = x.shape[0]
        kw, groups, channels, compute = self.kernel[1], self.groups, self.out_channels, self.compute
        (sh, sw), (dh, dw), (ho, wo) = self.strides, self.dilations, self.out_size
        padded = padded_channels(x, groups, self.pads, compute)
        if channels > groups:
            padded = padded[..., np.arange(channels) // (channels // groups)]  # each output channel's input
        # With unit width strides a window's row of Wo pixels is Wo x out_channels contiguous
        # values, so each tap multiplies whole rows by its weights tiled Wo times.
        rows_of = wo if sw == 1 else 1
        taps = self.weights(
            w, lambda: np.tile(depthwise_taps(w, channels, groups, self.kernel), (1, rows_of)).astype(compute)
        )
        shape = (n, ho, wo * channels) if sw == 1 else (n, ho, wo, channels)

        def window(tap: int) -> np.ndarray:
            i, j = divmod(tap, kw)
            rows = slice(i * dh, i * dh + (ho - 1) * sh + 1, sh)
            return padded[:, rows, j * dw : j * dw + (wo - 1) * sw + 1 : sw].reshape(shape)

        return sum_taps(window, taps, self.taps, shape, compute, self.accumulator)

    def _narrow(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The grouped products (N, Ho, Wo, out_channels) over each group's real channels, in
        device K order (c // c0, i, j, c % c0), k-step by k-step (a step holding only padded
        channels adds nothing and is left out of `ranges`)."""
        n, c0 = x.shape[0], x.shape[-1]
        (kh, kw), groups, channels = self.kernel, self.groups, self.out_channels
        cin_group, cout_group = self.in_channels // groups, channels // groups
        (sh, sw), (dh, dw), (ho, wo) = self.strides, self.dilations, self.out_size
        compute, order = self.compute, self.order
        assert order is not None
        columns = self.weights(
            w,
            lambda: (
                from_device(w, "FRACTAL_Z", (channels, cin_group, kh, kw), groups)
                .astype(compute)
                .reshape(groups, cout_group, cin_group * kh * kw)[:, :, order]
                .transpose(0, 2, 1)
                .copy()
            ),
        )
        if isinstance(self.load, PixelRows) and x.dtype == compute and x.strides[-1] == x.itemsize:
            rows = self.load.rows_of(x)  # one group of fewer channels than a block
            out = accumulate(rows, columns, self.ranges, self.accumulator, self.largest)
            return out.reshape(n, ho, wo, channels)
        padded = padded_channels(x, self.in_channels, self.pads, compute)
        span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
        windows = np.lib.stride_tricks.sliding_window_view(padded, span, axis=(1, 2))
        windows = windows[:, : sh * ho : sh, : sw * wo : sw, :, ::dh, ::dw]  # (N, Ho, Wo, C, kh, kw)
        taps = windows.reshape(n, ho, wo, groups, cin_group, kh, kw)
        if cin_group <= c0:  # (g, N, Ho, Wo, i, j, c): device order already
            rows = np.ascontiguousarray(taps.transpose(3, 0, 1, 2, 5, 6, 4)).reshape(groups, n * ho * wo, -1)
        else:
            rows = taps.transpose(3, 0, 1, 2, 4, 5, 6).reshape(groups, n * ho * wo, -1)[..., order]
        out = accumulate(rows, columns, self.ranges, self.accumulator, self.largest)  # (g, N Ho Wo, Cg)
        return out.transpose(1, 0, 2).reshape(n, ho, wo, channels)


def _lanes(bias: np.ndarray, channels: int, c1: int, c0: int, dtype: np.dtype) -> np.ndarray:
    """A logical [channels] bias as (1, C1, 1, 1, C0) lanes of `dtype`, zero in the padded ones."""
    lanes = np.zeros(c1 * c0, dtype)
    lanes[:channels] = np.asarray(bias).astype(dtype).reshape(channels)
    return lanes.reshape(1, c1, 1, 1, c0)


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
    # A stride along an axis of one output position moves no window: stride 1 reads the same
    # numbers, and keeps the loads' window views within what numpy can stride (a 2**62 stride).
    strides = (sh if ho > 1 else 1, sw if wo > 1 else 1)
    order, ranges, taps = None, [], []
    if groups > 1 and cin_group == 1 and kh * kw * largest < EXACT_FP32_INTEGER:
        # Depthwise: each output channel reads one input channel; a step sums its window taps.
        # With one output channel per group, on the NC1HWC0 rows (measured faster there than on
        # (N, H, W, C), which a channel multiplier needs).
        route = DEPTHWISE_ROWS if cout_group == 1 else DEPTHWISE
        # Tap t sits at device K index t * c0: a step holds the taps in its K range (a step holding
        # only padded channels adds nothing and is left out).
        bounds = k_steps(kh * kw * c0, k_step)
        held = (range(-(-start // c0), -(-(start + count) // c0)) for start, count in bounds)
        taps = [list(step) for step in held if step]
    elif (groups > 1 and cin_group * cout_group < c0 * FRACTAL) or cin_group < c0:
        # Mostly padding in the fractals: the products run over the real channels only.
        route = NARROW
        channel, position = np.divmod(np.arange(cin_group * kh * kw), kh * kw)
        device_k = ((channel // c0) * kh * kw + position) * c0 + channel % c0  # of taps ordered (c, i, j)
        order = np.argsort(device_k, kind="stable")
        ordered = device_k[order]
        for start, count in k_steps(-(-cin_group // c0) * c0 * kh * kw, k_step):
            first, last = (int(i) for i in np.searchsorted(ordered, [start, start + count]))
            if last > first:
                ranges.append(slice(first, last))
    else:
        route = GENERAL
        k_total = -(-cin_group // c0) * c0 * kh * kw
        ranges = [slice(start, start + count) for start, count in k_steps(k_total, k_step)]
    window = (kernel, strides, pads, dilations, (ho, wo))
    load: Load | None = None
    if route == DEPTHWISE_ROWS:
        load = DepthwiseRows.of(tuple(x_shape), out_channels, window, compute)
    elif groups == 1 and route == GENERAL:
        load = BlockRows.of(tuple(x_shape), in_channels, window, compute)
    elif groups == 1:  # narrow: fewer channels than a block
        load = PixelRows.of(tuple(x_shape), in_channels, window, compute)
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
        ranges,
        taps,
        order,
        load=load,
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
