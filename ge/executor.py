"""`GraphExecutor`: runs a compiled model on the emulator, checking inputs first.

A `Graph` with symbolic dimensions compiles lazily: each run's input shapes bind its symbols, and
a new combination of sizes compiles the graph specialized on them once more (logged on the `ge`
logger and counted in `recompiles`); compiled models are cached per combination.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from . import gears
from .compiler import CompiledModel, GraphCompiler, TensorSpec
from .dtypes import as_strings
from .emulator import Emulator
from .errors import GeError, RuntimeInputError
from .graph import Graph
from .recompiles import log_recompile
from .symbolic import bind_sizes


class GraphExecutor:
    """`ex.load_graph(compiled)`, then `ex.run(array)` or `ex.run({"name": array})`."""

    def __init__(self) -> None:
        self.compiled: CompiledModel | None = None
        self.recompiles = 0
        """How many times a graph with symbolic dimensions was compiled beyond its first time."""
        self._loaded: _Loaded | None = None
        self._graph: Graph | None = None
        self._compiled: dict[tuple[tuple[str, int], ...], tuple[CompiledModel, _Loaded]] = {}

    def load_graph(self, model: CompiledModel | Graph) -> None:
        """Loads a compiled model, building the run plan of each of its gears; an uncompiled
        `Graph` is compiled with the defaults, at its first run when it has symbolic dimensions
        (then once per new combination of sizes)."""
        self._graph, self._compiled, self.recompiles = None, {}, 0
        if isinstance(model, Graph):
            if model.symbols:
                self._graph, self.compiled, self._loaded = model, None, None
                return
            model = GraphCompiler().compile(model)
        if not isinstance(model, CompiledModel):
            raise GeError(f"load_graph takes a CompiledModel or a Graph, got {type(model).__name__}")
        self.compiled, self._loaded = model, _Loaded(model)

    def run(
        self,
        inputs: np.ndarray | Sequence[np.ndarray] | Mapping[str, np.ndarray],
        *,
        launch_times: list[float] | None = None,
    ) -> list[np.ndarray]:
        """The model's outputs on `inputs`; `launch_times`, if given, receives each launch's wall
        time in seconds on the emulator, in task order (as `ge.GraphProfiler` measures)."""
        if launch_times is not None and not isinstance(launch_times, list):
            raise GeError(
                f"launch_times is a list that receives each launch's time, got {type(launch_times).__name__}"
            )
        if self._graph is not None:
            self._specialize(self._graph, inputs)
        loaded = self._loaded
        if self.compiled is None or loaded is None:
            raise GeError("no model is loaded: call load_graph first")
        compiled = self.compiled
        choice = (  # with gears: the one of the inputs' shapes
            gears.select_gear(compiled.gears, loaded.names, inputs, compiled.batch_padding)
            if compiled.gears
            else gears.GearChoice(0)
        )
        specs, emulator = loaded.gears[choice.index]
        padding = compiled.batch_padding
        if choice.batch is None or padding is None or padding.output_axes is None:
            return emulator.run(bind_inputs(specs, inputs), launch_times=launch_times)
        # A smaller batch on a larger gear: zero samples in, the real samples out.
        arrays = gears.pad_batch(bind_inputs(loaded.inputs, inputs), [s.shape for s in specs])
        outputs = emulator.run(arrays, launch_times=launch_times)
        return gears.cut_batch(outputs, padding.output_axes, choice.batch)

    @property
    def emulators(self) -> list[Emulator]:
        """The loaded model's emulator of each gear (one for a model without gears), in gear order."""
        return [] if self._loaded is None else [emulator for _, emulator in self._loaded.gears]

    def _specialize(
        self, graph: Graph, inputs: np.ndarray | Sequence[np.ndarray] | Mapping[str, np.ndarray]
    ) -> None:
        """Makes the graph compiled for the sizes of `inputs` the current model."""
        dims = graph.input_dims
        specs = [TensorSpec(name, (), "") for name in dims]
        given = _ordered(specs, inputs)
        shapes = {name: np.shape(value) for name, value in zip(dims, given, strict=True)}
        sizes = bind_sizes(list(dims), list(dims.values()), shapes, {}, RuntimeInputError)
        key = tuple(sorted(sizes.items()))
        if key not in self._compiled:
            if self._compiled:
                self.recompiles += 1
                signature = ", ".join(f"{symbol}={size}" for symbol, size in key)
                log_recompile(f"graph '{graph.name}'", signature, self.recompiles)
            model = GraphCompiler().compile(graph.specialize(sizes))
            self._compiled[key] = (model, _Loaded(model))
        self.compiled, self._loaded = self._compiled[key]


class _Loaded:
    """A compiled model ready to run: its input names and specs, and per gear the gear's input
    specs and its emulator (run plan built here, at load). The gears share one arena, the
    largest gear's, as on the device."""

    def __init__(self, model: CompiledModel):
        self.names = model.input_names
        self.inputs = model.inputs
        each = model.gear_models
        arena = np.zeros(max(gear.model.arena_size.value.data for gear in each), np.uint8)
        self.gears = [(gear.inputs, Emulator(gear.module, gear.weight_blob, arena=arena)) for gear in each]


def bind_inputs(
    specs: list[TensorSpec], inputs: np.ndarray | Sequence[np.ndarray] | Mapping[str, np.ndarray]
) -> list[np.ndarray]:
    """Orders the inputs as the model declares them and checks their shapes (a -1 in a declared
    shape takes any size) and dtypes."""
    arrays = []
    for spec, value in zip(specs, _ordered(specs, inputs), strict=True):
        array = as_strings(value, f"input '{spec.name}'", spec.dtype)  # as ONNX keeps strings
        declared = spec.numpy_dtype
        if not np.can_cast(array.dtype, declared, "safe"):  # first: a string's shape says little
            raise RuntimeInputError(
                f"input '{spec.name}' has dtype {array.dtype}, which does not cast safely to the "
                f"declared {spec.dtype}; convert it with .astype(np.{spec.dtype})"
            )
        if len(array.shape) != len(spec.shape) or any(
            want not in (have, -1) for have, want in zip(array.shape, spec.shape, strict=True)
        ):
            raise RuntimeInputError(
                f"input '{spec.name}' has shape {list(array.shape)}, the model expects {list(spec.shape)}"
            )
        arrays.append(array.astype(declared, copy=False))
    return arrays


def _ordered(
    specs: list[TensorSpec], inputs: np.ndarray | Sequence[np.ndarray] | Mapping[str, np.ndarray]
) -> list[np.ndarray]:
    """The inputs in the order of `specs`: given by name, as a list, or as one array."""
    if isinstance(inputs, Mapping):
        missing = [s.name for s in specs if s.name not in inputs]
        extra = sorted(set(inputs) - {s.name for s in specs})
        if missing or extra:
            raise RuntimeInputError(
                f"inputs do not match the model: missing {missing}, unknown {extra}; "
                f"the model takes {[s.name for s in specs]}"
            )
        given = [inputs[s.name] for s in specs]
    elif isinstance(inputs, np.ndarray | np.generic):
        given = [inputs]
    elif isinstance(inputs, Sequence) and not isinstance(inputs, str | bytes):
        given = list(inputs)
    else:
        raise RuntimeInputError(
            f"inputs are an array, a list of arrays or a dict of them by name, got "
            f"{type(inputs).__name__}; the model takes {[s.name for s in specs]}"
        )
    if len(given) != len(specs):
        raise RuntimeInputError(
            f"the model takes {len(specs)} inputs ({[s.name for s in specs]}), {len(given)} given"
        )
    return given
