"""Converters of the spectral operators: DFT and STFT as matrix products on the cube, and the
window and mel filter-bank generators, whose results are constants.

A discrete Fourier transform of length n is a linear map: with the signal's samples and their
real and imaginary parts interleaved on the last axis, one matmul by a constant matrix of
cosines and sines gives the interleaved spectrum. Zero padding and truncation to `dft_length`
are rows of zeros or rows left out; the one-sided forms keep the first n / 2 + 1 bins, and the
inverse one-sided form (irfft) weighs each bin by the conjugate it stands for. STFT gathers the
frames (positions known at import), applies the window, and transforms each frame.

```
spectrum[..., k, :] = [sum_t re_t cos(2 pi k t / n) + im_t sin(...), sum_t im_t cos(...) - re_t sin(...)]
```
"""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import int_attr
from ge.dtypes import element_type, numpy_dtype
from ge.graph import Tensor

from .composite import Composer
from .importer import Converter, Importer, Node


def _dft(imp: Importer, node: Node) -> list[Tensor]:
    """dft_length and (from opset 20) the axis input must be known; axis is an attribute
    (default 1) before opset 20, an input (default -2) after."""
    c = Composer(imp, node)
    x = c.input(0, "input")
    c.static(x)
    rank = len(x.shape)
    if rank < 2 or x.shape[-1] not in (1, 2):
        raise node.invalid(
            f"the input must end in a dimension of 1 (real) or 2 (complex), got {list(x.shape)}"
        )
    if node.opset >= 20:
        axis = int(node.value(2).reshape(-1)[0]) if node.has_input(2) else -2
    else:
        axis = int(node.attr("axis", 1))
    if not -rank <= axis < rank or axis % rank == rank - 1:
        raise node.invalid(f"axis {axis} must name a signal axis of an input of rank {rank}")
    axis %= rank
    inverse, onesided = bool(node.attr("inverse", 0)), bool(node.attr("onesided", 0))
    length = x.shape[axis]
    if node.has_input(1):
        n = int(node.value(1).reshape(-1)[0])
    else:
        n = 2 * (length - 1) if inverse and onesided else length
    if n < 1:
        raise node.invalid(f"dft_length must be positive, got {n}")
    # The signal axis next to the complex one, then one matmul over both.
    perm = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
    moved = c.transpose(x, perm, "signal_last")
    matrix = dft_matrix(length, x.shape[-1], n, inverse, onesided)
    spectrum = _transform(c, moved, matrix, 1 if inverse and onesided else 2, "transformed")
    return [c.transpose(spectrum, [int(a) for a in np.argsort(perm)], "")]


def _stft(imp: Importer, node: Node) -> list[Tensor]:
    """frame_step and frame_length must be known; the window may be computed."""
    c = Composer(imp, node)
    x = c.input(0, "signal")
    c.static(x)
    if len(x.shape) != 3 or x.shape[-1] not in (1, 2):
        raise node.invalid(f"the signal must be (batch, length, 1 or 2), got {list(x.shape)}")
    step = int(node.value(1).reshape(-1)[0])
    window = node.optional_input(2)
    if node.has_input(3):
        frame = int(node.value(3).reshape(-1)[0])
    elif window is not None:
        frame = window.shape[0]
    else:
        raise node.invalid("STFT needs a window or a frame_length")
    onesided = bool(node.attr("onesided", 1))
    batch, length, parts = x.shape
    if step < 1 or not 1 <= frame <= length or (window is not None and list(window.shape) != [frame]):
        raise node.invalid(f"frames of {frame} every {step} do not fit a signal of {length}")
    if onesided and parts == 2:
        raise node.invalid("a one-sided transform needs a real signal")
    count = 1 + (length - frame) // step
    starts = np.arange(count)[:, None] * step + np.arange(frame)[None, :]
    indices = c.constant(starts.astype(np.int64), "frame_positions")
    frames = c.op(ops.GatherOp, [x, indices], "frames", {"axis": int_attr(1)})  # batch, count, frame, parts
    if window is not None:
        weights = c.reshape(c.cast(window, x.dtype, "window_cast"), [frame, 1], "window")
        frames = c.op(ops.MulOp, [frames, weights], "windowed")
    return [_transform(c, frames, dft_matrix(frame, parts, frame, False, onesided), 2, "")]


