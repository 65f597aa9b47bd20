"""Walks a MINDIR graph and builds a `ge.Graph`: one converter call per primitive node.

MindSpore writes each primitive call as a node whose `op_type` is `REF::<primitive>` (the
primitive, with its attributes, is in `ModelProto.primitives`) and each value node as a
`Constant` node; a call of a sub-graph is `REF::<graph>` with the graph in
`ModelProto.functions`, which is inlined. Values are ge `Tensor`s or Python constants (scalars,
tuples, numpy arrays) that converters read as attributes; a constant becomes a graph constant
only where an op takes it as a tensor. MakeTuple, TupleGetItem, Depend, Load, UpdateState and
Return, and the lists a `construct` builds (make_list, list_getitem), move values around and
build no op.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np

from ge.errors import InvalidModelError, UnsupportedOperatorError
from ge.graph import Graph, Tensor

from ..common import AttributeT, converting, invalid_node_error, unsupported_form_error
from . import mind_ir_pb2 as mind_ir
from .reader import DTYPES, tensor_array
from .values import MONAD, Unreadable, attribute_value

Value = object
"""A `Tensor`, or a constant: a number, bool, string, None, `MONAD`, numpy array or tuple of values."""

REF = "REF::"
MAX_CALL_DEPTH = 64
"""Sub-graph calls nest at most this deep (a deeper nesting is taken for recursion)."""


@dataclass
class Node:
    """What a converter sees of one primitive node."""

    primitive: str
    name: str
    inputs: list[Value]
    attrs: dict[str, object]
    importer: Importer

    def tensor(self, index: int, like: Tensor | None = None) -> Tensor:
        """Input `index` as a tensor: a constant becomes a graph constant (of `like`'s dtype for a
        Python number)."""
        value = self.input(index)
        if isinstance(value, Tensor):
            return value
        return self.importer.constant(value, f"{self.name}.input{index}", like, self)

    def value(self, index: int) -> object:
        """Input `index` as a constant known when the model is imported."""
        value = self.input(index)
        if isinstance(value, Tensor):
            raise self.fail(f"input {index} must be a constant (it decides a shape or an attribute)")
        if isinstance(value, Unreadable):
            raise self.fail(f"input {index} is a {value.kind} value, which ge does not read")
        return value

    def input(self, index: int) -> Value:
        if index >= len(self.inputs):
            raise self.invalid(f"has {len(self.inputs)} inputs, needs at least {index + 1}")
        return self.inputs[index]

    def number(self, value: object, what: str) -> float:
        """A constant number (an epsilon, a slope)."""
        if isinstance(value, np.ndarray) and value.size == 1:
            value = value.reshape(()).item()
        if not isinstance(value, int | float | np.number) or isinstance(value, bool):
            raise self.invalid(f"{what} must be a number, got {value!r:.60}")
        return float(value)

    def ints(self, value: object, what: str) -> list[int]:
        """A constant tuple (or scalar) of integers, such as an axis list or a shape."""
        values = value if isinstance(value, tuple | list) else (value,)
        if isinstance(value, np.ndarray):
            values = value.reshape(-1).tolist()
        integers = [v for v in values if isinstance(v, int | np.integer) and not isinstance(v, bool)]
        if len(integers) != len(values):
            raise self.invalid(f"{what} must be integers, got {value!r:.60}")
        return [int(v) for v in integers]

    @overload
    def attr(self, name: str) -> Any: ...
    @overload
    def attr(self, name: str, default: AttributeT) -> AttributeT: ...
    def attr(self, name: str, default: object = None) -> Any:
        """Attribute `name` (or `default` when the primitive has none); one whose value ge cannot
        read is refused here, naming it, before a converter would take it for a number."""
        value = self.attrs.get(name, default)
        if _unreadable(value):
            kind = f" ({value.kind})" if isinstance(value, Unreadable) else ""
            raise self.invalid(f"attribute '{name}' holds a value of a kind ge does not read{kind}")
        return value

    def fail(self, what: str) -> UnsupportedOperatorError:
        """An unsupported form of a supported primitive."""
        return unsupported_form_error(self.primitive, "mindspore", self.name, what)

    def invalid(self, what: str) -> InvalidModelError:
        return invalid_node_error(self.primitive, self.name, what)


Converter = Callable[["Importer", Node], Value]


def _unreadable(value: object) -> bool:
    """Whether `value`, or a value in it (a tuple attribute), is one ge cannot read."""
    if isinstance(value, tuple | list):
        return any(_unreadable(v) for v in value)
    return isinstance(value, Unreadable)


def _load(imp: Importer, node: Node) -> Value:
    return node.input(0)  # a parameter read after the updates the monad orders: its value


def _make_tuple(imp: Importer, node: Node) -> Value:
    return tuple(node.inputs)


def _tuple_get_item(imp: Importer, node: Node) -> Value:
    values, index = node.input(0), node.value(1)
    if not isinstance(values, tuple) or not isinstance(index, int) or not -len(values) <= index < len(values):
        raise node.invalid(f"cannot take item {index!r} of {type(values).__name__}")
    return values[index]


STRUCTURAL: dict[str, Converter] = {
    "Load": _load,
    "MakeTuple": _make_tuple,
    "TupleGetItem": _tuple_get_item,
    "make_list": _make_tuple,  # a Python list built in construct (nn.GRU's outputs per step)
    "list_getitem": _tuple_get_item,
    "Depend": lambda imp, node: node.input(0),  # its other input only orders side effects
    "UpdateState": lambda imp, node: MONAD,
    "Return": lambda imp, node: node.input(0),
}
"""Primitives that move values around and build no op."""


@dataclass
class Importer:
    """Builds a `Graph` from a MINDIR model, inlining the sub-graphs it calls."""

    model: mind_ir.ModelProto
    folder: Path | None
    converters: Mapping[str, Converter]
    g: Graph = field(init=False)
    primitives: dict[str, mind_ir.PrimitiveProto] = field(init=False)
    functions: dict[str, mind_ir.GraphProto] = field(init=False)
    shared: dict[str, Callable[[], Value]] = field(init=False)
    cache: dict[str, Value] = field(init=False)

    def __post_init__(self) -> None:
        self.g = Graph(name=_short(self.model.graph.name) or "main")
        self.primitives = {p.name: p for p in self.model.primitives}
        self.functions = {f.name: f for f in self.model.functions}
        # Constants and parameters are named once in the whole model and used from any graph.
        self.shared, self.cache = {}, {}
        for graph in (self.model.graph, *self.model.functions):
            for tensor in graph.parameter:
                self.shared[tensor.name] = lambda tensor=tensor: self._parameter(tensor)
            for node in graph.node:
                if node.op_type == "Constant" and node.output:
                    self.shared[node.output[0]] = lambda node=node: self._constant_node(node)

    def run(self, input_shapes: Mapping[str, Sequence[int]] | None = None) -> Graph:
        graph = self.model.graph
        arguments = [self._input(info, graph, input_shapes or {}) for info in graph.input]
        result = self.call(graph, arguments, 0)
        outputs = _flatten(result)
        if not outputs:
            raise InvalidModelError(f"graph '{graph.name}' has no output tensor")
        for index, value in enumerate(outputs):
            tensor = value if isinstance(value, Tensor) else self.constant(value, "output", None, None)
            self.g.add_output(tensor, f"output_{index}")
        return self.g

    def call(self, graph: mind_ir.GraphProto, arguments: Sequence[Value], depth: int) -> Value:
        """Inlines `graph` with its inputs bound to `arguments`; returns its output value."""
        if depth > MAX_CALL_DEPTH:
            raise UnsupportedOperatorError(
                f"graph '{graph.name}' calls sub-graphs more than {MAX_CALL_DEPTH} deep (recursion is not "
                "supported: export the network with a fixed loop count)",
                category="operator",
            )
        if len(arguments) != len(graph.input):
            raise InvalidModelError(
                f"graph '{graph.name}' is called with {len(arguments)} arguments, it takes {len(graph.input)}"
            )
        env: dict[str, Value] = {info.name: value for info, value in zip(graph.input, arguments, strict=True)}
        last: Value = None
        for node in graph.node:
            if node.op_type == "Constant":
                continue
            last = self._node(node, env, depth)
            for output in node.output:
                env[output] = last
        if graph.output:
            return self._lookup(graph.output[0].name, env, graph.name)
        return last

    def constant(self, value: object, name: str, like: Tensor | None, node: Node | None) -> Tensor:
        """A graph constant holding `value`; a Python number takes `like`'s dtype."""
        if isinstance(value, Unreadable) or value is None or value is MONAD or isinstance(value, str):
            what = value.kind if isinstance(value, Unreadable) else repr(value)
            message = f"a {what} value where a tensor is needed"
            raise node.fail(message) if node else InvalidModelError(f"{name}: {message}")
        array = np.asarray(value)
        if like is not None and not isinstance(value, np.ndarray):
            array = array.astype(like.dtype)
        elif array.dtype == np.float64 and not isinstance(value, np.ndarray):
            array = array.astype(np.float32)  # MindSpore's Python floats are float32 scalars
        return self.g.add_constant(array, name)

    def _node(self, node: mind_ir.NodeProto, env: dict[str, Value], depth: int) -> Value:
        where = node.domain or node.name
        inputs = [self._lookup(name, env, where) for name in node.input]
        target = node.op_type.removeprefix(REF)
        if node.op_type.startswith(REF) and target in self.functions:
            return self.call(self.functions[target], inputs, depth + 1)
        primitive, attrs = self._primitive(node)
        converter = STRUCTURAL.get(primitive) or self.converters.get(primitive)
        if converter is None:  # `check_supported` has listed them all before the walk
            raise UnsupportedOperatorError(
                f"{primitive} at node '{where}' is not supported", category="operator"
            )
        with converting(f"{primitive} at node '{where}'"):
            return converter(self, Node(primitive, where, inputs, attrs, self))

    def _primitive(self, node: mind_ir.NodeProto) -> tuple[str, dict[str, object]]:
        """The primitive a node calls and its attributes (on the primitive, or on the node in
        files that name the primitive in `op_type` directly)."""
        where = node.domain or node.name
        if node.op_type.startswith(REF):
            proto = self.primitives.get(node.op_type.removeprefix(REF))
            if proto is None:
                raise InvalidModelError(
                    f"node '{where}' calls '{node.op_type}', neither a primitive nor a graph of the model"
                )
            attributes = list(proto.attribute)
            return proto.op_type, {a.name: attribute_value(a, self.folder, where) for a in attributes}
        attrs = {a.name: attribute_value(a, self.folder, where) for a in node.attribute if a.name != "shape"}
        return node.op_type, attrs

    def _lookup(self, name: str, env: Mapping[str, Value], where: str) -> Value:
        if name in env:
            return env[name]
        if name in self.cache:
            return self.cache[name]
        if name in self.shared:
            self.cache[name] = self.shared[name]()
            return self.cache[name]
        raise InvalidModelError(f"node '{where}' uses '{name}', which no node, input or parameter defines")

    def _parameter(self, tensor: mind_ir.TensorProto) -> Tensor:
        name = tensor.ref_key or _short(tensor.name)
        return self.g.add_constant(tensor_array(tensor, self.folder, f"parameter '{name}'"), name)

    def _constant_node(self, node: mind_ir.NodeProto) -> Value:
        values = [a for a in node.attribute if a.name == "value"] or list(node.attribute)
        if len(values) != 1:
            raise InvalidModelError(f"constant '{node.name}' has {len(values)} values")
        return attribute_value(values[0], self.folder, f"constant '{node.name}'")

    def _input(
        self,
        info: mind_ir.ValueInfoProto,
        graph: mind_ir.GraphProto,
        input_shapes: Mapping[str, Sequence[int]],
    ) -> Tensor:
        name = _short(info.name)
        if len(info.tensor) != 1:
            raise UnsupportedOperatorError(
                f"graph input '{name}' is not a tensor (ge compiles tensor inputs only)",
                [{"node": name, "missing": "a tensor input"}],
                category="input",
            )
        tensor = info.tensor[0]
        dtype = DTYPES.get(tensor.data_type)
        if dtype is None:
            raise UnsupportedOperatorError(
                f"graph input '{name}' has element type {tensor.data_type}, which ge does not read",
                [{"node": name, "dtype": tensor.data_type}],
                category="dtype",
            )
        shape = [int(d) for d in tensor.dims]
        if name in input_shapes:
            shape = _fixed_shape(name, shape, input_shapes[name])
        return self.g.add_input(name, shape=shape, dtype=dtype.name)


def _fixed_shape(name: str, shape: list[int], given: Sequence[int]) -> list[int]:
    """The shape of an input as `input_shapes` fixes it: dynamic dimensions (-1) take the size
    given, static ones must be given as they are (or as -1)."""
    given = [int(d) for d in given]
    if len(given) != len(shape):
        raise InvalidModelError(f"input_shapes: input '{name}' has rank {len(shape)} {shape}, given {given}")
    for axis, (have, want) in enumerate(zip(shape, given, strict=True)):
        if have >= 0 and want not in (have, -1):
            raise InvalidModelError(
                f"input_shapes: input '{name}' axis {axis} is {have} in the model, given {want}; a MINDIR "
                "model's shapes are fixed when it is exported: export the network again with an input of "
                "the shape wanted"
            )
    return [want if have < 0 else have for have, want in zip(shape, given, strict=True)]


def _short(name: str) -> str:
    """A MindSpore value name without the `<graph>:` prefix it carries in the file."""
    return name.split(":", 1)[1] if ":" in name else name


def _flatten(value: Value) -> list[Value]:
    if isinstance(value, tuple):
        return [item for element in value for item in _flatten(element)]
    return [] if value is MONAD or value is None else [value]
