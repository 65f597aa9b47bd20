"""The ONNX frontend: an `onnx.ModelProto` into a `ge.Graph` of `ascend.graph` ops.

Each supported operator has one converter, which reads the node's attributes with the semantics
of the model's opset and appends graph ops through the builder. Values known at import time
(initializers, `Constant`, `ConstantOfShape` of a known shape) are tracked so that inputs that
decide shapes (a `Reshape`'s shape) can be read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper

from ge.dialects import graph as ops
from ge.dialects.common import int_attr, ints_attr
from ge.errors import GeError, InvalidModelError, UnsupportedOperatorError
from ge.graph import Graph, Tensor

MIN_OPSET = 9
MAX_OPSET = onnx.defs.onnx_opset_version()
DEFAULT_DOMAINS = ("", "ai.onnx")


def load_model(source: str | Path | bytes | onnx.ModelProto) -> onnx.ModelProto:
    """Reads a model from a path, serialized bytes or a `ModelProto`."""
    if isinstance(source, onnx.ModelProto):
        return source
    try:
        if isinstance(source, bytes | bytearray):
            return onnx.load_from_string(bytes(source))
        return onnx.load(str(source))
    except FileNotFoundError:
        raise InvalidModelError(f"ONNX model '{source}' does not exist") from None
    except (DecodeError, ValueError, RuntimeError, OSError) as error:
        what = "the given bytes" if isinstance(source, bytes | bytearray) else f"'{source}'"
        raise InvalidModelError(f"{what} is not a valid ONNX model: {error}") from None


def import_onnx(source: str | Path | bytes | onnx.ModelProto) -> Graph:
    model = load_model(source)
    opset = _default_opset(model)
    graph = model.graph
    _check_supported(graph, opset)
    return _Importer(opset).run(graph)


def _default_opset(model: onnx.ModelProto) -> int:
    versions = [o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS]
    if not versions:
        raise InvalidModelError("the model imports no version of the default ONNX domain")
    opset = versions[0]
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise UnsupportedOperatorError(
            f"opset {opset} is outside the supported range {MIN_OPSET} to {MAX_OPSET}"
        )
    return opset


def _check_supported(graph: onnx.GraphProto, opset: int) -> None:
    """Raises one error listing every node whose operator has no converter."""
    unsupported = []
    for index, node in enumerate(graph.node):
        if node.domain not in DEFAULT_DOMAINS or node.op_type not in CONVERTERS:
            unsupported.append(
                {
                    "op_type": node.op_type,
                    "domain": node.domain or "ai.onnx",
                    "opset": opset,
                    "node": node.name or f"{node.op_type}_{index}",
                }
            )
    if unsupported:
        kinds = sorted({f"{u['domain']}::{u['op_type']}" for u in unsupported})
        lines = [
            f"  {u['op_type']} (domain {u['domain']}, opset {opset}) at node '{u['node']}'"
            for u in unsupported
        ]
        raise UnsupportedOperatorError(
            f"{len(unsupported)} node(s) use operators ge does not support "
            f"({', '.join(kinds)}):\n" + "\n".join(lines),
            unsupported,
        )


@dataclass
class _Node:
    """What a converter sees: the node, its inputs as graph values and known constants."""

    proto: onnx.NodeProto
    name: str
    opset: int
    inputs: list[Tensor | None]
    known: list[np.ndarray | None]
    attrs: dict[str, object] = field(default_factory=dict)

    def attr(self, key: str, default: object = None) -> object:
        return self.attrs.get(key, default)

    def fail(self, what: str) -> UnsupportedOperatorError:
        return UnsupportedOperatorError(
            f"{self.proto.op_type} (opset {self.opset}) at node '{self.name}': {what}",
            [
                {
                    "op_type": self.proto.op_type,
                    "domain": "ai.onnx",
                    "opset": self.opset,
                    "node": self.name,
                    "missing": what,
                }
            ],
        )

    def invalid(self, what: str) -> InvalidModelError:
        return InvalidModelError(f"{self.proto.op_type} at node '{self.name}': {what}")


class _Importer:
    def __init__(self, opset: int):
        self.opset = opset
        self.g = Graph()
        self.values: dict[str, Tensor] = {}
        self.known: dict[str, np.ndarray] = {}

    def run(self, graph: onnx.GraphProto) -> Graph:
        for init in graph.initializer:
            self._constant(init.name, numpy_helper.to_array(init))
        for value_info in graph.input:
            if value_info.name not in self.values:
                shape, dtype = _value_type(value_info)
                self.values[value_info.name] = self.g.add_input(value_info.name, shape, dtype)
        for index, node in enumerate(graph.node):
            self._convert(node, node.name or f"{node.op_type}_{index}")
        for output in graph.output:
            if output.name not in self.values:
                raise InvalidModelError(f"graph output '{output.name}' is produced by no node")
            self.g.add_output(self.values[output.name], output.name)
        return self.g

    def _constant(self, name: str, array: np.ndarray) -> None:
        self.known[name] = array
        self.values[name] = self.g.add_constant(array, name)

    def _convert(self, proto: onnx.NodeProto, name: str) -> None:
        inputs, known = [], []
        for input_name in proto.input:
            if not input_name:
                inputs.append(None)
                known.append(None)
                continue
            if input_name not in self.values:
                raise InvalidModelError(
                    f"{proto.op_type} at node '{name}' reads '{input_name}', which nothing defines before it"
                )
            inputs.append(self.values[input_name])
            known.append(self.known.get(input_name))
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in proto.attribute}
        node = _Node(proto, name, self.opset, inputs, known, attrs)
        try:
            results = CONVERTERS[proto.op_type](self, node)
        except GeError as error:
            if name in str(error):
                raise
            raise type(error)(f"{proto.op_type} at node '{name}': {error}") from None
        outputs = [o for o in proto.output]
        for index, output in enumerate(outputs):
            if not output:
                continue
            if index >= len(results):
                raise node.fail(f"output #{index} ('{output}') is not supported")
            result = results[index]
            if isinstance(result, np.ndarray):
                self._constant(output, result)
            else:
                self.values[output] = result


def _value_type(value_info: onnx.ValueInfoProto) -> tuple[list[int], str]:
    t = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type"):
        raise UnsupportedOperatorError(f"graph input '{value_info.name}' is not a tensor")
    dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
    shape = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
    name = "bfloat16" if t.elem_type == onnx.TensorProto.BFLOAT16 else np.dtype(dtype).name
    return shape, name


# ------------------------------------------------------------------------------------------------
# Converters: one per operator, reading attributes with the opset's semantics
# ------------------------------------------------------------------------------------------------

Converter = Callable[[_Importer, _Node], Sequence[Tensor | np.ndarray]]


def _binary(op_class: type) -> Converter:
    def convert(imp: _Importer, node: _Node) -> list[Tensor]:
        return [imp.g.add_op(op_class, node.inputs[:2], None, node.name)]

    return convert


def _relu(imp: _Importer, node: _Node) -> list[Tensor]:
    return [imp.g.add_op(ops.ReluOp, [node.inputs[0]], None, node.name)]


def _identity(imp: _Importer, node: _Node) -> list[Tensor | np.ndarray]:
    known = node.known[0]
    return [known if known is not None else node.inputs[0]]


def _dropout(imp: _Importer, node: _Node) -> list[Tensor | np.ndarray]:
    if len(node.proto.output) > 1 and node.proto.output[1]:
        raise node.fail("the 'mask' output of Dropout is not supported")
    if len(node.known) > 2 and node.known[2] is not None and bool(node.known[2]):
        raise node.fail("Dropout in training mode is not supported")
    return _identity(imp, node)


def _matmul(imp: _Importer, node: _Node) -> list[Tensor]:
    return [imp.g.add_op(ops.MatMulOp, node.inputs[:2], None, node.name)]


def _gemm(imp: _Importer, node: _Node) -> list[Tensor]:
    props = {
        "alpha": ops.float_attr(node.attr("alpha", 1.0)),
        "beta": ops.float_attr(node.attr("beta", 1.0)),
        "trans_a": int_attr(int(node.attr("transA", 0))),
        "trans_b": int_attr(int(node.attr("transB", 0))),
    }
    operands = [t for t in node.inputs[:3] if t is not None]
    return [imp.g.add_op(ops.GemmOp, operands, props, node.name)]


def _spatial(node: _Node, x: Tensor, kernel: Sequence[int]) -> dict[str, tuple[int, ...]]:
    """strides, dilations and explicit [top, left, bottom, right] pads, auto_pad resolved."""
    if len(kernel) != 2 or len(x.shape) != 4:
        raise node.fail(f"only 2-D windows over NCHW input are supported (kernel {list(kernel)})")
    strides = tuple(node.attr("strides", [1, 1]))
    dilations = tuple(node.attr("dilations", [1, 1]))
    auto_pad = node.attr("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad)
    pads = tuple(node.attr("pads", [0, 0, 0, 0]))
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads_begin, pads_end = [], []
        for axis in range(2):
            size = x.shape[2 + axis]
            if size < 0:
                raise node.fail("auto_pad needs static spatial dimensions")
            out = math.ceil(size / strides[axis])
            total = max(0, (out - 1) * strides[axis] + (kernel[axis] - 1) * dilations[axis] + 1 - size)
            small, large = total // 2, total - total // 2
            begin = small if auto_pad == "SAME_UPPER" else large
            pads_begin.append(begin)
            pads_end.append(total - begin)
        pads = (*pads_begin, *pads_end)
    elif auto_pad == "VALID":
        pads = (0, 0, 0, 0)
    elif auto_pad != "NOTSET":
        raise node.invalid(f"unknown auto_pad '{auto_pad}'")
    return {"strides": strides, "dilations": dilations, "pads": pads}


def _conv(imp: _Importer, node: _Node) -> list[Tensor]:
    x, w = node.inputs[0], node.inputs[1]
    kernel = tuple(node.attr("kernel_shape", w.shape[2:]))
    if tuple(kernel) != tuple(w.shape[2:]):
        raise node.invalid(f"kernel_shape {list(kernel)} disagrees with the weight {list(w.shape)}")
    s = _spatial(node, x, kernel)
    props = {
        "strides": ints_attr(s["strides"]),
        "pads": ints_attr(s["pads"]),
        "dilations": ints_attr(s["dilations"]),
        "groups": int_attr(int(node.attr("group", 1))),
    }
    operands = [t for t in node.inputs[:3] if t is not None]
    return [imp.g.add_op(ops.Conv2DOp, operands, props, node.name)]


def _batch_norm(imp: _Importer, node: _Node) -> list[Tensor]:
    if node.attr("training_mode", 0):
        raise node.fail("training_mode=1 is not supported")
    if node.opset < 9 and not node.attr("spatial", 1):
        raise node.fail("spatial=0 is not supported")
    if any(o for o in node.proto.output[1:]):
        raise node.fail("running mean/var outputs (training) are not supported")
    props = {"epsilon": ops.float_attr(node.attr("epsilon", 1e-5))}
    return [imp.g.add_op(ops.BatchNormOp, node.inputs[:5], props, node.name)]


def _pool(op_class: type) -> Converter:
    def convert(imp: _Importer, node: _Node) -> list[Tensor]:
        x = node.inputs[0]
        if any(o for o in node.proto.output[1:]):
            raise node.fail("the 'Indices' output of MaxPool is not supported")
        if node.attr("storage_order", 0):
            raise node.fail("storage_order=1 is not supported")
        kernel = tuple(node.attr("kernel_shape", ()))
        s = _spatial(node, x, kernel)
        props = {
            "kernel_shape": ints_attr(kernel),
            "strides": ints_attr(s["strides"]),
            "pads": ints_attr(s["pads"]),
            "ceil_mode": int_attr(int(node.attr("ceil_mode", 0))),
        }
        if op_class is ops.MaxPoolOp:
            props["dilations"] = ints_attr(s["dilations"])
        else:
            if s["dilations"] != (1, 1):
                raise node.fail("dilations other than 1 are not supported for AveragePool")
            props["count_include_pad"] = int_attr(int(node.attr("count_include_pad", 0)))
        return [imp.g.add_op(op_class, [x], props, node.name)]

    return convert


def _global_avg_pool(imp: _Importer, node: _Node) -> list[Tensor]:
    return [imp.g.add_op(ops.GlobalAvgPoolOp, [node.inputs[0]], None, node.name)]


def _reshape(imp: _Importer, node: _Node) -> list[Tensor]:
    x = node.inputs[0]
    if node.opset < 5 or "shape" in node.attrs:
        raise node.fail("the 'shape' attribute form of Reshape is not supported")
    target = node.known[1]
    if target is None:
        raise node.fail("a shape computed at run time is not supported yet; the shape must be constant")
    shape = [int(d) for d in target.reshape(-1)]
    if not node.attr("allowzero", 0):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return [imp.g.add_reshape(x, shape, node.name)]


def _flatten(imp: _Importer, node: _Node) -> list[Tensor]:
    axis = int(node.attr("axis", 1))
    return [imp.g.add_op(ops.FlattenOp, [node.inputs[0]], {"axis": int_attr(axis)}, node.name)]


def _transpose(imp: _Importer, node: _Node) -> list[Tensor]:
    x = node.inputs[0]
    perm = node.attr("perm", list(reversed(range(len(x.shape)))))
    return [imp.g.add_op(ops.TransposeOp, [x], {"perm": ints_attr(perm)}, node.name)]


def _softmax(imp: _Importer, node: _Node) -> list[Tensor]:
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


def _concat(imp: _Importer, node: _Node) -> list[Tensor]:
    if "axis" not in node.attrs:
        raise node.invalid("Concat needs an 'axis' attribute")
    return [imp.g.add_concat([t for t in node.inputs if t is not None], int(node.attr("axis")), node.name)]


def _constant(imp: _Importer, node: _Node) -> list[np.ndarray]:
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in node.attrs:
            value = node.attrs[key]
            if key == "value":
                return [numpy_helper.to_array(value)]
            dtype = np.float32 if "float" in key else np.int64
            return [np.asarray(value, dtype=dtype)]
    raise node.fail("only tensor, float(s) and int(s) values of Constant are supported")


def _constant_of_shape(imp: _Importer, node: _Node) -> list[Tensor]:
    shape = node.known[0]
    if shape is None:
        raise node.fail("a shape computed at run time is not supported yet; the shape must be constant")
    value = node.attr("value")
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
    dims = [int(d) for d in shape.reshape(-1)]
    return [imp.g.add_splat(fill[0].item(), dims, fill.dtype.name, node.name)]


CONVERTERS: dict[str, Converter] = {
    "Add": _binary(ops.AddOp),
    "Sub": _binary(ops.SubOp),
    "Mul": _binary(ops.MulOp),
    "Div": _binary(ops.DivOp),
    "Relu": _relu,
    "Identity": _identity,
    "Dropout": _dropout,
    "MatMul": _matmul,
    "Gemm": _gemm,
    "Conv": _conv,
    "BatchNormalization": _batch_norm,
    "MaxPool": _pool(ops.MaxPoolOp),
    "AveragePool": _pool(ops.AvgPoolOp),
    "GlobalAveragePool": _global_avg_pool,
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Transpose": _transpose,
    "Softmax": _softmax,
    "Concat": _concat,
    "Constant": _constant,
    "ConstantOfShape": _constant_of_shape,
}
