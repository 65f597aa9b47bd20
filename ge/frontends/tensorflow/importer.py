"""The TensorFlow importer: walks a frozen GraphDef's nodes in data order, one converter per op.

Converters see a `Node`: its data inputs as graph values, the values known at import time
(constants and everything computed from them, evaluated with the shared op semantics) and its
attributes. Values that decide shapes (a Reshape's shape, a reduction's axes) must be known.

TensorFlow keeps images NHWC; `ascend.graph` convolutions and pools are NCHW. An NHWC op imports
as its NCHW op between two transposes, and the importer remembers, for every NHWC value made by
such a transpose, the NCHW value it came from (`nchw_source`): elementwise ops and reductions on
that value are applied to the NCHW value instead, so the transposes meet back to back and
`ge-simplify` composes them away.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
from xdsl.ir import SSAValue

from ge.dialects import graph as ops
from ge.dialects.common import describe, ints_attr
from ge.dtypes import element_type, numpy_dtype
from ge.errors import GeError, InvalidModelError, UnsupportedOperatorError
from ge.graph import Graph, Tensor, tensor_type
from ge.limits import DEFAULT_MAX_TENSOR_BYTES, check_bytes
from ge.semantics import evaluate

from ..common import AttributeT, converting, invalid_node_error, unsupported_form_error

DATA_FORMATS = {2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}
"""The channels-last and channels-first data formats of 2-D and 3-D ops."""
TO_NCHW = (0, 3, 1, 2)
TO_NHWC = (0, 2, 3, 1)
KNOWN_LIMIT = 1 << 20
"""Values with more elements than this are not evaluated at import time."""

DTYPES = {
    1: "float32",
    2: "float64",
    3: "int32",
    4: "uint8",
    5: "int16",
    6: "int8",
    9: "int64",
    10: "bool",
    14: "bfloat16",
    17: "uint16",
    19: "float16",
    22: "uint32",
    23: "uint64",
}
"""TensorFlow's DataType numbers (types.proto) that ge supports, as dtype names."""

_VALUE_FIELDS = {
    "float32": "float_val",
    "float64": "double_val",
    "int32": "int_val",
    "uint8": "int_val",
    "int16": "int_val",
    "int8": "int_val",
    "uint16": "int_val",
    "int64": "int64_val",
    "bool": "bool_val",
    "float16": "half_val",
    "bfloat16": "half_val",
    "uint32": "uint32_val",
    "uint64": "uint64_val",
}


NodeDef = Any
"""TensorFlow's NodeDef (from TensorBoard's protos): protoc's classes come without type stubs."""


class _Dead:
    """The value of a Switch's untaken output, and of every op that reads one."""

    def __repr__(self) -> str:
        return "DEAD"


DEAD = _Dead()

PASSES_LISTS = frozenset(
    {"Identity", "IdentityN", "Enter", "Exit", "NextIteration", "Switch", "Merge"}
    | {"While", "StatelessWhile", "If", "StatelessIf"}
    | {"TensorListGetItem", "TensorListSetItem", "TensorListStack", "TensorListLength"}
)
"""The ops that take a tensor list (an import-time value, see `control`) as an input."""


@dataclass
class Node:
    """What a converter sees of one TensorFlow node."""

    proto: NodeDef
    inputs: list[Tensor]
    known: list[np.ndarray | None]
    importer: Importer
    raw_inputs: list[Any]
    """The inputs as the importer holds them: tensors, tensor lists, DEAD."""

    @property
    def name(self) -> str:
        return self.proto.name

    @property
    def op_type(self) -> str:
        return self.proto.op

    @overload
    def attr(self, key: str) -> Any: ...
    @overload
    def attr(self, key: str, default: AttributeT) -> AttributeT: ...
    def attr(self, key: str, default: object = None) -> Any:
        """The attribute's value as Python data: ints, floats, bytes decoded, lists, dtypes."""
        if key not in self.proto.attr:
            return default
        value = self.proto.attr[key]
        kind = value.WhichOneof("value")
        if kind == "list":
            items = value.list
            for field in ("i", "f", "s", "b", "type"):
                if len(getattr(items, field)):
                    return [v.decode() if isinstance(v, bytes) else v for v in getattr(items, field)]
            return []
        if kind == "s":
            return value.s.decode()
        if kind == "type":
            return self.dtype(key)
        return getattr(value, kind) if kind else default

    def dtype(self, key: str) -> str:
        number = self.proto.attr[key].type
        if number not in DTYPES:
            raise self.fail(f"attribute '{key}' is TensorFlow dtype {number}, which ge does not support")
        return DTYPES[number]

    def value(self, index: int) -> np.ndarray:
        """The value of input `index`, which decides a shape: it must be known at import time."""
        if index >= len(self.known):
            raise self.invalid(f"input #{index} is missing")
        known = self.known[index]
        if known is None:
            raise self.fail(
                f"input #{index} ('{self.proto.input[index]}') decides a shape, so it must be known "
                "when the model is imported (a constant, or computed from constants and static shapes)"
            )
        return known

    def ints(self, index: int) -> list[int]:
        return [int(v) for v in self.value(index).reshape(-1).tolist()]

    def data_format(self, rank: int = 2) -> str:
        """The layout of the node's data around a `rank`-D window (see DATA_FORMATS), channels
        last when the attribute is absent, as TensorFlow's default."""
        last, first = DATA_FORMATS[rank]
        data_format = str(self.attr("data_format", last))
        if data_format not in (last, first):
            raise self.fail(f"data_format '{data_format}' is not supported ({last} and {first} are)")
        return data_format

    def fail(self, what: str) -> UnsupportedOperatorError:
        """An unsupported form of a supported op: names the node and what is missing."""
        return unsupported_form_error(self.op_type, "tensorflow", self.name, what)

    def invalid(self, what: str) -> InvalidModelError:
        return invalid_node_error(self.op_type, self.name, what)


