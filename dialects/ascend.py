"""The umbrella `ascend` dialect.

xDSL resolves an op name by its first dot, so `ascend.graph.add` belongs to a dialect named
`ascend` as far as folding is concerned: this dialect carries the constant materialization that
turns a folded value into an `ascend.graph.const`, and the attributes the three levels share.
"""

from __future__ import annotations

from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, Dialect, Operation

from .common import TargetAttr
from .formats import FormatAttr
from .graph import ConstOp


class AscendConstantMaterialization(ConstantMaterializationInterface):
    """A folded tensor value becomes an `ascend.graph.const`; a scalar becomes a splat."""

    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation | None:
        if not isinstance(type, TensorType):
            return None
        if isinstance(value, FloatAttr | IntegerAttr) and value.type == type.element_type:
            return ConstOp(value, type)
        if isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr) and value.type == type:
            return ConstOp(value)
        return None


Ascend = Dialect("ascend", [], [TargetAttr, FormatAttr], [AscendConstantMaterialization()])
