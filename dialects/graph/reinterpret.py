"""`bitcast`: the bytes of a tensor read as another element type of the same width.

Nothing is computed and nothing moves but the bytes themselves (`MovesData`), so it runs on any
unit; booleans count as 8 bits, as they are stored.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, TypeAttribute
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from .base import GraphOp
from .elementwise import element_kind
from .traits import MovesData


@irdl_op_definition
class BitCastOp(GraphOp):
    """The input's bytes (little endian) as elements of type `to`, of the same storage width.

    `%y = ascend.graph.bitcast %x {to = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>`
    """

    name = "ascend.graph.bitcast"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    to = prop_def(TypeAttribute)

    traits = traits_def(Pure(), MovesData())

    @classmethod
    def infer(cls, operand_types, props, where):
        source, target = operand_types[0].element_type, props.get("to")
        if not isinstance(target, TypeAttribute):
            raise ValueError("'to' must be an element type")
        widths = [storage_bits(t) for t in (source, target)]
        if None in widths or widths[0] != widths[1]:
            raise ValueError(f"cannot reinterpret {source} as {target}: their storage widths differ")
        return TensorType(target, operand_types[0].get_shape())


def storage_bits(element: Attribute) -> int | None:
    """The bits one element occupies (8 for i1), or None for what has no whole-byte width."""
    kind = element_kind(element)
    if kind == "bool":
        return 8
    if kind in ("float", "signed", "unsigned", "narrow"):
        bits = element.bitwidth if isinstance(element, IntegerType) else getattr(element, "bitwidth", None)
        return bits if bits is not None and bits % 8 == 0 else None
    return None


OPS = (BitCastOp,)
