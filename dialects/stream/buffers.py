"""The placed bytes of an `ascend.stream.model`: activation buffers in the arena and weights in
the weight blob, each at an offset with a size, and the byte size a type takes when stored.

A buffer's type is the tensor's type as a memref: the logical shape, with the device format as
its layout. The stored shape and byte size follow from the type (`ge.dialects.formats.storage_shape`,
`byte_size`); only a FRACTAL_Z weight adds its convolution's group count (`WeightOp.groups`).
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import (
    I64,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    TensorType,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict

from ..common import fail
from ..formats import bitwidth_of, encoding_error, format_of, storage_shape
from ..verify import LocalVerifier
from .traits import InModel

SPACES = ("arena", "weight")


def byte_size(t: MemRefType | TensorType, groups: int = 1) -> int:
    """Bytes a dense buffer of this static type takes, stored in its format (`groups`: of a
    FRACTAL_Z weight's convolution). Raises ValueError for a shape the format cannot store."""
    width = bitwidth_of(t.element_type)
    return math.prod(storage_shape(t, groups)) * max(1, width // 8)


class _PlacedOp(LocalVerifier, IRDLOperation):
    offset = prop_def(IntegerAttr[I64])
    size = prop_def(IntegerAttr[I64])
    buffer = result_def(MemRefType)

    @property
    def group_count(self) -> int:
        """The convolution group count the stored FRACTAL_Z bytes are laid out for."""
        return 1

    def verify_(self) -> None:
        if (error := encoding_error(self.buffer.type)) is not None:
            raise fail(self, error)
        if any(d < 0 for d in self.buffer.type.get_shape()):
            raise fail(self, f"a placed buffer needs a static shape, got {self.buffer.type}")
        try:
            need = byte_size(self.buffer.type, self.group_count)
        except ValueError as error:
            raise fail(self, str(error)) from None
        if self.size.value.data < need:
            raise fail(self, f"{self.size.value.data} bytes cannot hold {self.buffer.type} ({need} bytes)")


@irdl_op_definition
class BufferOp(_PlacedOp):
    """An activation buffer at `offset` in the arena. `input = i` binds it to the model's input i
    and `output = j` to its output j: such a buffer is the caller's memory, not arena bytes (its
    offset is 0), so inputs are read and outputs written where the caller has them, no copy.

    `%b = ascend.stream.buffer offset 512 size 64 : memref<16xf32>`
    """

    name = "ascend.stream.buffer"

    input = opt_prop_def(IntegerAttr[I64])
    output = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(InModel())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "`offset` $offset `size` $size attr-dict `:` type($buffer)"

    def __init__(
        self, offset: int, size: int, type: MemRefType, input: int | None = None, output: int | None = None
    ):
        props: dict[str, Attribute] = {
            "offset": IntegerAttr(offset, i64),
            "size": IntegerAttr(size, i64),
        }
        if input is not None:
            props["input"] = IntegerAttr(input, i64)
        if output is not None:
            props["output"] = IntegerAttr(output, i64)
        super().__init__(properties=props, result_types=[type])

    @property
    def bound(self) -> bool:
        """Whether the buffer is the caller's memory (a model input or output), not arena bytes."""
        return self.input is not None or self.output is not None

    def verify_(self) -> None:
        super().verify_()
        if self.input is not None and self.output is not None:
            raise fail(self, "a buffer is bound to an input or to an output, not both")
        if self.bound and self.offset.value.data != 0:
            raise fail(self, "a buffer bound to the caller's memory has offset 0")


@irdl_op_definition
class WeightOp(_PlacedOp):
    """A constant at `offset` in the weight blob; its value is inline, a splat or a resource key.

    `%w = ascend.stream.weight dense_resource<fc.weight> : tensor<10x16xf32> offset 0 size 640
        : memref<10x16xf32>`
    """

    name = "ascend.stream.weight"

    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr | FloatAttr | IntegerAttr)
    groups = opt_prop_def(IntegerAttr[I64])
    """Convolution groups of a FRACTAL_Z weight: how its stored bytes are laid out."""

    traits = traits_def(InModel())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value `offset` $offset `size` $size attr-dict `:` type($buffer)"

    @property
    def stored_format(self) -> str:
        """The device format the value is stored in (converted at compile time): the layout."""
        return format_of(self.buffer.type)

    @property
    def group_count(self) -> int:
        return self.groups.value.data if self.groups is not None else 1

    def verify_(self) -> None:
        super().verify_()
        memref = self.buffer.type
        logical = self.logical_type
        if logical.get_shape() != memref.get_shape() or logical.element_type != memref.element_type:
            raise fail(self, f"a value of type {logical} cannot fill {memref}")

    @property
    def logical_type(self) -> TensorType:
        """The type of the constant as the graph has it (before conversion to the stored format)."""
        value = self.value
        if isinstance(value, FloatAttr | IntegerAttr):
            return TensorType(value.type, self.buffer.type.get_shape())
        if not isinstance(value.type, TensorType):
            raise fail(self, f"a weight's value has type {value.type}, not a tensor type")
        return value.type

    def __init__(
        self,
        value: Attribute,
        offset: int,
        size: int,
        type: MemRefType,
        groups: int = 1,
    ):
        props: dict[str, Attribute] = {
            "value": value,
            "offset": IntegerAttr(offset, i64),
            "size": IntegerAttr(size, i64),
        }
        if groups != 1:
            props["groups"] = IntegerAttr(groups, i64)
        super().__init__(properties=props, result_types=[type])
