"""`ge.Graph`: build an `ascend.graph` function in Python, node by node.

```python
g = ge.Graph()
x = g.add_input("input", shape=[1, 3, 224, 224])
y = g.add_relu(g.add_conv2d(x, out_channels=64, kernel_size=7, stride=2, padding=3))
g.add_output(y)
```
Frontends build on it too (`add_op` is the general form). Weights that are not given are drawn
from a seeded generator, so a graph built twice is the same graph. Large constants go to the
weight store and appear in the IR as `dense_resource<key>`.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    UnknownLoc,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

from ge.dialects import graph as ops
from ge.dialects.common import NAME_ATTR, bool_attr, int_attr, ints_attr, value_names
from ge.dialects.graph.base import shape_error

from . import arguments, symbolic
from .dtypes import dtype_name, element_type, numpy_dtype, tensor_type
from .errors import GeError, VerificationError
from .limits import DEFAULT_MAX_TENSOR_BYTES
from .symbolic import Dim
from .weights import WeightStore

INLINE_LIMIT = 16
"""Constants with at most this many elements stay inline as `dense<...>`."""
FLOATING_OUTPUTS = ("float16", "bfloat16", "float32", "float64")
"""The dtypes `Graph.cast_outputs` converts."""


@dataclass(frozen=True)
class Tensor:
    """A value of the graph under construction: what every `add_*` returns."""

    value: SSAValue
    name: str

    @property
    def type(self) -> TensorType:
        """The value's type: every value of a graph is a tensor."""
        return tensor_type(self.value)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.get_shape()

    @property
    def element_type(self) -> Attribute:
        return self.type.element_type

    @property
    def dtype(self) -> str:
        return dtype_name(self.element_type)


ARGUMENTS: dict[str, arguments.Check] = {
    "name": arguments.text,
    "seed": arguments.at_least(0),
    "dtype": arguments.dtype,
    "axis": arguments.integer,
    "perm": arguments.integers,
    "out_channels": arguments.at_least(0),
    "out_features": arguments.at_least(0),
    "groups": arguments.at_least(1),
    "kernel_size": arguments.pair(0),  # the ops verify positive sizes
    "stride": arguments.pair(1),
    "padding": arguments.pair(0),
    "dilation": arguments.pair(1),
    "epsilon": arguments.positive,
    "value": arguments.number,
    "ceil_mode": arguments.flag,
    "count_include_pad": arguments.flag,
    "bias": arguments.flag,
    "weight": arguments.array,
    "bias_value": arguments.array,
    "scale": arguments.array,
    "mean": arguments.array,
    "var": arguments.array,
    "shape": arguments.integers,
    "op_class": lambda value, where: _graph_op_class(value, where),
    "properties": lambda value, where: _properties(value, where),
}
"""The check of each `Graph` method parameter, by name: a name means the same thing everywhere,
but for the exceptions of `METHOD_ARGUMENTS`."""

METHOD_ARGUMENTS: dict[tuple[str, str], arguments.Check] = {
    ("add_batchnorm", "bias"): arguments.array,  # the learned shift, as torch names it
    ("add_input", "shape"): lambda value, where: value,  # -1 and None: `_input_dims` checks them
    ("add_constant", "array"): lambda value, where: arguments.array(value, where, text=True),
    ("add_reshape", "shape"): lambda value, where: value,  # checked with the node named
    ("__init__", "weights"): lambda value, where: _weight_store(value, where),
    ("specialize", "sizes"): lambda value, where: _sizes(value, where),
}

TENSORS = ("x", "a", "b", "tensor")
"""Parameters that take one tensor of the graph; `inputs` takes a list of them."""

Method = TypeVar("Method", bound=Callable[..., Any])
_UNKNOWN = UnknownLoc()
"""The location a named op nests (attributes are immutable, so one serves every op)."""


def _graph_op_class(value: object, where: str) -> type[Operation]:
    if not (
        isinstance(value, type) and issubclass(value, IRDLOperation) and hasattr(value, "build_inferred")
    ):
        raise GeError(
            f"{where} must be an ascend.graph op class (ge.dialects.graph), got {arguments.shown(value)}"
        )
    return value


def _weight_store(value: object, where: str) -> WeightStore:
    if not isinstance(value, WeightStore):
        raise GeError(f"{where} must be a ge.weights.WeightStore, got {arguments.shown(value)}")
    return value


