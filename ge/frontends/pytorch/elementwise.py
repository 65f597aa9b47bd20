"""Converters of elementwise ATen ops: arithmetic, comparisons, math functions, activations, casts.

A Python number among the operands becomes a 0-d constant, and the operands are cast to the
result dtype the export recorded (ATen promotes `int_tensor * 0.5` to float; the graph's binary
ops take operands of one dtype). Comparisons cast both operands to their common dtype instead.
"""

from __future__ import annotations

from collections.abc import Callable

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr
from ge.graph import Graph, Tensor

from ..common import add_floor_division
from .importer import Converter, Node


def _binary(op_class: type, **flags: bool) -> Callable[[Graph, Node], Tensor]:
    """`op_class` of the operands cast to the result dtype, with the boolean properties `flags`."""

    def convert(g: Graph, node: Node) -> Tensor:
        a, b = node.arg(0, "self"), node.arg(1, "other")
        props = {name: bool_attr(value) for name, value in flags.items()} or None
        kind = BOOLEAN_FORM.get(op_class, op_class) if node.dtype == "bool" else op_class
        return g.add_op(kind, [node.tensor(a, node.dtype), node.tensor(b, node.dtype)], props, node.name)

    return convert


BOOLEAN_FORM: dict[type, type] = {
    ops.AddOp: ops.OrOp,
    ops.MulOp: ops.AndOp,
    ops.MaxOp: ops.OrOp,
    ops.MinOp: ops.AndOp,
}
"""What ATen's arithmetic on bools computes (`isfinite` and `isclose` multiply flags), which
the graph's arithmetic, numeric only, does not take."""


def _with_alpha(op_class: type) -> Converter:
    """`add` and `sub` of ATen scale `other` by `alpha` first."""

    def convert(g: Graph, node: Node) -> Tensor:
        a, b = node.tensor(node.arg(0, "self"), node.dtype), node.arg(1, "other")
        alpha = node.arg(2, "alpha", 1)
        if alpha != 1:
            b = g.add_mul(node.tensor(b, node.dtype), node.scalar(alpha), f"{node.name}.alpha")
        kind = BOOLEAN_FORM.get(op_class, op_class) if node.dtype == "bool" else op_class
        return g.add_op(kind, [a, node.tensor(b, node.dtype)], None, node.name)

    return convert


def _rsub(g: Graph, node: Node) -> Tensor:
    """`other - alpha * self`."""
    a, b = node.tensor(node.arg(0, "self"), node.dtype), node.tensor(node.arg(1, "other"), node.dtype)
    alpha = node.arg(2, "alpha", 1)
    if alpha != 1:
        a = g.add_mul(a, node.scalar(alpha), f"{node.name}.alpha")
    return g.add_sub(b, a, node.name)


