"""Data movement: reshape, flatten, transpose, concat."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import SSAValue
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
from xdsl.traits import Pure

from ..common import fail, get_ints
from .base import (
    DYN,
    GraphOp,
    MovesData,
    ShapeFoldMixin,
    normalize_axis,
    product,
    prop_int,
    same_elements,
    tensor_type,
)


@irdl_op_definition
class ReshapeOp(ShapeFoldMixin, IRDLOperation):
    """A new shape over the same elements in the same (row-major) order; the result type says it.

    `%y = ascend.graph.reshape %x : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>`
    """

    name = "ascend.graph.reshape"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure(), MovesData())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        element = tensor_type(input.type).element_type
        super().__init__(operands=[input], result_types=[TensorType(element, shape)])

    def verify_(self) -> None:
        source, result = self.input.type, self.result.type
        if source.element_type != result.element_type:
            raise fail(self, f"cannot reshape {source.element_type} into {result.element_type}")
        a, b = source.get_shape(), result.get_shape()
        if DYN not in a + b and math.prod(a) != math.prod(b):
            raise fail(
                self,
                f"cannot reshape {math.prod(a)} elements {list(a)} into {math.prod(b)} {list(b)}",
            )


@irdl_op_definition
class FlattenOp(ShapeFoldMixin, GraphOp):
    """Collapses dimensions before `axis` into one and the rest into another (ONNX Flatten).

    `%y = ascend.graph.flatten %x {axis = 1 : i64} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>`
    """

    name = "ascend.graph.flatten"
    traits = traits_def(Pure(), MovesData())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0].get_shape()
        given = prop_int(props, "axis", 1)
        axis = given + len(x) if given < 0 else given
        if not 0 <= axis <= len(x):
            raise ValueError(f"axis {given} is out of range for rank {len(x)}")
        return TensorType(operand_types[0].element_type, (product(x[:axis]), product(x[axis:])))


@irdl_op_definition
class TransposeOp(ShapeFoldMixin, GraphOp):
    """Permutes dimensions: result dimension i is input dimension perm[i].

    `%y = ascend.graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>`
    """

    name = "ascend.graph.transpose"
    traits = traits_def(Pure(), MovesData())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    perm = prop_def(DenseArrayBase)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0].get_shape()
        perm = props.get("perm")
        if not isinstance(perm, DenseArrayBase):
            raise ValueError("missing 'perm'")
        order = tuple(int(v) for v in perm.get_values())
        if sorted(order) != list(range(len(x))):
            raise ValueError(f"perm {list(order)} is not a permutation of {len(x)} dimensions")
        return TensorType(operand_types[0].element_type, tuple(x[i] for i in order))

    def is_identity(self) -> bool:
        return list(get_ints(self, "perm")) == list(range(len(get_ints(self, "perm"))))


@irdl_op_definition
class ConcatOp(GraphOp):
    """Joins tensors along `axis`; all other dimensions must agree.

    ```
    %y = ascend.graph.concat %a, %b {axis = 1 : i64}
        : (tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x48x8x8xf32>
    ```
    """

    name = "ascend.graph.concat"
    traits = traits_def(Pure(), MovesData())

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        if not operand_types:
            raise ValueError("concat needs at least one input")
        element = same_elements(operand_types, "inputs")
        first = operand_types[0].get_shape()
        axis = normalize_axis(prop_int(props, "axis", 0), len(first))
        total = 0
        for t in operand_types:
            shape = t.get_shape()
            if len(shape) != len(first) or any(
                i != axis and DYN not in (a, b) and a != b
                for i, (a, b) in enumerate(zip(shape, first, strict=True))
            ):
                raise ValueError(f"input shape {list(shape)} does not match {list(first)} off axis {axis}")
            total = DYN if DYN in (total, shape[axis]) else total + shape[axis]
        return TensorType(element, first[:axis] + (total,) + first[axis + 1 :])


OPS = (ReshapeOp, FlattenOp, TransposeOp, ConcatOp)
