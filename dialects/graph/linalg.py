"""Linear algebra the AI Core has no kernel for: `det`, which runs on the AI CPU."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from .base import DYN, GraphOp
from .elementwise import element_kind
from .traits import NeedsAiCpu


@irdl_op_definition
class DetOp(GraphOp):
    """The determinant of each square matrix of the last two axes (LU factorization in float64).

    `%d = ascend.graph.det %x : (tensor<2x3x3xf32>) -> tensor<2xf32>`
    """

    name = "ascend.graph.det"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure(), NeedsAiCpu())

    @classmethod
    def infer(cls, operand_types, props, where):
        t = operand_types[0]
        shape = t.get_shape()
        if element_kind(t.element_type) != "float":
            raise ValueError(f"det needs floats, got {t.element_type}")
        if len(shape) < 2 or DYN not in shape[-2:] and shape[-1] != shape[-2]:
            raise ValueError(f"det needs square matrices in the last two axes, got {list(shape)}")
        return TensorType(t.element_type, shape[:-2])


OPS = (DetOp,)
