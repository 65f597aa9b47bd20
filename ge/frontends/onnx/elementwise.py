"""Converters of elementwise operators: math, activations, arithmetic, logic, casts.

Most operators map one to one onto a graph op; the variadic ones (Sum, Mean, Max, Min) become
chains of binary ops, and Clip a `max` then a `min`. An input dtype the graph op does not
accept is refused as an unsupported dtype rather than computed some other way.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import AnyFloat, StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr
from ge.dtypes import (
    FORMATTED_WIDTH,
    NARROW,
    SATURABLE,
    element_type,
    is_string,
    numpy_dtype,
    string_dtype,
)
from ge.errors import UnsupportedOperatorError
from ge.graph import Tensor

from .importer import Converter, ConverterResults, Importer, Node

# --------------------------------------------------------------------------------------------
# One operator, one op
# --------------------------------------------------------------------------------------------


def _unary(op_class: type[ops.UnaryElementwiseOp]) -> Converter:
    """A unary op; an activation's float attributes become the properties of the same name."""

    def convert(imp: Importer, node: Node) -> list[Tensor]:
        x = _accepted(node, op_class, node.input(0))
        defaults = op_class.DEFAULTS if issubclass(op_class, ops.ActivationOp) else {}
        props = {name: ops.float_attr(node.attr(name)) for name in defaults if name in node.attrs}
        return [imp.g.add_op(op_class, [x], props, node.name)]

    return convert


def _binary(op_class: type[ops.ElementwiseOp]) -> Callable[[Importer, Node], list[Tensor]]:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        operands = [_accepted(node, op_class, t) for t in node.input_tensors(2)]
        return [imp.g.add_op(op_class, operands, None, node.name)]

    return convert


def _is_nan(imp: Importer, node: Node) -> list[Tensor]:
    """float8 inputs are tested widened to float32 (exactly)."""
    x = _accepted(node, ops.IsNaNOp, _widened_float8(imp, node, node.input(0)))
    return [imp.g.add_op(ops.IsNaNOp, [x], None, node.name)]


def _is_inf(imp: Importer, node: Node) -> list[Tensor]:
    """float8 inputs are tested widened to float32 (exactly)."""
    props = {
        "detect_positive": bool_attr(node.flag("detect_positive", True)),
        "detect_negative": bool_attr(node.flag("detect_negative", True)),
    }
    x = _accepted(node, ops.IsInfOp, _widened_float8(imp, node, node.input(0)))
    return [imp.g.add_op(ops.IsInfOp, [x], props, node.name)]


def _gelu(imp: Importer, node: Node) -> list[Tensor]:
    approximate = node.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise node.invalid(f"approximate must be 'none' or 'tanh', got '{approximate}'")
    props = {"approximate": StringAttr(approximate)}
    return [imp.g.add_op(ops.GeluOp, [_accepted(node, ops.GeluOp, node.input(0))], props, node.name)]


def _mod(imp: Importer, node: Node) -> list[Tensor]:
    """fmod=0 on floats, which ONNX defines from opset 28 on (the divisor's sign), is refused before."""
    fmod = int(node.attr("fmod", 0))
    if fmod not in (0, 1):
        raise node.invalid(f"attribute 'fmod' is {fmod}: it must be 0 or 1")
    floats = [t.dtype for t in node.input_tensors(2) if isinstance(t.element_type, AnyFloat)]
    if fmod == 0 and floats and node.opset < 28:
        raise node.invalid(
            f"attribute 'fmod' is 0 on {floats[0]} inputs: before opset 28, ONNX defines fmod=0 for "
            "integers only; floats need fmod=1"
        )
    operands = [_accepted(node, ops.ModOp, t) for t in node.input_tensors(2)]
    return [imp.g.add_op(ops.ModOp, operands, {"fmod": bool_attr(fmod != 0)}, node.name)]


