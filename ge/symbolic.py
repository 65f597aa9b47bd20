"""Symbolic dimensions: the names of a graph's run-time sizes, carried through its ops by their
own shape inference, and bound to sizes to specialize the graph.

An input dimension only the run knows has a symbol: the name given to `Graph.add_input`
(`"batch"`), an ONNX `dim_param`, or `<input>_<axis>` (`x_0`) when none is given. The function
argument records them next to its name, so they survive printing and parsing:
`%x: tensor<?x3x8x8xf32> {ascend.name = "x", ascend.dims = ["batch", 3, 8, 8]}`; types hold `?`.

`symbolic_shapes` names every value's dimensions without a rule per op: it infers every result
type again with each symbol given distinct probe sizes (three assignments, one pass over the ops
each) through the op's own `reinfer`; a dimension that varies is the symbol, or the integer
combination of symbols (`2*seq`, `seq+1`, `batch*seq`), that fits every assignment, else a fresh
symbol (`s1`), shared by every dimension of equal probe sizes. `specialize` walks the ops the
same way once, with the sizes given.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from ge.dialects import graph as ops
from ge.dialects.common import NAME_ATTR, describe, value_names
from ge.dialects.graph.base import tensor_type
from ge.dialects.verify import DIMS_ATTR

from .errors import GeError, VerificationError

Dim = int | str
"""A dimension: a size, or a symbol (or a combination of symbols, `2*seq`) only the run knows."""


PROBES = 3
"""How many assignments of probe sizes `symbolic_shapes` infers the graph with."""

PROBE_UNIT = 16
"""Probe sizes are multiples of this, so that halving and splitting into heads divide them."""

FIRST_PROBE_PRIME = 11
"""Probe sizes are PROBE_UNIT times distinct primes from this one on (176, 208, ...), large
enough for convolution and pooling windows after several halvings."""


class SpecializationError(GeError):
    """Sizes given to specialize a graph do not fit it, or an op cannot take them."""


def generated_symbol(input_name: str, axis: int) -> str:
    """The symbol of an input dimension given as -1 or None (or an unnamed ONNX dimension)."""
    return f"{input_name}_{axis}"


def input_dims(func: FuncOp) -> list[tuple[Dim, ...]]:
    """Each argument's dimensions: its recorded `ascend.dims`, else its type's with a generated
    symbol for each `?`."""
    args = func.body.block.args
    names = value_names(func.arg_attrs, len(args), "input")
    result = []
    for index, (arg, name) in enumerate(zip(args, names, strict=True)):
        shape = tensor_type(arg.type).get_shape()
        recorded = _recorded_dims(func.arg_attrs, index, name)
        if recorded is None:
            recorded = tuple(
                generated_symbol(name, axis) if d == DYNAMIC_INDEX else d for axis, d in enumerate(shape)
            )
        elif len(recorded) != len(shape) or any(
            isinstance(r, str) != (d == DYNAMIC_INDEX) or (isinstance(r, int) and r != d)
            for r, d in zip(recorded, shape, strict=False)
        ):
            raise VerificationError(
                f"input '{name}': {DIMS_ATTR} = {list(recorded)} does not fit its type {arg.type} "
                "(a symbol stands for each '?', the size for each other dimension)"
            )
        result.append(recorded)
    return result


def argument_attrs(names: Sequence[str], dims: Sequence[tuple[Dim, ...] | None]) -> ArrayAttr[DictionaryAttr]:
    """Argument attributes: each input's name, and its dimensions when a symbol is among them."""
    attrs = []
    for name, shape in zip(names, dims, strict=True):
        entries: dict[str, Attribute] = {NAME_ATTR: StringAttr(name)}
        if shape is not None and any(isinstance(d, str) for d in shape):
            entries[DIMS_ATTR] = dims_attr(shape)
        attrs.append(DictionaryAttr(entries))
    return ArrayAttr(attrs)


