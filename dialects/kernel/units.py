"""The AI Core units a kernel runs on and the kinds of kernel, as enum attributes
(`#ascend.unit<cube>`, `#ascend.kind<trans_data>`)."""

from __future__ import annotations

from xdsl.dialects.utils import EnumAttribute
from xdsl.irdl import (
    irdl_attr_definition,
)
from xdsl.utils.str_enum import StrEnum

from ..enum_attr import BracketedEnum


class Unit(StrEnum):
    """The unit a kernel runs on."""

    CUBE = "cube"
    VECTOR = "vector"
    AICPU = "aicpu"


class KernelKind(StrEnum):
    """What a kernel is, for counting: the unit it runs on, or a format conversion."""

    CUBE = "cube"
    VECTOR = "vector"
    AICPU = "aicpu"
    TRANS_DATA = "trans_data"


@irdl_attr_definition
class KernelUnitAttr(BracketedEnum[Unit], EnumAttribute[Unit]):
    """A kernel's unit: `#ascend.unit<cube>`, `#ascend.unit<vector>` or `#ascend.unit<aicpu>`."""

    name = "ascend.unit"


@irdl_attr_definition
class KernelKindAttr(BracketedEnum[KernelKind], EnumAttribute[KernelKind]):
    """A kernel's kind: its unit, or `#ascend.kind<trans_data>` for a format conversion."""

    name = "ascend.kind"


UNITS = tuple(unit.value for unit in Unit)
