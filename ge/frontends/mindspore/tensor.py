"""Converters of MindSpore's shape, indexing and reduction primitives: Flatten, Reshape, Transpose,
Concat, Stack, Split, ExpandDims, Squeeze, StridedSlice, Gather, Tile, BroadcastTo, PadV3, the
Reduce* family, Argmax and Argmin, OneHot, CumSum, TopK and ReverseV2.

Shapes, permutations and axes are constant inputs of the node (tuples of integers).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from ..strided_slice import MASKS, add_strided_slice
from .importer import Converter, Importer, Node, Value
from .values import TYPE_IDS


def _flatten(imp: Importer, node: Node) -> Value:
    return imp.g.add_op(ops.FlattenOp, [node.tensor(0)], {"axis": int_attr(1)}, node.name)


def _reshape(imp: Importer, node: Node) -> Value:
    x = node.tensor(0)
    return imp.g.add_reshape(x, node.ints(node.value(1), "shape"), node.name)


def _transpose(imp: Importer, node: Node) -> Value:
    perm = node.ints(node.value(1), "perm")
    return imp.g.add_op(ops.TransposeOp, [node.tensor(0)], {"perm": ints_attr(perm)}, node.name)


def _concat(imp: Importer, node: Node) -> Value:
    values = node.input(0)
    values = values if isinstance(values, tuple) else (values,)
    tensors = [
        v if isinstance(v, Tensor) else imp.constant(v, f"{node.name}.input", None, node) for v in values
    ]
    axis = node.value(1) if len(node.inputs) > 1 else node.attr("axis", 0)
    return imp.g.add_op(ops.ConcatOp, tensors, {"axis": int_attr(node.ints(axis, "axis")[0])}, node.name)


def _expand_dims(imp: Importer, node: Node) -> Value:
    x = node.tensor(0)
    axis = node.ints(node.value(1), "axis")[0]
    rank = len(x.shape) + 1
    if not -rank <= axis < rank:
        raise node.invalid(f"axis {axis} is out of range for rank {rank}")
    shape = list(x.shape)
    shape.insert(axis % rank, 1)
    return imp.g.add_reshape(x, shape, node.name)


def _squeeze(imp: Importer, node: Node) -> Value:
    x = node.tensor(0)
    axes = node.ints(node.value(1) if len(node.inputs) > 1 else node.attr("axis", ()), "axis")
    rank = len(x.shape)
    axes = [a % rank for a in axes] if axes else [a for a, d in enumerate(x.shape) if d == 1]
    if any(x.shape[a] != 1 for a in axes):
        raise node.invalid(f"cannot squeeze axes {axes} of shape {list(x.shape)}")
    return imp.g.add_reshape(x, [d for a, d in enumerate(x.shape) if a not in axes], node.name)


def _reduce(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        x = node.tensor(0)
        if len(node.inputs) > 1:
            axes, keep = node.value(1), node.value(2) if len(node.inputs) > 2 else False
        else:
            axes, keep = node.attr("axis", ()), node.attr("keep_dims", False)
        axes = node.ints(axes, "axis")
        if not axes and len(node.inputs) > 3 and node.value(3):
            return x  # ReduceSum's skip_mode: no axes given reduces none
        axes = axes or list(range(len(x.shape)))  # () reduces every axis
        props = {"axes": ints_attr(axes), "keepdims": bool_attr(bool(keep))}
        return imp.g.add_op(op_class, [x], props, node.name)

    return convert


def _split(imp: Importer, node: Node) -> Value:
    """Split(x, axis, output_num): equal parts."""
    x = node.tensor(0)
    axis = node.ints(node.value(1) if len(node.inputs) > 1 else node.attr("axis", 0), "axis")[0]
    count = node.ints(node.value(2) if len(node.inputs) > 2 else node.attr("output_num", 1), "output_num")[0]
    axis %= len(x.shape)
    if x.shape[axis] < 0 or count <= 0 or x.shape[axis] % count:
        raise node.invalid(f"axis {axis} of {list(x.shape)} does not split into {count} equal parts")
    props = {"axis": int_attr(axis), "sizes": ints_attr([x.shape[axis] // count] * count)}
    return tuple(imp.g.add_op_results(ops.SplitOp, [x], props, node.name))


def _stack(imp: Importer, node: Node) -> Value:
    values = node.input(0)
    values = values if isinstance(values, tuple) else tuple(node.inputs)
    tensors = [
        v if isinstance(v, Tensor) else imp.constant(v, f"{node.name}.input", None, node) for v in values
    ]
    rank = len(tensors[0].shape) + 1
    axis = int(node.attr("axis", 0)) % rank
    parts = []
    for index, t in enumerate(tensors):
        shape = list(t.shape)
        shape.insert(axis, 1)
        parts.append(imp.g.add_reshape(t, shape, f"{node.name}.{index}"))
    return parts[0] if len(parts) == 1 else imp.g.add_concat(parts, axis, node.name)


def _strided_slice(imp: Importer, node: Node) -> Value:
    """StridedSlice(x, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
    shrink_axis_mask), TensorFlow's slice."""
    x = node.tensor(0)
    begin, end, strides = (
        node.ints(node.value(i), name) for i, name in ((1, "begin"), (2, "end"), (3, "strides"))
    )
    masks = {
        key: node.ints(node.value(4 + i) if len(node.inputs) > 4 + i else node.attr(key, 0), key)[0]
        for i, key in enumerate(MASKS)
    }
    return add_strided_slice(imp.g, x, begin, end, strides, masks, node.name)


