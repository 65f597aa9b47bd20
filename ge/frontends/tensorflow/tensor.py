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

from ..strided_slice import MASKS, add_strided_slice
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


def _arg_reduce(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        x = node.inputs[0]
        axis = int(node.value(1).reshape(()))
        props = {"axis": int_attr(axis), "keepdims": bool_attr(False), "select_last_index": bool_attr(False)}
        y = imp.g.add_op(op_class, [x], props, node.name)
        dtype = node.dtype("output_type") if "output_type" in node.proto.attr else "int64"
        return [y if y.dtype == dtype else imp.g.add_cast(y, dtype, f"{node.name}.cast")]

    return convert


def _top_k(imp: Importer, node: Node) -> list[Tensor]:
    """The k largest along the last axis, sorted (an unsorted TopKV2 may return them in any
    order, so sorted is one of its answers); indices in the op's index_type (int32 by default)."""
    k = int(node.value(1).reshape(()))
    props = {"k": int_attr(k), "axis": int_attr(-1), "largest": bool_attr(True), "sorted": bool_attr(True)}
    values, indices = imp.g.add_op_results(ops.TopKOp, [node.inputs[0]], props, node.name)
    dtype = node.dtype("index_type") if "index_type" in node.proto.attr else "int32"
    if indices.dtype != dtype:
        indices = imp.g.add_cast(indices, dtype, f"{node.name}.indices")
    return [values, indices]


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
    return [_add_slice(imp, node.name, x, [-1] * len(axes), [-big] * len(axes), axes, [-1] * len(axes))]


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
    return [_add_slice(imp, node.name, x, begin, ends, list(range(len(begin))), [1] * len(begin))]


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
            parts.append(_add_slice(imp, f"{node.name}.before{axis}", x, [before - 1], [-big], [axis], [-1]))
        parts.append(x)
        if after:
            stop = size - 1 - after if size - 1 - after >= 0 else -big
            parts.append(_add_slice(imp, f"{node.name}.after{axis}", x, [size - 1], [stop], [axis], [-1]))
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


def _gather_nd(imp: Importer, node: Node) -> list[Tensor]:
    """The slices the last axis of `indices` addresses (ONNX GatherND with batch_dims 0)."""
    return [imp.g.add_op(ops.GatherNDOp, node.inputs[:2], {"batch_dims": int_attr(0)}, node.name)]


def _matrix_band_part(imp: Importer, node: Node) -> list[Tensor]:
    """Keeps the band of `num_lower` diagonals below and `num_upper` above the main one of the
    last two axes (a negative count keeps the whole triangle): two triangle masks."""
    y = node.inputs[0]
    lower, upper = (int(node.value(i).reshape(())) for i in (1, 2))
    if lower >= 0:
        props = {"upper": bool_attr(True), "k": int_attr(-lower)}
        y = imp.g.add_op(ops.TriluOp, [y], props, f"{node.name}.lower" if upper >= 0 else node.name)
    if upper >= 0:
        y = imp.g.add_op(ops.TriluOp, [y], {"upper": bool_attr(False), "k": int_attr(upper)}, node.name)
    return [y]


def _gather(imp: Importer, node: Node) -> list[Tensor]:
    params, indices = node.inputs[:2]
    axis = int(node.value(2).reshape(())) % len(params.shape)
    batch = int(node.attr("batch_dims", 0)) % (len(indices.shape) + 1) if indices.shape else 0
    if not batch:
        return [imp.g.add_op(ops.GatherOp, [params, indices], {"axis": int_attr(axis)}, node.name)]
    return [_batched_gather(imp, node, params, indices, axis, batch)]


def _batched_gather(
    imp: Importer, node: Node, params: Tensor, indices: Tensor, axis: int, batch: int
) -> Tensor:
    """Gather with `batch` leading axes shared by params and indices: GatherND over indices with
    a last axis of one, on params whose gathered axis is moved right after the batch axes; the
    axes between them are moved back before the indices' own."""
    if axis < batch:
        raise node.invalid(f"batch_dims {batch} exceeds axis {axis}")
    rank = len(params.shape)
    between = list(range(batch, axis))
    perm = [*range(batch), axis, *between, *range(axis + 1, rank)]
    moved = transpose(imp, params, perm, f"{node.name}.params") if between else params
    column = imp.g.add_reshape(indices, [*indices.shape, 1], f"{node.name}.indices")
    props = {"batch_dims": int_attr(batch)}
    name = f"{node.name}.gather" if between else node.name
    gathered = imp.g.add_op(ops.GatherNDOp, [moved, column], props, name)
    if not between:
        return gathered
    own = len(indices.shape) - batch
    # gathered: batch, indices' own axes, the axes between, the rest; TensorFlow puts `between` first.
    order = [
        *range(batch),
        *range(batch + own, batch + own + len(between)),
        *range(batch, batch + own),
        *range(batch + own + len(between), len(gathered.shape)),
    ]
    return transpose(imp, gathered, order, node.name)


def _one_hot(imp: Importer, node: Node) -> list[Tensor]:
    indices, _, on, off = node.inputs
    values = imp.g.add_concat(
        [imp.g.add_reshape(t, [1], f"{node.name}.{what}") for t, what in ((off, "off"), (on, "on"))],
        0,
        f"{node.name}.values",
    )
    props = {"depth": int_attr(int(node.value(1).reshape(()))), "axis": int_attr(int(node.attr("axis", -1)))}
    return [imp.g.add_op(ops.OneHotOp, [indices, values], props, node.name)]


def _space_to_batch(imp: Importer, node: Node) -> list[Tensor]:
    """SpaceToBatchND(x, block_shape, paddings): pad the M block axes, split each into
    (size / block, block), move the blocks before the batch and merge them into it."""
    x = node.inputs[0]
    block = node.ints(1)
    paddings = node.value(2).reshape(-1, 2).tolist()
    dims = static_dims(node, x)
    m = len(block)
    if len(paddings) != m or len(dims) < m + 1:
        raise node.invalid(f"block_shape {block} and paddings {paddings} do not fit input {dims}")
    pads = [0] * len(dims) * 2
    for i, (before, after) in enumerate(paddings):
        pads[1 + i], pads[len(dims) + 1 + i] = int(before), int(after)
    if any(pads):
        props = {"pads": ints_attr(pads), "mode": StringAttr("constant")}
        x = imp.g.add_op(ops.PadOp, [x], props, f"{node.name}.pad")
    padded = list(x.shape)
    split = [padded[0]]
    for i, b in enumerate(block):
        if padded[1 + i] % b:
            raise node.invalid(f"padded axis {1 + i} of size {padded[1 + i]} does not divide by block {b}")
        split += [padded[1 + i] // b, b]
    rest = padded[1 + m :]
    x = imp.g.add_reshape(x, split + rest, f"{node.name}.split")
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    perm += list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    x = transpose(imp, x, perm, f"{node.name}.blocks_first")
    batch = padded[0] * int(np.prod(block))
    return [imp.g.add_reshape(x, [batch] + [split[1 + 2 * i] for i in range(m)] + rest, node.name)]


def _batch_to_space(imp: Importer, node: Node) -> list[Tensor]:
    """BatchToSpaceND(x, block_shape, crops): the inverse of SpaceToBatchND, then the crops."""
    x = node.inputs[0]
    block = node.ints(1)
    crops = node.value(2).reshape(-1, 2).tolist()
    dims = static_dims(node, x)
    m = len(block)
    total = int(np.prod(block))
    if len(crops) != m or len(dims) < m + 1 or dims[0] % total:
        raise node.invalid(f"block_shape {block} and crops {crops} do not fit input {dims}")
    batch = dims[0] // total
    spatial, rest = dims[1 : 1 + m], dims[1 + m :]
    x = imp.g.add_reshape(x, [*block, batch, *spatial, *rest], f"{node.name}.split")
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    x = transpose(imp, x, perm, f"{node.name}.blocks_last")
    grown = [s * b for s, b in zip(spatial, block, strict=True)]
    x = imp.g.add_reshape(x, [batch, *grown, *rest], f"{node.name}.merge")
    if not any(v for pair in crops for v in pair):
        return [x]
    starts = [int(c[0]) for c in crops]
    ends = [g - int(c[1]) for g, c in zip(grown, crops, strict=True)]
    return [_add_slice(imp, node.name, x, starts, ends, list(range(1, 1 + m)), [1] * m)]


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
    "All": _reduce(ops.ReduceMinOp),
    "Any": _reduce(ops.ReduceMaxOp),
    "EuclideanNorm": _reduce(ops.ReduceL2Op),
    "L2Loss": _l2_loss,
    "ArgMax": _arg_reduce(ops.ArgMaxOp),
    "ArgMin": _arg_reduce(ops.ArgMinOp),
    "TopKV2": _top_k,
    "Cumsum": _scan(ops.CumSumOp),
    "Cumprod": _scan(ops.CumProdOp),
    "ReverseV2": _reverse,
    "BroadcastTo": _broadcast_to,
    "GatherNd": _gather_nd,
    "MatrixBandPart": _matrix_band_part,
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
    "SpaceToBatchND": _space_to_batch,
    "BatchToSpaceND": _batch_to_space,
    "OneHot": _one_hot,
}
