"""The `ascend.kernel` dialect: graph ops grouped into kernels placed on an AI Core unit.

A kernel op holds the graph op(s) it computes in its region (as IREE's dispatch regions do), so
its meaning stays visible and executable; its op name says on which unit it runs. The data format
each operand and result lives in is part of its type (`ge.dialects.formats`):
`tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>`. Kernel bodies compute on the plain logical types,
so a body argument is its operand's type without the format; `trans_data` is the one op that
changes a value's format, and a producer and a consumer cannot disagree about it.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Hashable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import ConstantLike, HasParent, IsolatedFromAbove, IsTerminator, Pure
from xdsl.utils.str_enum import StrEnum

from .common import TARGET_ATTR_NAME, TargetAttr, fail
from .enum_attr import BracketedEnum
from .formats import (
    FRAMEWORK_FORMATS,
    bitwidth_of,
    c0_of,
    encoding_error,
    format_of,
    plain_type,
    view_error,
    with_format,
)
from .tiling import TILED_UNITS, CubeTilingAttr, TilingAttr, VectorTilingAttr, tiling_error
from .verify import LocalVerifier


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


def target_of(op: Operation) -> TargetAttr | None:
    """The `#ascend.target` of the module around `op`, if it has one."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ModuleOp):
        parent = parent.parent_op()
    while parent is not None:
        target = parent.attributes.get(TARGET_ATTR_NAME)
        if isinstance(target, TargetAttr):
            return target
        parent = parent.parent_op()
    return None


class _TargetChecked(LocalVerifier):
    """An op whose verifier reads the target's figures (through `target_of`) beside itself."""

    def verification_context(self) -> Hashable:
        assert isinstance(self, Operation), "a mixin of op classes"
        return target_of(self)


def _check_formats(op: Operation) -> None:
    """Each operand's and result's format (its type's encoding) must be a device format that fits
    its rank (`FormatAttr` itself refuses ND and NCHW: the plain type is that layout)."""
    for what, values in (("operand", op.operands), ("result", op.results)):
        for index, value in enumerate(values):
            if (error := encoding_error(value.type)) is not None:
                raise fail(op, f"{what} #{index}: {error}")


def _formats(values: Sequence[SSAValue]) -> tuple[str, ...]:
    return tuple(format_of(v) for v in values)


def _check_schedule(op: KernelOp | TransDataOp, unit: str, values: Sequence[SSAValue]) -> None:
    """`block_dim` and `tiling` must be coherent and fit the target's buffers and cores."""
    cores_asked = op.block_dim.value.data if op.block_dim is not None else None
    if cores_asked is not None and cores_asked < 1:
        raise fail(op, f"block_dim must be at least 1, got {cores_asked}")
    target = target_of(op)
    if target is None:
        return
    if cores_asked is not None:
        key = {"cube": "cube_cores", "vector": "vector_cores"}.get(unit)
        cores = target.figure(key) if key else 1
        if cores_asked > cores:
            raise fail(op, f"block_dim {cores_asked} exceeds the {cores} {unit} cores of the target")
    if op.tiling is not None and unit in TILED_UNITS:
        types = [v.type for v in values if isinstance(v.type, TensorType)]
        widths = [max(1, bitwidth_of(t.element_type) // 8) for t in types]
        error = tiling_error(unit, op.tiling, widths, target.figure)
        if error:
            raise fail(op, error)


class KernelOp(_TargetChecked, IRDLOperation, ABC):
    """A kernel: its body computes results from block arguments that stand for its inputs."""

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    kernel_name = opt_prop_def(StringAttr)
    block_dim = opt_prop_def(IntegerAttr[I64])
    """AI Core (or vector core) count the kernel runs on."""
    tiling = opt_prop_def(TilingAttr)
    """Tile sizes (see `ge.dialects.tiling`); they must fit the target's on-chip buffers."""
    body = region_def("single_block")

    traits = traits_def(Pure(), IsolatedFromAbove())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "`(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body"

    UNIT: ClassVar[str]
    """The unit the kernel runs on, a `Unit` value."""

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        body: Region,
        result_types: Sequence[Attribute],
        kernel_name: str | None = None,
    ):
        props: dict[str, Attribute] = {}
        if kernel_name:
            props["kernel_name"] = StringAttr(kernel_name)
        super().__init__(operands=[inputs], result_types=[result_types], properties=props, regions=[body])

    @property
    def in_formats(self) -> tuple[str, ...]:
        """The format of each input, read from its type."""
        return _formats(self.inputs)

    @property
    def out_formats(self) -> tuple[str, ...]:
        """The format of each result, read from its type."""
        return _formats(self.outputs)

    def verify_(self) -> None:
        block: Block = self.body.block
        if len(block.args) != len(self.inputs):
            raise fail(self, f"body takes {len(block.args)} arguments for {len(self.inputs)} inputs")
        for index, (arg, value) in enumerate(zip(block.args, self.inputs, strict=True)):
            if arg.type != plain_type(value.type):
                raise fail(self, f"body argument #{index} is {arg.type}, input is {value.type}")
        _check_formats(self)
        _check_schedule(self, self.UNIT, [*self.inputs, *self.outputs])
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise fail(self, "body must end with 'ascend.kernel.yield'")
        yielded = [v.type for v in terminator.values]
        if yielded != [plain_type(r.type) for r in self.outputs]:
            raise fail(self, "yielded types do not match the kernel's result types")
        for op in block.ops:
            if op is not terminator and not op.name.startswith("ascend.graph."):
                raise fail(self, f"a kernel body holds graph ops only, found '{op.name}'")


@irdl_op_definition
class CubeKernelOp(KernelOp):
    """A kernel on the cube unit (matrix products and convolutions).

    ```
    %y = ascend.kernel.cube(%x, %w) : (tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>,
        tensor<4x3x3x3xf32, #ascend.format<FRACTAL_Z>>) -> tensor<1x4x6x6xf32, #ascend.format<NC1HWC0>> {
    ^bb0(%a : tensor<1x3x8x8xf32>, %b : tensor<4x3x3x3xf32>):
      %c = ascend.graph.conv2d %a, %b : (...) -> tensor<1x4x6x6xf32>
      ascend.kernel.yield %c : tensor<1x4x6x6xf32>
    }
    ```
    """

    name = "ascend.kernel.cube"
    UNIT: ClassVar[str] = Unit.CUBE.value


@irdl_op_definition
class VectorKernelOp(KernelOp):
    """A kernel on the vector unit (elementwise ops, reductions, pooling, data movement).

    ```
    %y = ascend.kernel.vector(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a : tensor<4xf32>):
      %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
      ascend.kernel.yield %r : tensor<4xf32>
    }
    ```
    """

    name = "ascend.kernel.vector"
    UNIT: ClassVar[str] = Unit.VECTOR.value


@irdl_op_definition
class AiCpuKernelOp(KernelOp):
    """A kernel on the AI CPU: ops the AI Core cannot run (float64 or int64 arithmetic,
    value-dependent shapes). Slow and scalar, but real.

    ```
    %y = ascend.kernel.aicpu(%x) : (tensor<4xf64>) -> tensor<4xf64> {
    ^bb0(%a : tensor<4xf64>):
      %r = ascend.graph.relu %a : (tensor<4xf64>) -> tensor<4xf64>
      ascend.kernel.yield %r : tensor<4xf64>
    }
    ```
    """

    name = "ascend.kernel.aicpu"
    UNIT: ClassVar[str] = Unit.AICPU.value


@irdl_op_definition
class YieldOp(LocalVerifier, IRDLOperation):
    """Returns a kernel body's results: `ascend.kernel.yield %r : tensor<4xf32>`."""

    name = "ascend.kernel.yield"

    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(CubeKernelOp, VectorKernelOp, AiCpuKernelOp), Pure())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])