Converter = Callable[["Importer", Node], Sequence[Tensor | np.ndarray | None]]


class Importer:
    """Builds a `Graph` from a GraphDef, one converter call per node."""

    def __init__(
        self,
        converters: Mapping[str, Converter],
        input_shapes: Mapping[str, Sequence[int]] | None = None,
        max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES,
    ):
        self.converters = converters
        self.input_shapes = dict(input_shapes or {})
        """Placeholder shapes given by name, instead of those the GraphDef declares."""
        self.max_tensor_bytes = max_tensor_bytes
        """The most bytes a constant may hold (checked before its values are read)."""
        self.g = Graph()
        self.values: dict[str, Any] = {}
        """Each produced tensor by TensorFlow name (`node:index`); None for an output ge does not make;
        a `control.TensorList` or DEAD for the values of loops."""
        self.functions: dict[str, Any] = {}
        """The GraphDef's library of functions (FunctionDef) by name, which While and If call."""
        self.dead_nodes: set[str] = set()
        """Nodes whose outputs are all dead (they read a dead value)."""
        self.known: dict[SSAValue, np.ndarray] = {}
        self.nchw_source: dict[SSAValue, Tensor] = {}
        """NHWC values made by transposing an NCHW value: that value."""

    # Layout --------------------------------------------------------------------------------

    def to_nchw(self, x: Tensor, name: str) -> Tensor:
        if len(x.shape) != 4:
            raise InvalidModelError(f"node '{name}': an NHWC input must have rank 4, got {list(x.shape)}")
        return self.g.add_transpose(x, list(TO_NCHW), f"{name}.to_nchw")

    def to_nhwc(self, y: Tensor, name: str) -> Tensor:
        x = self.g.add_transpose(y, list(TO_NHWC), f"{name}.to_nhwc")
        self.nchw_source[x.value] = y
        return x

    # Values --------------------------------------------------------------------------------

    def add_constant(self, name: str, array: np.ndarray) -> Tensor:
        tensor = self.g.add_constant(array, name)
        self.known[tensor.value] = np.asarray(array)
        return tensor

    def known_value(self, tensor: Tensor | None) -> np.ndarray | None:
        return self.known.get(tensor.value) if isinstance(tensor, Tensor) else None

    def tensor(self, reference: str, consumer: str) -> Any:
        """The tensor a node input (`name`, `name:index`) names (a tensor list or DEAD in loops)."""
        name = tensor_name(reference)
        if name.rpartition(":")[0] in self.dead_nodes:
            return DEAD
        if name not in self.values:
            raise InvalidModelError(f"node '{consumer}' reads '{reference}', which no node produces")
        value = self.values[name]
        if value is None:
            raise UnsupportedOperatorError(
                f"node '{consumer}' reads '{reference}', an output ge does not import "
                "(only the inference outputs of an op are supported)"
            )
        return value

    def convert(self, proto, label: str | None = None) -> None:
        """Converts one node; `label` names its ops instead of the node's name (a loop's
        iteration). A node reading a dead value is dead, but for Merge, which picks a live one."""
        name = proto.name
        self.dead_nodes.discard(name)
        inputs = [self.tensor(i, name) for i in proto.input if not i.startswith("^")]
        if proto.op != "Merge" and any(t is DEAD for t in inputs):
            self.dead_nodes.add(name)
            return
        if proto.op not in PASSES_LISTS and any(not isinstance(t, Tensor) for t in inputs):
            raise UnsupportedOperatorError(
                f"{proto.op} at node '{name}' reads a tensor list, which ge takes only through the "
                "TensorList ops of a loop"
            )
        if label is not None:
            proto = type(proto).FromString(proto.SerializeToString())
            proto.name = label
        tensors = [t if isinstance(t, Tensor) else None for t in inputs]
        node = Node(proto, tensors, [self.known_value(t) for t in tensors], self, inputs)  # pyright: ignore[reportArgumentType]
        mark = self.g.block.last_op
        with converting(f"{proto.op} at node '{proto.name}'"):
            results = self.converters[proto.op](self, node)
        self._evaluate_known(mark)
        for index, result in enumerate(results):
            if isinstance(result, np.ndarray | np.generic):
                result = self.add_constant(
                    f"{proto.name}:{index}" if index else proto.name, np.asarray(result)
                )
            self.values[f"{name}:{index}"] = result

    def _evaluate_known(self, mark) -> None:
        """Evaluates the ops a converter appended whose operands are all known."""
        op = self.g.block.first_op if mark is None else mark.next_op
        while op is not None:
            if op.results and op.results[0] not in self.known and all(v in self.known for v in op.operands):
                shapes = [tensor_type(r).get_shape() for r in op.results]
                if (
                    all(d >= 0 for s in shapes for d in s)
                    and sum(math.prod(s) for s in shapes) <= KNOWN_LIMIT
                ):
                    try:
                        values = evaluate(op, [self.known[v] for v in op.operands], self.g.weights)
                    except GeError as error:
                        raise InvalidModelError(f"{describe(op)}: {error}") from None
                    for result, value in zip(op.results, values, strict=True):
                        self.known[result] = value
            op = op.next_op


