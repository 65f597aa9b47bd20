"""Converter of ONNX BitCast (opset 26) into `ascend.graph.bitcast`: the same bytes read as
another element type of the same width (strings and sub-byte types are refused)."""

from __future__ import annotations

from ge.dialects import graph as ops
from ge.dialects.graph.reinterpret import storage_bits
from ge.dtypes import element_type
from ge.graph import Tensor

from .importer import Converter, Importer, Node


def _bitcast(imp: Importer, node: Node) -> list[Tensor]:
    """Types of whole bytes (booleans count as one); sub-byte types are refused."""
    x = node.input(0)
    target = node.dtype("to")
    source_bits, target_bits = (storage_bits(element_type(t)) for t in (x.dtype, target))
    if source_bits is None or target_bits is None:
        error = node.fail(f"reinterpreting {x.dtype} as {target} (whole-byte types only)")
        error.category = "dtype"
        raise error
    if source_bits != target_bits:
        raise node.invalid(
            f"{x.dtype} ({source_bits} bits) and {target} ({target_bits} bits) differ in width"
        )
    if x.dtype == target:
        return [x]
    return [imp.g.add_op(ops.BitCastOp, [x], {"to": element_type(target)}, node.name)]


CONVERTERS: dict[str, Converter] = {"BitCast": _bitcast}
