"""Converters of elementwise operators."""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.graph import Tensor

from .importer import Converter, Importer, Node


def _binary(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        return [imp.g.add_op(op_class, node.inputs[:2], None, node.name)]

    return convert


def _relu(imp: Importer, node: Node) -> list[Tensor]:
    return [imp.g.add_op(ops.ReluOp, [node.inputs[0]], None, node.name)]


def _identity(imp: Importer, node: Node) -> list[Tensor | np.ndarray]:
    known = node.known[0]
    return [known if known is not None else node.inputs[0]]


def _dropout(imp: Importer, node: Node) -> list[Tensor | np.ndarray]:
    if len(node.proto.output) > 1 and node.proto.output[1]:
        raise node.fail("the 'mask' output of Dropout is not supported")
    training = node.attr("is_test", 1) == 0 if node.opset < 7 else False
    if node.has_input(2):
        training = bool(node.value(2))
    if training:
        raise node.fail("training_mode=1 (random dropout) is not supported")
    return _identity(imp, node)


CONVERTERS: dict[str, Converter] = {
    "Add": _binary(ops.AddOp),
    "Sub": _binary(ops.SubOp),
    "Mul": _binary(ops.MulOp),
    "Div": _binary(ops.DivOp),
    "Relu": _relu,
    "Identity": _identity,
    "Dropout": _dropout,
}
