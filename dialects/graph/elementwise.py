"""Elementwise ops on several tensors: arithmetic, comparisons, logic, selection and casts.

The base classes here carry the shared constraints (which element types an op accepts, numpy
broadcasting, an `i1` result for predicates), so each concrete op is a name and a docstring.
Unary ops (math functions and activations) live in `unary.py` on the same base classes.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import ClassVar

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import Pure

from ..common import bool_attr, fail
from ..verify import check_result_dims
from .base import (
    GraphOp,
    Reinfers,
    broadcast_shapes,
    compatible,
    flag_def,
    prop_flag,
    same_dims,
    same_elements,
    tensor_type,
)
from .strings import StringType
from .traits import (
    Broadcasts,
    ComputesNothing,
    Elementwise,
    Epilogue,
    EpilogueKind,
    ExactInStoredType,
    KeepsPrecision,
    MovesData,
    NoOpWhenTypeKept,
    PerChannel,
    PrefersLowPrecision,
    Reorders,
    Scales,
    Shifts,
    Transcendental,
)

# --------------------------------------------------------------------------------------------
# Element kinds
# --------------------------------------------------------------------------------------------

FLOAT = frozenset({"float"})
SIGNED = frozenset({"float", "signed"})
NUMERIC = frozenset({"float", "signed", "unsigned"})
INTEGER = frozenset({"signed", "unsigned"})
BOOL = frozenset({"bool"})
ANY = NUMERIC | BOOL
STRING = frozenset({"string"})
NARROW_FLOATS = (
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2Type,
    Float8E5M2FNUZType,
    Float8E8M0FNUType,
    Float4E2M1FNType,
)
"""The float8 and float4 types: "narrow" elements, which only casts (and data movement) take."""

_KIND_NAMES = {
    FLOAT: "floating-point",
    SIGNED: "floating-point or signed integer",
    NUMERIC: "numeric (not i1)",
    INTEGER: "integer (not i1)",
    BOOL: "i1",
    ANY: "numeric or i1",
    ANY | STRING: "numeric, i1 or string",
}


def element_kind(element: Attribute) -> str:
    """ "float", "signed" (signless integers count as signed), "unsigned", "bool" (i1), "string",
    "narrow" (float8, float4, 4-bit and 2-bit integers) or "other"."""
    if isinstance(element, Float16Type | BFloat16Type | Float32Type | Float64Type):
        return "float"
    if isinstance(element, NARROW_FLOATS):
        return "narrow"
    if isinstance(element, IntegerType):
        if element.width.data == 1:
            return "bool"
        if element.width.data < 8:
            return "narrow"
        return "unsigned" if element.signedness.data == Signedness.UNSIGNED else "signed"
    if isinstance(element, StringType):
        return "string"
    return "other"


# --------------------------------------------------------------------------------------------
# Base classes
# --------------------------------------------------------------------------------------------


class ElementwiseOp(GraphOp, ABC):
    """An op applied element by element; `ELEMENTS` says which element kinds it accepts."""

    traits = traits_def(Elementwise(), PerChannel(), Broadcasts())

    ELEMENTS: ClassVar[frozenset[str]] = NUMERIC

    @classmethod
    def accepts(cls, element: Attribute) -> bool:
        return element_kind(element) in cls.ELEMENTS

    @classmethod
    def check_element(cls, element: Attribute, what: str = "operands") -> None:
        if not cls.accepts(element):
            raise ValueError(f"{what} must be {_KIND_NAMES[cls.ELEMENTS]}, got {element}")

    @classmethod
    def check_props(cls, props: Mapping[str, Attribute]) -> None:
        """Raises ValueError for property values outside the op's domain."""


class UnaryElementwiseOp(ElementwiseOp, ABC):
    """Elementwise op on one tensor; the result has the operand's type."""

    input = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        cls.check_element(operand_types[0].element_type, "the operand")
        cls.check_props(props)
        return operand_types[0]


class UnaryPredicateOp(UnaryElementwiseOp, ABC):
    """Elementwise test of one tensor: an `i1` result of the operand's shape."""

    @classmethod
    def infer(cls, operand_types, props, where):
        super().infer(operand_types, props, where)
        return TensorType(i1, operand_types[0].get_shape())


