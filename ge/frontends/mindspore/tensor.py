"""Converters of MindSpore's shape and reduction primitives: Flatten, Reshape, Transpose, Concat,
ExpandDims, Squeeze and the Reduce* family.

Shapes, permutations and axes are constant inputs of the node (tuples of integers).
"""

from __future__ import annotations

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node, Value


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
}
