"""What the cube's loads and stores make of device-format data for a convolution.

- `im2col`: the L0A rows of a grouped convolution's NC1HWC0 input, one per output pixel, columns
  in FRACTAL_Z's device K order (c1, i, j, k0); padded lanes read as zero whatever the input
  holds there.
- The loads of one group and of a depthwise product (`Load`), planned with the convolution; each
  keeps its padded input and the views over it from call to call, within `KEPT_AT_MOST`:
  - `BlockRows`: one group's L0A rows, copied from an overlapping view of the (padded) NC1HWC0
    input, a window row's kw consecutive blocks at a time;
  - `PixelRows`: the rows of fewer channels than a block (an image's 3), a window row's kw
    pixels at a time;
  - `DepthwiseRows`: the padded blocks and each window tap's view of them, which a depthwise
    product multiplies in place.
- `l0b_columns`: FRACTAL_Z weights as the (K, N) matrix L0B holds.
- `padded_channels` and `sum_taps`: the input as (N, H, W, C) with its pads, and a depthwise
  product's k-steps summed tap by tap into the accumulator.
- `stored_nc1hwc0`: the accumulator rows stored back as NC1HWC0, bias added, padded lanes zero.

Whole C0 blocks (or pixels) move as single elements of c0 x itemsize bytes where a layout change
keeps them whole: the same bytes in half the time of an element-by-element copy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

import numpy as np

from ge.dialects.formats import FRACTAL
from ge.layout import from_device, reshaped_view

Pads = tuple[int, int, int, int]
"""(top, left, bottom, right)."""
Window = tuple[tuple[int, int], tuple[int, int], Pads, tuple[int, int], tuple[int, int]]
"""A convolution's (kernel, strides, pads, dilations, output size)."""


