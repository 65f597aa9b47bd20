"""Converters of TensorFlow's shape, slicing, reduction and indexing ops.

Shapes, axes, sizes and paddings come in as inputs, which must be known at import time;
reductions over NHWC's spatial or channel axes of a value with an NCHW source reduce that source.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from .importer import TO_NCHW, Converter, Importer, Node, static_dims, transpose


def _reduce(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        x = node.inputs[0]
        rank = len(x.shape)
        axes = sorted({a % rank for a in node.ints(1)}) if rank else []
        keep = bool(node.attr("keep_dims", False))
        source = imp.nchw_source.get(x.value)
        if source is not None and not keep and axes:
            # NHWC axis a is NCHW axis TO_NCHW.index(a); without keepdims the remaining axes keep
            # their NHWC order only when the channel axis is reduced too or is the last one left.
            nchw_axes = sorted(TO_NCHW.index(a) for a in axes)
            kept = [a for a in range(4) if a not in axes]
            if kept == sorted(kept, key=lambda a: TO_NCHW.index(a)):
                props = {"axes": ints_attr(nchw_axes), "keepdims": bool_attr(False)}
                return [imp.g.add_op(op_class, [source], props, node.name)]
        props = {"axes": ints_attr(axes), "keepdims": bool_attr(keep)}
        return [imp.g.add_op(op_class, [x], props, node.name)]

    return convert


def _arg_max(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    axis = int(node.value(1).reshape(()))
    props = {"axis": int_attr(axis), "keepdims": bool_attr(False), "select_last_index": bool_attr(False)}
    y = imp.g.add_op(ops.ArgMaxOp, [x], props, node.name)
    dtype = node.dtype("output_type") if "output_type" in node.proto.attr else "int64"
    return [y if y.dtype == dtype else imp.g.add_cast(y, dtype, f"{node.name}.cast")]


def _reshape(imp: Importer, node: Node) -> list[Tensor]:
    return [imp.g.add_reshape(node.inputs[0], node.ints(1), node.name)]


def _transpose(imp: Importer, node: Node) -> list[Tensor]:
    return [transpose(imp, node.inputs[0], node.ints(1), node.name)]


def _concat(imp: Importer, node: Node) -> list[Tensor]:
    *values, _ = node.inputs
    axis = int(node.value(len(node.inputs) - 1).reshape(()))
    if len(values) == 1:
        return [values[0]]
    return [imp.g.add_concat(values, axis, node.name)]


def _pack(imp: Importer, node: Node) -> list[Tensor]:
    rank = len(node.inputs[0].shape) + 1
    axis = int(node.attr("axis", 0)) % rank
    parts = []
    for index, t in enumerate(node.inputs):
        shape = list(t.shape)
        shape.insert(axis, 1)
        parts.append(imp.g.add_reshape(t, shape, f"{node.name}.{index}"))
    return [parts[0] if len(parts) == 1 else imp.g.add_concat(parts, axis, node.name)]


def _unpack(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    axis = int(node.attr("axis", 0)) % len(x.shape)
    count = x.shape[axis]
    props = {"axis": int_attr(axis), "sizes": ints_attr([1] * count)}
    parts = imp.g.add_op_results(ops.SplitOp, [x], props, f"{node.name}.split")
    shape = [d for i, d in enumerate(x.shape) if i != axis]
    return [imp.g.add_reshape(p, shape, f"{node.name}.{i}") for i, p in enumerate(parts)]


def _split(imp: Importer, node: Node) -> list[Tensor]:
    """Split(axis, value) into num_split equal parts."""
    x = node.inputs[1]
    axis = int(node.value(0).reshape(())) % len(x.shape)
    count = int(node.attr("num_split", 1))
    size = static_dims(node, x)[axis]
    if size % count:
        raise node.invalid(f"dimension {axis} of {list(x.shape)} does not split into {count} equal parts")
    props = {"axis": int_attr(axis), "sizes": ints_attr([size // count] * count)}
    return imp.g.add_op_results(ops.SplitOp, [x], props, node.name)


def _split_v(imp: Importer, node: Node) -> list[Tensor]:
    """SplitV(value, size_splits, axis); one size may be -1 (the rest)."""
    x = node.inputs[0]
    axis = int(node.value(2).reshape(())) % len(x.shape)
    sizes = node.ints(1)
    if -1 in sizes:
        sizes[sizes.index(-1)] = static_dims(node, x)[axis] - (sum(sizes) + 1)
    props = {"axis": int_attr(axis), "sizes": ints_attr(sizes)}
    return imp.g.add_op_results(ops.SplitOp, [x], props, node.name)


def _squeeze(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    rank = len(x.shape)
    axes = {int(a) % rank for a in node.attr("squeeze_dims", [])} or {
        i for i, d in enumerate(x.shape) if d == 1
    }
    if any(x.shape[a] != 1 for a in axes):
        raise node.invalid(f"cannot squeeze axes {sorted(axes)} of {list(x.shape)}: they are not 1")
    return [imp.g.add_reshape(x, [d for i, d in enumerate(x.shape) if i not in axes], node.name)]


def _expand_dims(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    axis = int(node.value(1).reshape(())) % (len(x.shape) + 1)
    shape = list(x.shape)
    shape.insert(axis, 1)
    return [imp.g.add_reshape(x, shape, node.name)]


def _slice(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    begin, size = node.ints(1), node.ints(2)
    dims = static_dims(node, x)
    ends = [dims[i] if s == -1 else b + s for i, (b, s) in enumerate(zip(begin, size, strict=True))]
    return [_add_slice(imp, node.name, x, begin, ends, list(range(len(begin))), [1] * len(begin))]


def _strided_slice(imp: Importer, node: Node) -> list[Tensor]:
    """begin, end and strides with their masks; an ellipsis stands for the full range of the
    axes the other entries leave out."""
    x = node.inputs[0]
    begin, end, strides = node.ints(1), node.ints(2), node.ints(3)
    masks = {
        key: int(node.attr(key, 0))
        for key in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
    }
    if masks["ellipsis_mask"]:
        begin, end, strides, masks = _without_ellipsis(node, begin, end, strides, masks, len(x.shape))
    starts, ends, axes, steps, shape = [], [], [], [], []
    axis = 0
    for i, (b, e, s) in enumerate(zip(begin, end, strides, strict=True)):
        if masks["new_axis_mask"] >> i & 1:
            shape.append(1)
            continue
        size = x.shape[axis]
        if masks["shrink_axis_mask"] >> i & 1:
            b = b + size if b < 0 and size >= 0 else b
            starts.append(b)
            ends.append(b + 1)
            steps.append(1)
            axes.append(axis)
        else:
            big = np.iinfo(np.int64).max
            starts.append((big if s < 0 else 0) if masks["begin_mask"] >> i & 1 else b)
            ends.append((-big if s < 0 else big) if masks["end_mask"] >> i & 1 else e)
            steps.append(s)
            axes.append(axis)
            shape.append(None)
        axis += 1
    sliced = _add_slice(imp, f"{node.name}.slice", x, starts, ends, axes, steps)
    rest = list(sliced.shape[axis:])
    kept = iter(d for a, d in enumerate(sliced.shape[:axis]) if not _shrunk(masks, begin, a))
    final = [next(kept) if d is None else d for d in shape] + rest
    return [imp.g.add_reshape(sliced, final, node.name)]


def _without_ellipsis(
    node: Node, begin: list[int], end: list[int], strides: list[int], masks: dict, rank: int
) -> tuple[list[int], list[int], list[int], dict]:
    """The same slice spelled without its ellipsis: full-range entries (both masks set) for the
    axes it covers. TensorFlow takes the first ellipsis bit and ignores any later one."""
    ellipsis = masks["ellipsis_mask"]
    at = (ellipsis & -ellipsis).bit_length() - 1
    count = len(begin)
    explicit = sum(1 for i in range(count) if not (masks["new_axis_mask"] | ellipsis) >> i & 1)
    covered = rank - explicit
    if covered < 0:
        raise node.invalid(f"slices {explicit} axes of a rank-{rank} input")
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


def _shrunk(masks: dict, begin: list[int], axis: int) -> bool:
    """Whether input axis `axis` is shrunk: the spec index of that axis has its shrink bit."""
    index = -1
    for i in range(len(begin)):
        if masks["new_axis_mask"] >> i & 1:
            continue
        index += 1
        if index == axis:
            return bool(masks["shrink_axis_mask"] >> i & 1)
    return False


def _pad(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    paddings = node.value(1).reshape(-1, 2)
    pads = [int(v) for v in paddings[:, 0]] + [int(v) for v in paddings[:, 1]]
    mode = "constant"
    operands = [x]
    if node.op_type == "MirrorPad":
        given = str(node.attr("mode", "REFLECT"))
        if given != "REFLECT":
            raise node.fail(f"mode '{given}' is not supported (REFLECT is)")
        mode = "reflect"
    elif node.op_type == "PadV2":
        operands.append(node.inputs[2])
    props = {"pads": ints_attr(pads), "mode": StringAttr(mode)}
    return [imp.g.add_op(ops.PadOp, operands, props, node.name)]


def _shape(imp: Importer, node: Node) -> list[np.ndarray]:
    dtype = node.dtype("out_type") if "out_type" in node.proto.attr else "int32"
    return [np.array(static_dims(node, node.inputs[0]), dtype=dtype)]


def _fill(imp: Importer, node: Node) -> list[Tensor]:
    dims = node.ints(0)
    value = node.inputs[1]
    return [imp.g.add_op(ops.ExpandOp, [value], {"shape": ints_attr(dims)}, node.name)]


def _range(imp: Importer, node: Node) -> list[np.ndarray]:
    start, limit, delta = (node.value(i).reshape(-1)[0] for i in range(3))
    dtype = node.dtype("Tidx") if "Tidx" in node.proto.attr else start.dtype
    return [np.arange(start, limit, delta).astype(dtype)]


def _tile(imp: Importer, node: Node) -> list[Tensor]:
    return [imp.g.add_op(ops.TileOp, [node.inputs[0]], {"repeats": ints_attr(node.ints(1))}, node.name)]


def _gather(imp: Importer, node: Node) -> list[Tensor]:
    params, indices = node.inputs[:2]
    if int(node.attr("batch_dims", 0)):
        raise node.fail("batch_dims other than 0 is not supported")
    axis = int(node.value(2).reshape(()))
    return [imp.g.add_op(ops.GatherOp, [params, indices], {"axis": int_attr(axis)}, node.name)]


def _one_hot(imp: Importer, node: Node) -> list[Tensor]:
    indices, _, on, off = node.inputs
    values = imp.g.add_concat(
        [imp.g.add_reshape(t, [1], f"{node.name}.{what}") for t, what in ((off, "off"), (on, "on"))],
        0,
        f"{node.name}.values",
    )
    props = {"depth": int_attr(int(node.value(1).reshape(()))), "axis": int_attr(int(node.attr("axis", -1)))}
    return [imp.g.add_op(ops.OneHotOp, [indices, values], props, node.name)]


def _add_slice(imp: Importer, name: str, x: Tensor, starts, ends, axes, steps) -> Tensor:
    props = {
        "starts": ints_attr(starts),
        "ends": ints_attr(ends),
        "axes": ints_attr(axes),
        "steps": ints_attr(steps),
    }
    return imp.g.add_op(ops.SliceOp, [x], props, name)


CONVERTERS: dict[str, Converter] = {
    "Mean": _reduce(ops.ReduceMeanOp),
    "Sum": _reduce(ops.ReduceSumOp),
    "Max": _reduce(ops.ReduceMaxOp),
    "Min": _reduce(ops.ReduceMinOp),
    "Prod": _reduce(ops.ReduceProdOp),
    "ArgMax": _arg_max,
    "Reshape": _reshape,
    "Transpose": _transpose,
    "ConcatV2": _concat,
    "Pack": _pack,
    "Unpack": _unpack,
    "Split": _split,
    "SplitV": _split_v,
    "Squeeze": _squeeze,
    "ExpandDims": _expand_dims,
    "StridedSlice": _strided_slice,
    "Slice": _slice,
    "Pad": _pad,
    "PadV2": _pad,
    "MirrorPad": _pad,
    "Shape": _shape,
    "Fill": _fill,
    "Range": _range,
    "Tile": _tile,
    "GatherV2": _gather,
    "OneHot": _one_hot,
}