@irdl_op_definition
class TransDataOp(_TargetChecked, IRDLOperation):
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

    @property
    def src_format(self) -> str:
        return format_of(self.input)

    @property
    def dst_format(self) -> str:
        return format_of(self.output)

    @property
    def in_formats(self) -> tuple[str, ...]:
        return (self.src_format,)

    @property
    def out_formats(self) -> tuple[str, ...]:
        return (self.dst_format,)

    def verify_(self) -> None:
        if plain_type(self.input.type) != plain_type(self.output.type):
            raise fail(self, "a format conversion keeps the tensor's logical type")
        _check_formats(self)
        if self.src_format == self.dst_format:
            raise fail(
                self, f"converts {self.src_format} to {self.dst_format}: a conversion changes the format"
            )
        _check_schedule(self, "vector", [self.input, self.output])


@irdl_op_definition
class ViewOp(_TargetChecked, IRDLOperation):
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

    @property
    def src_format(self) -> str:
        return format_of(self.input)

    @property
    def dst_format(self) -> str:
        return format_of(self.output)

    @property
    def in_formats(self) -> tuple[str, ...]:
        return (self.src_format,)

    @property
    def out_formats(self) -> tuple[str, ...]:
        return (self.dst_format,)

    def verify_(self) -> None:
        src, dst = self.input.type, self.output.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        _check_formats(self)
        if (error := view_error(src, dst)) is not None:
            raise fail(self, error)


@irdl_op_definition
class ConcatViewOp(_TargetChecked, IRDLOperation):
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
        return _formats(self.inputs)

    @property
    def out_formats(self) -> tuple[str, ...]:
        return (self.format,)

    def verify_(self) -> None:
        out = self.output.type
        assert isinstance(out, TensorType)
        _check_formats(self)
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
            if axis != 1 or any(_tensor(v).get_shape()[1] % c0 for v in self.inputs):
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


def weight_groups(arg: SSAValue) -> int:
    """The group count of the convolution in a kernel body that reads `arg` (its weights): what
    the FRACTAL_Z layout of those weights depends on. 1 when no grouped op reads it."""
    for use in arg.uses:
        groups = use.operation.properties.get("groups")
        if isinstance(groups, IntegerAttr):
            return groups.value.data
    return 1


def _tensor(value: SSAValue) -> TensorType:
    """The type of a kernel-level value: a tensor, as the kernel ops' operand constraints say."""
    value_type = value.type
    assert isinstance(value_type, TensorType), f"a kernel value of type {value_type}, not a tensor"
    return value_type


KERNEL_OPS = (CubeKernelOp, VectorKernelOp, AiCpuKernelOp, YieldOp, TransDataOp, ViewOp, ConcatViewOp)
KERNEL_BY_UNIT: dict[str, type[KernelOp]] = {
    kernel.UNIT: kernel for kernel in (CubeKernelOp, VectorKernelOp, AiCpuKernelOp)
}

KERNEL_ATTRIBUTES = (KernelUnitAttr, KernelKindAttr, CubeTilingAttr, VectorTilingAttr)

Kernel = Dialect("ascend.kernel", list(KERNEL_OPS), list(KERNEL_ATTRIBUTES))
