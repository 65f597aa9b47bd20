"""Sampling at computed coordinates: grid_sample and roi_align.

Each output point is a weighted sum of a few input cells (its taps): the positions and
weights are computed for every point at once, the cells gathered in one indexing, and the sum
taken with einsum. Coordinates follow ONNX's definitions (and PyTorch's, which they copy).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import describe, get_flag, get_float, get_int
from ge.errors import GeError

from .base import Compute, Implementation, Prepared, property_of
from .resize import _cubic

_CUBIC_A = -0.75
"""The coefficient of Keys' cubic kernel GridSample uses (as PyTorch does)."""


@Prepared
def grid_sample(op: ops.GridSampleOp) -> Compute:
    mode = _string(op, "mode", "linear")
    padding = _string(op, "padding_mode", "zeros")
    align = get_flag(op, "align_corners")

    def sampled(x: np.ndarray, grid: np.ndarray) -> np.ndarray:
        batch, channels, *sizes = x.shape
        rank = len(sizes)
        size = np.array(sizes, dtype=grid.dtype)
        # The grid lists x (the last axis) first: reverse it into axis order.
        points = grid.reshape(batch, -1, rank)[..., ::-1]
        one, two = grid.dtype.type(1), grid.dtype.type(2)
        coords = (points + one) / two * (size - one) if align else ((points + one) * size - one) / two
        if mode == "nearest":
            coords = np.rint(coords)  # ties to even, as PyTorch rounds
        low, high = (np.zeros(rank), size - 1.0) if align else (np.full(rank, -0.5), size - 0.5)
        outside = (coords < low) | (coords > high)
        if padding == "border" and mode != "cubic":
            # Cubic taps are clamped one by one instead (as PyTorch and onnxruntime do).
            coords = np.where(outside, np.clip(coords, 0, size - 1), coords)
        elif padding == "reflection":
            coords = np.where(outside, _reflect(coords, low, high), coords).astype(grid.dtype)
        coords = coords.astype(np.float64)
        if mode == "nearest":
            base, weights = np.trunc(coords)[..., None], np.ones((*coords.shape, 1))
        else:
            base = np.floor(coords)
            fraction = coords - base
            if mode == "linear":
                base, weights = base[..., None], np.stack([1 - fraction, fraction], axis=-1)
            else:
                base = base[..., None] - 1
                weights = _cubic(
                    np.stack([fraction + 1, fraction, 1 - fraction, 2 - fraction], axis=-1), _CUBIC_A
                )
        cells = base + np.arange(weights.shape[-1])  # batch, points, axis, taps
        inside = (cells >= 0) & (cells <= size[:, None] - 1)
        if padding == "reflection":
            cells = np.trunc(_reflect(cells, low[:, None], high[:, None]))
        cells = np.clip(cells, 0, size[:, None] - 1).astype(np.int64)
        if padding == "zeros":
            weights = np.where(inside, weights, 0.0)
        # The taps of all axes together: their flat cell index and the product of their weights.
        lead = cells.shape[:2]  # batch, points
        flat = np.zeros((*lead, 1), np.int64)
        product = np.ones((*lead, 1))
        for axis in range(rank):
            flat = (flat[..., :, None] * sizes[axis] + cells[:, :, axis, None, :]).reshape(*lead, -1)
            product = (product[..., :, None] * weights[:, :, axis, None, :]).reshape(*lead, -1)
        values = x.reshape(batch, channels, -1)[
            np.arange(batch)[:, None, None], :, flat
        ]  # batch, points, taps, C
        y = np.einsum("nptc,npt->ncp", values.astype(np.float64), product)
        return y.reshape(batch, channels, *grid.shape[1:-1]).astype(x.dtype)

    return sampled