def _bit_shift(imp: Importer, node: Node) -> list[Tensor]:
    """Signed integers are accepted at every opset, with opset 28's meaning (arithmetic right
    shifts; a shift out of range leaves the sign fill)."""
    direction = node.attr("direction")
    op_class = {"LEFT": ops.ShiftLeftOp, "RIGHT": ops.ShiftRightOp}.get(direction)
    if op_class is None:
        raise node.invalid(f"direction must be 'LEFT' or 'RIGHT', got '{direction}'")
    return _binary(op_class)(imp, node)


def _where(imp: Importer, node: Node) -> list[Tensor]:
    condition, x, y = node.input_tensors(3)
    _accepted(node, ops.WhereOp, x)
    return [imp.g.add_op(ops.WhereOp, [condition, x, y], None, node.name)]


# --------------------------------------------------------------------------------------------
# Lowered to several ops
# --------------------------------------------------------------------------------------------


def _variadic(op_class: type[ops.BinaryElementwiseOp], mean: bool = False) -> Converter:
    """Sum, Max, Min (and Mean, which divides the sum by the count): a left fold of binary ops."""

    def convert(imp: Importer, node: Node) -> list[Tensor]:
        inputs = [_accepted(node, op_class, t) for t in node.present_inputs()]
        if not inputs:
            raise node.invalid("needs at least one input")
        if mean and inputs[0].dtype not in ("float16", "bfloat16", "float32", "float64"):
            raise _dtype_error(node, f"{inputs[0].dtype} inputs are not supported")
        result = inputs[0]
        for t in inputs[1:]:
            result = imp.g.add_op(op_class, [result, t], None, node.name)
        if mean and len(inputs) > 1:
            count = _scalar_constant(imp, len(inputs), result.dtype, f"{node.name}_count")
            result = imp.g.add_op(ops.DivOp, [result, count], None, node.name)
        return [result]

    convert.__doc__ = (
        "A chain of additions over the inputs, left to right, then a division by their count; "
        "integer inputs are refused."
        if mean
        else "A chain of binary ops over the inputs, left to right."
    )
    return convert


def _clip(imp: Importer, node: Node) -> list[Tensor]:
    """Lowered to `min(max(x, min), max)` (where min > max, every element becomes max, as ONNX
    says); min and max are attributes before opset 11, optional scalar inputs after."""
    x = _accepted(node, ops.MaxOp, node.input(0))
    if node.opset < 11:
        bounds = [
            _scalar_constant(imp, node.attr(name), x.dtype, f"{node.name}_{name}")
            if name in node.attrs
            else None
            for name in ("min", "max")
        ]
    else:
        bounds = [node.optional_input(i) for i in (1, 2)]
    low, high = bounds
    for bound in (low, high):
        if bound is not None and bound.shape not in ((), (1,)):
            raise node.invalid(f"min and max must be scalars, got shape {list(bound.shape)}")
    result = x
    if low is not None:
        result = imp.g.add_op(ops.MaxOp, [result, _scalar(imp, low)], None, node.name)
    if high is not None:
        result = imp.g.add_op(ops.MinOp, [result, _scalar(imp, high)], None, node.name)
    return [result]


def _cast(imp: Importer, node: Node) -> list[Tensor]:
    """Numbers become strings as numpy formats them (as ONNX's reference does: "0.1", "1.0",
    "nan", "True") and strings are read as Python reads numbers. Into float8 types, `saturate`
    (1 by default) clamps to the largest finite value; into float8e8m0, `round_mode` is honoured.
    Integers wrap into narrower ones (int4, uint4, int2, uint2 too) and floats truncate toward zero;
    out-of-range floats, undefined in ONNX, convert as onnxruntime's do on x86-64: through a signed
    32-bit integer (64-bit for 64-bit targets) whose most negative value stands for NaN,
    infinities and overflow, of which the target keeps the low bits; uint32 and uint64 take values
    from 2^31 (2^63) on exactly, so 3e9 is 3000000000 in uint32 and 5e9 is 0. Casts between
    strings and those narrow types are refused."""
    target = node.dtype("to")
    return [_add_cast(imp, node, node.input(0), target)]


