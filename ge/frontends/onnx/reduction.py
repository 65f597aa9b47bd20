"""Converters of reductions, softmax and its relatives, and normalizations."""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import int_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node


def _softmax(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    if node.opset >= 13:
        axis = int(node.attr("axis", -1))
        return [imp.g.add_op(ops.SoftmaxOp, [x], {"axis": int_attr(axis)}, node.name)]
    # Before opset 13, Softmax normalizes the input flattened to 2-D at `axis`.
    axis = int(node.attr("axis", 1))
    rank = len(x.shape)
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        return [imp.g.add_op(ops.SoftmaxOp, [x], {"axis": int_attr(-1)}, node.name)]
    rows = int(np.prod(x.shape[:axis]))
    flat = imp.g.add_reshape(x, [rows, -1], f"{node.name}.flatten")
    y = imp.g.add_op(ops.SoftmaxOp, [flat], {"axis": int_attr(1)}, node.name)
    return [imp.g.add_reshape(y, list(x.shape), f"{node.name}.unflatten")]


CONVERTERS: dict[str, Converter] = {
    "Softmax": _softmax,
}
