"""Converters of TensorFlow's elementwise ops, Identity and its kin, Cast and Select.

An elementwise op on NHWC values that came from NCHW ones (see the importer) is applied to the
NCHW values, with a constant operand of one value per channel reshaped to [C, 1, 1], and its
result transposed back: the transposes around it then meet and cancel.
"""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr
from ge.graph import Tensor

from ..common import add_floor_division
from .importer import Converter, Importer, Node


def binary_op(
    imp: Importer, node: Node, op_class: type, a: Tensor, b: Tensor, name: str | None = None
) -> Tensor:
    """`op_class` on a and b, on their NCHW sources when both have one (or one has and the other
    is a per-channel or scalar constant)."""
    name = name or node.name
    sources = [imp.nchw_source.get(a.value), imp.nchw_source.get(b.value)]
    if any(sources):
        operands = []
        for tensor, source in zip((a, b), sources, strict=True):
            operands.append(source if source is not None else _per_channel(imp, tensor, name))
        if all(t is not None for t in operands):
            y = imp.g.add_op(op_class, operands, None, f"{name}.nchw")
            return imp.to_nhwc(y, name)
    return imp.g.add_op(op_class, [a, b], None, name)


def unary_op(
    imp: Importer,
    node: Node,
    op_class: type,
    x: Tensor,
    props: dict | None = None,
    name: str | None = None,
) -> Tensor:
    name = name or node.name
    source = imp.nchw_source.get(x.value)
    if source is not None:
        return imp.to_nhwc(imp.g.add_op(op_class, [source], props, f"{name}.nchw"), name)
    return imp.g.add_op(op_class, [x], props, name)


def _per_channel(imp: Importer, tensor: Tensor, name: str) -> Tensor | None:
    """A constant of shape [], [1] or [C] (broadcast along NHWC's last axis) as its NCHW form."""
    known = imp.known_value(tensor)
    if known is None or known.ndim > 1:
        return None
    if known.ndim == 1 and known.size > 1:
        return imp.add_constant(f"{name}.per_channel", known.reshape(-1, 1, 1))
    return tensor


def _unary(op_class: type, **props: float) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        properties = {k: ops.float_attr(float(node.attr(k, v))) for k, v in props.items()} or None
        return [unary_op(imp, node, op_class, node.inputs[0], properties)]

    return convert