@Prepared
def roi_align(op: ops.RoiAlignOp) -> Compute:
    out_h, out_w = get_int(op, "output_height", 1), get_int(op, "output_width", 1)
    ratio = get_int(op, "sampling_ratio", 0)
    half_pixel = get_flag(op, "half_pixel")
    spatial_scale = get_float(op, "spatial_scale", 1.0)
    average = _string(op, "mode", "avg") == "avg"

    def aligned(x: np.ndarray, rois: np.ndarray, batch_indices: np.ndarray) -> np.ndarray:
        count, channels, height, width = rois.shape[0], *x.shape[1:]
        batch = batch_indices.astype(np.int64)
        if batch.size and (batch.min() < 0 or batch.max() >= x.shape[0]):
            raise GeError(
                f"{describe(op)}: batch indices must lie in [0, {x.shape[0]}), got {batch.tolist()}"
            )
        boxes = rois.astype(np.float64) * spatial_scale - (0.5 if half_pixel else 0.0)
        y_samples, y_count = _bin_samples(boxes[:, 1], boxes[:, 3], out_h, ratio, half_pixel)
        x_samples, x_count = _bin_samples(boxes[:, 0], boxes[:, 2], out_w, ratio, half_pixel)
        y_low, y_high, y_weights, y_outside = _bilinear(y_samples, height)  # rois, out_h, samples_h
        x_low, x_high, x_weights, x_outside = _bilinear(x_samples, width)
        # Every sample of a bin: rois, out_h, samples_h, out_w, samples_w.
        rows = (slice(None), slice(None), slice(None), None, None)
        columns = (slice(None), None, None, slice(None), slice(None))
        valid = (np.arange(y_samples.shape[2]) < y_count[:, None, None])[rows] & (
            np.arange(x_samples.shape[2]) < x_count[:, None, None]
        )[columns]
        inside = ~(y_outside[rows] | x_outside[columns])
        image = batch[:, None, None, None, None]
        taps = []
        for ys, y_weight in ((y_low, y_weights[0]), (y_high, y_weights[1])):
            for xs, x_weight in ((x_low, x_weights[0]), (x_high, x_weights[1])):
                weight = np.where(inside, y_weight[rows] * x_weight[columns], 0.0)
                taps.append(weight[..., None] * x[image, :, ys[rows], xs[columns]])  # ..., channels
        if average:
            total = np.where(valid[..., None], sum(taps), 0.0).sum(axis=(2, 4))
            pooled = total / np.maximum(y_count * x_count, 1)[:, None, None, None]
        else:
            best = np.where(valid[..., None], np.maximum.reduce(taps), -np.inf).max(axis=(2, 4))
            pooled = np.where(np.isneginf(best), 0.0, best)
        return pooled.transpose(0, 3, 1, 2).reshape(count, channels, out_h, out_w).astype(x.dtype)

    return aligned


def _bin_samples(
    start: np.ndarray, end: np.ndarray, bins: int, ratio: int, half_pixel: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(rois, bins, most samples) sample coordinates along one axis, and each roi's sample count."""
    length = end - start
    if not half_pixel:
        length = np.maximum(length, 1.0)  # malformed boxes become one cell wide
    bin_size = length / bins
    samples = np.full(start.shape, ratio) if ratio > 0 else np.ceil(length / bins).astype(np.int64)
    most = max(int(samples.max(initial=0)), 1)
    step = bin_size / np.maximum(samples, 1)
    positions = (
        start[:, None, None]
        + np.arange(bins)[None, :, None] * bin_size[:, None, None]
        + (np.arange(most)[None, None, :] + 0.5) * step[:, None, None]
    )
    return positions, samples


def _bilinear(coords: np.ndarray, length: int):
    """The two cells around each coordinate, their weights, and which coordinates fall outside."""
    outside = (coords < -1.0) | (coords > length)
    coords = np.maximum(coords, 0.0)
    low = np.trunc(coords).astype(np.int64)
    at_end = low >= length - 1
    low = np.where(at_end, length - 1, low)
    high = np.where(at_end, length - 1, low + 1)
    fraction = np.where(at_end, 0.0, coords - low)
    return low, high, (1.0 - fraction, fraction), outside


def _reflect(coords: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Coordinates outside [low, high] reflected back by its edges, as often as it takes."""
    span = high - low
    below = coords < low
    distance = np.where(below, low - coords, coords - high)
    with np.errstate(divide="ignore", invalid="ignore"):
        turns = np.where(span > 0, np.trunc(distance / np.where(span > 0, span, 1)), 0)
    rest = distance - turns * span
    even = turns % 2 == 0
    from_low = np.where(even, low + rest, high - rest)
    from_high = np.where(even, high - rest, low + rest)
    return np.where(below, from_low, np.where(coords > high, from_high, coords))


def _string(op: ops.GraphOp, name: str, default: str) -> str:
    attr = property_of(op, name, StringAttr)
    return default if attr is None else attr.data


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.GridSampleOp: grid_sample,
    ops.RoiAlignOp: roi_align,
}
