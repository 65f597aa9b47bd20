"""Strings: the fixed-width string element type and the ops of ONNX's text operators.

A string tensor lives in memory like any other: `!ascend.string<N>` holds at most N characters
per element, stored as N UTF-32 code points (numpy `<UN`), shorter strings padded with zeros. A
result whose strings can grow takes the width its op can produce at most (a concatenation, the
sum of its operands' widths; a case change, three times its operand's, since one character may
map to three). Value-dependent sizes (how many pieces a split gives, how many elements survive
the stop words) are a `count` property read from the value the op was specialized on, as for
`non_zero`. Every op with a string operand or result runs on the AI CPU.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, IntegerAttr, StringAttr, TensorType, i1, i64
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .base import DYN, GraphOp, broadcast_shapes, flag_def, prop_int
from .indexing import ValueShapedOp
from .tensor import dims, prop_str
from .traits import ExactInStoredType

CASE_ACTIONS = ("NONE", "LOWER", "UPPER")
CASE_GROWTH = 3
"""Characters one character may become under a case change (Unicode's longest full mapping)."""


@irdl_attr_definition
class StringType(ParametrizedAttribute, TypeAttribute):
    """Strings of at most `width` characters, stored as `width` UTF-32 code points each.

    `tensor<2x3x!ascend.string<8>>` (numpy `<U8`: 32 bytes per element)
    """

    name = "ascend.string"

    width: IntAttr = param_def()

    def __init__(self, width: int):
        super().__init__(IntAttr(width))

    @property
    def bitwidth(self) -> int:
        """Bits of one element (what byte-size computations read)."""
        return 32 * self.width.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        width = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(">")
        return (IntAttr(width),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.width.data}>")

    def verify(self) -> None:
        if self.width.data < 1:
            raise VerifyException(f"a string type holds at least one character, got width {self.width.data}")


def string_width(t: TensorType, what: str) -> int:
    """The width of a string tensor's elements; raises ValueError for any other tensor."""
    if not isinstance(t.element_type, StringType):
        raise ValueError(f"{what} must be strings, got {t.element_type}")
    return t.element_type.width.data


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """The pattern as Python reads it the way RE2 does: `\\w`, `\\d`, `\\s` and `\\b` are ASCII."""
    return re.compile(pattern, re.ASCII)


# --------------------------------------------------------------------------------------------
# Ops
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class StringConcatOp(GraphOp):
    """Concatenates two string tensors elementwise, with numpy broadcasting.

    ```
    %z = ascend.graph.string_concat %x, %y
        : (tensor<3x!ascend.string<5>>, tensor<1x!ascend.string<1>>) -> tensor<3x!ascend.string<6>>
    ```
    """

    name = "ascend.graph.string_concat"

    traits = traits_def(ExactInStoredType())

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        lhs, rhs = operand_types
        width = string_width(lhs, "operands") + string_width(rhs, "operands")
        return TensorType(StringType(width), broadcast_shapes(lhs.get_shape(), rhs.get_shape()))


@irdl_op_definition
class StringSplitOp(ValueShapedOp):
    """Splits each string at `delimiter` (at runs of whitespace, trimmed first, when there is
    none), at most `maxsplit` times; the pieces are padded with empty strings to `count`, the
    most any element gives, and the second result says how many each element gave. An empty
    string gives no pieces.

    ```
    %pieces, %lengths = ascend.graph.string_split %x {count = 2 : i64, delimiter = "."}
        : (tensor<2x!ascend.string<7>>) -> (tensor<2x2x!ascend.string<7>>, tensor<2xi64>)
    ```
    """

    name = "ascend.graph.string_split"

    traits = traits_def(ExactInStoredType())

    input = operand_def(TensorType)
    pieces = result_def(TensorType)
    lengths = result_def(TensorType)
    count = prop_def(IntegerAttr)
    delimiter = opt_prop_def(StringAttr)
    maxsplit = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        (x,) = operand_types
        string_width(x, "the operand")
        count = prop_int(props, "count", -1)
        if count < 0:
            raise ValueError(f"'count' must be non-negative, got {count}")
        if prop_int(props, "maxsplit", 0) < 0:
            raise ValueError("'maxsplit' must be non-negative")
        shape = dims(x)
        return [TensorType(x.element_type, (*shape, count)), TensorType(i64, shape)]


@irdl_op_definition
class StringNormalizerOp(ValueShapedOp):
    """Drops the elements of a [C] or [1, C] string tensor that are `stopwords` (compared
    ignoring case unless `is_case_sensitive`), then changes the case of the rest
    (`case_change_action`: NONE, LOWER or UPPER). `count` elements remain (all of them when
    there is no `count`); when every element is dropped, one empty string does.

    ```
    %y = ascend.graph.string_normalizer %x {case_change_action = "UPPER", count = 3 : i64,
        stopwords = ["monday"]} : (tensor<4x!ascend.string<9>>) -> tensor<3x!ascend.string<27>>
    ```
    """

    name = "ascend.graph.string_normalizer"

    traits = traits_def(ExactInStoredType())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    count = opt_prop_def(IntegerAttr)
    case_change_action = opt_prop_def(StringAttr)
    is_case_sensitive = flag_def(False)
    stopwords = opt_prop_def(ArrayAttr[StringAttr])

    @classmethod
    def infer(cls, operand_types, props, where):
        (x,) = operand_types
        width = string_width(x, "the operand")
        shape = dims(x)
        if len(shape) not in (1, 2) or (len(shape) == 2 and shape[0] not in (1, DYN)):
            raise ValueError(f"the operand must have shape [C] or [1, C], got {list(shape)}")
        action = prop_str(props, "case_change_action", "NONE")
        if action not in CASE_ACTIONS:
            raise ValueError(f"'case_change_action' must be one of {', '.join(CASE_ACTIONS)}, got '{action}'")
        count = prop_int(props, "count", shape[-1])
        if count != DYN and count < 1:
            raise ValueError(f"'count' must be positive, got {count}")
        if shape[-1] != DYN and count > shape[-1]:
            raise ValueError(f"'count' ({count}) exceeds the {shape[-1]} elements of the operand")
        element = StringType(width * CASE_GROWTH) if action != "NONE" else x.element_type
        return TensorType(element, (*shape[:-1], count))


@irdl_op_definition
class RegexFullMatchOp(GraphOp):
    """Whether each string matches `pattern` as a whole (RE2 syntax; `\\w`, `\\d`, `\\s` are ASCII).

    ```
    %m = ascend.graph.regex_full_match %x {pattern = "a+b"}
        : (tensor<3x!ascend.string<4>>) -> tensor<3xi1>
    ```
    """

    name = "ascend.graph.regex_full_match"

    traits = traits_def(ExactInStoredType())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    pattern = prop_def(StringAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        (x,) = operand_types
        string_width(x, "the operand")
        try:
            compile_pattern(prop_str(props, "pattern", ""))
        except re.error as error:
            raise ValueError(f"'pattern' is not a valid regular expression: {error}") from None
        return TensorType(i1, x.get_shape())


@irdl_op_definition
class LabelEncoderOp(GraphOp):
    """Maps each element to the entry of `values` at the position of the equal entry of `keys`
    (the last one if a key repeats; a NaN key matches NaN), or to the scalar `default` if no key
    is equal. Keys have the input's element kind (strings of any width); the result has the
    values' element type.

    ```
    %y = ascend.graph.label_encoder %x, %keys, %values, %default
        : (tensor<5x!ascend.string<1>>, tensor<3x!ascend.string<1>>, tensor<3xi64>, tensor<i64>)
        -> tensor<5xi64>
    ```
    """

    name = "ascend.graph.label_encoder"

    traits = traits_def(ExactInStoredType())

    input = operand_def(TensorType)
    keys = operand_def(TensorType)
    values = operand_def(TensorType)
    default = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        x, keys, values, default = operand_types
        if len(keys.get_shape()) != 1 or len(values.get_shape()) != 1:
            raise ValueError("'keys' and 'values' must be 1-D")
        if DYN not in (keys.get_shape()[0], values.get_shape()[0]) and keys.get_shape() != values.get_shape():
            raise ValueError(f"{keys.get_shape()[0]} keys but {values.get_shape()[0]} values")
        if default.get_shape() != ():
            raise ValueError(f"'default' must be a scalar, got shape {list(default.get_shape())}")
        both_strings = isinstance(x.element_type, StringType) and isinstance(keys.element_type, StringType)
        if not both_strings and x.element_type != keys.element_type:
            raise ValueError(f"keys of {keys.element_type} cannot match elements of {x.element_type}")
        if default.element_type != values.element_type:
            raise ValueError(f"a default of {default.element_type} for values of {values.element_type}")
        return TensorType(values.element_type, x.get_shape())


OPS = (StringConcatOp, StringSplitOp, StringNormalizerOp, RegexFullMatchOp, LabelEncoderOp)
TYPES: tuple[type[Attribute], ...] = (StringType,)

__all__ = [
    "CASE_ACTIONS",
    "CASE_GROWTH",
    "OPS",
    "TYPES",
    "LabelEncoderOp",
    "RegexFullMatchOp",
    "StringConcatOp",
    "StringNormalizerOp",
    "StringSplitOp",
    "StringType",
    "compile_pattern",
    "string_width",
]
