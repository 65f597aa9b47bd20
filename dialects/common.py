"""Definitions shared by the three `ascend` dialects: the target attribute and op descriptions.

The target attribute carries the SoC figures that verifiers need (buffer sizes, C0), so dialect
code never has to load a SoC profile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeGuard

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    NameLoc,
    StringAttr,
    UnknownLoc,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.irdl import IRDLOperation, irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

IntArray = DenseArrayBase[IntegerType]
"""The type of integer-list properties (axes, perms, shapes, strides, pads): `array<i64: ...>`;
an `array<f32: ...>` there is refused by the verifier, not truncated."""
FloatArray = DenseArrayBase[AnyFloat]
"""The type of float-list properties (resize scales, activation parameters)."""

TARGET_ATTR_NAME = "ascend.target"
"""Name of the module attribute that holds the `#ascend.target<...>` of a compilation."""
NAME_ATTR = "ascend.name"
"""Name of the argument or result attribute that holds a graph input's or output's name."""


def value_names(attrs: ArrayAttr[DictionaryAttr] | None, count: int, prefix: str) -> list[str]:
    """The names of a function's arguments or results from its `arg_attrs` or `res_attrs`
    (`<prefix>_<index>` for one without)."""
    names = []
    for index in range(count):
        name = attrs.data[index].data.get(NAME_ATTR) if attrs and index < len(attrs.data) else None
        names.append(name.data if isinstance(name, StringAttr) else f"{prefix}_{index}")
    return names


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """The SoC a module is compiled for, with the figures verifiers check against.

    ```
    builtin.module attributes {ascend.target = #ascend.target<"Ascend910B2", {c0 = 16 : i64,
        ub_bytes = 196608 : i64, ...}>}
    ```
    """

    name = "ascend.target"

    soc: StringAttr = param_def()
    figures: DictionaryAttr = param_def()

    def __init__(self, soc: str, figures: Mapping[str, int | float]):
        super().__init__(
            StringAttr(soc),
            DictionaryAttr(
                {
                    k: FloatAttr(float(v), f64) if isinstance(v, float) else IntegerAttr(int(v), i64)
                    for k, v in sorted(figures.items())
                }
            ),
        )

    def figure(self, key: str) -> int | float:
        """The figure named `key`; a VerifyException when the target lacks it (a module written by
        hand may name only some), which passes and the emulator report as invalid IR."""
        value = self.figures.data.get(key)
        if not isinstance(value, IntegerAttr | FloatAttr):
            raise VerifyException(f"target {self.soc.data} has no figure '{key}'")
        return value.value.data

    def as_dict(self) -> dict[str, int | float]:
        """Every figure by name (what the cost model reads)."""
        return {
            k: v.value.data for k, v in self.figures.data.items() if isinstance(v, IntegerAttr | FloatAttr)
        }

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        soc = parser.parse_str_literal()
        parser.parse_punctuation(",")
        figures = parser.parse_attribute()
        if not isinstance(figures, DictionaryAttr):
            parser.raise_error("expected a dictionary of target figures")
        parser.parse_punctuation(">")
        return (StringAttr(soc), figures)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.soc.data)
            printer.print_string(", ")
            printer.print_attribute(self.figures)

    def verify(self) -> None:
        for key, value in self.figures.data.items():
            if not isinstance(value, IntegerAttr | FloatAttr) or value.value.data < 0:
                raise VerifyException(f"target figure '{key}' must be a non-negative number")


def describe(op: Operation) -> str:
    """`'ascend.graph.conv2d' at loc("conv1")`: how error messages name an op."""
    loc = op.location
    if isinstance(loc, UnknownLoc):
        return f"'{op.name}'"
    if isinstance(loc, NameLoc):
        return f"'{op.name}' at loc(\"{loc.desc.data}\")"
    return f"'{op.name}' at {loc}"


def fail(op: Operation, message: str) -> VerifyException:
    return VerifyException(f"{describe(op)}: {message}")


def get_int(op: Operation, name: str, default: int | None = None) -> int:
    attr = op.properties.get(name)
    if attr is None:
        if default is None:
            raise fail(op, f"missing property '{name}'")
        return default
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def get_flag(op: Operation, name: str) -> bool:
    """A yes/no property (a `BoolAttr`). Its default is written once, in the op's definition,
    which fills it in when the op is built or parsed."""
    attr = op.properties.get(name)
    if attr is None and isinstance(op, IRDLOperation):
        definition = op.get_irdl_definition().properties.get(name)
        attr = definition.default_value if definition is not None else None
    if not is_flag(attr):
        raise fail(op, f"property '{name}' must be true or false, got {attr}")
    return bool(attr.value.data)


def is_flag(attr: Attribute | None) -> TypeGuard[IntegerAttr]:
    """Whether `attr` is a `BoolAttr` (`true` or `false`, an i1)."""
    return isinstance(attr, IntegerAttr) and attr.type == i1


def get_float(op: Operation, name: str, default: float) -> float:
    attr = op.properties.get(name)
    if attr is None:
        return default
    assert isinstance(attr, FloatAttr)
    return attr.value.data


def get_ints(op: Operation, name: str, default: Sequence[int] | None = None) -> tuple[int, ...]:
    attr = op.properties.get(name)
    if attr is None:
        if default is None:
            raise fail(op, f"missing property '{name}'")
        return tuple(default)
    assert isinstance(attr, DenseArrayBase)
    return tuple(int(v) for v in attr.get_values())


def get_strs(op: Operation, name: str) -> tuple[str, ...]:
    from xdsl.dialects.builtin import ArrayAttr

    attr = op.properties.get(name) or op.attributes.get(name)
    if attr is None:
        return ()
    assert isinstance(attr, ArrayAttr)
    return tuple(s.data for s in attr.data if isinstance(s, StringAttr))


def bool_attr(value: bool) -> IntegerAttr:
    """`true` or `false`: the value of a yes/no property."""
    return IntegerAttr.from_bool(bool(value))


def int_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def ints_attr(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


__all__ = [
    "IntAttr",
    "TARGET_ATTR_NAME",
    "TargetAttr",
    "describe",
    "fail",
    "bool_attr",
    "get_flag",
    "get_float",
    "get_int",
    "get_ints",
    "get_strs",
    "is_flag",
    "int_attr",
    "ints_attr",
]
