"""Converters of data-movement operators and constants."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from ge.dialects import graph as ops
from ge.dialects.common import int_attr, ints_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node


def _reshape(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    if node.opset < 5 or "shape" in node.attrs:
        raise node.fail("the 'shape' attribute form of Reshape is not supported")
    target = node.value(1)
    shape = [int(d) for d in target.reshape(-1)]
    if not node.attr("allowzero", 0):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return [imp.g.add_reshape(x, shape, node.name)]


def _flatten(imp: Importer, node: Node) -> list[Tensor]:
    axis = int(node.attr("axis", 1))
    return [imp.g.add_op(ops.FlattenOp, [node.inputs[0]], {"axis": int_attr(axis)}, node.name)]


def _transpose(imp: Importer, node: Node) -> list[Tensor]:
    x = node.inputs[0]
    perm = node.attr("perm", list(reversed(range(len(x.shape)))))
    return [imp.g.add_op(ops.TransposeOp, [x], {"perm": ints_attr(perm)}, node.name)]


def _concat(imp: Importer, node: Node) -> list[Tensor]:
    if "axis" not in node.attrs:
        raise node.invalid("Concat needs an 'axis' attribute")
    return [imp.g.add_concat([t for t in node.inputs if t is not None], int(node.attr("axis")), node.name)]


def _constant(imp: Importer, node: Node) -> list[np.ndarray]:
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in node.attrs:
            value = node.attrs[key]
            if key == "value":
                return [numpy_helper.to_array(value)]
            dtype = np.float32 if "float" in key else np.int64
            return [np.asarray(value, dtype=dtype)]
    raise node.fail("only tensor, float(s) and int(s) values of Constant are supported")


def _constant_of_shape(imp: Importer, node: Node) -> list[Tensor]:
    shape = node.value(0)
    value = node.attr("value")
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
    dims = [int(d) for d in shape.reshape(-1)]
    return [imp.g.add_splat(fill[0].item(), dims, fill.dtype.name, node.name)]


CONVERTERS: dict[str, Converter] = {
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Transpose": _transpose,
    "Concat": _concat,
    "Constant": _constant,
    "ConstantOfShape": _constant_of_shape,
}
