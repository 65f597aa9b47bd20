"""Views of a model's bytes: `ascend.stream.view` (the same bytes seen with another shape) and
`ascend.stream.subview` (a slice, so a producer writes straight into its part of a concat).
Neither copies nor launches anything; `root_buffer` finds the buffer whose bytes they are.

A subview slices the logical shape (for NC1HWC0, channels in whole C0 blocks).
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, MemRefType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict

from ..common import fail
from ..formats import FRAMEWORK_FORMATS, c0_of, encoding_error, format_of, view_error
from ..verify import LocalVerifier
from .traits import InModel


@irdl_op_definition
class ViewOp(LocalVerifier, IRDLOperation):
    """The same bytes as `source`, seen with another shape: no copy, no task. The rules are a
    kernel view's (`ge.dialects.formats.view_error`): the same element type and count, a plain
    result, and a source that is plain or NC1HWC0 whose bytes are the plain ones (H = W = 1, C a
    multiple of C0).

    `%v = ascend.stream.view %b : memref<1x2048x1x1xf32, #ascend.format<NC1HWC0>> -> memref<1x2048xf32>`
    """

    name = "ascend.stream.view"

    source = operand_def(MemRefType)
    buffer = result_def(MemRefType)

    traits = traits_def(InModel())
    assembly_format = "$source attr-dict `:` type($source) `->` type($buffer)"

    def __init__(self, source: SSAValue, type: MemRefType):
        super().__init__(operands=[source], result_types=[type])

    def verify_(self) -> None:
        source, result = _memref_types(self)
        for what, t in (("source", source), ("result", result)):
            if (error := encoding_error(t)) is not None:
                raise fail(self, f"{what}: {error}")
        if (error := view_error(source, result)) is not None:
            raise fail(self, error)


@irdl_op_definition
class SubviewOp(LocalVerifier, IRDLOperation):
    """A slice of `source` along logical `axis`, from `start`, `length` long: a producer writes its
    result straight into its part of a concat. Both keep the source's format; in NC1HWC0 the slice
    is whole channel blocks (axis 1, start and length multiples of C0).

    `%s = ascend.stream.subview %b axis 1 start 64 length 32 : memref<1x96x8x8xf32, #ascend.format<NC1HWC0>>
        -> memref<1x32x8x8xf32, #ascend.format<NC1HWC0>>`
    """

    name = "ascend.stream.subview"

    source = operand_def(MemRefType)
    axis = prop_def(IntegerAttr[I64])
    start = prop_def(IntegerAttr[I64])
    length = prop_def(IntegerAttr[I64])
    buffer = result_def(MemRefType)

    traits = traits_def(InModel())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$source `axis` $axis `start` $start `length` $length attr-dict `:` type($source) `->` type($buffer)"
    )

    def __init__(self, source: SSAValue, axis: int, start: int, length: int, type: MemRefType):
        super().__init__(
            operands=[source],
            result_types=[type],
            properties={
                "axis": IntegerAttr(axis, i64),
                "start": IntegerAttr(start, i64),
                "length": IntegerAttr(length, i64),
            },
        )

    def verify_(self) -> None:
        source, result = _memref_types(self)
        for what, t in (("source", source), ("result", result)):
            if (error := encoding_error(t)) is not None:
                raise fail(self, f"{what}: {error}")
        outer, inner = source.get_shape(), result.get_shape()
        axis, start, length = self.axis.value.data, self.start.value.data, self.length.value.data
        if not 0 <= axis < len(outer) or len(inner) != len(outer):
            raise fail(self, f"axis {axis} does not fit {self.source.type} -> {self.buffer.type}")
        expected = tuple(length if i == axis else d for i, d in enumerate(outer))
        if inner != expected or start < 0 or start + length > outer[axis]:
            raise fail(
                self,
                f"slice [{start}, {start + length}) of axis {axis} of {self.source.type} "
                f"is not {self.buffer.type}",
            )
        fmt = format_of(source)
        if format_of(result) != fmt or source.element_type != result.element_type:
            raise fail(self, f"a subview keeps the format and element type of {source}")
        if fmt == "NC1HWC0":
            c0 = c0_of(getattr(result.element_type, "bitwidth", 32))
            if axis != 1 or start % c0 or length % c0:
                raise fail(self, f"an NC1HWC0 subview takes whole blocks of {c0} channels on axis 1")
        elif fmt not in FRAMEWORK_FORMATS:
            raise fail(self, f"a subview is ND, NCHW or NC1HWC0, not {fmt}")

    def stored_slice(self) -> tuple[int, int, int]:
        """(axis, start, length) of the slice in the source's stored shape."""
        axis, start, length = self.axis.value.data, self.start.value.data, self.length.value.data
        source, result = _memref_types(self)
        if format_of(source) == "NC1HWC0":
            c0 = c0_of(getattr(result.element_type, "bitwidth", 32))
            return axis, start // c0, length // c0
        return axis, start, length


def root_buffer(value: SSAValue) -> SSAValue:
    """The arena buffer (or weight) a view or subview's bytes belong to."""
    while isinstance(value.owner, ViewOp | SubviewOp):
        value = value.owner.source
    return value


def _memref_types(op: ViewOp | SubviewOp) -> tuple[MemRefType, MemRefType]:
    """The source and result types of a view (memrefs: the op's constraints hold before verify_)."""
    source, result = op.source.type, op.buffer.type
    assert isinstance(source, MemRefType) and isinstance(result, MemRefType)
    return source, result