def _div(g: Graph, node: Node) -> Tensor:
    """True division, or with `rounding_mode` "trunc" or "floor" a rounded one.

    The graph's integer division truncates toward zero, so integer "trunc" is one div, and
    integer "floor" subtracts the divisor-signed remainder first (`add_floor_division`). For
    floats, "trunc" truncates the quotient as `trunc` does (`_truncated`), and "floor" rounds
    the quotient `_float_floor_quotient` makes, as ATen computes a float floor division
    (so `1 // 0.1` is 9, not the 10 of `floor(1 / 0.1)`), and is `a / b` where `b` is 0.
    """
    mode = node.arg(2, "rounding_mode")
    if mode is None:
        return _binary(ops.DivOp)(g, node)
    if mode not in ("trunc", "floor"):
        raise node.fail(f"rounding_mode '{mode}' is not supported (only 'trunc' and 'floor')")
    a, b = node.tensor(node.arg(0, "self"), node.dtype), node.tensor(node.arg(1, "other"), node.dtype)
    is_float = "float" in (node.dtype or a.dtype)
    if mode == "floor":
        if not is_float:
            return add_floor_division(g, a, b, node.name)
        quotient = _float_floor_quotient(g, a, b, node)
        # Rounded as ATen rounds it: the floor, plus 1 past a half (a tie goes down).
        floor = g.add_op(ops.FloorOp, [quotient], None, f"{node.name}.floor")
        past_half = g.add_op(
            ops.GreaterOp,
            [g.add_sub(quotient, floor, f"{node.name}.fraction"), node.scalar(0.5, a.dtype)],
            None,
            f"{node.name}.past_half",
        )
        up = g.add_add(floor, node.scalar(1.0, a.dtype), f"{node.name}.up")
        rounded = g.add_op(ops.WhereOp, [past_half, up, floor], None, f"{node.name}.rounded")
        zero = node.scalar(0.0, b.dtype)
        true_quotient = g.add_div(a, b, f"{node.name}.true")
        # A zero quotient takes the sign of a / b (-1 // -inf is +0, -0 // 3 is -0), as ATen's.
        signed = g.add_mul(true_quotient, zero, f"{node.name}.signed_zero")
        is_zero = g.add_op(ops.EqualOp, [rounded, zero], None, f"{node.name}.is_zero")
        rounded = g.add_op(ops.WhereOp, [is_zero, signed, rounded], None, f"{node.name}.signed")
        # ATen's div_floor gives a / b for b == 0 (+-inf, NaN for 0 / 0); fmod(a, 0) is NaN.
        by_zero = g.add_op(ops.EqualOp, [b, zero], None, f"{node.name}.by_zero")
        return g.add_op(ops.WhereOp, [by_zero, true_quotient, rounded], None, node.name)
    quotient = g.add_div(a, b, f"{node.name}.quotient" if is_float else node.name)
    return _truncated(g, quotient, node.name) if is_float else quotient


def _float_floor_quotient(g: Graph, a: Tensor, b: Tensor, node: Node) -> Tensor:
    """`(a - fmod(a, b)) / b`, less 1 where the remainder is nonzero and its sign is not the
    divisor's: the quotient Python and ATen round for a float floor division. With the C
    remainder an infinite divisor is exact (`-1.0 // inf` is -1); the divisor-signed remainder
    of `add_floor_division` is inf there, and the quotient NaN."""
    name = f"{node.name}.quotient"
    remainder = g.add_op(ops.ModOp, [a, b], {"fmod": bool_attr(True)}, f"{name}.remainder")
    quotient = g.add_div(g.add_sub(a, remainder, f"{name}.whole"), b, name)
    zero = node.scalar(0.0, a.dtype)
    signs = [
        g.add_op(ops.LessOp, [v, zero], None, f"{name}.{key}")
        for v, key in ((b, "b_sign"), (remainder, "r_sign"))
    ]
    apart = g.add_op(ops.XorOp, signs, None, f"{name}.signs_apart")
    nonzero = g.add_op(
        ops.NotOp, [g.add_op(ops.EqualOp, [remainder, zero], None, f"{name}.exact")], None, f"{name}.inexact"
    )
    below = g.add_op(ops.AndOp, [nonzero, apart], None, f"{name}.below")
    lower = g.add_sub(quotient, node.scalar(1.0, a.dtype), f"{name}.lower")
    return g.add_op(ops.WhereOp, [below, lower, quotient], None, f"{name}.floor")


def _comparison(op_class: type, negate: bool = False) -> Converter:
    def convert(g: Graph, node: Node) -> Tensor:
        a, b = node.arg(0, "self"), node.arg(1, "other")
        dtype = (a if isinstance(a, Tensor) else b).dtype
        result = g.add_op(op_class, [node.tensor(a, dtype), node.tensor(b, dtype)], None, node.name)
        return g.add_op(ops.NotOp, [result], None, f"{node.name}.not") if negate else result

    return convert


def _unary(op_class: type, **defaults: float) -> Converter:
    def convert(g: Graph, node: Node) -> Tensor:
        props = {key: ops.float_attr(value) for key, value in defaults.items()}
        return g.add_op(op_class, [node.arg(0, "self")], props or None, node.name)

    return convert


