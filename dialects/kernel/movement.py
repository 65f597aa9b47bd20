"""The ops that move or reinterpret data between kernels: `trans_data` (the one op that changes
a value's format), `view` and `concat_view` (new shapes over bytes a kernel wrote)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import ConstantLike, Pure

from ..common import fail
from ..formats import (
    FRAMEWORK_FORMATS,
    bitwidth_of,
    c0_of,
    format_of,
    plain_type,
    view_error,
    with_format,
)
from ..tiling import TilingAttr
from .units import Unit
from .verifiers import TargetChecked, check_formats, check_schedule, formats_of, tensor_of


class OneToOne:
    """The formats of an op from one `input` to one `output` (trans_data, view), read from their
    types."""

    @property
    def src_format(self) -> str:
        assert isinstance(self, Operation)
        return format_of(self.operands[0])

    @property
    def dst_format(self) -> str:
        assert isinstance(self, Operation)
        return format_of(self.results[0])

    @property
    def in_formats(self) -> tuple[str, ...]:
        return (self.src_format,)

    @property
    def out_formats(self) -> tuple[str, ...]:
        return (self.dst_format,)


@irdl_op_definition
class TransDataOp(OneToOne, TargetChecked, IRDLOperation):
    """A format conversion kernel (GE's TransData): the same logical tensor, laid out anew. It is
    the one op whose result's format differs from its input's.

    Any two different formats the shape fits convert: a framework format to a device format or
    back (GE's usual TransData), or one device format to another (NC1HWC0 -> FRACTAL_NZ), which
    the format assignment emits when a producer and a consumer disagree: one conversion through
    the logical tensor where GE would chain two. A conversion to the same format is refused.

    ```
    %y = ascend.kernel.trans_data %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>
    ```
    """

    name = "ascend.kernel.trans_data"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    kernel_name = opt_prop_def(StringAttr)
    block_dim = opt_prop_def(IntegerAttr[I64])
    tiling = opt_prop_def(TilingAttr)

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` functional-type($input, $output)"

    UNIT: ClassVar[str] = Unit.VECTOR.value

    def __init__(self, value: SSAValue, dst: str, kernel_name: str | None = None):
        props: dict[str, Attribute] = {}
        if kernel_name:
            props["kernel_name"] = StringAttr(kernel_name)
        t = value.type
        assert isinstance(t, TensorType)
        super().__init__(operands=[value], result_types=[with_format(t, dst)], properties=props)

    def verify_(self) -> None:
        if plain_type(self.input.type) != plain_type(self.output.type):
            raise fail(
                self,
                f"converts {self.input.type} to {self.output.type}: a format conversion keeps the "
                "tensor's logical type",
            )
        check_formats(self)
        if self.src_format == self.dst_format:
            raise fail(
                self, f"converts {self.src_format} to {self.dst_format}: a conversion changes the format"
            )
        check_schedule(self, "vector", [self.input, self.output], self.block_dim, self.tiling)


@irdl_op_definition
class ViewOp(OneToOne, TargetChecked, IRDLOperation):
    """A reinterpretation of a tensor's bytes with another shape: no kernel, no data moved.

    Reshape, flatten, squeeze and unsqueeze become views of contiguous (ND / NCHW) data, whose
    types are plain. A view may also read NC1HWC0 data as plain when that is the same bytes:
    H = W = 1 and C a multiple of C0.
    ```
    %y = ascend.kernel.view %x : (tensor<1x2048x1x1xf32, #ascend.format<NC1HWC0>>) -> tensor<1x2048xf32>
    ```
    """

    name = "ascend.kernel.view"

    input = operand_def(TensorType)
    output = result_def(TensorType)

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` functional-type($input, $output)"

    def __init__(self, value: SSAValue, result_type: TensorType):
        super().__init__(operands=[value], result_types=[result_type])

    def verify_(self) -> None:
        src, dst = self.input.type, self.output.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        check_formats(self)
        if (error := view_error(src, dst)) is not None:
            raise fail(self, error)


@irdl_op_definition
class ConcatViewOp(TargetChecked, IRDLOperation):
    """A concat that moves no data: each input's producer writes straight into its slice of the
    result (the stream lowering places the buffers so). Every input is in the result's format.

    ```
    %y = ascend.kernel.concat_view %a, %b {axis = 1 : i64} : (tensor<1x16x8x8xf32, #ascend.format<NC1HWC0>>,
        tensor<1x32x8x8xf32, #ascend.format<NC1HWC0>>) -> tensor<1x48x8x8xf32, #ascend.format<NC1HWC0>>
    ```
    """

    name = "ascend.kernel.concat_view"

    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $output)"

    def __init__(self, inputs: Sequence[SSAValue], result_type: TensorType, axis: int):
        super().__init__(
            operands=[inputs], result_types=[result_type], properties={"axis": IntegerAttr(axis, i64)}
        )

    @property
    def format(self) -> str:
        """The format of the result, and of every input."""
        return format_of(self.output)

    @property
    def in_formats(self) -> tuple[str, ...]:
        return formats_of(self.inputs)

    @property
    def out_formats(self) -> tuple[str, ...]:
        return (self.format,)

    def verify_(self) -> None:
        out = self.output.type
        assert isinstance(out, TensorType)
        check_formats(self)
        rank, axis = len(out.get_shape()), self.axis.value.data
        if not 0 <= axis < rank:
            raise fail(self, f"axis {axis} is out of range for rank {rank}")
        total = 0
        for value in self.inputs:
            t = value.type
            assert isinstance(t, TensorType)
            shape = t.get_shape()
            if t.element_type != out.element_type or len(shape) != rank:
                raise fail(self, f"input {t} does not match the result {out}")
            if format_of(t) != self.format:
                raise fail(self, f"input {t} is in {format_of(t)}, the result in {self.format}")
            if any(a != b for i, (a, b) in enumerate(zip(shape, out.get_shape(), strict=True)) if i != axis):
                raise fail(self, f"input {t} differs from the result {out} off the concat axis")
            total += shape[axis]
        if total != out.get_shape()[axis]:
            raise fail(self, f"the inputs' {total} slices do not fill the result's {out.get_shape()[axis]}")
        fmt = self.format
        if fmt == "NC1HWC0":
            c0 = c0_of(bitwidth_of(out.element_type))
            if axis != 1 or any(tensor_of(v).get_shape()[1] % c0 for v in self.inputs):
                raise fail(self, f"NC1HWC0 slices need axis 1 and channel counts that are multiples of {c0}")
        elif fmt not in FRAMEWORK_FORMATS:
            raise fail(self, f"a concat view is ND, NCHW or NC1HWC0, not {fmt}")
        for index, value in enumerate(self.inputs):
            owner = value.owner
            if not isinstance(owner, Operation) or isinstance(owner, ViewOp) or owner.has_trait(ConstantLike):
                raise fail(
                    self,
                    f"input #{index} is no kernel's result: a concat view's inputs are written into "
                    "its slices by the kernels that produce them",
                )