def tensor_name(reference: str) -> str:
    """`name` and `name:0` are the same tensor: the canonical form is `name:index`."""
    name, _, index = reference.partition(":")
    return f"{name}:{index or 0}"


def tensor_array(proto, what: str, max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES) -> np.ndarray:
    """The array a TensorProto holds, from its raw content or its typed value lists (where one
    value, or fewer than the shape holds, fills the rest with the last one, as TensorFlow reads it).
    A shape over `max_tensor_bytes` is refused before anything is filled."""
    if proto.dtype not in DTYPES:
        raise UnsupportedOperatorError(
            f"{what} has TensorFlow dtype {proto.dtype}, which ge does not support", category="dtype"
        )
    dtype = DTYPES[proto.dtype]
    if proto.tensor_shape.unknown_rank or any(d.size < 0 for d in proto.tensor_shape.dim):
        raise InvalidModelError(f"{what} has no static shape")
    shape = [d.size for d in proto.tensor_shape.dim]
    count = math.prod(shape)
    numpy_type = numpy_dtype(element_type(dtype))
    size = count * np.dtype(numpy_type).itemsize
    check_bytes(size, f"shape {shape}", max_tensor_bytes, InvalidModelError, what)
    if proto.tensor_content:
        data = np.frombuffer(proto.tensor_content, dtype=numpy_type)
        if data.size != count:
            raise InvalidModelError(f"{what} holds {data.size} values for shape {shape}")
        return data.reshape(shape).copy()
    values = list(getattr(proto, _VALUE_FIELDS[dtype]))
    if dtype in ("float16", "bfloat16"):  # both keep their bits in half_val
        values = np.array(values, dtype=np.uint16).view(numpy_type)
    values = np.asarray(values, dtype=numpy_type)
    if values.size > count:
        raise InvalidModelError(f"{what} holds {values.size} values for shape {shape}")
    if values.size < count:
        fill = values[-1] if values.size else np.zeros((), numpy_type)
        values = np.concatenate([values, np.full(count - values.size, fill, numpy_type)])
    return values.reshape(shape)


def static_dims(node: Node, x: Tensor) -> list[int]:
    """The dimensions of `x`; a dynamic one (a placeholder's unknown batch) is refused with the
    fix: fixing the placeholder's shape by input_shapes."""
    if any(d < 0 for d in x.shape):
        shown = ", ".join("?" if d < 0 else str(d) for d in x.shape)
        raise node.fail(
            f"needs static dimensions, got [{shown}]: give the placeholders' shapes in input_shapes "
            f"(parse_tensorflow(..., input_shapes={{{_placeholder_hint(node)}}}))"
        )
    return list(x.shape)


def _placeholder_hint(node: Node) -> str:
    """`'name': [...]` for each graph input, the names a user passes in input_shapes."""
    names = node.importer.g.inputs
    return ", ".join(f"'{name}': [...]" for name in names) or "'input': [...]"


def transpose(imp: Importer, x: Tensor, perm: Sequence[int], name: str) -> Tensor:
    return imp.g.add_op(ops.TransposeOp, [x], {"perm": ints_attr(list(perm))}, name)


def add_slice(imp: Importer, name: str, x: Tensor, starts, ends, axes, steps) -> Tensor:
    """`x[starts:ends:steps]` along `axes` (ONNX Slice)."""
    props = {
        "starts": ints_attr(starts),
        "ends": ints_attr(ends),
        "axes": ints_attr(axes),
        "steps": ints_attr(steps),
    }
    return imp.g.add_op(ops.SliceOp, [x], props, name)