class BinaryElementwiseOp(ElementwiseOp, ABC):
    """Elementwise op on two tensors of one element type, with numpy broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        element = same_elements(operand_types, "operands")
        cls.check_element(element)
        cls.check_props(props)
        shape = broadcast_shapes(operand_types[0].get_shape(), operand_types[1].get_shape())
        return TensorType(cls.result_element(element), shape)

    @classmethod
    def result_element(cls, element: Attribute) -> Attribute:
        return element


class ComparisonOp(BinaryElementwiseOp, ABC):
    """Compares two tensors elementwise (numpy broadcasting); the result is `i1`."""

    traits = traits_def(ExactInStoredType())

    @classmethod
    def result_element(cls, element: Attribute) -> Attribute:
        return i1


class LogicalOp(BinaryElementwiseOp, ABC):
    """A logical connective of two `i1` tensors, with numpy broadcasting."""

    ELEMENTS: ClassVar[frozenset[str]] = BOOL


class BitwiseOp(BinaryElementwiseOp, ABC):
    """A bitwise operation on two integer tensors, with numpy broadcasting."""

    ELEMENTS: ClassVar[frozenset[str]] = INTEGER


# --------------------------------------------------------------------------------------------
# Arithmetic
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    """`%c = ascend.graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.add"

    traits = traits_def(Epilogue(EpilogueKind.BINARY), PrefersLowPrecision(), Shifts(negated=False))


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    """`%c = ascend.graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.sub"

    traits = traits_def(PrefersLowPrecision(), Shifts(negated=True))