def im2col(
    x: np.ndarray,
    in_channels: int,
    groups: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: Pads,
    dilations: tuple[int, int],
    out_size: tuple[int, int],
    compute: np.dtype,
) -> np.ndarray:
    """The L0A matrix (groups, N * Ho * Wo, K) of NC1HWC0 `x` for a convolution of two or more
    `groups` (one group's rows are `BlockRows`'): one row per output pixel (n, ho, wo), columns
    ordered (c1, i, j, k0) as the rows of FRACTAL_Z, each group's channels starting a new c0
    block, padded lanes zero whatever `x` holds there."""
    n, c1, h, width, c0 = x.shape
    (kh, kw), (sh, sw), (dh, dw), (top, left, bottom, right) = kernel, strides, dilations, pads
    ho, wo = out_size
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    cin_group = in_channels // groups
    k1_channels = -(-cin_group // c0)
    padded = np.zeros((n, h + top + bottom, width + left + right, groups, k1_channels * c0), compute)
    channels = x.transpose(0, 2, 3, 1, 4).reshape(n, h, width, c1 * c0)[..., :in_channels]
    padded[:, top : top + h, left : left + width, :, :cin_group] = channels.reshape(n, h, width, groups, -1)
    windows = np.lib.stride_tricks.sliding_window_view(padded, span, (1, 2))
    windows = windows[:, : (ho - 1) * sh + 1 : sh, : (wo - 1) * sw + 1 : sw, :, :, ::dh, ::dw]
    rows = np.empty((groups, n, ho, wo, k1_channels, kh, kw, c0), compute)
    rows[...] = windows.reshape(n, ho, wo, groups, k1_channels, c0, kh, kw).transpose(3, 0, 1, 2, 4, 6, 7, 5)
    return rows.reshape(groups, n * ho * wo, k1_channels * kh * kw * c0)


def l0b_columns(w: np.ndarray, groups: int, compute: np.dtype) -> np.ndarray:
    """The L0B matrix (groups, K, N1 * 16) of FRACTAL_Z weights (groups * K1, N1, 16, c0)."""
    k1, n1, _, c0 = w.shape
    tiles = w.reshape(groups, k1 // groups, n1, FRACTAL, c0).transpose(0, 1, 4, 2, 3)
    return np.ascontiguousarray(tiles, compute).reshape(groups, k1 // groups * c0, n1 * FRACTAL)


def padded_channels(x: np.ndarray, channels: int, pads: Pads, compute: np.dtype) -> np.ndarray:
    """The first `channels` channels of NC1HWC0 `x` as (N, H, W, channels) in `compute`, with
    `pads` of zeros around H and W."""
    n, _, h, width, _ = x.shape
    top, left, bottom, right = pads
    padded = np.zeros((n, h + top + bottom, width + left + right, channels), compute)
    padded[:, top : top + h, left : left + width] = x.transpose(0, 2, 3, 1, 4).reshape(n, h, width, -1)[
        ..., :channels
    ]
    return padded


def depthwise_taps(w: np.ndarray, channels: int, groups: int, kernel: tuple[int, int]) -> np.ndarray:
    """A depthwise convolution's FRACTAL_Z weights as (kh * kw, channels): each tap's weights."""
    kh, kw = kernel
    return from_device(w, "FRACTAL_Z", (channels, 1, kh, kw), groups).reshape(channels, kh * kw).T


def sum_taps(
    window: Callable[[int], np.ndarray],
    taps: np.ndarray,
    steps: Sequence[Sequence[int]],
    shape: tuple[int, ...],
    compute: np.dtype,
    accumulator: np.dtype,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """A depthwise product of `shape`: per k-step, the fp32 sum over its taps of `window(tap)`
    (the input the tap reads) times `taps[tap]` (its weights), added into the accumulator in step
    order (the first step writes it). `out`, if given, is the accumulator (of `shape` and the
    accumulator dtype)."""
    total: np.ndarray | None = None
    partial = np.empty(shape, compute)
    term = np.empty_like(partial)
    for step_taps in steps:
        sums = partial
        if total is None and accumulator == compute:  # the first step's sums are the accumulator
            sums = np.empty(shape, compute) if out is None else out
        for number, tap in enumerate(step_taps):
            if number == 0:
                np.multiply(window(tap), taps[tap], out=sums)
            else:
                np.add(sums, np.multiply(window(tap), taps[tap], out=term), out=sums)
        if total is None:
            if sums is not partial:
                total = sums
            elif out is None:
                total = partial.astype(accumulator)
            else:
                total = out
                total[...] = partial
        else:
            np.add(total, partial.astype(accumulator, copy=False), out=total)
    assert total is not None, "a window has at least one tap"
    return total


def stored_nc1hwc0(
    out: np.ndarray,
    pixels: tuple[int, int, int],
    channels: int,
    c0: int,
    bias: np.ndarray | None,
    into: np.ndarray | None = None,
) -> np.ndarray:
    """The NC1HWC0 result (N, C1, Ho, Wo, c0) of the accumulator rows `out` (N * Ho * Wo, at least
    `channels` columns), `bias` added to the real channels and the padded lanes zero; stored in
    `into` if given (an array of that shape and the accumulator's dtype whose C0 lanes are
    contiguous, such as a C1 slice of a concat's buffer)."""
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
    if into is None:
        into = np.empty((n, width // c0, ho, wo, c0), out.dtype)
    if not out.flags.c_contiguous or into.strides[-1] != into.itemsize:
        into[...] = out.reshape(n, ho, wo, width // c0, c0).transpose(0, 3, 1, 2, 4)
        return into
    blocks = _whole(out.reshape(n, ho, wo, width // c0, c0))
    _whole(into)[...] = blocks.transpose(0, 3, 1, 2)  # a view of `into` whatever its strides
    return into


T = TypeVar("T")

KEPT_AT_MOST = 2**18
"""The most bytes of padded input a convolution keeps from call to call (`Kept`). Below, zeroing
a fresh one per launch costs about what copying the input into it does; above, the copy is most
of the cost, and keeping one per convolution would hold about an activation per layer (light
resnet50's would add 8.4 MB to its 6.9 MB arena; with this bound, 1.6 MB)."""


class Kept(Generic[T]):
    """What `make` builds (zero-bordered buffers and the views over them), built at the first
    call and kept when it holds at most `KEPT_AT_MOST` bytes, built again at every call
    otherwise. The rows a load copies into are never kept: a fresh array per call is as fast
    (malloc hands back the block the last launch freed) and holds no memory between launches."""

    def __init__(self, make: Callable[[], T], nbytes: int):
        self._make, self._keeps = make, nbytes <= KEPT_AT_MOST
        self._value: T | None = None

    def __call__(self) -> T:
        if self._value is not None:
            return self._value
        value = self._make()
        if self._keeps:
            self._value = value
        return value


@dataclass
class WindowRows:
    """What a load of L0A rows holds: the input's NC1HWC0 shape, the convolution's window, its
    input channels, the compute dtype, what one copy into the rows moves (`element`: C0 blocks
    or pixels, a window row's kw of them when the W dilation is 1) and the padded input with the
    windows' view of it (`Kept`)."""

    shape: tuple[int, ...]
    window: Window
    channels: int
    compute: np.dtype
    element: np.dtype
    padded: Kept[tuple[np.ndarray, np.ndarray]]


@dataclass
class BlockRows(WindowRows):
    """The L0A rows (1, N Ho Wo, C1 kh kw C0) of one group's NC1HWC0 input, columns in FRACTAL_Z's
    device K order (c1, i, j, k0), padded lanes zero whatever the input holds there; made by
    copying an overlapping view of the input in its own layout (`_block_windows`): a window row's
    kw taps of one C0 block are kw consecutive blocks when the W dilation is 1, so each (pixel,
    c1, window row) is one copy of kw x C0 lanes; with a wider dilation, one copy per tap's block.

    The input is copied into a padded one (zero borders) when the convolution pads or the input
    is not C-contiguous in the compute dtype (`padded`, `Kept` with its view); otherwise it is
    read in place, its view kept while the same array comes back."""

    source: np.ndarray | None = None
    """The input last read in place, and `windows`, its view."""
    windows: np.ndarray | None = None

    @staticmethod
    def of(shape: tuple[int, ...], channels: int, window: Window, compute: np.dtype) -> BlockRows:
        n, c1, h, width, c0 = shape
        (_, kw), _, (top, left, bottom, right), (_, dw), _ = window
        compute = np.dtype(compute)
        taps = kw if dw == 1 else 1  # the window taps one copy moves
        element = np.dtype((np.void, taps * c0 * compute.itemsize))
        padded_shape = (n, c1, h + top + bottom, width + left + right, c0)

        def make() -> tuple[np.ndarray, np.ndarray]:
            padded = np.zeros(padded_shape, compute)
            return padded, _block_windows(padded, shape, window, element)

        padded = Kept(make, math.prod(padded_shape) * compute.itemsize)
        return BlockRows(tuple(shape), window, channels, compute, element, padded)

    def rows_of(self, x: np.ndarray) -> np.ndarray:
        n, c1, h, width, c0 = self.shape
        (kh, kw), _, (top, left, _, _), _, (ho, wo) = self.window
        rest = self.channels - (c1 - 1) * c0  # real lanes of the last block
        in_place = not any(self.window[2]) and x.dtype == self.compute and x.flags.c_contiguous
        if in_place:
            if x is not self.source:
                self.windows, self.source = _block_windows(x, self.shape, self.window, self.element), x
            windows = cast(np.ndarray, self.windows)
        else:
            padded, windows = self.padded()
            inside = padded[:, :, top : top + h, left : left + width]
            inside[...] = x
            if rest < c0:
                inside[:, -1, ..., rest:] = 0  # whatever x holds in padded lanes
        blocks = np.empty((n, ho, wo, c1, kh, kw, c0), self.compute)
        blocks.reshape(n, ho, wo, c1, kh, kw * c0).view(self.element)[...] = windows
        if in_place and rest < c0:
            blocks[:, :, :, -1, ..., rest:] = 0  # whatever x holds in padded lanes
        return blocks.reshape(1, n * ho * wo, c1 * kh * kw * c0)


@dataclass
class DepthwiseRows:
    """A depthwise product's padded NC1HWC0 input in the compute dtype as its W stride's phases
    (phase r: the padded columns r, r + stride, ...; one phase for a unit stride), each (N, C1,
    H + pads, its columns, C0) with zero borders, and each window tap's (N, C1, Ho, Wo x C0)
    view of the phase its columns fall in, whose rows are contiguous runs of Wo blocks whatever
    the stride (`Kept`). A call copies the input into the phases' interiors (`windows_of`),
    whole blocks at a time."""

    channels: int
    phases: Kept[tuple[list[tuple[np.ndarray, slice]], list[np.ndarray]]]
    """Each phase's interior with the input's columns it holds, and each tap's window."""

    @staticmethod
    def of(shape: tuple[int, ...], channels: int, window: Window, compute: np.dtype) -> DepthwiseRows:
        n, c1, h, width, c0 = shape
        (kh, kw), (sh, sw), (top, left, bottom, right), (dh, dw), (ho, wo) = window
        columns = width + left + right

        def make() -> tuple[list[tuple[np.ndarray, slice]], list[np.ndarray]]:
            height = h + top + bottom
            phases = [np.zeros((n, c1, height, len(range(r, columns, sw)), c0), compute) for r in range(sw)]
            windows = []
            for tap in range(kh * kw):
                i, j = divmod(tap, kw)
                phase, first = phases[j * dw % sw], j * dw // sw
                window = phase[:, :, i * dh : i * dh + (ho - 1) * sh + 1 : sh, first : first + wo]
                windows.append(reshaped_view(window, (n, c1, ho, wo * c0)))  # Wo blocks contiguous
            interiors = []
            for r, phase in enumerate(phases):
                skipped = -(-(left - r) // sw) if left > r else 0  # the phase's columns in the left pad
                start = r + skipped * sw - left  # the input's first column in this phase
                held = len(range(start, width, sw))
                interiors.append(
                    (phase[:, :, top : top + h, skipped : skipped + held], slice(start, width, sw))
                )
            return interiors, windows

        nbytes = n * c1 * (h + top + bottom) * columns * c0 * np.dtype(compute).itemsize
        return DepthwiseRows(channels, Kept(make, nbytes))

    def windows_of(self, x: np.ndarray) -> list[np.ndarray]:
        """Each tap's window of `x`, copied into the phases with its padded lanes as zeros
        whatever `x` holds there."""
        c1, c0 = x.shape[1], x.shape[-1]
        interiors, windows = self.phases()
        for interior, columns in interiors:
            source = x[:, :, :, columns]
            if source.dtype == interior.dtype and source.strides[-1] == source.itemsize:
                _whole(interior)[...] = _whole(source)
            else:
                interior[...] = source
            if self.channels < c1 * c0:
                interior[:, -1, ..., self.channels - (c1 - 1) * c0 :] = 0
        return windows


@dataclass
class PixelRows(WindowRows):
    """The L0A rows (1, N Ho Wo, kh kw C) of one group of fewer channels than a block (an
    image's 3), in device K order (i, j, c), copied from a padded input (N, H + pads, W + pads)
    through its windows' view; `padded` holds the padded input's interior as pixels (a pixel's
    channels moved as one element, `_whole`) and the windows. A call copies the input's pixels
    into the padded input, then the windows into the rows; with a unit width dilation a window
    row's kw pixels are adjacent, and move as one element."""

    @staticmethod
    def of(shape: tuple[int, ...], channels: int, window: Window, compute: np.dtype) -> PixelRows:
        n, _, h, width, _ = shape
        (kh, kw), (sh, sw), (top, left, bottom, right), (dh, dw), (ho, wo) = window
        compute = np.dtype(compute)
        taps = kw if dw == 1 else 1  # the pixels one element moves
        element = np.dtype((np.void, taps * channels * compute.itemsize))
        padded_shape = (n, h + top + bottom, width + left + right, channels)

        def make() -> tuple[np.ndarray, np.ndarray]:
            padded = np.zeros(padded_shape, compute)
            along_n, along_h, along_w, _ = padded.strides
            windows = np.ndarray(  # (N, Ho, Wo, kh, elements per window row); numpy checks the bounds
                (n, ho, wo, kh, kw // taps),
                element,
                buffer=padded,
                strides=(along_n, along_h * sh, along_w * sw, along_h * dh, along_w * dw),
            )
            return _whole(padded[:, top : top + h, left : left + width]), windows

        nbytes = math.prod(padded_shape) * compute.itemsize
        return PixelRows(tuple(shape), window, channels, compute, element, Kept(make, nbytes))

    def rows_of(self, x: np.ndarray) -> np.ndarray:
        """The rows of NC1HWC0 `x` (one block, of the compute dtype, C0 lanes contiguous)."""
        n = x.shape[0]
        (kh, kw), _, _, _, (ho, wo) = self.window
        interior, windows = self.padded()
        interior[...] = _whole(x[:, 0, :, :, : self.channels])
        rows = np.empty((1, n * ho * wo, kh * kw * self.channels), self.compute)
        rows.reshape(n, ho, wo, kh, kw * self.channels).view(self.element)[...] = windows
        return rows


Load = BlockRows | DepthwiseRows | PixelRows
"""The buffers and views one convolution's loads keep from call to call (within `KEPT_AT_MOST`)."""


def _block_windows(
    source: np.ndarray, shape: tuple[int, ...], window: Window, element: np.dtype
) -> np.ndarray:
    """(N, Ho, Wo, C1, kh, copies per window row) elements of `element` (a window row's kw
    blocks, or one tap's block) over NC1HWC0 `source`, an input of `shape` or its padded form."""
    n, c1, _, _, c0 = shape
    (kh, kw), (sh, sw), _, (dh, dw), (ho, wo) = window
    along_n, along_c1, along_h, along_w, _ = source.strides
    copies = kw * c0 * source.itemsize // element.itemsize
    return np.ndarray(  # numpy checks the bounds
        (n, ho, wo, c1, kh, copies),
        element,
        buffer=source,
        strides=(along_n, along_h * sh, along_w * sw, along_c1, along_h * dh, along_w * dw),
    )


def _whole(array: np.ndarray) -> np.ndarray:
    """`array` (..., C), its last axis contiguous, as (...) elements of C values each: a block's
    C0 lanes or a pixel's channels, which a copy then moves as one element."""
    return array.view(np.dtype((np.void, array.shape[-1] * array.itemsize)))[..., 0]