def dims_attr(dims: Sequence[Dim]) -> ArrayAttr[Attribute]:
    """The `ascend.dims` attribute of a value: each dimension as a symbol string or an i64."""
    return ArrayAttr([StringAttr(d) if isinstance(d, str) else IntegerAttr(d, i64) for d in dims])


def symbolic_shapes(func: FuncOp) -> dict[SSAValue, tuple[Dim, ...]]:
    """The dimensions of every argument and op result of `func`, with symbols (see the module
    docstring). The probes assume sizes large enough for every window and slice, as theirs are;
    an op that rejects them, or a size only the data decides, gets fresh symbols."""
    block = func.body.block
    dims = input_dims(func)
    namer = _Namer([d for shape in dims for d in shape if isinstance(d, str)])
    walks = []
    for probe in range(PROBES):
        arguments = [
            TensorType(tensor_type(arg.type).element_type, [namer.probe(d, probe) for d in shape])
            for arg, shape in zip(block.args, dims, strict=True)
        ]
        walks.append(infer_types(block, arguments, functools.partial(namer.unknown, probe)))
    shapes: dict[SSAValue, tuple[Dim, ...]] = dict(zip(block.args, dims, strict=True))
    for value in _results(block):
        sizes = [walk[value].get_shape() for walk in walks]
        shapes[value] = tuple(namer.name(axis) for axis in zip(*sizes, strict=True))
    return shapes


Adjust = Callable[[Operation, "list[TensorType] | ValueError"], "list[TensorType]"]


def infer_types(
    block: Block,
    argument_types: Sequence[TensorType],
    adjust: Adjust | None = None,
    factors: Sequence[Fraction] = (),
) -> dict[SSAValue, TensorType]:
    """Every value's type, in one pass over the ops of `block`, when its arguments have
    `argument_types`: each op's values (results, and those of a fused op's epilogue) inferred
    again by the op from its operands' types (`reinfer`, with `factors` for a reshape); an op
    whose operands keep their types keeps its own. `adjust` sees each op's inferred result
    types (or the ValueError its inference raised) and returns the types to go on with; without
    it an op that rejects its operands raises SpecializationError."""
    types: dict[SSAValue, TensorType] = dict(zip(block.args, argument_types, strict=True))
    for op in block.ops:
        if not op.results:
            continue
        operand_types = [types.get(v) or tensor_type(v.type) for v in op.operands]
        if all(v.type == t for v, t in zip(op.operands, operand_types, strict=True)):
            types.update((r, tensor_type(r.type)) for r in op.results)
            continue
        values: dict[SSAValue, TensorType] = {}
        try:
            values = ops.reinfer_values(op, operand_types, factors)
            inferred: list[TensorType] | ValueError = [values[r] for r in op.results]
        except ValueError as error:
            inferred = error
        if adjust is not None:
            inferred = adjust(op, inferred)
        if isinstance(inferred, ValueError):
            raise SpecializationError(f"{describe(op)} cannot take the specialized shapes: {inferred}")
        types.update(values)
        types.update(zip(op.results, inferred, strict=True))
    return types


def retype(types: Mapping[SSAValue, TensorType]) -> None:
    """Gives each value the type `types` has for it (its uses follow)."""
    for value, t in types.items():
        if value.type != t:
            Rewriter.replace_value_with_new_type(value, t)


