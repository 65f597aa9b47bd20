"""Constants: inline dense data, weight-store resources and splats."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure

from ..common import fail
from ..formats import FormatAttr
from ..verify import LocalVerifier
from .base import (
    DYN,
    FRAMEWORK_LEVEL,
    Reinfers,
    shape_error,
)
from .traits import ComputesNothing

# --------------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------------

ConstValue = DenseIntOrFPElementsAttr | DenseResourceAttr | FloatAttr | IntegerAttr


@irdl_op_definition
class ConstOp(Reinfers, LocalVerifier, IRDLOperation, HasFolderInterface):
    """A constant tensor: inline `dense` data (small), a `dense_resource` key into the weight
    store (weights), or a `splat` scalar repeated over the shape (never materialized).

    ```
    %b = ascend.graph.const dense<[1.0, 2.0]> : tensor<2xf32>
    %w = ascend.graph.const dense_resource<conv1.weight> : tensor<64x3x7x7xf32>
    %z = ascend.graph.const splat<2.000000e-02 : f32> : tensor<64x3x7x7xf32>
    ```
    """

    name = "ascend.graph.const"

    value = prop_def(ConstValue)
    result = result_def(TensorType)

    traits = traits_def(Pure(), ConstantLike(), ComputesNothing())

    def __init__(self, value: Attribute, result_type: TensorType | None = None):
        result: Attribute | None = result_type
        if result is None:
            assert isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr)
            result = value.type  # the verifier checks that it is a tensor type
        super().__init__(result_types=[result], properties={"value": value})

    @property
    def is_splat(self) -> bool:
        return isinstance(self.value, FloatAttr | IntegerAttr)

    def fold(self) -> Sequence[SSAValue | Attribute]:
        return (self.value,)

    def reinfer(
        self, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
    ) -> list[TensorType]:
        """A constant has no operands: its type stays."""
        return [self.result.type]

    def verify_(self) -> None:
        result = self.result.type
        if (error := shape_error(result)) is not None:
            raise fail(self, error)
        if DYN in result.get_shape():
            raise fail(self, f"a constant needs a static shape, got {result}")
        if isinstance(result.encoding, FormatAttr):
            raise fail(self, f"result is {result}: {FRAMEWORK_LEVEL}")
        if isinstance(self.value, FloatAttr | IntegerAttr):
            if self.value.type != result.element_type:
                raise fail(
                    self,
                    f"splat of {self.value.type} cannot fill a tensor of {result.element_type}",
                )
        elif self.value.type != result:
            raise fail(self, f"value of type {self.value.type} does not match result {result}")

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        if isinstance(self.value, FloatAttr | IntegerAttr):
            printer.print_string("splat<")
            printer.print_attribute(self.value)
            printer.print_string("> : ")
            printer.print_attribute(self.result.type)
        else:
            printer.print_attribute(self.value)

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        attributes = parser.parse_optional_attr_dict()
        if parser.parse_optional_keyword("splat") is not None:
            parser.parse_punctuation("<")
            scalar = parser.parse_attribute()
            parser.parse_punctuation(">")
            parser.parse_punctuation(":")
            result_type = parser.parse_type()
            if not isinstance(scalar, FloatAttr | IntegerAttr):
                parser.raise_error("splat needs a typed scalar such as '1.0 : f32'")
            if not isinstance(result_type, TensorType):
                parser.raise_error("a constant's type must be a tensor")
            op = cls(scalar, result_type)
        else:
            value = parser.parse_attribute()
            if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
                parser.raise_error("expected dense<...>, dense_resource<...> or splat<...>")
            if not isinstance(value.type, TensorType):
                parser.raise_error("a constant's type must be a tensor")
            op = cls(value)
        op.attributes.update(attributes)
        return op


OPS = (ConstOp,)
