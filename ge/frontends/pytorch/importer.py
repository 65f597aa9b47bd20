"""The PyTorch importer: walks a core ATen FX graph (a `torch.export.ExportedProgram`) node by node
and calls one converter per ATen overload.

Converters see a `Node`: its arguments with every FX node replaced by what it stands for (a graph
`Tensor`, or a Python number for a size the export knows), its keyword arguments, and the dtype
and shape the export recorded for its result. Lifted parameters, buffers and constants become
graph weights named after their fully qualified names (`layer1.0.conv1.weight`); user inputs
become graph inputs named after the forward's arguments. Symbolic sizes (from `dynamic_shapes`)
become `?` dimensions whose graph symbol is the `Dim`'s name (`Dim("batch")`), or torch's own
symbol (`s0`) for a size it made symbolic itself; inputs sharing a `Dim` share the symbol.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ge.errors import InvalidModelError, UnsupportedOperatorError
from ge.frontends.common import converting, unsupported_form_error, unsupported_operators_error
from ge.graph import Graph, Tensor


@dataclass(frozen=True)
class Symbolic:
    """A size only the run knows, as the export states it: a symbol (`s0`) or an expression of
    symbols (`5*s1`). It stands for such a size in a converter's arguments and in the shapes the
    export recorded, so a literal -1 (`x[:, :-1]`, `view(n, -1)`) stays the number it is."""

    expr: str

    def __str__(self) -> str:
        return self.expr


def is_symbolic(*sizes: Any) -> bool:
    """Whether any of `sizes` is one only the run knows."""
    return any(isinstance(size, Symbolic) for size in sizes)


SIZE_ARITHMETIC = tuple(
    f"_operator.{name}" for name in ("add", "sub", "mul", "floordiv", "mod", "neg", "pow", "truediv")
)
"""Python's arithmetic on sizes (`batch * heads`), which the export records a value for: a number,
or for symbolic sizes the expression the result is (`2*s0`)."""
IDENTITY_FUNCTIONS = ("_operator.getitem", *SIZE_ARITHMETIC)
"""FX call targets that are not ATen ops but Python's own (picking one result of a tuple, size
arithmetic)."""


@dataclass
class Node:
    """What a converter sees of one FX node."""

    target: str
    """The ATen overload, e.g. `aten.convolution.default`."""
    name: str
    args: list[Any]
    kwargs: dict[str, Any]
    dtype: str | None
    """The dtype of the (first) result the export recorded, as ge names it."""
    shape: tuple[int | Symbolic, ...] | None
    """The shape of the (first) result, a symbolic size as a `Symbolic`."""
    graph: Graph = field(repr=False)
    operand_shapes: list[tuple[int | Symbolic, ...] | None] = field(default_factory=list, repr=False)
    """The shape the export recorded for each positional argument (None for one not a tensor)."""
    used_results: frozenset[int] | None = field(default=None, repr=False)
    """The indices of the results of a multi-result op that the program reads (None: all)."""

    def arg(self, index: int, key: str, default: Any = None) -> Any:
        """Positional argument `index`, else keyword `key`, else `default`."""
        if index < len(self.args):
            return self.args[index]
        return self.kwargs.get(key, default)

    def uses_result(self, index: int) -> bool:
        """Whether the program reads result `index` (of a multi-result op)."""
        return self.used_results is None or index in self.used_results

    def fail(self, what: str) -> UnsupportedOperatorError:
        """An unsupported form of a supported op: names the node and what is missing."""
        return unsupported_form_error(self.target, "aten", self.name, what)

    def static_shape(self, what: str) -> list[int]:
        """The result shape the export recorded, refused (naming `what`) when it has a symbolic size."""
        if self.shape is None or is_symbolic(*self.shape):
            raise self.fail(f"{what} of a symbolic size is not supported")
        return [int(d) for d in self.shape if isinstance(d, int)]

    def scalar(self, value: Any, dtype: str | None = None) -> Tensor:
        """A Python number as a 0-d constant of `dtype` (the node's result dtype by default)."""
        if is_symbolic(value):
            raise self.fail(f"a symbolic size ({value}) used as a value is not supported")
        dtype = dtype or self.dtype or "float32"
        return self.graph.add_splat(
            float(value) if "float" in dtype else int(value), [], dtype, f"{self.name}.scalar"
        )

    def tensor(self, value: Any, dtype: str | None = None) -> Tensor:
        """`value` as a tensor: itself when it is one, else a 0-d constant."""
        if isinstance(value, Tensor):
            return value if dtype is None or value.dtype == dtype else self.graph.add_cast(value, dtype)
        return self.scalar(value, dtype)


Result = Tensor | int | Symbolic | Sequence[Tensor | None] | None
"""What a converter returns: a tensor, a size (an int, or a `Symbolic` only the run knows), a
tuple's tensors, or nothing."""
Converter = Callable[[Graph, Node], Result]


def along_one_axis(convert: Converter) -> Converter:
    """`convert`, an op along dims, for 0-d operands too: ATen takes dims 0 and -1 of a 0-d
    tensor as those of a one-element vector, while a graph op's axis must lie within its rank.
    So 0-d tensor arguments are viewed as [1], and the tensor results (0-d in ATen) viewed back."""
    return _through_views(convert, 0, lambda shape: [1], lambda shape: [], "vector", every_argument=True)


def unbatched(convert: Converter, spatial: int = 2) -> Converter:
    """`convert`, a pool of (N, C, H, W) input (`spatial` 2; (N, C, D, H, W) for 3), for an
    unbatched (C, H, W) one too, as ATen pools it: the input viewed as a batch of one, and the
    results without their batch axis."""
    return _through_views(
        convert, spatial + 1, lambda shape: [1, *shape], lambda shape: list(shape[1:]), "batch"
    )


def _through_views(
    convert: Converter,
    rank: int,
    view: Callable[[tuple[int, ...]], list[int]],
    back: Callable[[tuple[int, ...]], list[int]],
    suffix: str,
    every_argument: bool = False,
) -> Converter:
    """`convert` on the `view` of its first argument (of every tensor argument of its rank, with
    `every_argument`) when that is a tensor of `rank`; each tensor result is reshaped by `back`."""

    @functools.wraps(convert)
    def converter(g: Graph, node: Node) -> Result:
        x = node.arg(0, "self")
        if not isinstance(x, Tensor) or len(x.shape) != rank:
            return convert(g, node)

        def viewed(value: Any, key: str, first: bool = False) -> Any:
            if isinstance(value, Tensor) and len(value.shape) == rank and (first or every_argument):
                return g.add_reshape(value, view(value.shape), f"{node.name}.{key}_{suffix}")
            return value

        args = [viewed(a, str(i), first=i == 0) for i, a in enumerate(node.args)]
        kwargs = {k: viewed(v, k) for k, v in node.kwargs.items()}
        results = convert(g, replace(node, args=args, kwargs=kwargs))

        def restored(value: Any, index: int) -> Any:
            if isinstance(value, Tensor) and back(value.shape) != list(value.shape):
                return g.add_reshape(value, back(value.shape), f"{node.name}.{index}_without_{suffix}")
            return value

        if isinstance(results, list | tuple):
            return [restored(r, i) for i, r in enumerate(results)]
        return restored(results, 0)

    return converter


def import_program(program: Any, converters: Mapping[str, Converter], dynamic_shapes: Any = None) -> Graph:
    """A `Graph` computing `program` (an ExportedProgram of core ATen ops) with its weights;
    `dynamic_shapes` (as given to `torch.export.export`) names the symbols of its inputs."""
    check_supported(program, converters)
    signature = program.graph_signature
    if signature.buffers_to_mutate:
        mutated = sorted({*signature.buffers_to_mutate.values()})[0]
        raise UnsupportedOperatorError(
            f"forward writes buffer '{mutated}' in place; ge graphs keep no state: return the new "
            "value as an output, or drop the write",
            category="input",
        )
    if getattr(signature, "user_inputs_to_mutate", None):
        mutated = sorted({*signature.user_inputs_to_mutate.values()})[0]
        raise UnsupportedOperatorError(
            f"forward writes its input '{mutated}' in place; ge graphs keep no state: return the "
            "new value as an output, or drop the write",
            category="input",
        )
    weights = {
        **{k: program.state_dict[v] for k, v in signature.inputs_to_parameters.items()},
        **{k: _buffer(program, v) for k, v in signature.inputs_to_buffers.items()},
        **{k: program.constants[v] for k, v in signature.inputs_to_lifted_tensor_constants.items()},
    }
    names = {
        **signature.inputs_to_parameters,
        **signature.inputs_to_buffers,
        **signature.inputs_to_lifted_tensor_constants,
    }
    g = Graph()
    symbols = _symbol_names(program, weights, dynamic_shapes)
    env: dict[str, Any] = {}
    for fx_node in program.graph_module.graph.nodes:
        if fx_node.op == "placeholder":
            if fx_node.name in weights:
                env[fx_node.name] = g.add_constant(to_numpy(weights[fx_node.name]), names[fx_node.name])
            else:
                env[fx_node.name] = _input(g, fx_node, symbols)
        elif fx_node.op == "call_function":
            env[fx_node.name] = _convert(g, fx_node, env, converters)
        elif fx_node.op == "output":
            _outputs(g, fx_node, env, output_names(program.call_spec.out_spec))
        else:
            raise InvalidModelError(
                f"FX node '{fx_node.name}' is a {fx_node.op}, which an exported program has not"
            )
    return g


def check_supported(program: Any, converters: Mapping[str, Converter]) -> None:
    """Raises one `UnsupportedOperatorError` listing every node whose ATen op has no converter."""
    unsupported = [
        {"op_type": target_name(n.target), "domain": "aten", "node": n.name}
        for n in program.graph_module.graph.nodes
        if n.op == "call_function"
        and target_name(n.target) not in converters
        and target_name(n.target) not in IDENTITY_FUNCTIONS
    ]
    if unsupported:
        raise unsupported_operators_error("ATen", unsupported)


def target_name(target: Any) -> str:
    """The name of an FX call target: `aten.relu.default` for an ATen overload."""
    if callable(target) and getattr(target, "__module__", None) == "_operator":
        return f"_operator.{target.__name__}"
    return str(target)


def to_numpy(value: Any) -> np.ndarray:
    """A torch tensor (or a number) as a numpy array of the same dtype; bfloat16 through float32."""
    import torch

    if not isinstance(value, torch.Tensor):
        return np.asarray(value)
    value = value.detach().cpu()
    if value.dtype == torch.bfloat16:
        import ml_dtypes

        return value.float().numpy().astype(ml_dtypes.bfloat16)
    return value.numpy().copy()


def dtype_of(torch_dtype: Any) -> str:
    """The ge name of a torch dtype (`torch.float32` -> `float32`)."""
    name = str(torch_dtype).removeprefix("torch.")
    return {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32"}.get(
        name, name
    )


def shape_of(value: Any) -> tuple[int | Symbolic, ...]:
    """A (fake) tensor's shape, each symbolic size as a `Symbolic`."""
    return tuple(d if isinstance(d, int) else Symbolic(str(d)) for d in value.shape)


def _buffer(program: Any, name: str) -> Any:
    return program.state_dict[name] if name in program.state_dict else program.constants[name]


def _input(g: Graph, fx_node: Any, symbols: Mapping[str, str]) -> Tensor:
    value = fx_node.meta.get("val")
    if value is None or not hasattr(value, "shape"):
        raise UnsupportedOperatorError(
            f"input '{fx_node.name}' is {type(value).__name__}, not a tensor; pass tensors as the "
            "example inputs (numbers and flags become constants of the export)",
            category="input",
        )
    dims = [d if isinstance(d, int) else symbols.get(str(d), -1) for d in value.shape]
    return g.add_input(fx_node.name, dims, dtype_of(value.dtype))


def _symbol_names(program: Any, weights: Mapping[str, Any], dynamic_shapes: Any) -> dict[str, str]:
    """Each torch symbol of an input size (`s0`) -> its graph symbol: the name of the `Dim` that
    `dynamic_shapes` gives at that place, else the torch symbol itself. A size that is an
    expression of symbols (`2*s0`) has none: the graph generates one."""
    inputs = [n for n in program.graph_module.graph.nodes if n.op == "placeholder" and n.name not in weights]
    if isinstance(dynamic_shapes, Mapping):
        specs = [dynamic_shapes.get(n.name) for n in inputs]
    elif isinstance(dynamic_shapes, Sequence):
        specs = list(dynamic_shapes) + [None] * (len(inputs) - len(dynamic_shapes))
    else:
        specs = [None] * len(inputs)
    names: dict[str, str] = {}
    for fx_node, spec in zip(inputs, specs, strict=False):
        shape = getattr(fx_node.meta.get("val"), "shape", ())
        for size in shape:
            expr = getattr(getattr(size, "node", None), "expr", None)
            if expr is not None and getattr(expr, "is_Symbol", False):
                names.setdefault(str(size), str(size))
        given = spec.items() if isinstance(spec, Mapping) else enumerate(spec or ())
        for axis, dim in given:
            name = getattr(dim, "__name__", None)
            if (
                isinstance(axis, int)
                and axis < len(shape)
                and isinstance(name, str)
                and str(shape[axis]) in names
            ):
                names[str(shape[axis])] = name
    return names


def _convert(g: Graph, fx_node: Any, env: Mapping[str, Any], converters: Mapping[str, Converter]) -> Any:
    target = target_name(fx_node.target)
    args = [_resolve(a, env) for a in fx_node.args]
    if target == "_operator.getitem":
        return args[0][args[1]]
    value = fx_node.meta.get("val")
    if target in SIZE_ARITHMETIC:
        return value if isinstance(value, int) else Symbolic(str(value))
    # The export's example values (fake tensors, SymInts) have no types to check against.
    first: Any = value[0] if isinstance(value, list | tuple) and value else value
    node = Node(
        target=target,
        name=fx_node.name,
        args=args,
        kwargs={k: _resolve(v, env) for k, v in fx_node.kwargs.items()},
        dtype=dtype_of(first.dtype) if hasattr(first, "dtype") else None,
        shape=shape_of(first) if hasattr(first, "shape") else None,
        graph=g,
        operand_shapes=[_recorded_shape(a) for a in fx_node.args],
        used_results=_used_results(fx_node),
    )
    with converting(f"{target} at node '{fx_node.name}'"):
        return converters[target](g, node)


def _used_results(fx_node: Any) -> frozenset[int] | None:
    """The results the program picks from `fx_node` (None when a user takes them all)."""
    users = list(fx_node.users)
    if not all(target_name(u.target) == "_operator.getitem" for u in users):
        return None
    return frozenset(u.args[1] for u in users)


def _recorded_shape(value: Any) -> tuple[int | Symbolic, ...] | None:
    """The shape the export recorded for an argument that is a tensor's FX node, else None."""
    import torch.fx

    recorded = value.meta.get("val") if isinstance(value, torch.fx.Node) else None
    return shape_of(recorded) if hasattr(recorded, "shape") else None


def _resolve(value: Any, env: Mapping[str, Any]) -> Any:
    """An argument with each FX node replaced by its tensor, and each symbolic size by a `Symbolic`."""
    import torch.fx

    if isinstance(value, torch.fx.Node):
        if value.name in env:
            if env[value.name] is None and target_name(value.target) == "_operator.getitem":
                source: Any = value.args[0]
                index = value.args[1]
                what = f"its result {index}, which node '{value.name}' reads, is not computed"
                raise unsupported_form_error(target_name(source.target), "aten", source.name, what)
            return env[value.name]
        return Symbolic(str(value.meta.get("val", value.name)))
    if isinstance(value, list | tuple):
        return type(value)(_resolve(v, env) for v in value)
    if isinstance(value, torch.SymInt):
        return Symbolic(str(value))
    return value


def output_names(out_spec: Any) -> list[str]:
    """The graph output names of a forward's results, from the pytree path of each tensor: one
    tensor is `output`, a tuple or list `output_0`, `output_1`, ..., a dict its keys (`a`), and
    nested containers join the path with dots (`b.0`)."""
    # torch 2.13 has no public pytree module (torch.utils.pytree); _pytree is what torch.export uses.
    import torch.utils._pytree as pytree

    if out_spec is None or out_spec.is_leaf():
        return ["output"]
    leaves = pytree.tree_unflatten(list(range(out_spec.num_leaves)), out_spec)
    names = []
    for path, _ in pytree.tree_flatten_with_path(leaves)[0]:
        parts = [_key_name(key) for key in path]
        if isinstance(path[0], pytree.SequenceKey):
            parts[0] = f"output_{parts[0]}"
        names.append(".".join(parts) or "output")
    return names


def _key_name(key: Any) -> str:
    for attribute in ("key", "idx", "name"):
        if hasattr(key, attribute):
            return str(getattr(key, attribute))
    return str(key)


def _outputs(g: Graph, fx_node: Any, env: Mapping[str, Any], names: Sequence[str]) -> None:
    results = [_resolve(a, env) for a in fx_node.args[0]]
    if not all(isinstance(r, Tensor) for r in results):
        kinds = ", ".join(type(r).__name__ for r in results)
        raise UnsupportedOperatorError(
            f"the program returns {kinds}; ge graphs return tensors only", category="input"
        )
    if len(names) != len(results):  # a program whose outputs its spec does not describe
        names = ["output"] if len(results) == 1 else [f"output_{i}" for i in range(len(results))]
    g.set_outputs(list(zip(results, names, strict=True)))


__all__ = [
    "Converter",
    "Node",
    "Symbolic",
    "along_one_axis",
    "check_supported",
    "import_program",
    "is_symbolic",
    "output_names",
    "target_name",
    "unbatched",
]
