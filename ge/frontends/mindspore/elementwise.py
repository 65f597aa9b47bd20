"""Converters of MindSpore's elementwise primitives: arithmetic, activations, softmax and casts.

A Python number operand (`x + 0.25` written as a scalar) takes the dtype of the tensor operand,
as MindSpore's implicit type promotion gives it for float tensors.
"""

from __future__ import annotations

from ge.dialects import graph as ops
from ge.dialects.common import int_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node, Value
from .values import TYPE_IDS


def _binary(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        like = next((value for value in node.inputs[:2] if isinstance(value, Tensor)), None)
        a, b = node.tensor(0, like), node.tensor(1, like)
        return imp.g.add_op(op_class, [a, b], None, node.name)

    return convert


def _divide(imp: Importer, node: Node) -> Value:
    """True division; MindSpore's integer division rounds in ways of its own, so it is refused."""
    like = next((value for value in node.inputs[:2] if isinstance(value, Tensor)), None)
    a, b = node.tensor(0, like), node.tensor(1, like)
    if not a.dtype.startswith(("float", "bfloat")):
        raise node.fail(f"division of {a.dtype} tensors is not supported (cast them to float32 first)")
    return imp.g.add_op(ops.DivOp, [a, b], None, node.name)


def _unary(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        return imp.g.add_op(op_class, [node.tensor(0)], None, node.name)

    return convert


def _softmax(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        axis = node.value(1) if len(node.inputs) > 1 else node.attr("axis", -1)
        axes = node.ints(axis, "axis")
        if len(axes) != 1:
            raise node.fail(f"a softmax over {len(axes)} axes {axes} is not supported (one axis)")
        return imp.g.add_op(op_class, [node.tensor(0)], {"axis": int_attr(axes[0])}, node.name)

    return convert


def _cast(imp: Importer, node: Node) -> Value:
    """The target type is MindSpore's type id (an integer input) or a dtype attribute."""
    target = node.value(1) if len(node.inputs) > 1 else node.attr("dst_type")
    dtype = TYPE_IDS.get(target) if isinstance(target, int) else None
    if dtype is None:
        raise node.fail(
            f"cast to type {target!r} is not supported (ge casts to {', '.join(TYPE_IDS.values())})"
        )
    x = node.tensor(0)
    return x if x.dtype == dtype else imp.g.add_cast(x, dtype, node.name)


CONVERTERS: dict[str, Converter] = {
    "Add": _binary(ops.AddOp),
    "Sub": _binary(ops.SubOp),
    "Mul": _binary(ops.MulOp),
    "RealDiv": _divide,
    "Div": _divide,
    "Maximum": _binary(ops.MaxOp),
    "Minimum": _binary(ops.MinOp),
    "ReLU": _unary(ops.ReluOp),
    "Sigmoid": _unary(ops.SigmoidOp),
    "Tanh": _unary(ops.TanhOp),
    "Exp": _unary(ops.ExpOp),
    "Log": _unary(ops.LogOp),
    "Sqrt": _unary(ops.SqrtOp),
    "Neg": _unary(ops.NegOp),
    "Abs": _unary(ops.AbsOp),
    "Erf": _unary(ops.ErfOp),
    "Softmax": _softmax(ops.SoftmaxOp),
    "LogSoftmax": _softmax(ops.LogSoftmaxOp),
    "Cast": _cast,
}