def _float_unary(op_class: type) -> Converter:
    """`op_class` of the operand cast to the result dtype: ATen computes `log2` of an integer
    tensor in the default float dtype."""

    def convert(g: Graph, node: Node) -> Tensor:
        return g.add_op(op_class, [node.tensor(node.arg(0, "self"), node.dtype)], None, node.name)

    return convert


def _exp2(g: Graph, node: Node) -> Tensor:
    return g.add_op(ops.PowOp, [node.scalar(2.0), node.arg(0, "self")], None, node.name)


def _rounding(op_class: type) -> Converter:
    """floor, ceil or round: an integer tensor is its own, as ATen returns it (the graph's
    rounding ops take floats only)."""

    def rounded(g: Graph, node: Node) -> Tensor:
        x = node.arg(0, "self")
        return g.add_op(op_class, [x], None, node.name) if "float" in x.dtype else x

    return rounded


def _trunc(g: Graph, node: Node) -> Tensor:
    """Rounds toward zero; an integer tensor is its own truncation, as ATen returns it."""
    x = node.arg(0, "self")
    return _truncated(g, x, node.name) if "float" in x.dtype else x


def _truncated(g: Graph, x: Tensor, name: str) -> Tensor:
    """`x` rounded toward zero, named `name`: the ceiling of a negative `x`, else the floor, so
    that -0.5 gives -0.0 and -0.0 keeps its sign as ATen's trunc, and +-inf and NaN stay."""
    negative = g.add_op(
        ops.LessOp, [x, g.add_splat(0.0, [], x.dtype, f"{name}.zero")], None, f"{name}.negative"
    )
    up = g.add_op(ops.CeilOp, [x], None, f"{name}.ceil")
    down = g.add_op(ops.FloorOp, [x], None, f"{name}.floor")
    return g.add_op(ops.WhereOp, [negative, up, down], None, name)


def _rsqrt(g: Graph, node: Node) -> Tensor:
    root = g.add_op(ops.SqrtOp, [node.arg(0, "self")], None, f"{node.name}.sqrt")
    return g.add_op(ops.ReciprocalOp, [root], None, node.name)


def _gelu(g: Graph, node: Node) -> Tensor:
    from xdsl.dialects.builtin import StringAttr

    approximate = node.arg(1, "approximate", "none")
    return g.add_op(ops.GeluOp, [node.arg(0, "self")], {"approximate": StringAttr(approximate)}, node.name)


def _leaky_relu(g: Graph, node: Node) -> Tensor:
    slope = node.arg(1, "negative_slope", 0.01)
    return g.add_op(ops.LeakyReluOp, [node.arg(0, "self")], {"alpha": ops.float_attr(slope)}, node.name)


def _elu(g: Graph, node: Node) -> Tensor:
    """`elu`; with a `scale` (SELU is `elu(x, 1.6733, 1.0507)`) a selu of that gamma."""
    alpha, scale, input_scale = (
        node.arg(1, "alpha", 1),
        node.arg(2, "scale", 1),
        node.arg(3, "input_scale", 1),
    )
    if input_scale != 1:
        raise node.fail(f"an elu with input_scale {input_scale} (other than 1) is not supported")
    x = node.arg(0, "self")
    if scale != 1:
        props = {"alpha": ops.float_attr(alpha), "gamma": ops.float_attr(scale)}
        return g.add_op(ops.SeluOp, [x], props, node.name)
    return g.add_op(ops.EluOp, [x], {"alpha": ops.float_attr(alpha)}, node.name)


SOFTPLUS_EXACT_ABOVE = 20
"""Where beta x passes this, log(1 + exp(beta x)) / beta rounds to x itself in fp32."""