def _binary(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        return [binary_op(imp, node, op_class, node.inputs[0], node.inputs[1])]

    return convert


def _scalar(imp: Importer, node: Node, value: float, dtype: str, what: str) -> Tensor:
    return imp.add_constant(f"{node.name}.{what}", np.array(value, dtype=np.dtype(dtype)))


def _relu6(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    low = binary_op(imp, node, ops.MaxOp, x, _scalar(imp, node, 0, x.dtype, "zero"), f"{node.name}.relu")
    return [binary_op(imp, node, ops.MinOp, low, _scalar(imp, node, 6, x.dtype, "six"))]


def _square(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    return [binary_op(imp, node, ops.MulOp, x, x)]


def _rsqrt(imp: Importer, node: Node) -> list[Tensor]:
    root = unary_op(imp, node, ops.SqrtOp, node.inputs[0])
    one = _scalar(imp, node, 1, root.dtype, "one")
    return [binary_op(imp, node, ops.DivOp, one, root, f"{node.name}.reciprocal")]


def _squared_difference(imp: Importer, node: Node) -> list[Tensor]:
    difference = binary_op(imp, node, ops.SubOp, node.inputs[0], node.inputs[1], f"{node.name}.difference")
    return [binary_op(imp, node, ops.MulOp, difference, difference)]


def _not_equal(imp: Importer, node: Node) -> list[Tensor]:
    equal = binary_op(imp, node, ops.EqualOp, node.inputs[0], node.inputs[1], f"{node.name}.equal")
    return [unary_op(imp, node, ops.NotOp, equal)]


def _floor_div(imp: Importer, node: Node) -> list[Tensor]:
    """floor(x / y): TensorFlow floors the float quotient; integers divide exactly (see
    `add_floor_division`)."""
    x, y = node.inputs
    if _is_float(x):
        quotient = binary_op(imp, node, ops.DivOp, x, y, f"{node.name}.quotient")
        return [unary_op(imp, node, ops.FloorOp, quotient)]
    return [add_floor_division(imp.g, x, y, node.name)]


def _mod(fmod: bool) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        """FloorMod takes the divisor's sign (Python's %), TruncateMod the dividend's (C's fmod)."""
        return [imp.g.add_op(ops.ModOp, node.inputs[:2], {"fmod": bool_attr(fmod)}, node.name)]

    return convert


def _div_no_nan(imp: Importer, node: Node) -> list[Tensor]:
    """x / y, and 0 where y is 0."""
    x, y = node.inputs
    zero = _scalar(imp, node, 0, y.dtype, "zero")
    divisor_zero = binary_op(imp, node, ops.EqualOp, y, zero, f"{node.name}.divisor_zero")
    quotient = binary_op(imp, node, ops.DivOp, x, y, f"{node.name}.quotient")
    return [imp.g.add_op(ops.WhereOp, [divisor_zero, zero, quotient], None, node.name)]


def _truncate_div(imp: Importer, node: Node) -> list[Tensor]:
    """Integer division toward zero, which ge's div is on integers."""
    x, y = node.inputs
    if _is_float(x):
        raise node.invalid(f"TruncateDiv takes integers, got {x.dtype}")
    return [binary_op(imp, node, ops.DivOp, x, y)]


def _xlogy(imp: Importer, node: Node) -> list[Tensor]:
    """x * log(y), and 0 where x is 0 (whatever y is)."""
    x, y = node.inputs
    zero = _scalar(imp, node, 0, x.dtype, "zero")
    log = unary_op(imp, node, ops.LogOp, y, name=f"{node.name}.log")
    product = binary_op(imp, node, ops.MulOp, x, log, f"{node.name}.product")
    is_zero = binary_op(imp, node, ops.EqualOp, x, zero, f"{node.name}.x_zero")
    return [imp.g.add_op(ops.WhereOp, [is_zero, zero, product], None, node.name)]


def _is_finite(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    nan = unary_op(imp, node, ops.IsNaNOp, x, name=f"{node.name}.nan")
    inf = unary_op(imp, node, ops.IsInfOp, x, name=f"{node.name}.inf")
    either = binary_op(imp, node, ops.OrOp, nan, inf, f"{node.name}.not_finite")
    return [unary_op(imp, node, ops.NotOp, either)]


def _is_float(x: Tensor) -> bool:
    return x.dtype.startswith(("float", "bfloat"))


def _add_n(imp: Importer, node: Node) -> list[Tensor]:
    total = node.inputs[0]
    for index, t in enumerate(node.inputs[1:]):
        last = index == len(node.inputs) - 2
        total = binary_op(imp, node, ops.AddOp, total, t, None if last else f"{node.name}.{index}")
    return [total]


def _identity(imp: Importer, node: Node) -> list[Tensor]:
    return list(node.raw_inputs)


def _no_op(imp: Importer, node: Node) -> list[Tensor]:
    return []


def _cast(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    dtype = node.dtype("DstT")
    return [x if dtype == x.dtype else imp.g.add_cast(x, dtype, node.name)]


def _select(imp: Importer, node: Node) -> list[Tensor]:
    """Select's rank-1 condition picks whole rows of higher-rank values (SelectV2 broadcasts)."""
    condition, x, y = node.inputs
    if node.op_type == "Select" and len(condition.shape) == 1 and len(x.shape) > 1:
        condition = imp.g.add_reshape(
            condition, [condition.shape[0]] + [1] * (len(x.shape) - 1), f"{node.name}.rows"
        )
    return [imp.g.add_op(ops.WhereOp, [condition, x, y], None, node.name)]


CONVERTERS: dict[str, Converter] = {
    "Identity": _identity,
    "IdentityN": _identity,
    "StopGradient": _identity,
    "NoOp": _no_op,
    "Relu": _unary(ops.ReluOp),
    "Relu6": _relu6,
    "LeakyRelu": _unary(ops.LeakyReluOp, alpha=0.2),
    "Elu": _unary(ops.EluOp),
    "Selu": _unary(ops.SeluOp),
    "Softplus": _unary(ops.SoftplusOp),
    "Sigmoid": _unary(ops.SigmoidOp),
    "Tanh": _unary(ops.TanhOp),
    "Erf": _unary(ops.ErfOp),
    "Erfc": _unary(ops.ErfcOp),
    "Abs": _unary(ops.AbsOp),
    "Sqrt": _unary(ops.SqrtOp),
    "Rsqrt": _rsqrt,
    "Exp": _unary(ops.ExpOp),
    "Log": _unary(ops.LogOp),
    "Neg": _unary(ops.NegOp),
    "Square": _square,
    "Log1p": _unary(ops.Log1pOp),
    "Expm1": _unary(ops.Expm1Op),
    "Softsign": _unary(ops.SoftsignOp),
    "Reciprocal": _unary(ops.ReciprocalOp),
    "Inv": _unary(ops.ReciprocalOp),
    "Floor": _unary(ops.FloorOp),
    "Ceil": _unary(ops.CeilOp),
    "Round": _unary(ops.RoundOp),
    "Rint": _unary(ops.RoundOp),
    "Sign": _unary(ops.SignOp),
    "Sin": _unary(ops.SinOp),
    "Cos": _unary(ops.CosOp),
    "Tan": _unary(ops.TanOp),
    "Asin": _unary(ops.AsinOp),
    "Acos": _unary(ops.AcosOp),
    "Atan": _unary(ops.AtanOp),
    "Sinh": _unary(ops.SinhOp),
    "Cosh": _unary(ops.CoshOp),
    "Asinh": _unary(ops.AsinhOp),
    "Acosh": _unary(ops.AcoshOp),
    "Atanh": _unary(ops.AtanhOp),
    "IsNan": _unary(ops.IsNaNOp),
    "IsInf": _unary(ops.IsInfOp),
    "IsFinite": _is_finite,
    "LogicalNot": _unary(ops.NotOp),
    "LogicalAnd": _binary(ops.AndOp),
    "LogicalOr": _binary(ops.OrOp),
    "FloorDiv": _floor_div,
    "FloorMod": _mod(fmod=False),
    "TruncateMod": _mod(fmod=True),
    "Mod": _mod(fmod=True),
    "DivNoNan": _div_no_nan,
    "TruncateDiv": _truncate_div,
    "Xlogy": _xlogy,
    "Atan2": _binary(ops.Atan2Op),
    "BitwiseAnd": _binary(ops.BitwiseAndOp),
    "BitwiseOr": _binary(ops.BitwiseOrOp),
    "BitwiseXor": _binary(ops.BitwiseXorOp),
    "Invert": _unary(ops.BitwiseNotOp),
    "LeftShift": _binary(ops.ShiftLeftOp),
    "RightShift": _binary(ops.ShiftRightOp),
    "Add": _binary(ops.AddOp),
    "AddV2": _binary(ops.AddOp),
    "AddN": _add_n,
    "Sub": _binary(ops.SubOp),
    "Mul": _binary(ops.MulOp),
    "RealDiv": _binary(ops.DivOp),
    "Maximum": _binary(ops.MaxOp),
    "Minimum": _binary(ops.MinOp),
    "Pow": _binary(ops.PowOp),
    "SquaredDifference": _squared_difference,
    "Less": _binary(ops.LessOp),
    "Greater": _binary(ops.GreaterOp),
    "Equal": _binary(ops.EqualOp),
    "NotEqual": _not_equal,
    "LessEqual": _binary(ops.LessEqualOp),
    "GreaterEqual": _binary(ops.GreaterEqualOp),
    "Cast": _cast,
    "Select": _select,
    "SelectV2": _select,
}
