"""Converter of ONNX Det into `ascend.graph.det`, an AI CPU op (LU factorization in float64)."""

from __future__ import annotations

from ge.dialects import graph as ops
from ge.graph import Tensor

from .importer import Converter, Importer, Node


def _det(imp: Importer, node: Node) -> list[Tensor]:
    """Float inputs of shape [..., M, M]."""
    return [imp.g.add_op(ops.DetOp, [node.input(0)], None, node.name)]


CONVERTERS: dict[str, Converter] = {"Det": _det}