def _softplus(g: Graph, node: Node) -> Tensor:
    """`softplus(x, beta, threshold)`: log(1 + exp(beta x)) / beta, and x itself where beta x
    passes the threshold, as torch computes it (a select only for a threshold low enough to
    change a number)."""
    x, beta, threshold = node.arg(0, "self"), node.arg(1, "beta", 1), node.arg(2, "threshold", 20)
    scaled = x if beta == 1 else g.add_mul(x, node.scalar(beta), f"{node.name}.beta")
    result = g.add_op(ops.SoftplusOp, [scaled], None, f"{node.name}.softplus")
    if beta != 1:
        result = g.add_div(result, node.scalar(beta), f"{node.name}.unscaled")
    if threshold >= SOFTPLUS_EXACT_ABOVE:
        return result
    linear = g.add_op(ops.GreaterOp, [scaled, node.scalar(threshold)], None, f"{node.name}.linear")
    return g.add_op(ops.WhereOp, [linear, x, result], None, node.name)


def _sign(g: Graph, node: Node) -> Tensor:
    """-1, 0 or 1; ATen's sign of NaN is 0, where the graph's (ONNX's) keeps NaN."""
    x = node.arg(0, "self")
    if "float" not in x.dtype:
        return g.add_op(ops.SignOp, [x], None, node.name)
    sign = g.add_op(ops.SignOp, [x], None, f"{node.name}.sign")
    nan = g.add_op(ops.IsNaNOp, [x], None, f"{node.name}.is_nan")
    return g.add_op(ops.WhereOp, [nan, node.scalar(0.0, x.dtype), sign], None, node.name)


def _float_predicate(op_class: type) -> Converter:
    """`isnan` and `isinf`: on integers and bools, which hold neither, all false (`x != x`)."""

    def convert(g: Graph, node: Node) -> Tensor:
        x = node.arg(0, "self")
        if "float" in x.dtype:
            return g.add_op(op_class, [x], None, node.name)
        same = g.add_op(ops.EqualOp, [x, x], None, f"{node.name}.same")
        return g.add_op(ops.NotOp, [same], None, node.name)

    return convert


def _bitwise_not(g: Graph, node: Node) -> Tensor:
    """The complement of each integer's bits; on bools, logical not."""
    x = node.arg(0, "self")
    return g.add_op(ops.NotOp if x.dtype == "bool" else ops.BitwiseNotOp, [x], None, node.name)


def _logical(op_class: type, bitwise: type | None = None) -> Converter:
    """`logical_and` and its kin on any dtype (nonzero is true); `bitwise_and` and its kin on
    bools (the logical op) or integers (`bitwise`)."""

    def convert(g: Graph, node: Node) -> Tensor:
        a, b = node.arg(0, "self"), node.arg(1, "other")
        if node.target.startswith("aten.bitwise") and node.dtype != "bool":
            if bitwise is None:
                raise node.fail(f"{node.target} of {node.dtype} is not supported")
            return _binary(bitwise)(g, node)
        flags = [x if x.dtype == "bool" else g.add_cast(x, "bool") for x in (node.tensor(a), node.tensor(b))]
        return g.add_op(op_class, flags, None, node.name)

    return convert


def _clamp(g: Graph, node: Node) -> Tensor:
    """`clamp`, `clamp_min`, `clamp_max` and `hardtanh` (relu6 is `hardtanh(x, 0, 6)`)."""
    x = node.tensor(node.arg(0, "self"), node.dtype)  # an integer clamped to floats is a float
    if node.target == "aten.clamp_max.default":
        low, high = None, node.arg(1, "max")
    elif node.target == "aten.clamp_min.default":
        low, high = node.arg(1, "min"), None
    elif node.target == "aten.hardtanh.default":
        low, high = node.arg(1, "min_val", -1.0), node.arg(2, "max_val", 1.0)
    else:
        low, high = node.arg(1, "min"), node.arg(2, "max")
    if low is not None:
        x = g.add_op(ops.MaxOp, [x, node.tensor(low, x.dtype)], None, f"{node.name}.min")
    if high is not None:
        x = g.add_op(ops.MinOp, [x, node.tensor(high, x.dtype)], None, f"{node.name}.max")
    return x


def _where(g: Graph, node: Node) -> Tensor:
    condition, a, b = node.arg(0, "condition"), node.arg(1, "self"), node.arg(2, "other")
    return g.add_op(
        ops.WhereOp, [condition, node.tensor(a, node.dtype), node.tensor(b, node.dtype)], None, node.name
    )