@irdl_op_definition
class MulOp(BinaryElementwiseOp):
    """`%c = ascend.graph.mul %a, %b : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.mul"

    traits = traits_def(PrefersLowPrecision(), Scales(reciprocal=False))


@irdl_op_definition
class DivOp(BinaryElementwiseOp):
    """Division; integer division truncates toward zero (as C and ONNX do).

    `%c = ascend.graph.div %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`
    """

    name = "ascend.graph.div"

    traits = traits_def(Transcendental(), Scales(reciprocal=True))


@irdl_op_definition
class ModOp(BinaryElementwiseOp):
    """Remainder: with `fmod = false` (the default) it has the divisor's sign (Python's `%`), with
    `fmod = true` the dividend's (C's `fmod`).

    `%c = ascend.graph.mod %a, %b {fmod = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.mod"

    traits = traits_def(Transcendental())

    fmod = flag_def(False)

    @classmethod
    def check_props(cls, props):
        prop_flag(cls, props, "fmod")


@irdl_op_definition
class Atan2Op(BinaryElementwiseOp):
    """The angle of the point (`rhs`, `lhs`): `atan2(y, x)`, its quadrant by the signs of both,
    signed zeros and infinities included (C's atan2).

    `%c = ascend.graph.atan2 %y, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>`
    """

    name = "ascend.graph.atan2"

    ELEMENTS: ClassVar[frozenset[str]] = FLOAT
    traits = traits_def(Transcendental(), KeepsPrecision())


@irdl_op_definition
class MaxOp(BinaryElementwiseOp):
    """The larger element (NaN if either is NaN).

    `%c = ascend.graph.max %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>`
    """

    name = "ascend.graph.max"

    traits = traits_def(Epilogue(EpilogueKind.BINARY, constant_operand=True), ExactInStoredType())


@irdl_op_definition
class MinOp(BinaryElementwiseOp):
    """The smaller element (NaN if either is NaN).

    `%c = ascend.graph.min %a, %b : (tensor<2x3xf16>, tensor<1xf16>) -> tensor<2x3xf16>`
    """

    name = "ascend.graph.min"

    traits = traits_def(Epilogue(EpilogueKind.BINARY, constant_operand=True), ExactInStoredType())


@irdl_op_definition
class PowOp(ElementwiseOp):
    """`base ** exponent`, with numpy broadcasting; the exponent may have another numeric element
    type, and the result has the base's.

    `%c = ascend.graph.pow %a, %b : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xi32>`
    """

    name = "ascend.graph.pow"

    traits = traits_def(Transcendental(), KeepsPrecision())

    base = operand_def(TensorType)
    exponent = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        base, exponent = operand_types
        cls.check_element(base.element_type, "the base")
        cls.check_element(exponent.element_type, "the exponent")
        return TensorType(base.element_type, broadcast_shapes(base.get_shape(), exponent.get_shape()))


@irdl_op_definition
class PReluOp(BinaryElementwiseOp):
    """`x` where it is positive, else `slope * x`; `slope` broadcasts to the shape of `x`.

    `%y = ascend.graph.prelu %x, %slope : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>`
    """

    name = "ascend.graph.prelu"

    @classmethod
    def infer(cls, operand_types, props, where):
        result = super().infer(operand_types, props, where)
        x, slope = operand_types[0].get_shape(), operand_types[1].get_shape()
        if not same_dims(result.get_shape(), x):
            raise ValueError(f"slope of shape {list(slope)} does not broadcast to the input's {list(x)}")
        return TensorType(result.element_type, x)


# --------------------------------------------------------------------------------------------
# Bitwise
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class BitwiseAndOp(BitwiseOp):
    """`%c = ascend.graph.bitwise_and %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>`"""

    name = "ascend.graph.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(BitwiseOp):
    """`%c = ascend.graph.bitwise_or %a, %b : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>`"""

    name = "ascend.graph.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(BitwiseOp):
    """`%c = ascend.graph.bitwise_xor %a, %b : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>`"""

    name = "ascend.graph.bitwise_xor"


@irdl_op_definition
class ShiftLeftOp(BitwiseOp):
    """Shifts `lhs` left by `rhs` bits; a shift that is negative or not less than the bit width
    gives 0.

    `%c = ascend.graph.shift_left %a, %b : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>`
    """

    name = "ascend.graph.shift_left"


@irdl_op_definition
class ShiftRightOp(BitwiseOp):
    """Shifts `lhs` right by `rhs` bits, arithmetically for signed types; a shift that is
    negative or not less than the bit width gives the sign fill alone (-1 or 0).

    `%c = ascend.graph.shift_right %a, %b : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>`
    """

    name = "ascend.graph.shift_right"


# --------------------------------------------------------------------------------------------
# Logic and comparisons
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class AndOp(LogicalOp):
    """`%c = ascend.graph.and %a, %b : (tensor<3x4xi1>, tensor<4xi1>) -> tensor<3x4xi1>`"""

    name = "ascend.graph.and"


@irdl_op_definition
class OrOp(LogicalOp):
    """`%c = ascend.graph.or %a, %b : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>`"""

    name = "ascend.graph.or"


@irdl_op_definition
class XorOp(LogicalOp):
    """`%c = ascend.graph.xor %a, %b : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>`"""

    name = "ascend.graph.xor"


@irdl_op_definition
class EqualOp(ComparisonOp):
    """`%c = ascend.graph.equal %a, %b : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi1>`"""

    name = "ascend.graph.equal"

    ELEMENTS: ClassVar[frozenset[str]] = ANY | STRING


@irdl_op_definition
class LessOp(ComparisonOp):
    """`%c = ascend.graph.less %a, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xi1>`"""

    name = "ascend.graph.less"


@irdl_op_definition
class LessEqualOp(ComparisonOp):
    """`%c = ascend.graph.less_equal %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>`"""

    name = "ascend.graph.less_equal"


@irdl_op_definition
class GreaterOp(ComparisonOp):
    """`%c = ascend.graph.greater %a, %b : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>`"""

    name = "ascend.graph.greater"


@irdl_op_definition
class GreaterEqualOp(ComparisonOp):
    """`%c = ascend.graph.greater_equal %a, %b : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi1>`"""

    name = "ascend.graph.greater_equal"


# --------------------------------------------------------------------------------------------
# Selection and casts
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class WhereOp(ElementwiseOp):
    """`x` where `condition` holds, else `y`; the three operands broadcast together.

    ```
    %z = ascend.graph.where %c, %x, %y : (tensor<2x2xi1>, tensor<2x2xf32>, tensor<2xf32>)
        -> tensor<2x2xf32>
    ```
    """

    name = "ascend.graph.where"
    traits = traits_def(Pure(), MovesData(), Reorders())

    ELEMENTS: ClassVar[frozenset[str]] = ANY | STRING

    condition = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        condition, x, y = operand_types
        if condition.element_type != i1:
            raise ValueError(f"the condition must be i1, got {condition.element_type}")
        element = same_elements([x, y], "the selected operands")
        cls.check_element(element, "the selected operands")
        shape = broadcast_shapes(condition.get_shape(), broadcast_shapes(x.get_shape(), y.get_shape()))
        return TensorType(element, shape)


@irdl_op_definition
class CastOp(Reinfers, IRDLOperation):
    """Converts elements to the result's element type: floats round to nearest even, floats
    truncate toward zero into integers, integers wrap (4-bit and 2-bit ones too), and non-zero
    becomes true in i1. Numbers become strings as numpy formats them (the shortest text that
    reads back as the same value), strings are parsed as numbers (a non-empty string is true in
    i1), and strings change width.

    Into a float8 type, `saturate = true` makes infinities and values beyond the largest finite one
    that largest value (of their sign; NaN stays NaN); without it they become infinity where the
    type has one, else NaN. Into float8e8m0 (powers of two), `round_mode` is "up" (the default),
    "down" or "nearest", and a result out of its range becomes the nearer end with `saturate = true`,
    else NaN. Into float4e2m1, values past 6 saturate.

    A float out of an integer type's range (undefined in ONNX) converts as onnxruntime's casts do
    on x86-64 (`ge.semantics.casts` has the rule).

    `%y = ascend.graph.cast %x {saturate = true} : (tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN>`
    """

    name = "ascend.graph.cast"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    saturate = flag_def(False)
    round_mode = opt_prop_def(StringAttr)

    traits = traits_def(
        Pure(), MovesData(), Elementwise(), PerChannel(), ComputesNothing(), NoOpWhenTypeKept(), Broadcasts()
    )
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    ROUND_MODES: ClassVar[tuple[str, ...]] = ("up", "down", "nearest")

    def __init__(
        self, input: SSAValue, element_type: Attribute, saturate: bool = False, round_mode: str | None = None
    ):
        shape = tensor_type(input.type).get_shape()
        properties: dict[str, Attribute] = {"saturate": bool_attr(saturate)}
        if round_mode is not None:
            properties["round_mode"] = StringAttr(round_mode)
        super().__init__(
            operands=[input], result_types=[TensorType(element_type, shape)], properties=properties
        )

    def reinfer(
        self, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
    ) -> list[TensorType]:
        """The input's new shape, in the element type the cast states."""
        return [TensorType(self.result.type.element_type, operand_types[0].get_shape())]

    def verify_(self) -> None:
        check_result_dims(self)
        source, result = self.input.type, self.result.type
        assert isinstance(source, TensorType) and isinstance(result, TensorType), "operand constraints hold"
        if not compatible(self.result.type, TensorType(result.element_type, source.get_shape())):
            raise fail(self, f"cast keeps the shape: {self.input.type} cannot become {self.result.type}")
        for t in (source, result):
            if element_kind(t.element_type) == "other":
                raise fail(self, f"cannot cast from or to {t.element_type}")
        if self.round_mode is not None and self.round_mode.data not in self.ROUND_MODES:
            raise fail(self, f"'round_mode' must be one of {', '.join(self.ROUND_MODES)}")


OPS = (
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    ModOp,
    MaxOp,
    MinOp,
    PowOp,
    Atan2Op,
    PReluOp,
    BitwiseAndOp,
    BitwiseOrOp,
    BitwiseXorOp,
    ShiftLeftOp,
    ShiftRightOp,
    AndOp,
    OrOp,
    XorOp,
    EqualOp,
    LessOp,
    LessEqualOp,
    GreaterOp,
    GreaterEqualOp,
    WhereOp,
    CastOp,
)
