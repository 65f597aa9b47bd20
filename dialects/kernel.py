"""The `ascend.kernel` dialect: graph ops grouped into kernels placed on an AI Core unit.

A kernel op holds the graph op(s) it computes in its region (as IREE's dispatch regions do), so
its meaning stays visible and executable; its properties say on which unit it runs and in which
data format each operand and result lives.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, Pure

from .common import fail

FORMATS = ("ND", "NCHW")
"""Data formats a kernel operand may have at this stage (device formats come with tiling)."""

UNITS = ("cube", "vector", "aicpu")


class KernelOp(IRDLOperation, ABC):
    """A kernel: its body computes results from block arguments that stand for its inputs."""

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    in_formats = prop_def(ArrayAttr[StringAttr])
    out_formats = prop_def(ArrayAttr[StringAttr])
    kernel_name = opt_prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(Pure(), IsolatedFromAbove())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "`(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body"

    UNIT: ClassVar[str] = ""

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        body: Region,
        result_types: Sequence[Attribute],
        in_formats: Sequence[str],
        out_formats: Sequence[str],
        kernel_name: str | None = None,
    ):
        props: dict[str, Attribute] = {
            "in_formats": ArrayAttr(StringAttr(f) for f in in_formats),
            "out_formats": ArrayAttr(StringAttr(f) for f in out_formats),
        }
        if kernel_name:
            props["kernel_name"] = StringAttr(kernel_name)
        super().__init__(operands=[inputs], result_types=[result_types], properties=props, regions=[body])

    def verify_(self) -> None:
        block: Block = self.body.block
        if len(block.args) != len(self.inputs):
            raise fail(self, f"body takes {len(block.args)} arguments for {len(self.inputs)} inputs")
        for index, (arg, value) in enumerate(zip(block.args, self.inputs, strict=True)):
            if arg.type != value.type:
                raise fail(self, f"body argument #{index} is {arg.type}, input is {value.type}")
        for what, formats, values in (
            ("in_formats", self.in_formats, self.inputs),
            ("out_formats", self.out_formats, self.outputs),
        ):
            if len(formats.data) != len(values):
                raise fail(self, f"'{what}' has {len(formats.data)} entries for {len(values)} values")
            for f in formats.data:
                if f.data not in FORMATS:
                    raise fail(self, f"unknown format '{f.data}' (known: {', '.join(FORMATS)})")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise fail(self, "body must end with 'ascend.kernel.yield'")
        yielded = [v.type for v in terminator.values]
        if yielded != [r.type for r in self.outputs]:
            raise fail(self, "yielded types do not match the kernel's result types")
        for op in block.ops:
            if op is not terminator and not op.name.startswith("ascend.graph."):
                raise fail(self, f"a kernel body holds graph ops only, found '{op.name}'")


@irdl_op_definition
class CubeKernelOp(KernelOp):
    """A kernel on the cube unit (matrix products and convolutions).

    ```
    %y = ascend.kernel.cube(%x, %w) {in_formats = ["NCHW", "NCHW"], out_formats = ["NCHW"]}
        : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
    ^bb0(%a : tensor<1x3x8x8xf32>, %b : tensor<4x3x3x3xf32>):
      %c = ascend.graph.conv2d %a, %b : (...) -> tensor<1x4x6x6xf32>
      ascend.kernel.yield %c : tensor<1x4x6x6xf32>
    }
    ```
    """

    name = "ascend.kernel.cube"
    UNIT: ClassVar[str] = "cube"


@irdl_op_definition
class VectorKernelOp(KernelOp):
    """A kernel on the vector unit (elementwise ops, reductions, pooling, data movement).

    ```
    %y = ascend.kernel.vector(%x) {in_formats = ["ND"], out_formats = ["ND"]}
        : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a : tensor<4xf32>):
      %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
      ascend.kernel.yield %r : tensor<4xf32>
    }
    ```
    """

    name = "ascend.kernel.vector"
    UNIT: ClassVar[str] = "vector"


@irdl_op_definition
class AiCpuKernelOp(KernelOp):
    """A kernel on the AI CPU: ops the AI Core cannot run (float64 or int64 arithmetic,
    value-dependent shapes). Slow and scalar, but real.

    ```
    %y = ascend.kernel.aicpu(%x) {in_formats = ["ND"], out_formats = ["ND"]}
        : (tensor<4xf64>) -> tensor<4xf64> {
    ^bb0(%a : tensor<4xf64>):
      %r = ascend.graph.relu %a : (tensor<4xf64>) -> tensor<4xf64>
      ascend.kernel.yield %r : tensor<4xf64>
    }
    ```
    """

    name = "ascend.kernel.aicpu"
    UNIT: ClassVar[str] = "aicpu"


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Returns a kernel body's results: `ascend.kernel.yield %r : tensor<4xf32>`."""

    name = "ascend.kernel.yield"

    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(CubeKernelOp, VectorKernelOp, AiCpuKernelOp), Pure())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])


KERNEL_OPS = (CubeKernelOp, VectorKernelOp, AiCpuKernelOp, YieldOp)
KERNEL_BY_UNIT: dict[str, type[KernelOp]] = {
    "cube": CubeKernelOp,
    "vector": VectorKernelOp,
    "aicpu": AiCpuKernelOp,
}

Kernel = Dialect("ascend.kernel", list(KERNEL_OPS), [])
