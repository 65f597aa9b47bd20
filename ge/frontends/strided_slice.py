"""TensorFlow's strided slice, which MindSpore's StridedSlice shares: begin, end and strides per
entry of a slice spec, with five bit masks (begin, end, ellipsis, new axis, shrink axis), as an
ONNX-style `ascend.graph.slice` and a reshape that inserts the new axes and drops the shrunk ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import ints_attr
from ge.graph import Graph, Tensor

MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def add_strided_slice(
    g: Graph,
    x: Tensor,
    begin: Sequence[int],
    end: Sequence[int],
    strides: Sequence[int],
    masks: Mapping[str, int],
    name: str,
) -> Tensor:
    """`x[spec]`; an ellipsis stands for the full range of the axes the other entries leave out.
    Raises ValueError for a spec that does not fit `x`."""
    begin, end, strides = list(begin), list(end), list(strides)
    masks = {key: int(masks.get(key, 0)) for key in MASKS}
    if not len(begin) == len(end) == len(strides):
        raise ValueError(f"begin {begin}, end {end} and strides {strides} differ in length")
    if masks["ellipsis_mask"]:
        begin, end, strides, masks = _without_ellipsis(begin, end, strides, masks, len(x.shape))
    starts, ends, axes, steps, shape = [], [], [], [], []
    axis = 0
    big = np.iinfo(np.int64).max
    for i, (b, e, s) in enumerate(zip(begin, end, strides, strict=True)):
        if masks["new_axis_mask"] >> i & 1:
            shape.append(1)
            continue
        if axis >= len(x.shape):
            raise ValueError(f"the slice spec covers more than the {len(x.shape)} axes of the input")
        size = x.shape[axis]
        if masks["shrink_axis_mask"] >> i & 1:
            if size >= 0 and not -size <= b < size:
                raise ValueError(f"index {b} is out of range for axis {axis} of size {size}")
            # -1 is the last element whatever the size: its end is the axis' end, not 0.
            starts.append(b)
            ends.append(b + 1 if b + 1 != 0 else big)
            steps.append(1)
        else:
            start = (big if s < 0 else 0) if masks["begin_mask"] >> i & 1 else b
            stop = (-big if s < 0 else big) if masks["end_mask"] >> i & 1 else e
            if s < 0 and start < 0 and size >= 0 and start + size < 0:
                start = stop = (
                    0  # a backward slice from before the first element is empty; a slice clamps to it
                )
            starts.append(start)
            ends.append(stop)
            steps.append(s)
            shape.append(None)
        axes.append(axis)
        axis += 1
    props = {
        "starts": ints_attr(starts),
        "ends": ints_attr(ends),
        "axes": ints_attr(axes),
        "steps": ints_attr(steps),
    }
    sliced = g.add_op(ops.SliceOp, [x], props, f"{name}.slice")
    rest = list(sliced.shape[axis:])
    kept = iter(d for a, d in enumerate(sliced.shape[:axis]) if not _shrunk(masks, len(begin), a))
    final = [next(kept) if d is None else d for d in shape] + rest
    return g.add_reshape(sliced, final, name)


def _without_ellipsis(
    begin: list[int], end: list[int], strides: list[int], masks: dict, rank: int
) -> tuple[list[int], list[int], list[int], dict]:
    """The same slice spelled without its ellipsis: full-range entries (both masks set) for the
    axes it covers. TensorFlow takes the first ellipsis bit and ignores any later one."""
    ellipsis = masks["ellipsis_mask"]
    at = (ellipsis & -ellipsis).bit_length() - 1
    count = len(begin)
    explicit = sum(1 for i in range(count) if not (masks["new_axis_mask"] | ellipsis) >> i & 1)
    covered = rank - explicit
    if covered < 0:
        raise ValueError(f"the slice spec covers {explicit} axes of a rank-{rank} input")
    entries = [i for i in range(count) if i == at or not (ellipsis >> i & 1)]
    new_begin, new_end, new_strides = [], [], []
    new_masks = dict.fromkeys(masks, 0)
    position = 0
    for i in entries:
        if i == at:
            for _ in range(covered):
                new_begin.append(0)
                new_end.append(0)
                new_strides.append(1)
                new_masks["begin_mask"] |= 1 << position
                new_masks["end_mask"] |= 1 << position
                position += 1
            continue
        new_begin.append(begin[i])
        new_end.append(end[i])
        new_strides.append(strides[i])
        for key in ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask"):
            if masks[key] >> i & 1:
                new_masks[key] |= 1 << position
        position += 1
    return new_begin, new_end, new_strides, new_masks


def _shrunk(masks: dict, count: int, axis: int) -> bool:
    """Whether input axis `axis` is shrunk: the spec entry of that axis has its shrink bit."""
    index = -1
    for i in range(count):
        if masks["new_axis_mask"] >> i & 1:
            continue
        index += 1
        if index == axis:
            return bool(masks["shrink_axis_mask"] >> i & 1)
    return False