def _gather(imp: Importer, node: Node) -> Value:
    """Gather(x, indices, axis, batch_dims)."""
    x, indices = node.tensor(0), node.tensor(1)
    axis = node.ints(node.value(2), "axis")[0] if len(node.inputs) > 2 else 0
    if len(node.inputs) > 3 and node.value(3):
        raise node.fail("batch_dims other than 0 is not supported")
    return imp.g.add_op(ops.GatherOp, [x, indices], {"axis": int_attr(axis)}, node.name)


def _tile(imp: Importer, node: Node) -> Value:
    x = node.tensor(0)
    repeats = node.ints(node.value(1), "multiples")
    if len(repeats) > len(x.shape):
        x = imp.g.add_reshape(x, [1] * (len(repeats) - len(x.shape)) + list(x.shape), f"{node.name}.rank")
    return imp.g.add_op(ops.TileOp, [x], {"repeats": ints_attr(repeats)}, node.name)


def _broadcast_to(imp: Importer, node: Node) -> Value:
    """A -1 in the shape keeps the input's size."""
    x = node.tensor(0)
    shape = node.ints(node.value(1) if len(node.inputs) > 1 else node.attr("shape"), "shape")
    offset = len(shape) - len(x.shape)
    shape = [x.shape[i - offset] if d == -1 and i >= offset else d for i, d in enumerate(shape)]
    return imp.g.add_op(ops.ExpandOp, [x], {"shape": ints_attr(shape)}, node.name)


