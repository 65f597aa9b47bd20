"""`torch.compile(model, backend="ge")`: a Dynamo backend that runs each captured graph on ge.

Dynamo hands over an FX graph of torch calls whose parameters and buffers arrive as inputs. The
backend binds those to the graph as constants (weights, as `torch.compile`'s freezing does),
exports the rest with `torch.export`, converts it with the frontend's converters, compiles it
with `ge.GraphCompiler` and runs it with `ge.GraphExecutor`. Each call checks the parameters and
buffers it is given against those compiled in (the same storage, the same version counter, which
every in-place write such as an optimizer step advances); a changed one compiles the graph again
with the new values, logged and counted (`RECOMPILES`). A write through `.data` bypasses the
version counter and is not seen.

When a shape changes, Dynamo makes that dimension symbolic; ge compiles static shapes, so the
backend then compiles the graph once per new shape of the inputs, when a call first brings it
(counted in `SHAPE_COMPILES`; each shape after a graph's first logs the recompile line
`GraphExecutor` and `ge.backend` log), and reuses a graph it compiled already for the same IR and
weights. A graph ge cannot take (an unsupported op, a graph that autograd must differentiate, a
compile error) runs eagerly instead, with one logged line saying why.

`options` of `torch.compile` pass through: `optimization_level` (default 3), `precision_mode`
and `soc_version` (the compile target, e.g. "Ascend910B2").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ge.errors import GeError
from ge.recompiles import log_recompile

LOG = logging.getLogger("ge.frontends.pytorch.dynamo")

OPTIONS = ("optimization_level", "precision_mode", "soc_version")
"""The `torch.compile(options=...)` keys the backend takes."""

WEIGHT_SOURCES = ("._parameters[", "._buffers[")
"""What the source of a Dynamo graph input holding a parameter or a buffer contains."""


def ge_backend(
    graph_module: Any, example_inputs: Sequence[Any], options: Mapping[str, Any] | None = None, **_: Any
) -> Callable[..., Any]:
    """The Dynamo backend: a callable running `graph_module` on ge, or `graph_module.forward`
    itself when ge cannot take it (logged with the reason)."""
    compile_options = _compile_options(options or {})
    try:
        return _compiled(graph_module, example_inputs, compile_options)
    except GeError as error:
        LOG.warning("ge backend: running the graph eagerly: %s", str(error).splitlines()[0])
        return graph_module.forward


def _compile_options(options: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise GeError(f"the ge backend takes the options {', '.join(OPTIONS)}; got {', '.join(unknown)}")
    compile_options = {"optimization_level": options.get("optimization_level", 3)}
    if "precision_mode" in options:
        compile_options["precision_mode"] = options["precision_mode"]
    if "soc_version" in options:
        compile_options["target"] = options["soc_version"]
    return compile_options


def _compiled(
    graph_module: Any, example_inputs: Sequence[Any], options: Mapping[str, Any]
) -> Callable[..., Any]:
    import torch

    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    sources = [source_name(node) for node in placeholders]
    kinds = [
        "size" if not isinstance(tensor, torch.Tensor) else "weight" if is_weight(source, tensor) else "input"
        for source, tensor in zip(sources, example_inputs, strict=True)
    ]
    if torch.is_grad_enabled() and any(
        isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs
    ):
        raise GeError(
            "the graph needs autograd (an input or parameter requires grad); run it under "
            "torch.no_grad() or torch.inference_mode() to use ge"
        )
    build = _builder(graph_module, kinds, options)
    weights = [i for i, kind in enumerate(kinds) if kind == "weight"]
    # One compiled graph per shape of the inputs: Dynamo hands over symbolic sizes once a shape
    # changes, and ge compiles static shapes, so each new shape is compiled when it first runs.
    compiled: dict[tuple[Any, ...], Callable[..., Any]] = {}
    state = {"seen": _identity(example_inputs, weights), "compiles": 0}
    if "size" not in kinds:
        compiled[_shape_key(example_inputs, kinds)] = build(example_inputs)
        state["compiles"] = 1

    def run(*args: Any) -> Any:
        seen = _identity(args, weights)
        if seen != state["seen"]:
            changed = next(i for i, (a, b) in enumerate(zip(seen, state["seen"], strict=True)) if a != b)
            LOG.warning(
                "ge backend: %s changed since the graph was compiled; compiling again",
                weight_name(sources[weights[changed]]),
            )
            RECOMPILES[0] += 1
            compiled.clear()
            state["seen"] = seen
        key = _shape_key(args, kinds)
        if key not in compiled:
            if state["compiles"]:  # the graph's first shape is no recompile
                shown = ", ".join(str(list(k)) if isinstance(k, tuple) else str(k) for k in key)
                log_recompile("the Dynamo graph", shown, state["compiles"])
            state["compiles"] += 1
            compiled[key] = _build_for_shape(build, graph_module, args, key)
        return compiled[key](*args)

    return run


RECOMPILES = [0]
"""How many times a graph was compiled again because a parameter or buffer changed."""

SHAPE_COMPILES = [0]
"""How many graphs were compiled for input shapes Dynamo left symbolic (one per new shape)."""


EXECUTORS_KEPT = 32
"""How many compiled graphs the backend keeps for reuse, the least recently used dropped first."""

_EXECUTORS: dict[tuple[str, str, str], Any] = {}
"""Compiled graphs by their IR, compile options and weight values, least recently used first."""


def reset() -> None:
    """Forgets the compiled graphs kept for reuse (as `torch._dynamo.reset()` forgets Dynamo's)."""
    _EXECUTORS.clear()


def source_name(node: Any) -> str:
    """The Dynamo source of a graph input: `L['self']._modules['0']._parameters['weight']` for
    a parameter, `L['x']` for a user input ("" when Dynamo recorded none)."""
    source = getattr(node.meta.get("grapharg"), "source", None)
    name = getattr(source, "name", "")
    return str(name() if callable(name) else name)


def is_weight(source: str, tensor: Any) -> bool:
    """Whether a graph input holds a parameter or a buffer (bound as a constant), by its type or
    its Dynamo source; the only place that reads Dynamo's source naming."""
    import torch

    return isinstance(tensor, torch.nn.Parameter) or any(s in source for s in WEIGHT_SOURCES)


def weight_name(source: str) -> str:
    """A parameter's or buffer's qualified name (`0.weight`) from its Dynamo source."""
    import re

    parts = re.findall(r"\._(?:modules|parameters|buffers)\['([^']*)'\]", source)
    return f"parameter or buffer '{'.'.join(parts)}'" if parts else f"weight input {source}"


def _shape_key(args: Sequence[Any], kinds: Sequence[str]) -> tuple[Any, ...]:
    return tuple(
        tuple(a.shape) if kind == "input" else a
        for a, kind in zip(args, kinds, strict=True)
        if kind != "weight"
    )


def _build_for_shape(
    build: Callable[[Sequence[Any]], Callable[..., Any]],
    graph_module: Any,
    args: Sequence[Any],
    key: tuple[Any, ...],
) -> Callable[..., Any]:
    """The graph compiled for the shapes of `args`, or `graph_module` itself (logged) when ge
    cannot take it."""
    LOG.info("ge backend: compiling the graph for input shapes %s", key)
    SHAPE_COMPILES[0] += 1
    try:
        return build(args)
    except GeError as error:
        LOG.warning("ge backend: running the graph eagerly: %s", str(error).splitlines()[0])
        return graph_module.forward


def _digest(tensors: Any) -> str:
    """A hash of the values of `tensors` (a storage address may be reused by other values)."""
    import hashlib

    import torch

    digest = hashlib.sha256()
    for tensor in tensors:
        digest.update(str((tuple(tensor.shape), tensor.dtype)).encode())
        digest.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def _identity(args: Sequence[Any], weights: Sequence[int]) -> list[tuple[int, int]]:
    """Per weight input, its storage and version counter: what an in-place write changes."""
    return [(args[i].data_ptr(), args[i]._version) for i in weights]


def _builder(
    graph_module: Any, kinds: Sequence[str], options: Mapping[str, Any]
) -> Callable[[Sequence[Any]], Callable[..., Any]]:
    """A function compiling `graph_module` with the weight inputs and sizes of the arguments it
    is given bound as constants, returning the callable that runs it on ge."""
    import torch
    import torch.utils._pytree as pytree  # torch 2.13 has no public pytree module

    import ge

    from . import CONVERTERS
    from .exporter import decomposition_table, quiet_torch
    from .importer import import_program

    user = [i for i, kind in enumerate(kinds) if kind == "input"]
    weights = [i for i, kind in enumerate(kinds) if kind == "weight"]

    def build(arguments: Sequence[Any]) -> Callable[..., Any]:
        bound = _Bound(graph_module, arguments, kinds)
        try:  # decomposing runs the export's guards, which can fail too (a name Dynamo bound)
            with quiet_torch():
                program = torch.export.export(bound, tuple(arguments[i] for i in user), strict=False)
                program = program.run_decompositions(decomposition_table())
        except Exception as error:  # torch raises many kinds; the reason is its first line
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise GeError(f"torch.export could not trace the graph: {first}") from None
        graph = import_program(program, CONVERTERS)
        # The same graph with the same weights (a shape Dynamo saw static, then symbolic) is
        # compiled once.
        key = (str(graph), repr(sorted(options.items())), _digest(arguments[i] for i in weights))
        executor = _EXECUTORS.pop(key, None)
        if executor is None:
            executor = ge.GraphExecutor()
            executor.load_graph(ge.GraphCompiler().compile(graph, **options))
        _EXECUTORS[key] = executor
        while len(_EXECUTORS) > EXECUTORS_KEPT:
            del _EXECUTORS[next(iter(_EXECUTORS))]
        names = graph.inputs
        out_spec = program.call_spec.out_spec
        if out_spec is None:
            raise GeError("torch.export gave the program no output structure")

        def run(*args: Any) -> Any:
            feeds = {name: args[i].detach().cpu().numpy() for name, i in zip(names, user, strict=True)}
            results = [torch.from_numpy(r) for r in executor.run(feeds)]
            return pytree.tree_unflatten(results, out_spec)

        return run

    return build


def _Bound(graph_module: Any, example_inputs: Sequence[Any], kinds: Sequence[str]) -> Any:
    """A module running `graph_module` with its weight inputs bound as buffers and its size
    inputs as the numbers they are in `example_inputs`."""
    import torch

    class Bound(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.graph_module = graph_module
            for index, kind in enumerate(kinds):
                if kind == "weight":
                    self.register_buffer(f"weight_{index}", example_inputs[index].detach())

        def forward(self, *inputs: Any) -> Any:
            given = iter(inputs)
            args = [
                getattr(self, f"weight_{i}")
                if kind == "weight"
                else int(example_inputs[i])
                if kind == "size"
                else next(given)
                for i, kind in enumerate(kinds)
            ]
            return self.graph_module(*args)

    return Bound().eval()