def bind_sizes(
    names: Sequence[str],
    dims: Sequence[tuple[Dim, ...]],
    input_shapes: Mapping[str, Sequence[int]],
    symbol_sizes: Mapping[str, int],
    error: type[GeError] = SpecializationError,
    smallest: int = 0,
) -> dict[str, int]:
    """The size of each symbol, from whole input shapes and sizes given by symbol, checked:
    an unknown input or symbol, a wrong rank, a size contradicting a static dimension, a
    symbol given two sizes, or one below `smallest`, raises `error` naming them."""
    symbols = sorted({d for shape in dims for d in shape if isinstance(d, str)})
    sizes: dict[str, int] = {}
    sources: dict[str, str] = {}

    def bind(symbol: str, size: int, where: str) -> None:
        if size < smallest:
            raise error(
                f"{where}: symbol '{symbol}' cannot be {size}: give a size of at least {smallest} "
                "(an empty batch has nothing to compute; skip that run instead)"
            )
        if symbol in sizes and sizes[symbol] != size:
            raise error(
                f"symbol '{symbol}' is given two sizes: {sizes[symbol]} by {sources[symbol]} and "
                f"{size} by {where}; give it one"
            )
        sizes[symbol], sources[symbol] = size, where

    for symbol, size in symbol_sizes.items():
        if symbol not in symbols:
            raise error(f"the graph has no symbol '{symbol}'; its symbols are {symbols}")
        bind(symbol, _size(size, f"symbol '{symbol}'", error), f"symbol '{symbol}'")
    by_name = dict(zip(names, dims, strict=True))
    for name, shape in input_shapes.items():
        if name not in by_name:
            raise error(f"the graph has no input '{name}'; its inputs are {list(names)}")
        declared = by_name[name]
        given = [_size(d, f"input '{name}'", error) for d in shape]
        if len(given) != len(declared):
            raise error(
                f"input '{name}' has rank {len(given)} (shape {given}), declared rank {len(declared)} "
                f"({shown(declared)})"
            )
        for axis, (size, dim) in enumerate(zip(given, declared, strict=True)):
            if isinstance(dim, str):
                bind(dim, size, f"input '{name}' axis {axis}")
            elif size != dim:
                raise error(
                    f"input '{name}' axis {axis}: declared {dim}, {size} given "
                    f"(shape {given}, declared {shown(declared)})"
                )
    return sizes


def specialize_module(module: ModuleOp, names: Sequence[str], sizes: Mapping[str, int]) -> None:
    """Gives the graph function of `module` (changed in place) the sizes of its symbols: each
    input's bound symbols become sizes, and every result type is inferred again."""
    func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
    block = func.body.block
    dims = input_dims(func)
    new_dims = [tuple(sizes.get(d, d) if isinstance(d, str) else d for d in shape) for shape in dims]
    arguments = [
        TensorType(tensor_type(arg.type).element_type, [_size_or_dynamic(d) for d in shape])
        for arg, shape in zip(block.args, new_dims, strict=True)
    ]
    retype(infer_types(block, arguments))
    func.arg_attrs = argument_attrs(names, new_dims)


def shown(dims: Sequence[Dim]) -> str:
    """Dimensions as a list, symbols unquoted: `[batch, 3, 8, 8]`."""
    return "[" + ", ".join(str(d) for d in dims) + "]"


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


