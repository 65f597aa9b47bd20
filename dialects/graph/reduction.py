"""Reductions and the ops built on them: softmax and its relatives, normalizations."""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def

from .base import GraphOp, normalize_axis, prop_int


@irdl_op_definition
class SoftmaxOp(GraphOp):
    """Softmax along one axis (ONNX opset >= 13 semantics).

    `%y = ascend.graph.softmax %x {axis = -1 : i64} : (tensor<1x10xf32>) -> tensor<1x10xf32>`
    """

    name = "ascend.graph.softmax"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        normalize_axis(prop_int(props, "axis", -1), len(operand_types[0].get_shape()))
        return operand_types[0]


OPS = (SoftmaxOp,)
