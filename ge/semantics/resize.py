"""Resize: one axis at a time (every mode is separable), as the ONNX specification defines it.

Each resized axis maps its output coordinates to input coordinates, then either takes the
nearest cell (exact in any dtype) or sums a few neighbours with filter weights, in float64;
the result is rounded once into the input's dtype (integers round half to even and saturate).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects.common import get_flag, get_float, get_ints
from ge.dialects.graph import ResizeOp
from ge.dtypes import numpy_dtype

from .base import Compute, Implementation, Prepared, float_values, property_of


@Prepared
def resize(op: ResizeOp) -> Compute:
    mode = _string(op, "mode", "nearest")
    coordinates = _string(op, "coordinate_transformation_mode", "half_pixel")
    scales, roi, given = _floats(op, "scales"), _floats(op, "roi"), get_ints(op, "sizes")
    nearest_mode = _string(op, "nearest_mode", "round_prefer_floor")
    filter_weights = partial(
        _weights,
        linear=mode == "linear",
        a=get_float(op, "cubic_coeff_a", -0.75),
        antialias=get_flag(op, "antialias"),
    )
    exclude_outside = get_flag(op, "exclude_outside")
    extrapolation = np.asarray(get_float(op, "extrapolation_value", 0.0))
    target = numpy_dtype(op.result.type.element_type)

    def resized(x: np.ndarray) -> np.ndarray:
        sizes = [x.shape[axis] if size < 0 else size for axis, size in enumerate(given)]
        y = x if mode == "nearest" else x.astype(np.float64)
        for axis, (size, scale) in enumerate(zip(sizes, scales, strict=True)):
            box = (roi[axis], roi[axis + x.ndim]) if roi else (0.0, 1.0)
            cropped = coordinates == "tf_crop_and_resize" and not (
                math.isclose(box[0], 0.0) and math.isclose(box[1], 1.0)
            )
            if size == x.shape[axis] and math.isclose(scale, 1.0) and not cropped:
                continue  # the identity along this axis
            source, outside = _source_coordinates(coordinates, size, x.shape[axis], scale, box)
            if mode == "nearest":
                y = np.take(y, _nearest(nearest_mode, source, x.shape[axis]), axis=axis)
            else:
                y = _interpolate(y, axis, source, scale, filter_weights, exclude_outside)
            if outside is not None and outside.any():
                mask = outside.reshape((-1,) + (1,) * (x.ndim - axis - 1))
                y = np.where(mask, _round_into(extrapolation, y.dtype), y)
        return _round_into(y, target)

    return resized


def _source_coordinates(
    coordinates: str, size: int, length: int, scale: float, box: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray | None]:
    """Input coordinates of the `size` output cells of an axis of `length` cells, and for
    tf_crop_and_resize, which fall outside the input.

    `width` is the output length the scale implies, fractional when the scale was given rather
    than the size; the specification's formulas use it.
    """
    y = np.arange(size, dtype=np.float64)
    width = scale * length
    if coordinates == "align_corners":
        return (np.zeros(size) if width == 1 else y * (length - 1) / (width - 1)), None
    if coordinates == "asymmetric":
        return y / scale, None
    if coordinates == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale, None
    if coordinates == "pytorch_half_pixel":
        return (np.full(size, -0.5) if width == 1 else (y + 0.5) / scale - 0.5), None
    if coordinates == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if coordinates == "half_pixel_symmetric":
        offset = length / 2 * (1 - size / width)
        return offset + (y + 0.5) / scale - 0.5, None
    start, end = box
    if width == 1:
        source = np.full(size, (end - start) * (length - 1) / 2)
    else:
        source = y * (end - start) * (length - 1) / (width - 1)
    source = source + start * (length - 1)
    return source, (source < 0) | (source > length - 1)


def _nearest(mode: str, source: np.ndarray, length: int) -> np.ndarray:
    """The input cell nearest to each source coordinate, ties broken by `mode` (`nearest_mode`)."""
    below = np.floor(source)
    fraction = source - below
    up = {
        "round_prefer_floor": fraction > 0.5,
        "round_prefer_ceil": fraction >= 0.5,
        "floor": np.zeros_like(fraction, dtype=bool),
        "ceil": fraction > 0,
    }[mode]
    return np.clip(below + up, 0, length - 1).astype(np.intp)


def _interpolate(
    data: np.ndarray,
    axis: int,
    source: np.ndarray,
    scale: float,
    filter_weights: Callable[[np.ndarray, float], np.ndarray],
    exclude_outside: bool,
) -> np.ndarray:
    """Weighted sums of the neighbours of each source coordinate along `axis`, weighted by
    `filter_weights(ratio, scale)` (`_weights`)."""
    length = data.shape[axis]
    below = np.floor(source)
    # The cell left of the coordinate is preferred, so an exact hit has ratio 1, not 0.
    ratio = np.where(source == below, 1.0, source - below)
    weights = filter_weights(ratio, scale)
    taps = weights.shape[1]
    # The `taps` cells nearest to the coordinate, ties going to the lower cells.
    pad = math.ceil(taps / 2)
    shifted = source + pad
    base = np.floor(shifted)
    fraction = shifted - base
    if taps % 2 == 0:
        offset = np.where(fraction == 0, -(taps // 2), -(taps // 2) + 1)
    else:
        offset = np.where(fraction <= 0.5, -((taps - 1) // 2), -((taps - 1) // 2) + 1)
    cells = (base + offset).astype(np.int64)[:, None] + np.arange(taps) - pad
    if exclude_outside:
        weights = np.where((cells < 0) | (cells >= length), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    # Cells past the edges repeat the edge cells.
    gathered = np.take(data, np.clip(cells, 0, length - 1).astype(np.intp), axis=axis)
    shape = (1,) * axis + weights.shape + (1,) * (data.ndim - axis - 1)
    return (gathered * weights.reshape(shape)).sum(axis=axis + 1)


def _weights(ratio: np.ndarray, scale: float, linear: bool, a: float, antialias: bool) -> np.ndarray:
    """(cells, taps) filter weights for each output cell's fractional position `ratio`: linear or
    Keys' cubic with coefficient `a`."""
    if not antialias:
        if linear:
            return np.stack([1 - ratio, ratio], axis=1)
        distances = np.stack([ratio + 1, ratio, 1 - ratio, 2 - ratio], axis=1)
        return _cubic(distances, a)
    # Antialiasing stretches the filter by 1 / scale when downsampling.
    stretch = min(scale, 1.0)
    reach = 1 if linear else 2
    first = int(np.floor(-reach / stretch) + 1)
    distances = (np.arange(first, 2 - first) - ratio[:, None]) * stretch
    weights = np.clip(1 - np.abs(distances), 0, 1) if linear else _cubic(distances, a)
    return weights / weights.sum(axis=1, keepdims=True)


def _cubic(distances: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with coefficient `a`."""
    d = np.abs(distances)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _round_into(y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if y.dtype == dtype:
        return y
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.round(y), info.min, info.max).astype(dtype)
    return y.astype(dtype)


def _string(op: ResizeOp, name: str, default: str) -> str:
    attr = property_of(op, name, StringAttr)
    return default if attr is None else attr.data


def _floats(op: ResizeOp, name: str) -> list[float]:
    return float_values(op, name) or []


IMPLEMENTATIONS: dict[type, Implementation] = {ResizeOp: resize}