class _Namer:
    """Probe sizes of symbols, and the name of a dimension from its probe sizes."""

    def __init__(self, symbols: Sequence[str]) -> None:
        self._primes = _primes(FIRST_PROBE_PRIME)
        self.inputs = list(dict.fromkeys(symbols))
        self.sizes: dict[str, tuple[int, ...]] = {}
        self.names: dict[tuple[int, ...], str] = {}
        self._fresh: dict[tuple[SSAValue, int], str] = {}
        self._taken = set(self.inputs)
        for symbol in self.inputs:
            self._register(symbol, self._new_sizes())

    def probe(self, dim: Dim, probe: int) -> int:
        return dim if isinstance(dim, int) else self.sizes[dim][probe]

    def unknown(self, probe: int, op: Operation, inferred: list[TensorType] | ValueError) -> list[TensorType]:
        """An op's types in a probe with a fresh symbol for each size it cannot tell (its
        inference rejected the probe sizes, or only the data decides the size)."""
        declared = [tensor_type(r.type) for r in op.results]
        if isinstance(inferred, ValueError):
            inferred = declared
        result = []
        for index, (value, t) in enumerate(zip(op.results, inferred, strict=True)):
            shape = [
                self.sizes[self._fresh_symbol(value, axis)][probe] if d == DYNAMIC_INDEX else d
                for axis, d in enumerate(t.get_shape())
            ]
            result.append(TensorType(declared[index].element_type, shape))
        return result

    def name(self, sizes: tuple[int, ...]) -> Dim:
        if all(s == sizes[0] for s in sizes):
            return sizes[0]
        if sizes not in self.names:
            self._register(self._fit(sizes) or self._new_name(), sizes)
        return self.names[sizes]

    def _fit(self, v: tuple[int, ...]) -> str | None:
        """The integer combination of input symbols with these probe sizes, if one fits."""
        for s in self.inputs:
            u = self.sizes[s]
            step, rise = u[1] - u[0], v[1] - v[0]
            if step and rise % step == 0:
                a = rise // step
                b = v[0] - a * u[0]
                if all(a * x + b == y for x, y in zip(u, v, strict=True)):
                    return _linear(a, s, b)
        for s, t in itertools.combinations_with_replacement(self.inputs, 2):
            u, w = self.sizes[s], self.sizes[t]
            if v[0] % (u[0] * w[0]) == 0:
                c = v[0] // (u[0] * w[0])
                if all(c * x * z == y for x, z, y in zip(u, w, v, strict=True)):
                    return _linear(c, f"{s}*{t}", 0)
            b = v[0] - u[0] - w[0]
            if s != t and all(x + z + b == y for x, z, y in zip(u, w, v, strict=True)):
                return _linear(1, f"{s}+{t}", b)
        return None

    def _fresh_symbol(self, value: SSAValue, axis: int) -> str:
        if (value, axis) not in self._fresh:
            symbol = self._new_name()
            self._register(symbol, self._new_sizes())
            self._fresh[value, axis] = symbol
        return self._fresh[value, axis]

    def _register(self, symbol: str, sizes: tuple[int, ...]) -> None:
        self.sizes[symbol], self.names[sizes] = sizes, symbol
        self._taken.add(symbol)

    def _new_sizes(self) -> tuple[int, ...]:
        return tuple(PROBE_UNIT * next(self._primes) for _ in range(PROBES))

    def _new_name(self) -> str:
        name = next(f"s{n}" for n in itertools.count(1) if f"s{n}" not in self._taken)
        self._taken.add(name)
        return name


def _linear(a: int, term: str, b: int) -> str:
    text = term if a == 1 else f"-{term}" if a == -1 else f"{a}*{term}"
    return text if b == 0 else f"{text}+{b}" if b > 0 else f"{text}-{-b}"


def _primes(start: int) -> Iterator[int]:
    for n in itertools.count(start):
        if all(n % k for k in range(2, int(n**0.5) + 1)):
            yield n


def _results(block: Block) -> list[SSAValue]:
    return [r for op in block.ops for r in op.results]


def _size_or_dynamic(dim: Dim) -> int:
    return DYNAMIC_INDEX if isinstance(dim, str) else dim


def _recorded_dims(attrs: ArrayAttr[DictionaryAttr] | None, index: int, name: str) -> tuple[Dim, ...] | None:
    entry = attrs.data[index].data.get(DIMS_ATTR) if attrs and index < len(attrs.data) else None
    if not isinstance(entry, ArrayAttr):
        return None
    dims: list[Dim] = []
    for d in entry.data:
        if isinstance(d, StringAttr):
            dims.append(d.data)
        elif isinstance(d, IntegerAttr):
            dims.append(d.value.data)
        else:
            raise VerificationError(f"input '{name}': {DIMS_ATTR} holds sizes and symbol names, got {d}")
    return tuple(dims)


def _size(value: object, where: str, error: type[GeError]) -> int:
    import numpy as np

    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise error(f"{where}: a size is a whole number >= 0, got {value!r:.40}")
    return int(value)