def _pad(imp: Importer, node: Node) -> Value:
    """PadV3(x, paddings, value): pairs from the last axis backwards, as torch's pad."""
    x = node.tensor(0)
    pairs = node.ints(node.value(1), "paddings")
    mode = str(node.attr("mode", "constant"))
    if mode != "constant":
        raise node.fail(f"mode '{mode}' is not supported (constant is)")
    if not node.attr("paddings_contiguous", True):
        raise node.fail("paddings_contiguous=False is not supported")
    rank = len(x.shape)
    if len(pairs) % 2 or len(pairs) > 2 * rank:
        raise node.invalid(f"paddings {pairs} do not fit a rank-{rank} input")
    begin, end = [0] * rank, [0] * rank
    for index in range(len(pairs) // 2):
        begin[rank - 1 - index], end[rank - 1 - index] = pairs[2 * index], pairs[2 * index + 1]
    operands = [x]
    if len(node.inputs) > 2 and node.inputs[2] is not None:
        operands.append(node.tensor(2, x))
    props = {"pads": ints_attr(begin + end), "mode": StringAttr("constant")}
    return imp.g.add_op(ops.PadOp, operands, props, node.name)


def _arg_reduce(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        """Argmax(x, axis, output_type): int32 unless the type id says otherwise."""
        x = node.tensor(0)
        axis = node.ints(node.value(1) if len(node.inputs) > 1 else node.attr("axis", -1), "axis")[0]
        props = {"axis": int_attr(axis), "keepdims": bool_attr(False), "select_last_index": bool_attr(False)}
        y = imp.g.add_op(op_class, [x], props, node.name)
        target = node.value(2) if len(node.inputs) > 2 else node.attr("output_type", 34)
        dtype = TYPE_IDS.get(target, "int32") if isinstance(target, int) else "int32"
        return y if y.dtype == dtype else imp.g.add_cast(y, dtype, f"{node.name}.cast")

    return convert


def _one_hot(imp: Importer, node: Node) -> Value:
    """OneHot(indices, depth, on_value, off_value, axis)."""
    on, off = node.tensor(2), node.tensor(3)
    values = imp.g.add_concat(
        [imp.g.add_reshape(t, [1], f"{node.name}.{what}") for t, what in ((off, "off"), (on, "on"))],
        0,
        f"{node.name}.values",
    )
    axis = node.value(4) if len(node.inputs) > 4 else node.attr("axis", -1)
    props = {
        "depth": int_attr(node.ints(node.value(1), "depth")[0]),
        "axis": int_attr(node.ints(axis, "axis")[0]),
    }
    return imp.g.add_op(ops.OneHotOp, [node.tensor(0), values], props, node.name)


def _cumsum(imp: Importer, node: Node) -> Value:
    """CumSum(x, axis, exclusive, reverse)."""
    props = {
        "axis": int_attr(node.ints(node.value(1), "axis")[0]),
        "exclusive": bool_attr(bool(node.value(2)) if len(node.inputs) > 2 else False),
        "reverse": bool_attr(bool(node.value(3)) if len(node.inputs) > 3 else False),
    }
    return imp.g.add_op(ops.CumSumOp, [node.tensor(0)], props, node.name)


def _top_k(imp: Importer, node: Node) -> Value:
    """TopK(x, k): the k largest along the last axis, sorted, with int32 indices."""
    k = node.ints(node.value(1), "k")[0]
    props = {"k": int_attr(k), "axis": int_attr(-1), "largest": bool_attr(True), "sorted": bool_attr(True)}
    values, indices = imp.g.add_op_results(ops.TopKOp, [node.tensor(0)], props, node.name)
    return values, imp.g.add_cast(indices, "int32", f"{node.name}.indices")


def _reduce_ext(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        """SumExt and ProdExt(x, axis, keep_dims, dtype); axis None reduces every axis."""
        x = node.tensor(0)
        axis = node.value(1) if len(node.inputs) > 1 else None
        keep = bool(node.value(2)) if len(node.inputs) > 2 else False
        if len(node.inputs) > 3 and node.value(3) is not None:
            raise node.fail("a dtype for the result is not supported")
        axes = list(range(len(x.shape))) if axis is None else node.ints(axis, "axis")
        props = {"axes": ints_attr(axes), "keepdims": bool_attr(keep)}
        return imp.g.add_op(op_class, [x], props, node.name)

    return convert


def _reverse(imp: Importer, node: Node) -> Value:
    """ReverseV2(x, axis): a slice with step -1 along each axis."""
    x = node.tensor(0)
    axes = sorted(
        {
            a % len(x.shape)
            for a in node.ints(node.value(1) if len(node.inputs) > 1 else node.attr("axis"), "axis")
        }
    )
    big = np.iinfo(np.int64).max
    props = {
        "starts": ints_attr([-1] * len(axes)),
        "ends": ints_attr([-big] * len(axes)),
        "axes": ints_attr(axes),
        "steps": ints_attr([-1] * len(axes)),
    }
    return imp.g.add_op(ops.SliceOp, [x], props, node.name) if axes else x


def _arg_with_value(arg_class: type, reduce_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        """ArgMaxWithValue(x, axis, keep_dims): (the index, int64 as MindSpore 2.10 gives it, and
        the value)."""
        x = node.tensor(0)
        axis = node.ints(node.value(1) if len(node.inputs) > 1 else node.attr("axis", 0), "axis")[0]
        keep = bool(node.value(2)) if len(node.inputs) > 2 else bool(node.attr("keep_dims", False))
        props = {"axis": int_attr(axis), "keepdims": bool_attr(keep), "select_last_index": bool_attr(False)}
        index = imp.g.add_op(arg_class, [x], props, f"{node.name}.index")
        values = {"axes": ints_attr([axis]), "keepdims": bool_attr(keep)}
        return index, imp.g.add_op(reduce_class, [x], values, node.name)

    return convert


def _slice(imp: Importer, node: Node) -> Value:
    """Slice(x, begin, size); a size of -1 takes the rest of the axis."""
    x = node.tensor(0)
    begin, size = node.ints(node.value(1), "begin"), node.ints(node.value(2), "size")
    if len(begin) != len(size) or len(begin) > len(x.shape):
        raise node.invalid(f"begin {begin} and size {size} do not fit shape {list(x.shape)}")
    ends = [x.shape[a] if n == -1 else b + n for a, (b, n) in enumerate(zip(begin, size, strict=True))]
    props = {
        "starts": ints_attr(begin),
        "ends": ints_attr(ends),
        "axes": ints_attr(list(range(len(begin)))),
        "steps": ints_attr([1] * len(begin)),
    }
    return imp.g.add_op(ops.SliceOp, [x], props, node.name)


def _triangle(upper: bool) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        """Triu and Tril: the diagonal as an input (Triu) or an attribute (Tril)."""
        k = node.value(1) if len(node.inputs) > 1 else node.attr("diagonal", 0)
        props = {"upper": bool_attr(upper), "k": int_attr(node.ints(k, "diagonal")[0])}
        return imp.g.add_op(ops.TriluOp, [node.tensor(0)], props, node.name)

    return convert


def _reduce_std(imp: Importer, node: Node) -> Value:
    """ReduceStd(x, axis, unbiased, keep_dims): (the standard deviation, the mean)."""
    x = node.tensor(0)
    axes = node.ints(node.value(1), "axis") if len(node.inputs) > 1 else []
    axes = sorted({a % len(x.shape) for a in axes}) or list(range(len(x.shape)))
    unbiased = bool(node.value(2)) if len(node.inputs) > 2 else True
    keep = bool(node.value(3)) if len(node.inputs) > 3 else False
    if any(x.shape[a] < 0 for a in axes):
        raise node.fail("a standard deviation over a dynamic axis is not supported")
    count = int(np.prod([x.shape[a] for a in axes]))
    kept = {"axes": ints_attr(axes), "keepdims": bool_attr(True)}
    mean = imp.g.add_op(ops.ReduceMeanOp, [x], kept, f"{node.name}.mean")
    deviation = imp.g.add_op(ops.SubOp, [x, mean], None, f"{node.name}.deviation")
    squares = imp.g.add_op(ops.ReduceSumSquareOp, [deviation], kept, f"{node.name}.squares")
    divisor = imp.constant(float(max(count - int(unbiased), 1)), f"{node.name}.count", x, node)
    std = imp.g.add_op(
        ops.SqrtOp, [imp.g.add_op(ops.DivOp, [squares, divisor], None, f"{node.name}.var")], None, node.name
    )
    if keep:
        return std, mean
    shape = [d for a, d in enumerate(x.shape) if a not in axes]
    return imp.g.add_reshape(std, shape, f"{node.name}.std"), imp.g.add_reshape(
        mean, shape, f"{node.name}.average"
    )


def _masked_fill(imp: Importer, node: Node) -> Value:
    """MaskedFill(x, mask, value): value where the mask holds."""
    x = node.tensor(0)
    return imp.g.add_op(ops.WhereOp, [node.tensor(1), node.tensor(2, x), x], None, node.name)


def _diag(imp: Importer, node: Node) -> Value:
    """Diag of a vector: the square matrix holding it on its diagonal."""
    x = node.tensor(0)
    if len(x.shape) != 1 or x.shape[0] < 0:
        raise node.fail(f"Diag of a tensor of shape {list(x.shape)} is not supported (of a vector is)")
    size = x.shape[0]
    mask = imp.constant(np.eye(size, dtype=bool), f"{node.name}.mask", None, node)
    zero = imp.constant(0, f"{node.name}.zero", x, node)
    row = imp.g.add_reshape(x, [1, size], f"{node.name}.row")
    return imp.g.add_op(ops.WhereOp, [mask, row, zero], None, node.name)


def _eye(imp: Importer, node: Node) -> Value:
    """Eye(n, m, dtype): a constant."""
    rows, columns = node.ints(node.value(0), "n")[0], node.ints(node.value(1), "m")[0]
    target = node.value(2) if len(node.inputs) > 2 else 43
    dtype = TYPE_IDS.get(target) if isinstance(target, int) else None
    if dtype is None:
        raise node.fail(f"an identity of type {target!r} is not supported")
    return imp.constant(np.eye(rows, columns, dtype=np.dtype(dtype)), node.name, None, node)


def _linspace(imp: Importer, node: Node) -> Value:
    """LinSpace(start, stop, num) of constants: a constant."""
    start, stop = node.number(node.value(0), "start"), node.number(node.value(1), "stop")
    count = node.ints(node.value(2), "num")[0]
    return imp.constant(np.linspace(start, stop, count, dtype=np.float32), node.name, None, node)


CONVERTERS: dict[str, Converter] = {
    "Flatten": _flatten,
    "Reshape": _reshape,
    "Transpose": _transpose,
    "Concat": _concat,
    "ExpandDims": _expand_dims,
    "Squeeze": _squeeze,
    "ReduceMean": _reduce(ops.ReduceMeanOp),
    "ReduceSum": _reduce(ops.ReduceSumOp),
    "ReduceMax": _reduce(ops.ReduceMaxOp),
    "ReduceMin": _reduce(ops.ReduceMinOp),
    "Split": _split,
    "Stack": _stack,
    "StridedSlice": _strided_slice,
    "Gather": _gather,
    "Tile": _tile,
    "BroadcastTo": _broadcast_to,
    "PadV3": _pad,
    "Argmax": _arg_reduce(ops.ArgMaxOp),
    "Argmin": _arg_reduce(ops.ArgMinOp),
    "OneHot": _one_hot,
    "CumSum": _cumsum,
    "TopK": _top_k,
    "ProdExt": _reduce_ext(ops.ReduceProdOp),
    "ReverseV2": _reverse,
    "SumExt": _reduce_ext(ops.ReduceSumOp),
    "ArgMaxWithValue": _arg_with_value(ops.ArgMaxOp, ops.ReduceMaxOp),
    "ArgMinWithValue": _arg_with_value(ops.ArgMinOp, ops.ReduceMinOp),
    "Slice": _slice,
    "Triu": _triangle(upper=True),
    "Tril": _triangle(upper=False),
    "ReduceStd": _reduce_std,
    "MaskedFill": _masked_fill,
    "Diag": _diag,
    "Eye": _eye,
    "LinSpace": _linspace,
}
