"""`torch.compile(model, backend="ge")`: a Dynamo backend that runs each captured graph on ge.

Dynamo hands over an FX graph of torch calls whose parameters and buffers arrive as inputs. The
backend binds those to the graph as constants (weights, as `torch.compile`'s freezing does),
exports the rest with `torch.export`, converts it with the frontend's converters, compiles it
with `ge.GraphCompiler` and runs it with `ge.GraphExecutor`. Each call checks the parameters and
buffers it is given against those compiled in (the same storage, the same version counter, which
every in-place write such as an optimizer step advances); a changed one compiles the graph again
with the new values, logged and counted (`RECOMPILES`). A write through `.data` bypasses the
version counter and is not seen. A graph ge cannot take (an unsupported op, a graph that autograd must
differentiate, a symbolic size, a compile error) runs eagerly instead, with one logged line
saying why.

`options` of `torch.compile` pass through: `optimization_level` (default 3), `precision_mode`
and `soc_version` (the compile target, e.g. "Ascend910B2").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ge.errors import GeError

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
    if not all(isinstance(t, torch.Tensor) for t in example_inputs):
        raise GeError("the graph takes symbolic sizes (dynamic shapes); compile with dynamic=False")
    is_weight = [_is_weight(node, tensor) for node, tensor in zip(placeholders, example_inputs, strict=True)]
    user = [i for i, weight in enumerate(is_weight) if not weight]
    if torch.is_grad_enabled() and any(t.requires_grad for t in example_inputs):
        raise GeError(
            "the graph needs autograd (an input or parameter requires grad); run it under "
            "torch.no_grad() or torch.inference_mode() to use ge"
        )
    build = _builder(graph_module, is_weight, user, options)
    weights = [i for i, weight in enumerate(is_weight) if weight]
    state = {"seen": _identity(example_inputs, weights), "run": build(example_inputs)}

    def run(*args: Any) -> Any:
        seen = _identity(args, weights)
        if seen != state["seen"]:
            changed = next(i for i, (a, b) in enumerate(zip(seen, state["seen"], strict=True)) if a != b)
            LOG.warning(
                "ge backend: weight input %d changed since the graph was compiled; compiling again",
                weights[changed],
            )
            RECOMPILES[0] += 1
            state["run"], state["seen"] = build(args), seen
        return state["run"](*args)

    return run


RECOMPILES = [0]
"""How many times a graph was compiled again because a parameter or buffer changed."""


def _identity(args: Sequence[Any], weights: Sequence[int]) -> list[tuple[int, int]]:
    """Per weight input, its storage and version counter: what an in-place write changes."""
    return [(args[i].data_ptr(), args[i]._version) for i in weights]


def _builder(
    graph_module: Any, is_weight: Sequence[bool], user: Sequence[int], options: Mapping[str, Any]
) -> Callable[[Sequence[Any]], Callable[..., Any]]:
    """A function compiling `graph_module` with the weight inputs of the arguments it is given
    bound as constants, returning the callable that runs it on ge."""
    import torch

    import ge

    from . import CONVERTERS
    from .exporter import decomposition_table
    from .importer import import_program

    def build(arguments: Sequence[Any]) -> Callable[..., Any]:
        bound = _Bound(graph_module, arguments, is_weight)
        try:
            program = torch.export.export(bound, tuple(arguments[i] for i in user), strict=False)
        except Exception as error:  # torch raises many kinds; the reason is its first line
            raise GeError(
                f"torch.export could not trace the graph: {str(error).strip().splitlines()[0]}"
            ) from None
        program = program.run_decompositions(decomposition_table())
        graph = import_program(program, CONVERTERS)
        executor = ge.GraphExecutor()
        executor.load_graph(ge.GraphCompiler().compile(graph, **options))
        names = graph.inputs
        out_spec = program.call_spec.out_spec

        def run(*args: Any) -> Any:
            feeds = {name: args[i].detach().cpu().numpy() for name, i in zip(names, user, strict=True)}
            results = [torch.from_numpy(r) for r in executor.run(feeds)]
            return torch.utils._pytree.tree_unflatten(results, out_spec)

        return run

    return build


def _is_weight(node: Any, tensor: Any) -> bool:
    import torch

    source = getattr(node.meta.get("grapharg"), "source", None)
    name = getattr(source, "name", "")
    name = name() if callable(name) else name
    return isinstance(tensor, torch.nn.Parameter) or any(s in str(name) for s in WEIGHT_SOURCES)


def _Bound(graph_module: Any, example_inputs: Sequence[Any], is_weight: Sequence[bool]) -> Any:
    """A module running `graph_module` with its weight inputs bound as buffers."""
    import torch

    class Bound(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.graph_module = graph_module
            for index, weight in enumerate(is_weight):
                if weight:
                    self.register_buffer(f"weight_{index}", example_inputs[index].detach())

        def forward(self, *inputs: Any) -> Any:
            given = iter(inputs)
            args = [
                getattr(self, f"weight_{i}") if weight else next(given) for i, weight in enumerate(is_weight)
            ]
            return self.graph_module(*args)

    return Bound().eval()
