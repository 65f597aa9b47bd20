"""Enum attributes printed with their value in angle brackets: `#ascend.unit<cube>`.

xDSL's `EnumAttribute` prints `#ascend.unit cube`; the ascend dialects write the value in brackets,
as MLIR's own enum attributes do. Mix `BracketedEnum` in before `EnumAttribute[...]` (xDSL allows
only direct subclasses of `EnumAttribute`, so this is a sibling base, not a subclass of it).
"""

from __future__ import annotations

from typing import Generic

from typing_extensions import TypeVar
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Data
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

EnumType = TypeVar("EnumType", bound=StrEnum)


class BracketedEnum(Data[EnumType], Generic[EnumType]):
    """Prints and parses an `EnumAttribute`'s value inside `<...>`: `class UnitAttr(BracketedEnum[Unit],
    EnumAttribute[Unit])`."""

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.data.value)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> EnumType:
        assert issubclass(cls, EnumAttribute), "mixed in before EnumAttribute"
        with parser.in_angle_brackets():
            return parser.parse_str_enum(cls.enum_type)  # pyright: ignore[reportReturnType] the subclass's enum
