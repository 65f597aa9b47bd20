"""Converters of TensorFlow's shape, slicing, padding, reduction and scan ops.

Shapes, axes, sizes and paddings come in as inputs, which must be known at import time;
reductions over NHWC's spatial or channel axes of a value with an NCHW source reduce that source.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from ..strided_slice import MASKS, add_strided_slice
from .importer import TO_NCHW, Converter, Importer, Node, add_slice, static_dims, transpose


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


def _scan(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        """Cumsum and Cumprod(x, axis) {exclusive, reverse}."""
        props = {
            "axis": int_attr(int(node.value(1).reshape(()))),
            "exclusive": bool_attr(bool(node.attr("exclusive", False))),
            "reverse": bool_attr(bool(node.attr("reverse", False))),
        }
        return [imp.g.add_op(op_class, [node.inputs[0]], props, node.name)]

    return convert


def _reverse(imp: Importer, node: Node) -> list[Tensor]:
    """ReverseV2(tensor, axis): a slice with step -1 along each axis."""
    x = node.inputs[0]
    rank = len(x.shape)
    axes = sorted({a % rank for a in node.ints(1)})
    if not axes:
        return [x]
    big = np.iinfo(np.int64).max
    return [add_slice(imp, node.name, x, [-1] * len(axes), [-big] * len(axes), axes, [-1] * len(axes))]


def _l2_loss(imp: Importer, node: Node) -> list[Tensor]:
    """sum(x ** 2) / 2 over every axis."""
    x = node.inputs[0]
    props = {"axes": ints_attr(list(range(len(x.shape)))), "keepdims": bool_attr(False)}
    total = imp.g.add_op(ops.ReduceSumSquareOp, [x], props, f"{node.name}.sum_square")
    half = imp.add_constant(f"{node.name}.half", np.array(0.5, dtype=x.dtype))
    return [imp.g.add_op(ops.MulOp, [total, half], None, node.name)]


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
    return [add_slice(imp, node.name, x, begin, ends, list(range(len(begin))), [1] * len(begin))]


def _strided_slice(imp: Importer, node: Node) -> list[Tensor]:
    """begin, end and strides with their masks (see `ge.frontends.strided_slice`)."""
    masks = {key: int(node.attr(key, 0)) for key in MASKS}
    begin, end, strides = node.ints(1), node.ints(2), node.ints(3)
    return [add_strided_slice(imp.g, node.inputs[0], begin, end, strides, masks, node.name)]


def _pad(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    paddings = node.value(1).reshape(-1, 2)
    pads = [int(v) for v in paddings[:, 0]] + [int(v) for v in paddings[:, 1]]
    mode = "constant"
    operands = [x]
    if node.op_type == "MirrorPad":
        given = str(node.attr("mode", "REFLECT"))
        if given == "SYMMETRIC":
            return [_symmetric_pad(imp, node, x, paddings)]
        if given != "REFLECT":
            raise node.invalid(f"mode '{given}' is not a MirrorPad mode (REFLECT and SYMMETRIC are)")
        mode = "reflect"
    elif node.op_type == "PadV2":
        operands.append(node.inputs[2])
    props = {"pads": ints_attr(pads), "mode": StringAttr(mode)}
    return [imp.g.add_op(ops.PadOp, operands, props, node.name)]


def _symmetric_pad(imp: Importer, node: Node, x: Tensor, paddings: np.ndarray) -> Tensor:
    """SYMMETRIC mirrors the edge itself too (abc -> cba|abc|cba): per axis, the first and last
    cells reversed and concatenated around the input."""
    dims = static_dims(node, x)
    big = np.iinfo(np.int64).max
    for axis, (before, after) in enumerate(paddings.tolist()):
        size = dims[axis]
        if before > size or after > size:
            raise node.invalid(f"pads {before}, {after} of axis {axis} exceed its size {size}")
        parts = []
        if before:
            parts.append(add_slice(imp, f"{node.name}.before{axis}", x, [before - 1], [-big], [axis], [-1]))
        parts.append(x)
        if after:
            stop = size - 1 - after if size - 1 - after >= 0 else -big
            parts.append(add_slice(imp, f"{node.name}.after{axis}", x, [size - 1], [stop], [axis], [-1]))
        if len(parts) > 1:
            x = imp.g.add_concat(parts, axis, f"{node.name}.axis{axis}")
    return x


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


def _broadcast_to(imp: Importer, node: Node) -> list[Tensor]:
    return [imp.g.add_op(ops.ExpandOp, [node.inputs[0]], {"shape": ints_attr(node.ints(1))}, node.name)]


CONVERTERS: dict[str, Converter] = {
    "Mean": _reduce(ops.ReduceMeanOp),
    "Sum": _reduce(ops.ReduceSumOp),
    "Max": _reduce(ops.ReduceMaxOp),
    "Min": _reduce(ops.ReduceMinOp),
    "Prod": _reduce(ops.ReduceProdOp),
    "All": _reduce(ops.ReduceMinOp),
    "Any": _reduce(ops.ReduceMaxOp),
    "EuclideanNorm": _reduce(ops.ReduceL2Op),
    "L2Loss": _l2_loss,
    "Cumsum": _scan(ops.CumSumOp),
    "Cumprod": _scan(ops.CumProdOp),
    "ReverseV2": _reverse,
    "BroadcastTo": _broadcast_to,
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
}