def _cast_like(imp: Importer, node: Node) -> list[Tensor]:
    # The same rules as Cast (its docstring is shared below).
    return [_add_cast(imp, node, node.input(0), node.input(1).dtype)]


_cast_like.__doc__ = _cast.__doc__


def _identity(imp: Importer, node: Node) -> ConverterResults:
    """Passes its input on: a tensor, a sequence or an optional."""
    known = node.known[0]
    return [known if known is not None else node.inputs[0]]


def _dropout(imp: Importer, node: Node) -> ConverterResults:
    """The identity at inference, and in training with a ratio of 0 (the mask is then all true);
    random dropout (training_mode=1 with a non-zero ratio) is refused."""
    x = node.input(0)
    training = node.attr("is_test", 1) == 0 if node.opset < 7 else False
    if node.has_input(2):
        training = bool(node.value(2))
    if training:
        ratio = float(node.value(1)) if node.has_input(1) else 0.5
        if ratio != 0:
            raise node.fail("training_mode=1 (random dropout) is not supported")
    outputs = list(_identity(imp, node))
    if len(node.proto.output) > 1 and node.proto.output[1]:
        if any(d < 0 for d in x.shape):
            raise node.fail("the 'mask' output needs a static input shape")
        # Before opset 10 the mask has the input's type.
        mask_dtype = "bool" if node.opset >= 10 else x.dtype
        outputs.append(imp.g.add_splat(1, x.shape, mask_dtype, f"{node.name}_mask"))
    return outputs


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _accepted(node: Node, op_class: type[ops.ElementwiseOp], tensor: Tensor) -> Tensor:
    """`tensor`, if `op_class` accepts its element type; else an unsupported-dtype error."""
    if tensor is None:
        raise node.invalid("a required input is missing")
    if not op_class.accepts(tensor.element_type):
        raise _dtype_error(node, f"{tensor.dtype} inputs are not supported")
    return tensor


def _dtype_error(node: Node, what: str) -> UnsupportedOperatorError:
    error = node.fail(what)
    error.category = "dtype"
    return error


def _widened_float8(imp: Importer, node: Node, x: Tensor) -> Tensor:
    """A float8 tensor as float32 (which holds every float8 value); anything else as given."""
    if x.dtype in NARROW and x.dtype.startswith("float8"):
        return imp.g.add_cast(x, "float32", node.name)
    return x


def _scalar_constant(imp: Importer, value: float, dtype: str, name: str) -> Tensor:
    """A known scalar of `dtype` (a constant rather than a splat, which bfloat16 lacks)."""
    array = np.array(value).astype(numpy_dtype(element_type(dtype)))
    tensor = imp.g.add_constant(array, name)
    imp.known[tensor.value] = array
    return tensor


def _scalar(imp: Importer, bound: Tensor) -> Tensor:
    return bound if bound.shape == () else imp.g.add_reshape(bound, [], f"{bound.name}_scalar")


def _add_cast(imp: Importer, node: Node, x: Tensor, dtype: str) -> Tensor:
    """`x` cast to `dtype`, with the node's `saturate` (default 1) and `round_mode` (default
    "up") where the target takes them (float8 types, float8e8m0)."""
    if is_string(dtype):
        # A string keeps its width; a number takes one that holds any formatted number.
        dtype = x.dtype if is_string(x.dtype) else string_dtype(FORMATTED_WIDTH)
    if dtype == x.dtype:
        return x
    if (is_string(x.dtype) or is_string(dtype)) and {x.dtype, dtype} & NARROW.keys():
        raise _dtype_error(node, f"casts from {x.dtype} to {dtype} are not supported")
    result = imp.g.add_cast(x, dtype, node.name)
    cast = result.value.owner
    assert isinstance(cast, ops.CastOp)
    if dtype in SATURABLE and node.attr("saturate", 1):
        cast.properties["saturate"] = bool_attr(True)
    if dtype == "float8_e8m0fnu":
        round_mode = node.attr("round_mode", "up")
        if round_mode not in ops.CastOp.ROUND_MODES:
            modes = ", ".join(ops.CastOp.ROUND_MODES)
            raise node.invalid(f"round_mode must be one of {modes}, got '{round_mode}'")
        cast.properties["round_mode"] = StringAttr(round_mode)
    return result


