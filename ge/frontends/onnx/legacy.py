"""Attribute forms of opsets 6 to 8 that later opsets dropped, mapped onto today's forms, and the
operators of opsets 1 to 5 that are already their opset-6 selves.

Converters implement each operator for opset 9 and later; `upgrade` runs first for an older
node and either rewrites its legacy form (the `broadcast`/`axis` attributes of binary ops before
opset 7) or refuses it (training-mode batch normalization, `spatial=0`), and gives PRelu's per-channel
slope of opset 6 its axis. A model of opset 1 to 5 imports when every operator it uses has the
schema it has in opset 6 (`changed_since`; opset 6 changed most, dropping `consumed_inputs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import onnx

if TYPE_CHECKING:
    from .importer import Converter, ConverterResults, Importer, Node

LEGACY_BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"}
"""Before opset 7 these broadcast only when asked, and then B aligns with A at `axis`."""


def upgraded(converter: Converter) -> Converter:
    """`converter`, run after `upgrade` has brought its node to today's form."""

    def convert(imp: Importer, node: Node) -> ConverterResults:
        upgrade(imp, node)
        return converter(imp, node)

    return convert


def upgrade(imp: Importer, node: Node) -> None:
    if node.opset >= 9:
        return
    if node.op_type in LEGACY_BROADCAST and node.opset < 7:
        _legacy_broadcast(imp, node)
    elif node.op_type == "PRelu" and node.opset < 7:
        # Before opset 7 a one-dimensional slope holds one value per channel (axis 1).
        x, slope = node.input(0), node.input(1)
        if len(slope.shape) == 1 and slope.shape[0] > 1 and len(x.shape) > 2 and slope.shape[0] == x.shape[1]:
            shape = [slope.shape[0], *([1] * (len(x.shape) - 2))]
            node.inputs[1] = imp.g.add_reshape(slope, shape, f"{node.name}.per_channel")
            node.known[1] = None
    elif node.op_type == "BatchNormalization":
        if node.opset < 7 and not node.pop_attr("is_test", 0):
            raise node.fail("is_test=0 (training) is not supported")
        if not node.pop_attr("spatial", 1):
            raise node.fail("spatial=0 (per-activation statistics) is not supported")


def changed_since(graph: onnx.GraphProto, opset: int, newer: int, prefix: str = "") -> list[dict]:
    """The default-domain nodes of `graph` and its subgraphs whose operator at `opset` is not the
    one of opset `newer` (another schema version, or none yet)."""
    found = []
    for index, node in enumerate(graph.node):
        name = prefix + (node.name or f"{node.op_type}_{index}")
        if node.domain in ("", "ai.onnx"):
            old, new = _schema_version(node.op_type, opset), _schema_version(node.op_type, newer)
            if old is None or old != new:
                what = (
                    f"its opset-{opset} form (version {old}) is not its opset-{newer} form (version {new})"
                    if old
                    else f"it is not defined at opset {opset}"
                )
                found.append(
                    {
                        "op_type": node.op_type,
                        "domain": "ai.onnx",
                        "opset": opset,
                        "node": name,
                        "missing": what,
                    }
                )
        for attribute in node.attribute:
            for subgraph in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                found += changed_since(subgraph, opset, newer, f"{name}/")
    return found


def _schema_version(op_type: str, opset: int) -> int | None:
    try:
        return onnx.defs.get_schema(op_type, opset).since_version
    except onnx.defs.SchemaError:
        return None


def _legacy_broadcast(imp: Importer, node: Node) -> None:
    broadcast = int(node.pop_attr("broadcast", 0))
    axis = node.pop_attr("axis", None)
    a, b = node.input(0), node.input(1)
    if not broadcast:
        if a.shape != b.shape:
            raise node.invalid(f"without broadcast=1 the shapes must be equal, got {a.shape} and {b.shape}")
        return
    rank_a, rank_b = len(a.shape), len(b.shape)
    start = rank_a - rank_b if axis is None else int(axis) % max(rank_a, 1)
    if start + rank_b > rank_a or any(db not in (1, a.shape[start + i]) for i, db in enumerate(b.shape)):
        raise node.invalid(
            f"B of shape {list(b.shape)} does not align with A {list(a.shape)} at axis {start}"
        )
    # B aligned at `start` is B with trailing ones, which numpy broadcasting then aligns.
    shape = [*b.shape, *([1] * (rank_a - start - rank_b))]
    if list(shape) != list(b.shape):
        node.inputs[1] = imp.g.add_reshape(b, shape, f"{node.name}.align")
        node.known[1] = None
