"""The ONNX importer: walks the graph's nodes in order and calls one converter per operator.

Converters see a `Node`: its inputs as graph values, the values known at import time (constants,
and everything computed from them, evaluated with the shared op semantics), its attributes and
the model's opset. An input that decides a shape must be known; `Node.value` asks for it. A
graph input asked for this way is specialized on the values given for the run (`feeds`); a value
computed at run time is looked up in `observed` (values an earlier run of the graph's prefix
produced), or `ValueNeeded` is raised so that the caller can run that prefix first.

String tensors have a width (the most characters an element holds): a string graph input takes
the width of the data given for the run, a string constant the width of its longest element,
and the string inputs of one node are cast to their widest width first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
import numpy.typing as npt
import onnx
from onnx import numpy_helper
from xdsl.ir import SSAValue

from ge.dialects.common import describe
from ge.dtypes import ONNX_NAMES, STRING, as_strings, element_type, is_string, numpy_dtype, string_dtype
from ge.errors import GeError, InvalidModelError, UnsupportedOperatorError
from ge.graph import Graph, Tensor, tensor_type
from ge.limits import DEFAULT_MAX_TENSOR_BYTES, check_bytes
from ge.semantics import evaluate

from ..common import CONVERTER_ERRORS, AttributeT, invalid_node_error, unsupported_form_error
from .validate import check_graph, check_input_types, check_node, schema_attribute_type, schema_of
from .values import (
    STRUCTURED_OPS,
    OptionalValue,
    Structure,
    Value,
    element_name,
    structured_input_kind,
)

KNOWN_LIMIT = 1 << 20
"""Values with more elements than this are not evaluated at import time."""
MAX_UNROLLED_NODES = 100_000
"""Nodes that inlining subgraphs (every iteration of an unrolled loop, nested ones included) may
import in all: a per-loop trip cap alone lets nested loops multiply into millions."""


class ValueNeeded(Exception):
    """A converter needs the run-time value of `name`, which only running the graph can give."""

    def __init__(self, name: str, graph: Graph, tensor: Tensor):
        super().__init__(f"the value of '{name}' is needed to continue")
        self.consumer = "a node"
        self.name = name
        self.graph = graph
        self.tensor = tensor
        self.position = 0
        """The index of the top-level node whose import asked for the value."""


@dataclass(frozen=True)
class Resume:
    """Where an import picks up after a segment ran: the first node to import, the values earlier
    nodes produced that later ones read, as graph inputs (`inputs`: shape and dtype, fed from the
    segment's outputs) or as constants known at import time."""

    start: int
    inputs: Mapping[str, tuple[tuple[int, ...], str]]
    constants: Mapping[str, np.ndarray]


def live_names(graph: onnx.GraphProto, start: int) -> set[str]:
    """Names the nodes from `start` on (their subgraphs included) and the graph outputs read."""
    names = {o.name for o in graph.output}
    for node in graph.node[start:]:
        names.update(n for n in node.input if n)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                names |= live_names(sub, 0)
    return names


@dataclass
class Node:
    """What a converter sees of one ONNX node."""

    proto: onnx.NodeProto
    name: str
    opset: int
    inputs: list[Value | None]
    known: list[np.ndarray | None]
    attrs: dict[str, object]
    importer: Importer
    input_names: list[str] = field(default_factory=list)

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    @overload
    def attr(self, key: str) -> Any: ...
    @overload
    def attr(self, key: str, default: AttributeT) -> AttributeT: ...
    def attr(self, key: str, default: object = None) -> Any:
        """The attribute's value (bytes decoded to str), or `default` when absent. ONNX types each
        attribute by its schema, so a present value has the default's type; without a default, the
        value is whatever the schema says (the caller converts it: `int(node.attr("axis"))`)."""
        value = self.attrs.get(key, default)
        return value.decode() if isinstance(value, bytes) else value

    def flag(self, key: str, default: bool) -> bool:
        """A yes/no attribute, which ONNX stores as an int (0 or not)."""
        return bool(self.attr(key, int(default)))

    def strict_flag(self, key: str, default: bool) -> bool:
        """A yes/no attribute that must be 0 or 1: for another value onnxruntime and ONNX's
        reference disagree (onnxruntime reads only 1 as yes, or refuses it; the reference reads
        any nonzero value as yes), so the model says nothing certain."""
        value = self.attr(key, int(default))
        if value not in (0, 1):
            raise self.invalid(f"attribute '{key}' is {value}: it must be 0 or 1")
        return bool(value)

    @overload
    def pop_attr(self, key: str) -> Any: ...
    @overload
    def pop_attr(self, key: str, default: AttributeT) -> AttributeT: ...
    def pop_attr(self, key: str, default: object = None) -> Any:
        """`attr`, and the attribute removed (an older opset's form, once brought to today's)."""
        value = self.attr(key, default)
        self.attrs.pop(key, None)
        return value

    def input(self, index: int) -> Tensor:
        """Input `index` as a tensor (sequence and optional values reach only their own operators)."""
        value = self.inputs[index] if index < len(self.inputs) else None
        if not isinstance(value, Tensor):
            raise self.invalid(f"input {index} is {'missing' if value is None else 'not a tensor'}")
        return value

    def optional_input(self, index: int) -> Tensor | None:
        """Input `index` as a tensor, or None when the model leaves that optional input out."""
        return self.input(index) if self.has_input(index) else None

    def input_tensors(self, count: int | None = None) -> list[Tensor]:
        """The first `count` inputs (all of them by default), each present and a tensor."""
        return [self.input(i) for i in range(len(self.inputs) if count is None else count)]

    def present_inputs(self, count: int | None = None) -> list[Tensor]:
        """The tensors among the first `count` inputs (all by default), absent optional ones left out."""
        end = len(self.inputs) if count is None else min(count, len(self.inputs))
        return [self.input(i) for i in range(end) if self.has_input(i)]

    def ints(self, key: str, count: int, default: int) -> tuple[int, ...]:
        """An integer-list attribute of exactly `count` values (`default` repeated when absent)."""
        values = tuple(int(v) for v in self.attr(key, [default] * count))
        if len(values) != count:
            raise self.invalid(f"'{key}' needs {count} values, got {list(values)}")
        return values

    def has_input(self, index: int) -> bool:
        return index < len(self.inputs) and self.inputs[index] is not None

    def value(self, index: int) -> np.ndarray:
        """The value of input `index`, which decides a shape: known, specialized or observed."""
        known = self.known[index]
        if known is not None:
            return known
        try:
            value = self.importer.demand(self.input_names[index])
        except ValueNeeded as needed:
            needed.consumer = f"{self.op_type} (opset {self.opset}) at node '{self.name}'"
            raise
        self.known[index] = value
        return value

    def dtype(self, key: str, default: str | None = None) -> str:
        """The dtype an attribute (an ONNX element type number) names, or `default` when absent."""
        if key not in self.attrs:
            if default is None:
                raise self.invalid(f"attribute '{key}' (an element type) is missing")
            return default
        value = self.attr(key)
        return dtype_name(int(value), f"{self.op_type} at node '{self.name}': attribute '{key}' = {value}")

    def allocate(self, shape: Sequence[int], dtype: npt.DTypeLike, what: str = "its result") -> None:
        """Checks, before a converter computes an array of `shape` at import time, that it fits
        within the importer's max_tensor_bytes."""
        self.importer.check_size(
            shape, np.dtype(dtype).itemsize, f"{self.op_type} at node '{self.name}': {what}"
        )

    def fail(self, what: str) -> UnsupportedOperatorError:
        """An unsupported form of a supported operator: names the node and what is missing."""
        domain = self.proto.domain or "ai.onnx"
        label = f"{self.op_type} (domain {domain}, opset {self.opset})"
        return unsupported_form_error(self.op_type, domain, self.name, what, label, opset=self.opset)

    def invalid(self, what: str) -> InvalidModelError:
        return invalid_node_error(self.op_type, self.name, what)


InputShapes = Mapping[str, Any]
"""Shapes given for graph inputs: a tensor's shape, a sequence's list of element shapes, or None
for an absent optional (one mapping holds all three, so its values are untyped)."""

ConverterResults = Sequence[Value | np.ndarray | None]
"""What a converter returns: one value per output (an array when known at import, None when absent)."""
Converter = Callable[["Importer", Node], ConverterResults]


class Importer:
    """Builds a `Graph` from an ONNX graph, one converter call per node."""

    def __init__(
        self,
        opset: int,
        converters: Mapping[str, Converter],
        feeds: Mapping[str, np.ndarray] | None = None,
        observed: Mapping[str, np.ndarray] | None = None,
        versions: Mapping[str, int] | None = None,
        max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES,
    ):
        self.opset = opset
        self.max_tensor_bytes = max_tensor_bytes
        """The largest tensor the import may compute (see `check_size`)."""
        self.versions = {"": opset, **(versions or {})}
        """The model's version of each operator domain ("" is the default one)."""
        self.converters = converters
        self.feeds = feeds
        self.observed = dict(observed or {})
        self.g = Graph()
        self.values: dict[str, Value] = {}
        """What each name stands for: a tensor, a sequence (a list of tensors) or an optional."""
        self.known: dict[SSAValue, np.ndarray] = {}
        self.graph_inputs: set[str] = set()
        self.specialized: set[str] = set()
        """Graph inputs whose values the graph was specialized on."""
        self.used_observations: dict[str, np.ndarray] = {}
        self.scopes: list[dict[str, str]] = []
        """Name scopes of the subgraphs being imported, innermost last (see `import_subgraph`)."""
        self.unrolled = 0
        """Nodes imported from subgraphs so far (see MAX_UNROLLED_NODES)."""
        self.output_structure: list[Structure] = []
        """Where each graph output's tensors are among the graph's outputs (see `sequence.assemble`)."""

    def run(
        self,
        graph: onnx.GraphProto,
        input_shapes: InputShapes | None = None,
        resume: Resume | None = None,
    ) -> Graph:
        """Imports `graph`. `input_shapes` overrides declared input shapes; for a sequence input it
        lists its elements' shapes, and None there makes an optional input absent. With `resume`,
        the nodes before `resume.start` are not imported again: the values they produced that
        later nodes read come in as graph inputs (computed by an earlier segment) or constants."""
        check_graph(graph)
        for init in graph.initializer:
            self.add_constant(init.name, tensor_array(init, "initializer"))
        for sparse in graph.sparse_initializer:
            self.add_constant(sparse.values.name, self.sparse_array(sparse))
        for value_info in graph.input:
            if value_info.name in self.values:
                continue
            if value_info.type.WhichOneof("value") in ("sequence_type", "optional_type"):
                self.values[value_info.name] = self._add_structured_input(value_info, input_shapes)
            else:
                self._add_input(value_info, input_shapes)
        start = 0
        if resume is not None:
            start = resume.start
            for name, array in resume.constants.items():
                self.add_constant(name, array)
            for name, (shape, dtype) in resume.inputs.items():
                self.values[name] = self.g.add_input(name, list(shape), dtype)
        for index, node in enumerate(graph.node):
            if index < start:
                continue
            try:
                self.convert(node, node.name or f"{node.op_type}_{index}")
            except ValueNeeded as needed:
                needed.position = index
                raise
        for output in graph.output:
            if output.name not in self.values:
                raise InvalidModelError(f"graph output '{output.name}' is produced by no node")
            check_declared_type(output, self.values[output.name], "graph output")
            self.output_structure.append(self._add_output(output.name, self.values[output.name]))
        for value_info in graph.value_info:
            if value_info.name in self.values:
                check_declared_type(value_info, self.values[value_info.name], "value")
        return self.g

    def _add_input(self, value_info: onnx.ValueInfoProto, input_shapes: InputShapes | None) -> Tensor:
        shape, dtype = value_type(value_info)
        dims: list[int | str] = list(shape)
        if input_shapes and value_info.name in input_shapes:
            dims = list(input_shapes[value_info.name])
        elif value_info.type.tensor_type.HasField("shape"):
            # A named dimension (`dim_param`) is the graph's symbol of that name.
            given = value_info.type.tensor_type.shape.dim
            dims = [
                d.dim_param if size < 0 and d.dim_param else size
                for d, size in zip(given, shape, strict=True)
            ]
        else:  # not even a rank: nothing says how many dimensions to make symbolic
            raise UnsupportedOperatorError(
                f"graph input '{value_info.name}' declares no shape (not even its rank); give it with "
                f"input_shapes={{'{value_info.name}': [...]}} (--input_shape)",
                category="input",
            )
        if dtype == STRING:
            dtype = self._string_input_dtype(value_info.name)
        tensor = self.g.add_input(value_info.name, dims, dtype)
        self.values[value_info.name] = tensor
        self.graph_inputs.add(value_info.name)
        return tensor

    def _add_structured_input(
        self, value_info: onnx.ValueInfoProto, input_shapes: InputShapes | None
    ) -> list[Tensor] | OptionalValue:
        """A sequence input is one graph input per element, of the shapes `input_shapes` gives; an
        optional input is absent (given None there) or its tensor or sequence."""
        name, kind = value_info.name, value_info.type.WhichOneof("value")
        shapes = input_shapes or {}
        given = name in shapes
        if kind == "optional_type":
            if given and shapes[name] is None:
                return OptionalValue(None)
            inner = onnx.helper.make_value_info(name, value_info.type.optional_type.elem_type)
            if inner.type.HasField("tensor_type"):
                return OptionalValue(self._add_input(inner, input_shapes))
            element = self._add_structured_input(inner, input_shapes)
            if isinstance(element, OptionalValue):
                raise UnsupportedOperatorError(
                    f"graph input '{name}' is an optional of an optional", category="input"
                )
            return OptionalValue(element)
        if kind != "sequence_type" or not value_info.type.sequence_type.elem_type.HasField("tensor_type"):
            what = "a sequence of non-tensors" if kind == "sequence_type" else "not a tensor"
            raise UnsupportedOperatorError(f"graph input '{name}' is {what}", category="input")
        if not given:
            raise UnsupportedOperatorError(
                f"graph input '{name}' is a sequence: its length and element shapes come from the values "
                f"of a run (run it through ge.backend, or give them in input_shapes)",
                category="input",
            )
        element_type = value_info.type.sequence_type.elem_type
        elements = []
        for index, shape in enumerate(shapes[name]):
            info = onnx.helper.make_value_info(element_name(name, index), element_type)
            elements.append(self._add_input(info, {info.name: shape}))
        return elements

    def _add_output(self, name: str, value: Value) -> Structure:
        """Adds `value` to the graph's outputs, one output per tensor; says where they are."""
        if isinstance(value, OptionalValue):
            return None if value.element is None else self._add_output(name, value.element)
        if isinstance(value, list):
            return [self._add_tensor_output(element_name(name, i), t) for i, t in enumerate(value)]
        return self._add_tensor_output(name, value)

    def _add_tensor_output(self, name: str, tensor: Tensor) -> int:
        self.g.add_output(tensor, name)
        return len(self.g.outputs) - 1

    def _string_input_dtype(self, name: str) -> str:
        """A string graph input holds strings as wide as the longest one given for the run."""
        if self.feeds is None or name not in self.feeds:
            raise UnsupportedOperatorError(
                f"graph input '{name}' holds strings, whose width only the data gives: run the model "
                f"through ge.backend, which specializes it on the strings of the run",
                category="input",
            )
        return string_dtype(as_strings(self.feeds[name], f"input '{name}'").dtype.itemsize // 4)

    def add_constant(self, name: str, array: np.ndarray) -> Tensor:
        array = as_strings(array, f"constant '{name}'", error=InvalidModelError)
        tensor = self.g.add_constant(array, name)
        self.known[tensor.value] = np.asarray(array)
        self.values[name] = tensor
        return tensor

    def known_value(self, tensor: Value | None) -> np.ndarray | None:
        return self.known.get(tensor.value) if isinstance(tensor, Tensor) else None

    def tensor(self, name: str) -> Tensor:
        """The value `name` names, which must be a tensor (not a sequence or an optional)."""
        value = self.values[name]
        if not isinstance(value, Tensor):
            raise UnsupportedOperatorError(
                f"'{name}' is a sequence or an optional value where a tensor is needed"
            )
        return value

    def demand(self, name: str) -> np.ndarray:
        """The value of `name` for a shape decision; see the module docstring."""
        tensor = self.tensor(name)
        if tensor.value in self.known:
            return self.known[tensor.value]
        source = self._graph_input_of(name, tensor)
        if source is not None:
            if self.feeds is None or source not in self.feeds:
                raise ValueNeeded(name, self.g, tensor)
            value = np.asarray(self.feeds[source]).astype(numpy_dtype(tensor.element_type))
            self.specialized.add(source)
        elif name in self.observed:
            value = self.observed[name]
            self.used_observations[name] = value
        else:
            raise ValueNeeded(name, self.g, tensor)
        self.known[tensor.value] = value
        return value

    def _graph_input_of(self, name: str, tensor: Tensor) -> str | None:
        """The graph input `name` is, or is another name of (an Identity, a subgraph's input)."""
        if name in self.graph_inputs:
            return name
        for graph_input in self.graph_inputs:
            value = self.values[graph_input]
            if isinstance(value, Tensor) and value.value == tensor.value:
                return graph_input
        return None

    def resolve(self, name: str) -> str:
        """The name, in `values`, of what `name` means in the innermost subgraph being imported."""
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return name

    def import_subgraph(
        self, graph: onnx.GraphProto, bindings: Mapping[str, Tensor], prefix: str
    ) -> list[str]:
        """Inlines a subgraph (an If branch, a Loop or Scan body) into this graph; returns its outputs' names.

        The subgraph's inputs are bound to `bindings` (input name -> tensor); the other names it
        reads resolve through the enclosing scopes to values already imported. Every value it
        defines is named `prefix + name`: unique for each inlining when the prefix names the node
        and the iteration, and the same in every import of the model, so that a value a previous
        run observed keeps its name. Its nodes go through `convert` like the main graph's, so known
        values propagate, and nested subgraphs resolve names through this scope.
        """
        # `run` checked every subgraph, in its scope, with the graph.
        self.unrolled += len(graph.node)
        if self.unrolled > MAX_UNROLLED_NODES:
            raise UnsupportedOperatorError(
                f"subgraph '{graph.name}' (inlined as '{prefix}'): unrolling the model's loops would import "
                f"more than {MAX_UNROLLED_NODES:,} nodes in all; ge unrolls control flow, so loops must "
                "be short enough for that",
                category="attribute",
            )
        scope: dict[str, str] = {}
        for value_info in graph.input:
            if value_info.name not in bindings:
                raise InvalidModelError(f"subgraph '{graph.name}' input '{value_info.name}' is not bound")
        for name, tensor in bindings.items():
            self.values[prefix + name] = tensor
            scope[name] = prefix + name
        self.scopes.append(scope)
        try:
            for init in graph.initializer:
                self.add_constant(prefix + init.name, tensor_array(init, "initializer"))
                scope[init.name] = prefix + init.name
            for index, node in enumerate(graph.node):
                renamed = onnx.NodeProto()
                renamed.CopyFrom(node)
                del renamed.input[:]
                renamed.input.extend(self.resolve(n) if n else "" for n in node.input)
                del renamed.output[:]
                renamed.output.extend(prefix + n if n else "" for n in node.output)
                self.convert(renamed, prefix + (node.name or f"{node.op_type}_{index}"))
                scope.update({n: prefix + n for n in node.output if n})
            outputs = [self.resolve(o.name) for o in graph.output]
        finally:
            self.scopes.pop()
        where = f"subgraph '{graph.name}' at '{prefix}'"
        for declared, name in zip(graph.output, outputs, strict=True):
            if name not in self.values:
                raise InvalidModelError(f"subgraph '{graph.name}' output '{name}' is produced by no node")
            check_declared_type(declared, self.values[name], f"{where}: output")
        for value_info in graph.value_info:
            if (name := scope.get(value_info.name)) is not None and name in self.values:
                check_declared_type(value_info, self.values[name], f"{where}: value")
        return outputs

    def convert(self, proto: onnx.NodeProto, name: str) -> None:
        inputs: list[Value | None] = []
        for input_name in proto.input:
            if not input_name:
                inputs.append(None)
            elif input_name in self.values:
                inputs.append(self.values[input_name])
                kind = structured_input_kind(inputs[-1])
                if kind and proto.op_type not in STRUCTURED_OPS:
                    raise UnsupportedOperatorError(
                        f"{proto.op_type} at node '{name}' reads '{input_name}', which is {kind}: "
                        f"only sequence and optional operators, Identity, If and Loop take one"
                    )
            else:
                raise InvalidModelError(
                    f"{proto.op_type} at node '{name}' reads '{input_name}', which nothing defines before it"
                )
        schema = schema_of(proto, self.versions, name)
        check_node(proto, name, schema)
        check_input_types(proto, name, schema, [onnx_type(t) for t in inputs])
        attrs = {a.name: _attribute_value(a, schema) for a in proto.attribute}
        mark = self.g.block.last_op
        inputs = self._common_string_width(inputs, name)
        self._evaluate_known(mark)
        known = [self.known_value(t) for t in inputs]
        node = Node(proto, name, self.opset, inputs, known, attrs, self, list(proto.input))
        mark = self.g.block.last_op
        try:
            results = self.converters[converter_key(proto.domain, proto.op_type)](self, node)
        except (GeError, ValueNeeded):
            raise
        except MemoryError:
            raise GeError(
                f"{proto.op_type} at node '{name}': the machine ran out of memory importing it; "
                "lower max_tensor_bytes to have such a model refused before it allocates"
            ) from None
        except CONVERTER_ERRORS as error:
            # A converter that meets values it does not expect: say which node, with which
            # attributes and known inputs, rather than where in the converter it broke.
            raise InvalidModelError(
                f"{proto.op_type} at node '{name}' ({_describe_node(node)}): cannot import it: "
                f"{type(error).__name__}: {error}"
            ) from None
        self._evaluate_known(mark)
        for index, output in enumerate(proto.output):
            if not output:
                continue
            result = results[index] if index < len(results) else None
            if result is None:
                raise node.fail(f"output #{index} ('{output}') is not supported")
            if isinstance(result, np.ndarray | np.generic):
                result = np.asarray(result)
                self.check_size(result.shape, result.itemsize, f"{proto.op_type} at node '{name}'")
                self.add_constant(output, result)
            else:
                self.values[output] = result

    def _common_string_width(self, inputs: list[Value | None], name: str) -> list[Value | None]:
        """The inputs, the string tensors among them cast to the widest of their widths (an op
        takes operands of one element type)."""
        widths = {t.dtype for t in inputs if isinstance(t, Tensor) and is_string(t.dtype)}
        if len(widths) < 2:
            return inputs
        widest = max(widths, key=lambda dtype: numpy_dtype(element_type(dtype)).itemsize)
        return [
            self.g.add_cast(t, widest, name) if isinstance(t, Tensor) and t.dtype in widths - {widest} else t
            for t in inputs
        ]

    def sparse_array(self, sparse: onnx.SparseTensorProto) -> np.ndarray:
        """The dense array of a sparse initializer: its values at its indices (linear, or one row
        of coordinates per value), zeros elsewhere, as onnxruntime densifies one."""
        name = sparse.values.name
        where = f"sparse initializer '{name}'"
        values = tensor_array(sparse.values, where).reshape(-1)
        indices = tensor_array(sparse.indices, f"{where}: indices").astype(np.int64, copy=False)
        dims = [int(d) for d in sparse.dims]
        if any(d < 0 for d in dims):
            raise InvalidModelError(f"{where}: negative dimension in its shape {dims}")
        self.check_size(dims, values.itemsize, where)
        count = math.prod(dims)
        if indices.ndim == 2 and indices.shape == (values.size, len(dims)):
            if indices.size and ((indices < 0).any() or (indices >= np.array(dims)).any()):
                raise InvalidModelError(f"{where}: an index lies outside its shape {dims}")
            indices = np.ravel_multi_index(tuple(indices.T), dims) if dims else np.zeros(0, np.int64)
        elif indices.ndim != 1 or indices.size != values.size:
            raise InvalidModelError(
                f"{where}: {values.size} values need {values.size} linear indices or "
                f"[{values.size}, {len(dims)}] coordinates, got indices of shape {list(indices.shape)}"
            )
        if indices.size and (indices.min() < 0 or indices.max() >= count):
            raise InvalidModelError(f"{where}: an index lies outside its {count} elements")
        dense = np.zeros(count, values.dtype)
        dense[indices] = values
        return dense.reshape(dims)

    def check_size(self, shape: Sequence[int], itemsize: int, where: str) -> None:
        """Refuses a tensor of `shape` larger than max_tensor_bytes, before it is computed."""
        dims = [int(d) for d in shape]
        size = math.prod(dims) * itemsize
        check_bytes(size, f"shape {dims}", self.max_tensor_bytes, InvalidModelError, where)

    def _evaluate_known(self, mark) -> None:
        """Evaluates the ops a converter appended whose operands are all known."""
        op = self.g.block.first_op if mark is None else mark.next_op
        while op is not None:
            if op.results and op.results[0] not in self.known and all(v in self.known for v in op.operands):
                types = [tensor_type(r) for r in op.results]
                size = sum(math.prod(t.get_shape()) for t in types)
                if all(d >= 0 for t in types for d in t.get_shape()) and size <= KNOWN_LIMIT:
                    for t in types:
                        self.check_size(t.get_shape(), numpy_dtype(t.element_type).itemsize, describe(op))
                    try:
                        values = evaluate(op, [self.known[v] for v in op.operands], self.g.weights)
                    except GeError:
                        values = None
                    if values is not None:
                        for result, value in zip(op.results, values, strict=True):
                            self.known[result] = value
            op = op.next_op


def tensor_array(tensor: onnx.TensorProto, what: str) -> np.ndarray:
    """The array of a TensorProto; a malformed one (data not matching its dims, an unknown data
    type, external data that cannot be read) is an `InvalidModelError` naming it."""
    if tensor.data_type not in onnx.TensorProto.DataType.values() or tensor.data_type == 0:
        raise InvalidModelError(
            f"{what} '{tensor.name}' has data type {tensor.data_type}, which ONNX does not define"
        )
    if any(d < 0 for d in tensor.dims):
        raise InvalidModelError(f"{what} '{tensor.name}' has negative dimensions {list(tensor.dims)}")
    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError, KeyError, OSError, onnx.checker.ValidationError) as error:
        raise InvalidModelError(f"{what} '{tensor.name}' is malformed: {error}") from None


def onnx_type(value: Value | None) -> str | None:
    """The ONNX type string ("tensor(float)") of a tensor; None for what is not one, or not given."""
    if not isinstance(value, Tensor):
        return None
    dtype = value.dtype
    if is_string(dtype):
        return "tensor(string)"
    if dtype in ONNX_NAMES:
        return f"tensor({ONNX_NAMES[dtype].lower()})"
    if dtype == "bfloat16":
        return "tensor(bfloat16)"
    elem_type = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return f"tensor({onnx.TensorProto.DataType.Name(elem_type).lower()})"


def check_declared_type(value_info: onnx.ValueInfoProto, value: Value, what: str) -> None:
    """Refuses a value whose element type contradicts the one the model declares for it."""
    declared = value_info.type.tensor_type.elem_type if value_info.type.HasField("tensor_type") else 0
    ours = onnx_type(value)
    if not declared or ours is None:
        return
    known = declared in ELEM_TYPES
    theirs = f"tensor({onnx.TensorProto.DataType.Name(declared).lower()})" if known else None
    if theirs != ours:
        shown = theirs or f"element type {declared}"
        raise InvalidModelError(
            f"{what} '{value_info.name}' is declared {shown}, but the graph computes {ours}"
        )


ELEM_TYPES = set(onnx.TensorProto.DataType.values())


def _attribute_value(attribute: onnx.AttributeProto, schema: onnx.defs.OpSchema | None) -> object:
    """The attribute's value; one without a type (a model too old to say it) has its schema's."""
    if not attribute.type and schema is not None and attribute.name in schema.attributes:
        typed = onnx.AttributeProto()
        typed.CopyFrom(attribute)
        _, type_name = schema_attribute_type(schema.attributes[attribute.name])
        typed.type = onnx.AttributeProto.AttributeType.Value(type_name)  # pyright: ignore[reportAttributeAccessIssue]  # the stub wants the enum class, Value gives its number
        attribute = typed
    return onnx.helper.get_attribute_value(attribute)


def _describe_node(node: Node) -> str:
    """The node's attributes and known scalar inputs, as `name=value` (what a message shows)."""
    parts = []
    for key, value in node.attrs.items():
        if isinstance(value, int | float | bytes | str):
            parts.append(f"{key}={node.attr(key)!r}")
        elif isinstance(value, list) and len(value) <= 8 and all(isinstance(v, int | float) for v in value):
            parts.append(f"{key}={value}")
    for index, known in enumerate(node.known):
        if known is not None and known.size <= 8:
            parts.append(f"input #{index} = {known.tolist()}")
    return ", ".join(parts) or "no attributes"


def converter_key(domain: str, op_type: str) -> str:
    """The key of an operator's converter: its name in the default domain, `domain::name` in others."""
    return op_type if domain in ("", "ai.onnx") else f"{domain}::{op_type}"


def value_type(value_info: onnx.ValueInfoProto) -> tuple[list[int], str]:
    """Shape (-1 for a symbolic dimension) and dtype name of a graph input (`STRING`, without a
    width, for strings)."""
    if not value_info.type.HasField("tensor_type"):
        raise UnsupportedOperatorError(f"graph input '{value_info.name}' is not a tensor", category="input")
    t = value_info.type.tensor_type
    shape = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
    return shape, dtype_name(t.elem_type, f"graph input '{value_info.name}'")


_NARROW_BY_ONNX_TYPE = {onnx.TensorProto.DataType.Value(proto): name for name, proto in ONNX_NAMES.items()}
"""ONNX element type -> numpy name, for the narrow types (float8, float4, int4, int2, ...)."""


def dtype_name(elem_type: int, what: str) -> str:
    """The numpy dtype name of an ONNX element type that `ge` supports (`STRING` for strings,
    whose width the data decides)."""
    if elem_type == onnx.TensorProto.BFLOAT16:
        return "bfloat16"
    if elem_type == onnx.TensorProto.STRING:
        return STRING
    if elem_type in _NARROW_BY_ONNX_TYPE:
        return _NARROW_BY_ONNX_TYPE[elem_type]
    try:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        dtype = None
    if elem_type not in ELEM_TYPES:
        raise InvalidModelError(f"{what}: {elem_type} is not an ONNX element type")
    name = onnx.TensorProto.DataType.Name(elem_type) if elem_type else "UNDEFINED"
    if dtype is None or dtype.kind not in "biuf" or dtype.itemsize > 8:
        raise UnsupportedOperatorError(
            f"{what} has element type {name}, which ge does not support", category="dtype"
        )
    return dtype.name
