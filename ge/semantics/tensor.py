"""Data movement that changes shapes: reshape, flatten, transpose, concat, expand, tile, slice,
split, pad and shape. Every op here works in the stored dtype (it only copies elements)."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import describe, get_int, get_ints
from ge.dialects.graph.tensor import shape_range, slice_bounds, slice_spec
from ge.errors import GeError

from .base import Implementation

_NUMPY_PAD_MODES: dict[str, Literal["reflect", "edge", "wrap"]] = {
    "reflect": "reflect",
    "edge": "edge",
    "wrap": "wrap",
}
"""The pad modes besides `constant`, as numpy names them (ONNX's names)."""


def _reshape(op: ops.ReshapeOp, x: np.ndarray) -> np.ndarray:
    # numpy infers one dynamic dimension, written -1.
    shape = tuple(-1 if d < 0 else d for d in op.result.type.get_shape())
    if shape.count(-1) > 1:
        raise GeError(f"{describe(op)}: cannot infer two dynamic dimensions of {op.result.type}")
    return x.reshape(shape)


def _flatten(op: ops.FlattenOp, x: np.ndarray) -> np.ndarray:
    axis = get_int(op, "axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


def _transpose(op: ops.TransposeOp, x: np.ndarray) -> np.ndarray:
    return np.transpose(x, get_ints(op, "perm"))


def _concat(op: ops.ConcatOp, *inputs: np.ndarray) -> np.ndarray:
    return np.concatenate(inputs, axis=get_int(op, "axis"))


def _expand(op: ops.ExpandOp, x: np.ndarray) -> np.ndarray:
    shape = np.broadcast_shapes(x.shape, get_ints(op, "shape"))
    return np.broadcast_to(x, shape).copy()


def _tile(op: ops.TileOp, x: np.ndarray) -> np.ndarray:
    return np.tile(x, get_ints(op, "repeats"))


def _slice(op: ops.SliceOp, x: np.ndarray) -> np.ndarray:
    index = [slice(None)] * x.ndim
    for axis, start, end, step in slice_spec(op.properties, x.ndim):
        first, count = slice_bounds(x.shape[axis], start, end, step)
        last = first + (count - 1) * step
        # A backward slice that ends at index 0 has no stop numpy could write as an integer.
        stop = last + (1 if step > 0 else -1)
        index[axis] = slice(first, None if stop < 0 else stop, step) if count else slice(0, 0)
    return x[tuple(index)]


def _split(op: ops.SplitOp, x: np.ndarray) -> tuple[np.ndarray, ...]:
    """Views of `x`'s consecutive pieces along the axis (slices: `np.split` costs five times more)."""
    index: list[slice] = [slice(None)] * x.ndim
    axis, start, pieces = get_int(op, "axis", 0), 0, []
    for size in get_ints(op, "sizes"):
        index[axis] = slice(start, start + size)
        pieces.append(x[tuple(index)])
        start += size
    return tuple(pieces)


def _pad(op: ops.PadOp, x: np.ndarray, value: np.ndarray | None = None) -> np.ndarray:
    """numpy's pad modes are ONNX's; negative pads crop first, then the positive ones pad."""
    pads = get_ints(op, "pads")
    edges = list(zip(pads[: x.ndim], pads[x.ndim :], strict=True))
    kept = [slice(max(-b, 0), size + min(a, 0)) for size, (b, a) in zip(x.shape, edges, strict=True)]
    x = x[tuple(kept)]
    widths = [(max(b, 0), max(a, 0)) for b, a in edges]
    mode = op.mode.data if op.mode is not None else "constant"
    if mode != "constant":
        return np.pad(x, widths, mode=_NUMPY_PAD_MODES[mode])
    fill = value.reshape(()) if value is not None else np.zeros((), x.dtype)
    return np.pad(x, widths, mode="constant", constant_values=fill)


def _shape(op: ops.ShapeOp, x: np.ndarray) -> np.ndarray:
    return np.array(x.shape[shape_range(op.properties, x.ndim)], dtype=np.int64)


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.ReshapeOp: _reshape,
    ops.FlattenOp: _flatten,
    ops.TransposeOp: _transpose,
    ops.ConcatOp: _concat,
    ops.ExpandOp: _expand,
    ops.TileOp: _tile,
    ops.SliceOp: _slice,
    ops.SplitOp: _split,
    ops.PadOp: _pad,
    ops.ShapeOp: _shape,
}
