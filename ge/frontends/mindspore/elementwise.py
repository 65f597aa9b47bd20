"""Converters of MindSpore's elementwise primitives: arithmetic, activations, softmax and casts.

A Python number operand (`x + 0.25` written as a scalar) takes the dtype of the tensor operand,
as MindSpore's implicit type promotion gives it for float tensors.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import int_attr
from ge.graph import Tensor

from ..common import add_floor_division
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


def _not_equal(imp: Importer, node: Node) -> Value:
    like = next((value for value in node.inputs[:2] if isinstance(value, Tensor)), None)
    equal = imp.g.add_op(
        ops.EqualOp, [node.tensor(0, like), node.tensor(1, like)], None, f"{node.name}.equal"
    )
    return imp.g.add_op(ops.NotOp, [equal], None, node.name)


def _relu6(imp: Importer, node: Node) -> Value:
    x = node.tensor(0)
    low = imp.g.add_op(
        ops.MaxOp, [x, imp.constant(0.0, f"{node.name}.zero", x, node)], None, f"{node.name}.relu"
    )
    return imp.g.add_op(ops.MinOp, [low, imp.constant(6.0, f"{node.name}.six", x, node)], None, node.name)


def _scaled(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        """Muls and Divs: a tensor and a Python number, the number in the tensor's dtype."""
        x = node.tensor(0)
        return imp.g.add_op(op_class, [x, node.tensor(1, x)], None, node.name)

    return convert


def _activation(op_class: type, **props: float) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        properties = {key: ops.float_attr(value) for key, value in props.items()} or None
        return imp.g.add_op(op_class, [node.tensor(0)], properties, node.name)

    return convert


def _gelu(imp: Importer, node: Node) -> Value:
    """MindSpore's GeLU primitive is the tanh approximation (nn.GELU(approximate=False) is built
    from Erf instead)."""
    props = {"approximate": StringAttr("tanh")}
    return imp.g.add_op(ops.GeluOp, [node.tensor(0)], props, node.name)


def _elu(imp: Importer, node: Node) -> Value:
    alpha = node.value(1) if len(node.inputs) > 1 else node.attr("alpha", 1.0)
    props = {"alpha": ops.float_attr(node.number(alpha, "alpha"))}
    return imp.g.add_op(ops.EluOp, [node.tensor(0)], props, node.name)


def _prelu(imp: Importer, node: Node) -> Value:
    """The slope is per channel, the input's axis 1."""
    x, slope = node.tensor(0), node.tensor(1)
    if len(x.shape) > 2 and len(slope.shape) == 1 and slope.shape[0] > 1:
        slope = imp.g.add_reshape(slope, [slope.shape[0], *[1] * (len(x.shape) - 2)], f"{node.name}.slope")
    return imp.g.add_op(ops.PReluOp, [x, slope], None, node.name)


def _clamp(imp: Importer, node: Node) -> Value:
    """ClampScalar(x, min, max); a bound may be None."""
    x = node.tensor(0)
    for index, op_class, what in ((1, ops.MaxOp, "min"), (2, ops.MinOp, "max")):
        if len(node.inputs) > index and node.inputs[index] is not None:
            x = imp.g.add_op(op_class, [x, node.tensor(index, x)], None, f"{node.name}.{what}")
    return x


def _round(imp: Importer, node: Node) -> Value:
    decimals = node.value(1) if len(node.inputs) > 1 else 0
    if decimals not in (0, None):
        raise node.fail(f"rounding to {decimals} decimals is not supported (to integers is)")
    return imp.g.add_op(ops.RoundOp, [node.tensor(0)], None, node.name)


def _square(imp: Importer, node: Node) -> Value:
    x = node.tensor(0)
    return imp.g.add_op(ops.MulOp, [x, x], None, node.name)


def _rsqrt(imp: Importer, node: Node) -> Value:
    root = imp.g.add_op(ops.SqrtOp, [node.tensor(0)], None, f"{node.name}.sqrt")
    return imp.g.add_op(ops.ReciprocalOp, [root], None, node.name)


def _floor_div(imp: Importer, node: Node) -> Value:
    """floor(x / y): the float quotient floored; integers divide exactly (see
    `add_floor_division`)."""
    like = next((value for value in node.inputs[:2] if isinstance(value, Tensor)), None)
    x, y = node.tensor(0, like), node.tensor(1, like)
    if x.dtype.startswith(("float", "bfloat")):
        quotient = imp.g.add_op(ops.DivOp, [x, y], None, f"{node.name}.quotient")
        return imp.g.add_op(ops.FloorOp, [quotient], None, node.name)
    return add_floor_division(imp.g, x, y, node.name)


def _select(imp: Importer, node: Node) -> Value:
    x = node.tensor(1)
    return imp.g.add_op(ops.WhereOp, [node.tensor(0), x, node.tensor(2, x)], None, node.name)


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
    "Atan2": _binary(ops.Atan2Op),
    "Exp": _unary(ops.ExpOp),
    "Expm1": _unary(ops.Expm1Op),  # exact near 0, where MindSpore 2.10's CPU kernel gives exp(x) - 1
    "Log": _unary(ops.LogOp),
    "Sqrt": _unary(ops.SqrtOp),
    "Neg": _unary(ops.NegOp),
    "Abs": _unary(ops.AbsOp),
    "Erf": _unary(ops.ErfOp),
    "Softmax": _softmax(ops.SoftmaxOp),
    "LogSoftmax": _softmax(ops.LogSoftmaxOp),
    "Cast": _cast,
    "Muls": _scaled(ops.MulOp),
    "Divs": _scaled(ops.DivOp),
    "Pow": _binary(ops.PowOp),
    "Equal": _binary(ops.EqualOp),
    "NotEqual": _not_equal,
    "Greater": _binary(ops.GreaterOp),
    "GreaterEqual": _binary(ops.GreaterEqualOp),
    "Less": _binary(ops.LessOp),
    "LessEqual": _binary(ops.LessEqualOp),
    "LessScalar": _binary(ops.LessOp),
    "GreaterScalar": _binary(ops.GreaterOp),
    "LogicalAnd": _binary(ops.AndOp),
    "LogicalOr": _binary(ops.OrOp),
    "LogicalNot": _unary(ops.NotOp),
    "Select": _select,
    "ReLU6": _relu6,
    "HSwish": _activation(ops.HardSwishOp),
    "HSigmoid": _activation(ops.HardSigmoidOp, alpha=1 / 6, beta=0.5),
    "SiLU": _activation(ops.SwishOp, alpha=1.0),
    "GeLU": _gelu,
    "Elu": _elu,
    "Mish": _unary(ops.MishOp),
    "SeLU": _unary(ops.SeluOp),
    "Softsign": _unary(ops.SoftsignOp),
    "Softplus": _unary(ops.SoftplusOp),
    "PReLU": _prelu,
    "ClampScalar": _clamp,
    "Round": _round,
    "Square": _square,
    "Rsqrt": _rsqrt,
    "Reciprocal": _unary(ops.ReciprocalOp),
    "Floor": _unary(ops.FloorOp),
    "Ceil": _unary(ops.CeilOp),
    "Sign": _unary(ops.SignOp),
    "Sin": _unary(ops.SinOp),
    "Cos": _unary(ops.CosOp),
    "Log1p": _unary(ops.Log1pOp),
    "IsNan": _unary(ops.IsNaNOp),
    "FloorDiv": _floor_div,
}