def dft_matrix(length: int, parts: int, n: int, inverse: bool, onesided: bool) -> np.ndarray:
    """The (length * parts, bins * outputs) matrix taking interleaved samples (real, and imaginary
    when `parts` is 2) to the interleaved spectrum of a length-`n` transform, in float64."""
    if inverse and onesided:
        used = min(length, n // 2 + 1)
        bins = np.arange(length)[:, None]
        # Each bin stands for itself and its conjugate, except the first and the middle one.
        weight = np.where((bins == 0) | ((n % 2 == 0) & (bins == n // 2)), 1.0, 2.0) * (bins < used)
        angle = 2 * np.pi * ((bins * np.arange(n)[None, :]) % n) / n
        cos, sin = weight * np.cos(angle) / n, weight * np.sin(angle) / n
        blocks = [[cos], [-sin]]
    else:
        bins = n // 2 + 1 if onesided and not inverse else n
        samples = np.arange(length)[:, None]
        angle = 2 * np.pi * ((samples * np.arange(bins)[None, :]) % n) / n
        live = samples < n  # samples past dft_length are cut off
        cos, sin = np.cos(angle) * live, np.sin(angle) * live
        if inverse:
            cos, sin = cos / n, sin / n
            blocks = [[cos, sin], [-sin, cos]]
        else:
            blocks = [[cos, -sin], [sin, cos]]
    blocks = blocks[:parts]
    # Rows (sample, part in), columns (bin, part out): interleave the blocks.
    stacked = np.stack([np.stack(row, axis=-1) for row in blocks], axis=1)  # length, parts, bins, outputs
    return stacked.reshape(length * parts, -1)


def _transform(c: Composer, x: Tensor, matrix: np.ndarray, outputs: int, part: str) -> Tensor:
    """`x` (..., samples, parts) times `matrix`, as (..., bins, outputs)."""
    *rest, samples, parts = x.shape
    flat = c.reshape(x, [*rest, samples * parts], "interleaved")
    dtype = x.dtype if x.dtype != "bfloat16" else "float32"
    weights = c.cast(c.constant(matrix.astype(dtype), "dft_matrix"), x.dtype, "dft_matrix_cast")
    spectrum = c.op(ops.MatMulOp, [flat, weights], "spectrum")
    return c.reshape(spectrum, [*rest, matrix.shape[1] // outputs, outputs], part)


def _window(shape: str) -> Converter:
    def convert(imp: Importer, node: Node) -> list[np.ndarray]:
        """A constant (the size must be known); `periodic` (default 1) makes the window one
        sample longer before its last sample is dropped, as spectral analysis wants."""
        given = node.value(0)
        if given.size != 1:  # ONNX's shape inference and onnxruntime want a scalar
            raise node.invalid(f"input #0 ('size') must hold one value, got shape {list(given.shape)}")
        size = int(given.reshape(-1)[0])
        if size < 1:
            raise node.invalid(f"the window size must be positive, got {size}")
        dtype = _output_dtype(node)
        node.allocate((size,), np.float64)  # computed in float64 before the cast
        period = size if node.attr("periodic", 1) else size - 1
        # The formulas and their dtypes are ONNX's, so that values near 0 round alike.
        if shape == "blackman":
            n = np.arange(size)
            window = np.cos(n * (np.pi * 2) / period) * -0.5 + np.cos(n * (np.pi * 4) / period) * 0.08 + 0.42
            return [window.astype(dtype)]
        n = np.arange(size, dtype=dtype if dtype.kind == "f" else np.float64)
        if shape == "hann":
            return [(np.sin(n * np.pi / period) ** 2).astype(dtype)]
        alpha = 25.0 / 46.0
        return [(alpha - np.cos(n * np.pi * 2 / period) * (1 - alpha)).astype(dtype)]

    doc = convert.__doc__ or ""
    convert.__doc__ = f"The {shape.capitalize()} window, as {doc[:1].lower()}{doc[1:]}"
    return convert


def _mel_weight_matrix(imp: Importer, node: Node) -> list[np.ndarray]:
    """A constant (dft_length / 2 + 1, num_mel_bins) matrix of triangular filters, evenly spaced
    on the mel scale between the edge frequencies; every input must be known."""
    bins, length, rate = (int(node.value(i).reshape(-1)[0]) for i in range(3))
    low, high = (float(node.value(i).reshape(-1)[0]) for i in (3, 4))
    if bins < 1 or length < 1 or rate < 1:
        raise node.invalid("num_mel_bins, dft_length and sample_rate must be positive")
    node.allocate((length // 2 + 1, bins), np.float64)
    points = np.arange(bins + 2)
    low_mel = 2595 * np.log1p(low / 700) / np.log(10)
    high_mel = 2595 * np.log1p(high / 700) / np.log(10)
    hertz = 700 * np.expm1((points * ((high_mel - low_mel) / points.size) + low_mel) / 2595 * np.log(10))
    edges = (((length + 1) * hertz) // rate).astype(np.int64)
    left, centre, right = edges[:-2], edges[1:-1], edges[2:]
    if edges.min() < 0 or edges.max() > length // 2:
        raise node.invalid(f"the filters reach bins {edges.min()} to {edges.max()} of {length // 2 + 1}")
    j = np.arange(length // 2 + 1)[:, None]
    rising = np.where(centre == left, 1.0, (j - left) / np.maximum(centre - left, 1))
    falling = (right - j) / np.maximum(right - centre, 1)
    matrix = np.where(
        (j >= centre) & (j < right), falling, np.where((j >= left) & (j <= centre), rising, 0.0)
    )
    matrix = np.where((centre == left) & (j == centre), 1.0, matrix)
    return [matrix.astype(_output_dtype(node))]


def _output_dtype(node: Node) -> np.dtype:
    return numpy_dtype(element_type(node.dtype("output_datatype", "float32")))


CONVERTERS: dict[str, Converter] = {
    "DFT": _dft,
    "STFT": _stft,
    "HannWindow": _window("hann"),
    "HammingWindow": _window("hamming"),
    "BlackmanWindow": _window("blackman"),
    "MelWeightMatrix": _mel_weight_matrix,
}
