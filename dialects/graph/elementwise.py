"""Elementwise ops: arithmetic, activations and casts."""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import (
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from ..common import fail
from .base import (
    GraphOp,
    MovesData,
    broadcast_shapes,
    compatible,
    same_elements,
    tensor_type,
)

# --------------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------------


class BinaryElementwiseOp(GraphOp, ABC):
    """Elementwise op on two tensors of one element type, with numpy broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        element = same_elements(operand_types, "operands")
        shape = broadcast_shapes(operand_types[0].get_shape(), operand_types[1].get_shape())
        return TensorType(element, shape)


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    """`%c = ascend.graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.add"


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    """`%c = ascend.graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.sub"


@irdl_op_definition
class MulOp(BinaryElementwiseOp):
    """`%c = ascend.graph.mul %a, %b : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.mul"


@irdl_op_definition
class DivOp(BinaryElementwiseOp):
    """`%c = ascend.graph.div %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.div"


class UnaryElementwiseOp(GraphOp, ABC):
    """Elementwise op on one tensor; the result has the operand's type."""

    input = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        return operand_types[0]


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    """`%y = ascend.graph.relu %x : (tensor<1x64xf32>) -> tensor<1x64xf32>`"""

    name = "ascend.graph.relu"


@irdl_op_definition
class CastOp(IRDLOperation):
    """Converts elements to the result's element type (round to nearest even for floats).

    `%y = ascend.graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf16>`
    """

    name = "ascend.graph.cast"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure(), MovesData())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, element_type: Attribute):
        shape = tensor_type(input.type).get_shape()
        super().__init__(operands=[input], result_types=[TensorType(element_type, shape)])

    def verify_(self) -> None:
        if not compatible(
            self.result.type, TensorType(self.result.type.element_type, self.input.type.get_shape())
        ):
            raise fail(self, f"cast keeps the shape: {self.input.type} cannot become {self.result.type}")


OPS = (AddOp, SubOp, MulOp, DivOp, ReluOp, CastOp)