def _sizes(value: object, where: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise symbolic.SpecializationError(
            f"{where} must map input names to shapes or symbols to sizes, got {arguments.shown(value)}"
        )
    return value


def _properties(value: object, where: str) -> Mapping[str, Attribute | bool]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, Attribute | bool) for k, v in value.items()
    ):
        raise GeError(
            f"{where} must map property names to xDSL attributes (or bools, for yes/no properties), "
            f"got {arguments.shown(value)}"
        )
    return value


def checked(method: Method) -> Method:
    """Checks a `Graph` method's arguments (see ARGUMENTS and TENSORS) before it runs, so a bad one
    is named where it was passed. None passes only where it is the parameter's default."""
    signature = inspect.signature(method)
    function = "Graph()" if method.__name__ == "__init__" else f"Graph.{method.__name__}"
    parameters = list(signature.parameters.values())[1:]
    if any(p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters):
        raise TypeError(f"{function}: @checked takes methods of plain parameters only")
    names = [p.name for p in parameters]
    checks = []
    for p in parameters:
        if p.name in TENSORS:
            check = functools.partial(_check_tensor, function=function, name=p.name)
        elif p.name == "inputs":
            check = functools.partial(_check_tensors, function=function, name=p.name)
        else:
            given = METHOD_ARGUMENTS.get((method.__name__, p.name), ARGUMENTS.get(p.name))
            what = f"{function}: {p.name}"
            check = None if given is None else functools.partial(_check_value, check=given, what=what)
        checks.append((p.name, p.default, check))

    @functools.wraps(method)
    def wrapper(self: Graph, *args: Any, **kwargs: Any) -> Any:
        if len(args) > len(names) or not kwargs.keys() <= set(names[len(args) :]):
            try:  # a missing, unknown or repeated argument: inspect says which
                signature.bind(self, *args, **kwargs)
            except TypeError as error:
                raise GeError(f"{function}: {error}") from None
        values = []
        for index, (name, default, check) in enumerate(checks):
            if index < len(args):
                value = args[index]
            elif name in kwargs:
                value = kwargs[name]
            elif default is inspect.Parameter.empty:
                raise GeError(f"{function}: missing a required argument: '{name}'")
            else:
                value = default
            if check is not None and not (value is None and default is None):
                value = check(self, value)
            values.append(value)
        return method(self, *values)

    return cast(Method, wrapper)  # functools.wraps keeps the signature


def _check_tensor(graph: Graph, value: object, function: str, name: str) -> object:
    graph._own(value, function, name)
    return value


def _check_tensors(graph: Graph, value: object, function: str, name: str) -> object:
    graph._own_all(value, function, name)
    return value


def _check_value(graph: Graph, value: object, check: Callable[[object, str], object], what: str) -> object:
    return check(value, what)


@dataclass(frozen=True)
class Node:
    """One op of the graph, as `Graph.nodes` lists it."""

    name: str
    op_type: str
    op: Operation = field(repr=False, compare=False)


