"""The kernel ops: graph ops grouped into one kernel on the cube, the vector unit or the AI CPU,
and the terminator of their bodies."""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, Pure

from ..common import fail
from ..formats import (
    plain_type,
)
from ..tiling import TilingAttr
from ..verify import LocalVerifier
from .units import Unit
from .verifiers import TargetChecked, check_formats, check_schedule, formats_of


class KernelOp(TargetChecked, IRDLOperation, ABC):
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
        return formats_of(self.inputs)

    @property
    def out_formats(self) -> tuple[str, ...]:
        """The format of each result, read from its type."""
        return formats_of(self.outputs)

    def verify_(self) -> None:
        block: Block = self.body.block
        if len(block.args) != len(self.inputs):
            raise fail(self, f"body takes {len(block.args)} arguments for {len(self.inputs)} inputs")
        for index, (arg, value) in enumerate(zip(block.args, self.inputs, strict=True)):
            if arg.type != plain_type(value.type):
                raise fail(self, f"body argument #{index} is {arg.type}, input is {value.type}")
        check_formats(self)
        check_schedule(self, self.UNIT, [*self.inputs, *self.outputs], self.block_dim, self.tiling)
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise fail(self, "body must end with 'ascend.kernel.yield'")
        yielded = [v.type for v in terminator.values]
        expected = [plain_type(r.type) for r in self.outputs]
        if yielded != expected:
            shown = ", ".join(map(str, yielded))
            raise fail(
                self,
                f"the body yields ({shown}), the kernel's results are ({', '.join(map(str, expected))}) "
                "without their formats",
            )
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


def weight_groups(arg: SSAValue) -> int:
    """The group count of the convolution in a kernel body that reads `arg` (its weights): what
    the FRACTAL_Z layout of those weights depends on. 1 when no grouped op reads it."""
    for use in arg.uses:
        groups = use.operation.properties.get("groups")
        if isinstance(groups, IntegerAttr):
            return groups.value.data
    return 1