_UNARY = (
    ("Abs", ops.AbsOp),
    ("Neg", ops.NegOp),
    ("Sign", ops.SignOp),
    ("Relu", ops.ReluOp),
    ("Not", ops.NotOp),
    ("BitwiseNot", ops.BitwiseNotOp),
    ("Exp", ops.ExpOp),
    ("Log", ops.LogOp),
    ("Sqrt", ops.SqrtOp),
    ("Reciprocal", ops.ReciprocalOp),
    ("Floor", ops.FloorOp),
    ("Ceil", ops.CeilOp),
    ("Round", ops.RoundOp),
    ("Erf", ops.ErfOp),
    ("Sin", ops.SinOp),
    ("Cos", ops.CosOp),
    ("Tan", ops.TanOp),
    ("Asin", ops.AsinOp),
    ("Acos", ops.AcosOp),
    ("Atan", ops.AtanOp),
    ("Sinh", ops.SinhOp),
    ("Cosh", ops.CoshOp),
    ("Asinh", ops.AsinhOp),
    ("Acosh", ops.AcoshOp),
    ("Atanh", ops.AtanhOp),
    ("Sigmoid", ops.SigmoidOp),
    ("Tanh", ops.TanhOp),
    ("Softplus", ops.SoftplusOp),
    ("Softsign", ops.SoftsignOp),
    ("Mish", ops.MishOp),
    ("HardSwish", ops.HardSwishOp),
    ("LeakyRelu", ops.LeakyReluOp),
    ("Elu", ops.EluOp),
    ("Selu", ops.SeluOp),
    ("Celu", ops.CeluOp),
    ("ThresholdedRelu", ops.ThresholdedReluOp),
    ("HardSigmoid", ops.HardSigmoidOp),
    ("Swish", ops.SwishOp),
    ("Shrink", ops.ShrinkOp),
)

_BINARY = (
    ("Add", ops.AddOp),
    ("Sub", ops.SubOp),
    ("Mul", ops.MulOp),
    ("Div", ops.DivOp),
    ("Pow", ops.PowOp),
    ("PRelu", ops.PReluOp),
    ("BitwiseAnd", ops.BitwiseAndOp),
    ("BitwiseOr", ops.BitwiseOrOp),
    ("BitwiseXor", ops.BitwiseXorOp),
    ("And", ops.AndOp),
    ("Or", ops.OrOp),
    ("Xor", ops.XorOp),
    ("Equal", ops.EqualOp),
    ("Less", ops.LessOp),
    ("LessOrEqual", ops.LessEqualOp),
    ("Greater", ops.GreaterOp),
    ("GreaterOrEqual", ops.GreaterEqualOp),
)

CONVERTERS: dict[str, Converter] = {
    **{onnx_name: _unary(op_class) for onnx_name, op_class in _UNARY},
    **{onnx_name: _binary(op_class) for onnx_name, op_class in _BINARY},
    "IsNaN": _is_nan,
    "IsInf": _is_inf,
    "Gelu": _gelu,
    "Mod": _mod,
    "BitShift": _bit_shift,
    "Where": _where,
    "Sum": _variadic(ops.AddOp),
    "Mean": _variadic(ops.AddOp, mean=True),
    "Max": _variadic(ops.MaxOp),
    "Min": _variadic(ops.MinOp),
    "Clip": _clip,
    "Cast": _cast,
    "CastLike": _cast_like,
    "Identity": _identity,
    "Dropout": _dropout,
}
