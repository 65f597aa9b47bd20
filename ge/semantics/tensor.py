"""Data movement that changes shapes: reshape, flatten, transpose, concat, expand, tile, slice,
split, pad and shape. Every op here works in the stored dtype (it only copies elements)."""

from __future__ import annotations

import math
from functools import partial
from typing import Literal

import numpy as np
from xdsl.ir import Operation

from ge.dialects import graph as ops
from ge.dialects.common import describe, get_int, get_ints
from ge.dialects.graph.tensor import prop_ints, shape_range, slice_bounds, slice_spec
from ge.dtypes import tensor_type
from ge.errors import GeError

from .base import Compute, Implementation, Prepared

_NUMPY_PAD_MODES: dict[str, Literal["reflect", "edge", "wrap"]] = {
    "reflect": "reflect",
    "edge": "edge",
    "wrap": "wrap",
}
"""The pad modes besides `constant`, as numpy names them (ONNX's names)."""


@Prepared
def _reshape(op: ops.ReshapeOp) -> Compute:
    # numpy infers one dynamic dimension, written -1.
    shape = tuple(-1 if d < 0 else d for d in op.result.type.get_shape())
    if shape.count(-1) > 1:
        raise GeError(f"{describe(op)}: cannot infer two dynamic dimensions of {op.result.type}")
    return lambda x: x.reshape(shape)


@Prepared
def _flatten(op: ops.FlattenOp) -> Compute:
    given = get_int(op, "axis", 1)

    def flatten(x: np.ndarray) -> np.ndarray:
        axis = given + x.ndim if given < 0 else given
        return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))

    return flatten


@Prepared
def _transpose(op: ops.TransposeOp) -> Compute:
    return partial(np.transpose, axes=get_ints(op, "perm"))


@Prepared
def _concat(op: ops.ConcatOp) -> Compute:
    axis = get_int(op, "axis")
    return lambda *inputs: np.concatenate(inputs, axis=axis)


@Prepared
def _expand(op: ops.ExpandOp) -> Compute:
    given = get_ints(op, "shape")
    return lambda x: np.broadcast_to(x, np.broadcast_shapes(x.shape, given)).copy()


@Prepared
def _tile(op: ops.TileOp) -> Compute:
    return partial(np.tile, reps=get_ints(op, "repeats"))


@Prepared
def _slice(op: ops.SliceOp) -> Compute:
    # Checked against the type's rank; each call makes the axes non-negative by its array's.
    spec = slice_spec(op.properties, _rank(op))
    given = prop_ints(op.properties, "axes", range(len(spec)))

    def sliced(x: np.ndarray) -> np.ndarray:
        index = [slice(None)] * x.ndim
        for axis, (_, start, end, step) in zip(given, spec, strict=True):
            axis = axis + x.ndim if axis < 0 else axis
            first, count = slice_bounds(x.shape[axis], start, end, step)
            last = first + (count - 1) * step
            # A backward slice that ends at index 0 has no stop numpy could write as an integer.
            stop = last + (1 if step > 0 else -1)
            index[axis] = slice(first, None if stop < 0 else stop, step) if count else slice(0, 0)
        return x[tuple(index)]

    return sliced


@Prepared
def _split(op: ops.SplitOp) -> Compute:
    """Views of `x`'s consecutive pieces along the axis (slices: `np.split` costs five times more)."""
    axis, bounds, start = get_int(op, "axis", 0), [], 0
    for size in get_ints(op, "sizes"):
        bounds.append(slice(start, start + size))
        start += size

    def split(x: np.ndarray) -> tuple[np.ndarray, ...]:
        index: list[slice] = [slice(None)] * x.ndim
        pieces = []
        for bound in bounds:
            index[axis] = bound
            pieces.append(x[tuple(index)])
        return tuple(pieces)

    return split


@Prepared
def _pad(op: ops.PadOp) -> Compute:
    """numpy's pad modes are ONNX's; negative pads crop first, then the positive ones pad."""
    pads = get_ints(op, "pads")
    mode = op.mode.data if op.mode is not None else "constant"

    def pad(x: np.ndarray, value: np.ndarray | None = None) -> np.ndarray:
        edges = list(zip(pads[: x.ndim], pads[x.ndim :], strict=True))
        kept = [slice(max(-b, 0), size + min(a, 0)) for size, (b, a) in zip(x.shape, edges, strict=True)]
        x = x[tuple(kept)]
        widths = [(max(b, 0), max(a, 0)) for b, a in edges]
        if mode != "constant":
            return np.pad(x, widths, mode=_NUMPY_PAD_MODES[mode])
        fill = value.reshape(()) if value is not None else np.zeros((), x.dtype)
        return np.pad(x, widths, mode="constant", constant_values=fill)

    return pad


@Prepared
def _shape(op: ops.ShapeOp) -> Compute:
    dimensions = shape_range(op.properties, _rank(op))
    return lambda x: np.array(x.shape[dimensions], dtype=np.int64)


def _rank(op: Operation) -> int:
    """The rank of `op`'s first operand, as its type gives it."""
    return len(tensor_type(op.operands[0]).get_shape())


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