class Graph:
    """An `ascend.graph` function under construction, with its weight store."""

    @checked
    def __init__(self, name: str = "main", seed: int = 0, weights: WeightStore | None = None):
        self.weights = weights if weights is not None else WeightStore()
        self._rng = np.random.default_rng(seed)
        self._block = Block()
        self._func = FuncOp(name, FunctionType.from_lists([], []), Region(self._block))
        self._module = ModuleOp([self._func])
        self._input_names: list[str] = []
        self._input_dims: list[tuple[Dim, ...]] = []
        self._outputs: list[tuple[SSAValue, str]] | None = None
        self._counts: dict[str, int] = {}
        self._names: set[str] = set()

    # ----------------------------------------------------------------------------------------
    # The module
    # ----------------------------------------------------------------------------------------

    @classmethod
    def from_module(cls, module: ModuleOp, weights: WeightStore | None = None) -> Graph:
        """Wraps a module holding one graph function (for example one read from text)."""
        if not isinstance(module, ModuleOp):
            raise GeError(
                f"Graph.from_module takes an xDSL builtin.module, got {arguments.shown(module)}; "
                "ge.GraphParser reads models from files"
            )
        funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
        if len(funcs) != 1:
            raise GeError(f"a graph module holds one func.func, found {len(funcs)}")
        g = cls.__new__(cls)
        g.weights = weights if weights is not None else WeightStore()
        g._rng = np.random.default_rng(0)
        g._module, g._func = module, funcs[0]
        g._block = g._func.body.block
        g._input_names = value_names(g._func.arg_attrs, len(g._block.args), "input")
        g._input_dims = symbolic.input_dims(g._func)
        g._counts, g._names = {}, {n.name for n in g.nodes}
        ret = g._block.last_op
        if isinstance(ret, ReturnOp):
            out_names = value_names(g._func.res_attrs, len(ret.arguments), "output")
            g._outputs = list(zip(ret.arguments, out_names, strict=True))
            g._block.erase_op(ret)
        else:
            g._outputs = None
        return g

    @property
    def name(self) -> str:
        """The name of the graph function."""
        return self._func.sym_name.data

    @property
    def block(self) -> Block:
        """The body of the graph function (without its return while the graph is built)."""
        return self._block

    @property
    def module(self) -> ModuleOp:
        """The module, with the function's return and signature brought up to date."""
        if isinstance(self._block.last_op, ReturnOp):
            self._block.erase_op(self._block.last_op)
        outputs = self._output_values()
        self._block.add_op(ReturnOp(*[v for v, _ in outputs]))
        self._func.function_type = FunctionType.from_lists(
            [a.type for a in self._block.args], [v.type for v, _ in outputs]
        )
        self._func.arg_attrs = symbolic.argument_attrs(self._input_names, self._input_dims)
        self._func.res_attrs = _name_attrs([n for _, n in outputs])
        return self._module

    def verify(self) -> None:
        try:
            self.module.verify()
        except VerifyException as error:
            raise VerificationError(str(error)) from None

    def copy(self) -> Graph:
        return Graph.from_module(self.module.clone(), self.weights.copy())

    def __str__(self) -> str:
        return str(self.module)

    def visualize(
        self,
        path: str | os.PathLike[str],
        level: str = "graph",
        target: str = "npu",
        optimization_level: int = 3,
        **options: object,
    ) -> Path:
        """Draws the graph with Graphviz into `path` and returns it: `.dot`/`.gv` write the DOT
        source, `.svg`/`.png`/`.pdf` the picture (rendered by Graphviz's `dot` program).

        `level` is `graph` (the ops as they are), `kernel` (compiled for `target` through the
        kernel-level passes of `optimization_level`: kernels as clusters coloured by unit, with
        their formats) or `stream` (compiled: a lane per stream, event edges across them);
        `options` are `GraphCompiler.compile`'s (e.g. `max_streams=2`). See `ge.visualize`.
        """
        from .visualize import visualize_graph

        return visualize_graph(self.module, self.weights, path, level, target, optimization_level, **options)

    @property
    def nodes(self) -> list[Node]:
        """Every op but constants, in program order."""
        result = []
        for op in self._block.ops:
            if op.name.startswith("ascend.graph.") and not isinstance(op, ops.ConstOp):
                loc = op.location
                name = loc.desc.data if isinstance(loc, NameLoc) else op.name
                result.append(Node(name, op.name.removeprefix("ascend.graph."), op))
        return result

    @property
    def inputs(self) -> list[str]:
        return list(self._input_names)

    @property
    def outputs(self) -> list[str]:
        return [name for _, name in self._output_values()]

    def _output_values(self) -> list[tuple[SSAValue, str]]:
        if self._outputs is not None:
            return list(self._outputs)
        # Without add_output, the outputs are the values nothing consumes.
        found = []
        for op in self._block.ops:
            if isinstance(op, ReturnOp | ops.ConstOp):
                continue
            for result in op.results:
                if not result.uses:
                    found.append((result, _loc_name(op) or result.name_hint or "output"))
        return found

    # ----------------------------------------------------------------------------------------
    # General building blocks
    # ----------------------------------------------------------------------------------------

    @checked
    def add_input(self, name: str, shape: Sequence[int | str | None], dtype: str = "float32") -> Tensor:
        """A graph input. A dimension only the run knows is a symbol: a name (`"batch"`; inputs
        sharing a name share the size), or -1 or None for the symbol `<name>_<axis>`."""
        if name in self._input_names:
            raise GeError(f"graph input '{name}' is declared twice")
        dims = _input_dims(name, shape)
        t = TensorType(element_type(dtype), [d if isinstance(d, int) else DYNAMIC_INDEX for d in dims])
        if (problem := shape_error(t)) is not None:
            raise GeError(f"graph input '{name}': {problem}")
        arg = self._block.insert_arg(t, len(self._block.args))
        arg.name_hint = _hint(name)
        self._input_names.append(name)
        self._input_dims.append(dims)
        return Tensor(arg, name)

    @property
    def input_dims(self) -> dict[str, tuple[Dim, ...]]:
        """Each input's dimensions by input name: sizes, and symbols for those only the run knows."""
        return dict(zip(self._input_names, self._input_dims, strict=True))

    @property
    def symbols(self) -> list[str]:
        """The symbols of the inputs' dimensions, in order of first appearance."""
        return list(dict.fromkeys(d for dims in self._input_dims for d in dims if isinstance(d, str)))

    def symbolic_shapes(self) -> dict[SSAValue, tuple[Dim, ...]]:
        """The dimensions of every value, with symbols where they depend on the inputs' (see
        `ge.symbolic`): look a `Tensor` up by its `.value`."""
        func = next(op for op in self.module.body.block.ops if isinstance(op, FuncOp))
        return symbolic.symbolic_shapes(func)

    @checked
    def specialize(self, sizes: Mapping[str, Sequence[int] | int]) -> Graph:
        """A new graph whose inputs have the sizes given, by input name (`{"x": [4, 3, 8, 8]}`)
        or by symbol (`{"batch": 4}`), every result type inferred again by its op; it shares
        this graph's weight store. A symbol given no size stays symbolic. Raises
        `SpecializationError` for an unknown input or symbol, a wrong rank, a symbol given 0, a
        size that contradicts a static dimension or another size of its symbol, or an op that
        cannot take the sizes."""
        shapes = {k: v for k, v in sizes.items() if isinstance(v, Sequence) and not isinstance(v, str)}
        by_symbol = {k: v for k, v in sizes.items() if k not in shapes}
        bound = symbolic.bind_sizes(self._input_names, self._input_dims, shapes, by_symbol, smallest=1)  # pyright: ignore[reportArgumentType]  # bind_sizes checks each size
        module = self.module.clone()
        symbolic.specialize_module(module, self._input_names, bound)
        graph = Graph.from_module(module, self.weights)
        graph.verify()
        return graph

    def set_outputs(self, outputs: Sequence[tuple[Tensor, str]]) -> None:
        """Replaces the graph's outputs by these tensors, with these names (all or none)."""
        if isinstance(outputs, str | bytes) or not isinstance(outputs, Sequence):
            raise GeError(
                f"Graph.set_outputs takes a list of (Tensor, name) pairs, got {arguments.shown(outputs)}"
            )
        for index, pair in enumerate(outputs):
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                got = arguments.shown(pair)
                raise GeError(f"Graph.set_outputs: outputs[{index}] must be a (Tensor, name) pair, got {got}")
        previous, self._outputs = self._outputs, []
        try:
            for tensor, name in outputs:
                self.add_output(tensor, name)
        except GeError:
            self._outputs = previous
            raise

    @checked
    def add_output(self, tensor: Tensor, name: str | None = None) -> None:
        name = name or tensor.name
        if self._outputs is None:
            self._outputs = []
        if any(taken == name for _, taken in self._outputs):
            raise GeError(f"Graph.add_output: the graph already has an output named '{name}'; name this one")
        self._outputs.append((tensor.value, name))

    @checked
    def cast_outputs(self, dtype: str) -> None:
        """Casts every floating-point output (float16, bfloat16, float32, float64) of another
        dtype to `dtype` at the end of the graph, keeping its name, as atc's `--output_type`."""
        outputs = []
        for value, name in self._output_values():
            tensor = Tensor(value, name)
            if tensor.dtype in FLOATING_OUTPUTS and tensor.dtype != dtype:
                tensor = self.add_cast(tensor, dtype)
            outputs.append((tensor.value, name))
        self._outputs = outputs

    def _own(self, tensor: object, function: str, parameter: str) -> None:
        """Refuses what is not a tensor of this graph (one of another graph would break the IR)."""
        if not isinstance(tensor, Tensor):
            got = arguments.shown(tensor)
            raise GeError(f"{function} takes a Tensor of this graph as {parameter}, got {got}")
        value = tensor.value
        block = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()
        while block is not None and block is not self._block:
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None
        if block is None:
            raise GeError(
                f"{function}: {parameter} is tensor '{tensor.name}' of another graph (or one removed "
                "from this graph); use tensors this graph's add_* returned"
            )

    def _own_all(self, tensors: object, function: str, parameter: str) -> None:
        if isinstance(tensors, str | bytes) or not isinstance(tensors, Sequence):
            got = arguments.shown(tensors)
            raise GeError(f"{function} takes a list of Tensors as {parameter}, got {got}")
        for index, tensor in enumerate(tensors):
            self._own(tensor, function, f"{parameter}[{index}]")

    @checked
    def add_constant(
        self, array: np.ndarray | float, name: str | None = None, dtype: str | None = None
    ) -> Tensor:
        data = np.asarray(array, dtype=dtype) if dtype else np.asarray(array)
        name = self._unique(name or "const")
        element = element_type(data.dtype)
        t = TensorType(element, data.shape)
        # Builtin `dense` holds integers and floats only (no strings).
        if data.size > INLINE_LIMIT or not isinstance(element, IntegerType | AnyFloat):
            value: Attribute = DenseResourceAttr.from_params(self.weights.add(data, name), t)
        else:
            value = DenseIntOrFPElementsAttr(TensorType(element, data.shape), _bytes_attr(data))
        op = ops.ConstOp(value, t)
        return self._append(op, name)[0]

    @checked
    def add_splat(
        self, value: float, shape: Sequence[int], dtype: str = "float32", name: str | None = None
    ) -> Tensor:
        shape = arguments.integers(shape, "Graph.add_splat: shape", minimum=0)
        element = element_type(dtype)
        if not isinstance(element, AnyFloat | IntegerType):
            raise GeError(f"Graph.add_splat: a splat of dtype {dtype} is not supported (numbers only)")
        try:
            scalar: Attribute = (
                FloatAttr(float(value), element)
                if isinstance(element, AnyFloat)
                else IntegerAttr(int(value), element)
            )
        except VerifyException:  # an integer out of the dtype's range
            raise GeError(
                f"Graph.add_splat '{name or 'splat'}': {value} is out of the range of {dtype}"
            ) from None
        op = ops.ConstOp(scalar, TensorType(element, list(shape)))
        return self._append(op, self._unique(name or "splat"))[0]

    @checked
    def add_op(
        self,
        op_class: type[ops.GraphOp],
        inputs: Sequence[Tensor],
        properties: Mapping[str, Attribute | bool] | None = None,
        name: str | None = None,
    ) -> Tensor:
        """Appends a graph op with an inferred result type; `name` becomes its location. A yes/no
        property may be a Python bool: `{"keepdims": False}`."""
        kind = op_class.name.removeprefix("ascend.graph.")
        return self._add(op_class, inputs, properties, self._unique(name or kind))

    @checked
    def add_op_results(
        self,
        op_class: type[ops.GraphOp],
        inputs: Sequence[Tensor],
        properties: Mapping[str, Attribute | bool] | None = None,
        name: str | None = None,
    ) -> list[Tensor]:
        """`add_op` for an op with several results (split, top_k, ...): one tensor per result."""
        kind = op_class.name.removeprefix("ascend.graph.")
        name = self._unique(name or kind)
        try:
            op = op_class.build_inferred([t.value for t in inputs], properties)
        except ValueError as error:
            raise VerificationError(f"node '{name}' ({kind}): {error}") from None
        return self._append(op, name)

    def _add(
        self,
        op_class: type[ops.GraphOp],
        inputs: Sequence[Tensor],
        properties: Mapping[str, Attribute | bool] | None,
        name: str,
    ) -> Tensor:
        kind = op_class.name.removeprefix("ascend.graph.")
        where = f"node '{name}' ({kind})"
        try:
            op = op_class.build_inferred([t.value for t in inputs], properties)
        except ValueError as error:
            raise VerificationError(f"{where}: {error}") from None
        return self._append(op, name)[0]

    def _append(self, op: Operation, name: str) -> list[Tensor]:
        for result in op.results:
            if (error := shape_error(result.type)) is not None:
                raise VerificationError(f"node '{name}' ({op.name.removeprefix('ascend.graph.')}): {error}")
        op.location = NameLoc(StringAttr(name), _UNKNOWN)
        last = self._block.last_op
        if isinstance(last, ReturnOp):  # `module` was read: the graph goes on before its return
            self._block.insert_op_before(op, last)
        else:
            self._block.add_op(op)
        for result in op.results:
            result.name_hint = _hint(name)
        return [Tensor(r, name) for r in op.results]

    def _unique(self, name: str) -> str:
        base, n = name, self._counts.get(name, 0)
        while name in self._names:
            n += 1
            name = f"{base}_{n}"
        self._counts[base] = n
        self._names.add(name)
        return name

    @checked
    def add_cast(self, x: Tensor, dtype: str, name: str | None = None) -> Tensor:
        """`x` converted to `dtype` (round to nearest even; truncation toward zero into integers)."""
        op = ops.CastOp(x.value, element_type(dtype))
        return self._append(op, self._unique(name or f"{x.name}_to_{dtype}"))[0]

    def _cast_to(self, x: Tensor, dtype: str | None) -> Tensor:
        return x if dtype is None or dtype == x.dtype else self.add_cast(x, dtype)

    def _weight(
        self,
        given: np.ndarray | None,
        shape: Sequence[int],
        dtype: str,
        scale: float,
        name: str,
        offset: float = 0.0,
    ) -> Tensor:
        if given is None:
            # Drawn in float64 whatever the layer's dtype (the values a seed gives stay the same)
            # and measured before the draw: a layer of 2**31 channels is a clear error, not a
            # MemoryError. No compile option raises this: a larger layer takes its given values.
            size = math.prod(shape) * 8
            if size > DEFAULT_MAX_TENSOR_BYTES:
                raise GeError(
                    f"{name}: drawing a weight of shape {list(shape)} would take {size:,} bytes of "
                    f"float64, over the {DEFAULT_MAX_TENSOR_BYTES:,} the builder draws; pass the layer "
                    "its weight values instead"
                )
            given = offset + scale * self._rng.standard_normal(tuple(shape))
        data = np.asarray(given)
        if tuple(data.shape) != tuple(shape):
            raise GeError(f"{name}: expected a weight of shape {list(shape)}, got {list(data.shape)}")
        return self.add_constant(data.astype(numpy_dtype(element_type(dtype))), name)

    # ----------------------------------------------------------------------------------------
    # Layers (API.md)
    # ----------------------------------------------------------------------------------------

    @checked
    def add_conv2d(
        self,
        x: Tensor,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
        bias: bool = True,
        weight: np.ndarray | None = None,
        bias_value: np.ndarray | None = None,
        dtype: str | None = None,
        name: str | None = None,
    ) -> Tensor:
        x = self._cast_to(x, dtype)
        if len(x.shape) != 4:
            raise GeError(f"Graph.add_conv2d needs an NCHW input, got shape {list(x.shape)}")
        kh, kw = _pair(kernel_size)
        name = name or self._unique("conv")
        fan_in = x.shape[1] // groups * kh * kw
        w = self._weight(
            weight,
            (out_channels, x.shape[1] // groups, kh, kw),
            x.dtype,
            float(np.sqrt(2.0 / max(fan_in, 1))),
            f"{name}.weight",
        )
        operands = [x, w]
        if bias or bias_value is not None:
            operands.append(self._weight(bias_value, (out_channels,), x.dtype, 0.1, f"{name}.bias"))
        ph, pw = _pair(padding)
        props = {
            "strides": ints_attr(_pair(stride)),
            "pads": ints_attr((ph, pw, ph, pw)),
            "dilations": ints_attr(_pair(dilation)),
            "groups": int_attr(groups),
        }
        return self._add(ops.Conv2DOp, operands, props, name)

    @checked
    def add_batchnorm(
        self,
        x: Tensor,
        epsilon: float = 1e-5,
        scale: np.ndarray | None = None,
        bias: np.ndarray | None = None,
        mean: np.ndarray | None = None,
        var: np.ndarray | None = None,
        dtype: str | None = None,
        name: str | None = None,
    ) -> Tensor:
        x = self._cast_to(x, dtype)
        if len(x.shape) < 2:
            shape = list(x.shape)
            raise GeError(f"Graph.add_batchnorm needs an input with channels on axis 1, got shape {shape}")
        name = name or self._unique("bn")
        c = (x.shape[1],)
        if var is None:
            var = self._rng.uniform(0.5, 1.5, c)
        params = [
            self._weight(scale, c, x.dtype, 0.1, f"{name}.scale", offset=1.0),
            self._weight(bias, c, x.dtype, 0.1, f"{name}.bias"),
            self._weight(mean, c, x.dtype, 0.1, f"{name}.mean"),
            self._weight(var, c, x.dtype, 0.0, f"{name}.var"),
        ]
        props = {"epsilon": ops.float_attr(epsilon)}
        return self._add(ops.BatchNormOp, [x, *params], props, name)

    @checked
    def add_relu(self, x: Tensor, dtype: str | None = None, name: str | None = None) -> Tensor:
        return self.add_op(ops.ReluOp, [self._cast_to(x, dtype)], None, name)

    @checked
    def add_maxpool(
        self,
        x: Tensor,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        ceil_mode: bool = False,
        dtype: str | None = None,
        name: str | None = None,
    ) -> Tensor:
        props = _pool_props(kernel_size, stride, padding, ceil_mode)
        return self.add_op(ops.MaxPoolOp, [self._cast_to(x, dtype)], props, name)

    @checked
    def add_avgpool(
        self,
        x: Tensor,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = False,
        dtype: str | None = None,
        name: str | None = None,
    ) -> Tensor:
        props = _pool_props(kernel_size, stride, padding, ceil_mode)
        props["count_include_pad"] = bool_attr(count_include_pad)
        return self.add_op(ops.AvgPoolOp, [self._cast_to(x, dtype)], props, name)

    @checked
    def add_global_avgpool(self, x: Tensor, dtype: str | None = None, name: str | None = None) -> Tensor:
        return self.add_op(ops.GlobalAvgPoolOp, [self._cast_to(x, dtype)], None, name)

    @checked
    def add_flatten(
        self, x: Tensor, axis: int = 1, dtype: str | None = None, name: str | None = None
    ) -> Tensor:
        return self.add_op(ops.FlattenOp, [self._cast_to(x, dtype)], {"axis": int_attr(axis)}, name)

    @checked
    def add_linear(
        self,
        x: Tensor,
        out_features: int,
        bias: bool = True,
        weight: np.ndarray | None = None,
        bias_value: np.ndarray | None = None,
        dtype: str | None = None,
        name: str | None = None,
    ) -> Tensor:
        """`x @ W^T + b` over the last dimension, as `torch.nn.Linear` (W is out x in)."""
        x = self._cast_to(x, dtype)
        if not x.shape:
            raise GeError(f"Graph.add_linear needs an input of rank >= 1 (features last), got '{x.name}' []")
        name = name or self._unique("linear")
        in_features = x.shape[-1]
        w = self._weight(
            weight,
            (out_features, in_features),
            x.dtype,
            float(np.sqrt(1.0 / max(in_features, 1))),
            f"{name}.weight",
        )
        b = None
        if bias or bias_value is not None:
            b = self._weight(bias_value, (out_features,), x.dtype, 0.1, f"{name}.bias")
        if len(x.shape) == 2:
            operands = [x, w] if b is None else [x, w, b]
            return self._add(ops.GemmOp, operands, {"trans_b": bool_attr(True)}, name)
        wt = self.add_op(ops.TransposeOp, [w], {"perm": ints_attr((1, 0))}, f"{name}.weight_t")
        y = self._add(ops.MatMulOp, [x, wt], None, name)
        return y if b is None else self.add_op(ops.AddOp, [y, b], None, f"{name}.add_bias")

    @checked
    def add_softmax(
        self, x: Tensor, axis: int = -1, dtype: str | None = None, name: str | None = None
    ) -> Tensor:
        return self.add_op(ops.SoftmaxOp, [self._cast_to(x, dtype)], {"axis": int_attr(axis)}, name)

    @checked
    def add_add(self, a: Tensor, b: Tensor, name: str | None = None) -> Tensor:
        return self.add_op(ops.AddOp, [a, b], None, name)

    @checked
    def add_sub(self, a: Tensor, b: Tensor, name: str | None = None) -> Tensor:
        return self.add_op(ops.SubOp, [a, b], None, name)

    @checked
    def add_mul(self, a: Tensor, b: Tensor, name: str | None = None) -> Tensor:
        return self.add_op(ops.MulOp, [a, b], None, name)

    @checked
    def add_div(self, a: Tensor, b: Tensor, name: str | None = None) -> Tensor:
        return self.add_op(ops.DivOp, [a, b], None, name)

    @checked
    def add_matmul(self, a: Tensor, b: Tensor, name: str | None = None) -> Tensor:
        return self.add_op(ops.MatMulOp, [a, b], None, name)

    @checked
    def add_reshape(self, x: Tensor, shape: Sequence[int], name: str | None = None) -> Tensor:
        name = self._unique(name or "reshape")
        try:
            shape = _resolve_shape(x.shape, shape)
        except (ValueError, GeError) as error:
            raise VerificationError(f"node '{name}' (reshape): {error}") from None
        try:
            op = ops.ReshapeOp(x.value, shape)
            op.verify_()
        except VerifyException as error:
            raise VerificationError(f"node '{name}' (reshape): {error}") from None
        return self._append(op, name)[0]

    @checked
    def add_transpose(self, x: Tensor, perm: Sequence[int], name: str | None = None) -> Tensor:
        return self.add_op(ops.TransposeOp, [x], {"perm": ints_attr(perm)}, name)

    @checked
    def add_concat(self, inputs: Sequence[Tensor], axis: int, name: str | None = None) -> Tensor:
        return self.add_op(ops.ConcatOp, list(inputs), {"axis": int_attr(axis)}, name)


def _resolve_shape(source: Sequence[int], shape: Sequence[int]) -> list[int]:
    """A reshape target with at most one -1, inferred from the element count. A dynamic
    dimension of the target (a copy of one of the source's) passes through; with as many dynamic
    dimensions as the source, they are taken to be those copies and the -1 is inferred from the
    static ones, else it stays dynamic. Raises ValueError for any other negative dimension or a
    target that does not hold the source's elements."""
    shape = arguments.integers(shape, "Graph.add_reshape: shape")
    if any(d < -1 and d != DYNAMIC_INDEX for d in shape) or shape.count(-1) > 1:
        raise ValueError(
            f"cannot reshape {list(source)} into {shape}: dimensions are >= 0, and at most one may be -1 "
            "(inferred from the element count)"
        )
    if -1 not in shape:
        return shape
    known = math.prod(d for d in shape if d not in (-1, DYNAMIC_INDEX))
    total = math.prod(d for d in source if d != DYNAMIC_INDEX)
    dynamic = shape.count(DYNAMIC_INDEX)
    if dynamic != sum(d == DYNAMIC_INDEX for d in source):
        shape[shape.index(-1)] = DYNAMIC_INDEX  # only the run knows the element count
        return shape
    if known == 0 or total % known:
        if dynamic:
            shape[shape.index(-1)] = DYNAMIC_INDEX
            return shape
        raise ValueError(f"cannot reshape {list(source)} ({total} elements) into {shape}")
    shape[shape.index(-1)] = total // known
    return shape


def _pool_props(kernel_size, stride, padding, ceil_mode) -> dict[str, Attribute]:
    k = kernel_size
    ph, pw = padding
    return {
        "kernel_shape": ints_attr(k),
        "strides": ints_attr(stride if stride is not None else k),
        "pads": ints_attr((ph, pw, ph, pw)),
        "ceil_mode": bool_attr(ceil_mode),
    }


def _bytes_attr(data: np.ndarray):
    from xdsl.dialects.builtin import BytesAttr

    return BytesAttr(np.ascontiguousarray(data).tobytes())


def _hint(name: str) -> str | None:
    import re

    hint = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return hint if hint and not hint[0].isdigit() else f"v{hint}"


def _loc_name(op: Operation) -> str | None:
    return op.location.desc.data if isinstance(op.location, NameLoc) else None


def _name_attrs(names: Sequence[str]) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr({NAME_ATTR: StringAttr(n)}) for n in names])


def _input_dims(name: str, shape: Sequence[int | str | None]) -> tuple[Dim, ...]:
    """A graph input's dimensions: whole numbers, and symbols for those known at run time (a
    name, or -1 or None for a generated one)."""
    if isinstance(shape, str | bytes) or not isinstance(shape, Sequence):
        raise GeError(f"graph input '{name}': the shape must be a list of dimensions, got {shape!r:.40}")
    dims: list[Dim] = []
    for axis, d in enumerate(shape):
        if d is None or (isinstance(d, int | np.integer) and not isinstance(d, bool) and d == -1):
            dims.append(symbolic.generated_symbol(name, axis))
        elif isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 0:
            dims.append(int(d))
        elif isinstance(d, str) and d:
            dims.append(d)
        else:
            raise GeError(
                f"graph input '{name}': dimension {axis} is {d!r}; a dimension is a whole number >= 0, "
                "or a symbol's name, -1 or None when only the run knows it"
            )
    return tuple(dims)


def _pair(value: int | Sequence[int]) -> tuple[int, int]:
    """A spatial parameter as (height, width): `@checked` has made it a pair; this says so to the types."""
    if isinstance(value, int):
        return value, value
    height, width = value
    return height, width