def _to_copy(g: Graph, node: Node) -> Tensor:
    """A copy, cast to the dtype the export recorded (device and layout do not matter here)."""
    x = node.arg(0, "self")
    return x if node.dtype is None or node.dtype == x.dtype else g.add_cast(x, node.dtype, node.name)


def _identity(g: Graph, node: Node) -> Tensor:
    """Ops that only copy or alias (clone, alias, detach, dropout at inference)."""
    if node.target == "aten.dropout.default":
        if node.arg(2, "train") and node.arg(1, "p"):
            raise node.fail("dropout in training (train=True) is not supported")
        return node.arg(0, "input")
    return node.arg(0, "self")


CONVERTERS: dict[str, Converter] = {
    "aten.add.Tensor": _with_alpha(ops.AddOp),
    "aten.add.Scalar": _with_alpha(ops.AddOp),
    "aten.sub.Tensor": _with_alpha(ops.SubOp),
    "aten.sub.Scalar": _with_alpha(ops.SubOp),
    "aten.rsub.Scalar": _rsub,
    "aten.rsub.Tensor": _rsub,
    "aten.mul.Tensor": _binary(ops.MulOp),
    "aten.mul.Scalar": _binary(ops.MulOp),
    "aten.div.Tensor": _div,
    "aten.div.Scalar": _div,
    "aten.div.Tensor_mode": _div,
    "aten.pow.Tensor_Scalar": _binary(ops.PowOp),
    "aten.pow.Tensor_Tensor": _binary(ops.PowOp),
    "aten.maximum.default": _binary(ops.MaxOp),
    "aten.minimum.default": _binary(ops.MinOp),
    "aten.eq.Tensor": _comparison(ops.EqualOp),
    "aten.eq.Scalar": _comparison(ops.EqualOp),
    "aten.ne.Tensor": _comparison(ops.EqualOp, negate=True),
    "aten.ne.Scalar": _comparison(ops.EqualOp, negate=True),
    "aten.lt.Tensor": _comparison(ops.LessOp),
    "aten.lt.Scalar": _comparison(ops.LessOp),
    "aten.le.Tensor": _comparison(ops.LessEqualOp),
    "aten.le.Scalar": _comparison(ops.LessEqualOp),
    "aten.gt.Tensor": _comparison(ops.GreaterOp),
    "aten.gt.Scalar": _comparison(ops.GreaterOp),
    "aten.ge.Tensor": _comparison(ops.GreaterEqualOp),
    "aten.ge.Scalar": _comparison(ops.GreaterEqualOp),
    "aten.logical_not.default": _unary(ops.NotOp),
    "aten.bitwise_not.default": _bitwise_not,
    "aten.where.self": _where,
    "aten.relu.default": _unary(ops.ReluOp),
    "aten.sigmoid.default": _unary(ops.SigmoidOp),
    "aten.tanh.default": _unary(ops.TanhOp),
    "aten.exp.default": _unary(ops.ExpOp),
    "aten.expm1.default": _unary(ops.Expm1Op),
    "aten.log.default": _unary(ops.LogOp),
    "aten.sqrt.default": _unary(ops.SqrtOp),
    "aten.rsqrt.default": _rsqrt,
    "aten.reciprocal.default": _unary(ops.ReciprocalOp),
    "aten.neg.default": _unary(ops.NegOp),
    "aten.abs.default": _unary(ops.AbsOp),
    "aten.erf.default": _unary(ops.ErfOp),
    "aten.erfc.default": _unary(ops.ErfcOp),
    "aten.sin.default": _unary(ops.SinOp),
    "aten.cos.default": _unary(ops.CosOp),
    "aten.floor.default": _rounding(ops.FloorOp),
    "aten.ceil.default": _rounding(ops.CeilOp),
    "aten.gelu.default": _gelu,
    "aten.silu.default": _unary(ops.SwishOp),
    "aten.hardswish.default": _unary(ops.HardSwishOp),
    "aten.hardsigmoid.default": _unary(ops.HardSigmoidOp, alpha=1 / 6, beta=0.5),
    "aten.mish.default": _unary(ops.MishOp),
    "aten.leaky_relu.default": _leaky_relu,
    "aten.elu.default": _elu,
    "aten.hardtanh.default": _clamp,
    "aten.clamp.default": _clamp,
    "aten.clamp.Tensor": _clamp,
    "aten.clamp_min.default": _clamp,
    "aten.clamp_max.default": _clamp,
    "aten._to_copy.default": _to_copy,
    "aten.clone.default": _identity,
    "aten.alias.default": _identity,
    "aten.detach.default": _identity,
    "aten.lift_fresh_copy.default": _identity,
    "aten.dropout.default": _identity,
    "aten.softplus.default": _softplus,
    "aten.log1p.default": _unary(ops.Log1pOp),
    "aten.exp2.default": _exp2,
    "aten.log2.default": _float_unary(ops.Log2Op),
    "aten.log10.default": _float_unary(ops.Log10Op),
    "aten.trunc.default": _trunc,
    "aten.__lshift__.Scalar": _binary(ops.ShiftLeftOp),
    "aten.__lshift__.Tensor": _binary(ops.ShiftLeftOp),
    "aten.__rshift__.Scalar": _binary(ops.ShiftRightOp),
    "aten.__rshift__.Tensor": _binary(ops.ShiftRightOp),
    "aten.bitwise_left_shift.Tensor": _binary(ops.ShiftLeftOp),
    "aten.bitwise_left_shift.Tensor_Scalar": _binary(ops.ShiftLeftOp),
    "aten.bitwise_right_shift.Tensor": _binary(ops.ShiftRightOp),
    "aten.bitwise_right_shift.Tensor_Scalar": _binary(ops.ShiftRightOp),
    "aten.round.default": _rounding(ops.RoundOp),
    "aten.sign.default": _sign,
    "aten.isnan.default": _float_predicate(ops.IsNaNOp),
    "aten.isinf.default": _float_predicate(ops.IsInfOp),
    "aten.tan.default": _unary(ops.TanOp),
    "aten.asin.default": _unary(ops.AsinOp),
    "aten.acos.default": _unary(ops.AcosOp),
    "aten.atan.default": _unary(ops.AtanOp),
    "aten.atan2.default": _binary(ops.Atan2Op),
    "aten.sinh.default": _unary(ops.SinhOp),
    "aten.cosh.default": _unary(ops.CoshOp),
    "aten.asinh.default": _unary(ops.AsinhOp),
    "aten.acosh.default": _unary(ops.AcoshOp),
    "aten.atanh.default": _unary(ops.AtanhOp),
    "aten.pow.Scalar": _binary(ops.PowOp),
    "aten.remainder.Tensor": _binary(ops.ModOp),
    "aten.remainder.Scalar": _binary(ops.ModOp),
    "aten.fmod.Tensor": _binary(ops.ModOp, fmod=True),  # C's remainder: the dividend's sign
    "aten.fmod.Scalar": _binary(ops.ModOp, fmod=True),
    "aten.logical_and.default": _logical(ops.AndOp),
    "aten.logical_or.default": _logical(ops.OrOp),
    "aten.logical_xor.default": _logical(ops.XorOp),
    "aten.bitwise_and.Tensor": _logical(ops.AndOp, ops.BitwiseAndOp),
    "aten.bitwise_or.Tensor": _logical(ops.OrOp, ops.BitwiseOrOp),
    "aten.bitwise_xor.Tensor": _logical(ops.XorOp, ops.BitwiseXorOp),
    "aten.bitwise_and.Scalar": _logical(ops.AndOp, ops.BitwiseAndOp),
    "aten.bitwise_or.Scalar": _logical(ops.OrOp, ops.BitwiseOrOp),
    "aten.bitwise_xor.Scalar": _logical(ops.XorOp, ops.BitwiseXorOp),
}
