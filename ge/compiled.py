"""`CompiledModel`: what `GraphCompiler.compile` returns and `GraphCompiler.load` reads back.

The stream-level module (kernels, buffers at planned offsets, the task list), the one weight blob
it addresses and, for a model with gears, each gear's module; with the figures read from them
(memory, kernels, modelled costs and latency) and the gear a run takes.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ge.cost import KernelCost, kernel_cost
from ge.cost.stream import launches, soc_figures
from ge.dialects.stream import LaunchOp, ModelOp, model_of
from ge.passes.pipelines import LEVELS, compile_defaults

from . import artifact, gears
from .dtypes import element_type, numpy_dtype, shaped_type
from .errors import GeError


@dataclass(frozen=True)
class TensorSpec:
    """Name, shape and dtype of a model input or output."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @cached_property
    def numpy_dtype(self) -> np.dtype:
        """The numpy dtype of `dtype` (a fixed-width string dtype for strings), found once."""
        return numpy_dtype(element_type(self.dtype))


@dataclass(frozen=True)
class MemoryStats:
    """Bytes of a compiled model's device memory."""

    arena_bytes: int
    lower_bound_bytes: int
    no_reuse_bytes: int
    weight_bytes: int


@dataclass
class CompiledModel:
    """A model compiled for one SoC: the stream-level module and its weight blob."""

    module: ModuleOp
    weight_blob: bytes
    target: str
    optimization_level: int
    compilation_time: float
    options: dict[str, object] = field(default_factory=dict)
    fusion_report: dict[str, object] = field(default_factory=dict)
    """Fusion passes switched off (`disabled`), and per fusion pass and pattern (`passes`) how
    many matches were found and how many applied."""
    pass_timings: list[tuple[str, float]] = field(default_factory=list)
    """With `pass_timing=True`: (pass, seconds) per pass run, then the verifier's total."""
    gears: tuple[gears.Gear, ...] = ()
    """A model compiled with gears (`ge.gears`): each gear's input shapes and stream module, the
    first being `module`; all address `weight_blob`. Empty for a model of one shape. The figures
    that describe one plan (kernels, costs, latency, pictures) are the first gear's;
    `gear_models` gives each gear as a model of one shape."""
    batch_padding: gears.BatchPadding | None = None
    """With `dynamic_batch_size`: whether a batch no gear has runs padded on a larger one."""
    _gear_models: list[CompiledModel] = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def memory(self) -> MemoryStats:
        """The arena as planned, its lower bound (the most bytes live at once), the total with no
        reuse, and the weight blob, in bytes. With gears, each figure is the largest gear's: the
        device holds one arena that every gear runs in (`gear_memory` gives each gear's)."""
        if self.gears:
            each = self.gear_memory()
            return MemoryStats(
                arena_bytes=max(m.arena_bytes for m in each),
                lower_bound_bytes=max(m.lower_bound_bytes for m in each),
                no_reuse_bytes=max(m.no_reuse_bytes for m in each),
                weight_bytes=len(self.weight_blob),
            )
        from ge.passes.stream.plan_memory import lifetimes, lower_bound

        intervals = lifetimes(self.model, 512)
        return MemoryStats(
            arena_bytes=self.model.arena_size.value.data,
            lower_bound_bytes=lower_bound(intervals),
            no_reuse_bytes=sum(i.size for i in intervals),
            weight_bytes=len(self.weight_blob),
        )

    def gear_memory(self) -> list[MemoryStats]:
        """Each gear's memory figures, in gear order (one entry for a model without gears)."""
        return [gear.memory for gear in self.gear_models]

    @property
    def gear_models(self) -> list[CompiledModel]:
        """Each gear as a model of one shape (sharing this model's weight blob), in gear order;
        the model itself when it has no gears."""
        if not self.gears:
            return [self]
        if len(self._gear_models) != len(self.gears):
            self._gear_models[:] = [
                CompiledModel(
                    gear.module,
                    self.weight_blob,
                    self.target,
                    self.optimization_level,
                    self.compilation_time,
                    self.options,
                )
                for gear in self.gears
            ]
        return list(self._gear_models)

    def gear_for(self, inputs: object) -> CompiledModel:
        """The gear that runs `inputs` (an array, a list or a dict by name), as a model of one
        shape: the one of their shapes, or the batch gear they are padded to (`select_gear`); the
        model itself when it has no gears."""
        return self.gear_models[self.select_gear(inputs).index] if self.gears else self

    def select_gear(self, inputs: object) -> gears.GearChoice:
        """Which gear runs `inputs`, and their real batch if they are padded to it. Shapes no gear
        takes raise a `RuntimeInputError` listing the gears."""
        if not self.gears:
            return gears.GearChoice(0)
        return gears.select_gear(self.gears, self.input_names, inputs, self.batch_padding)

    def save(self, path: str | Path) -> None:
        """Writes the model as one `.ge` file (manifest, stream IR, weight blob; see ge.artifact)."""
        saved = artifact.Artifact(
            self.module,
            self.weight_blob,
            self.target,
            self.optimization_level,
            self.options,
            self.gears,
            self.batch_padding,
        )
        artifact.save(saved, path)

    @property
    def model(self) -> ModelOp:
        return model_of(self.module)

    def visualize(self, path: str | os.PathLike[str], level: str = "stream") -> Path:
        """Draws the model's streams into `path` (as `Graph.visualize(..., level="stream")`): a
        lane per stream with its launches in task order, dashed event record -> wait edges."""
        from .visualize import check_level, check_path, stream_dot, write

        path = check_path(path)
        if level != "stream":
            check_level(level, ("graph", "kernel", "stream"))
            raise GeError(
                f"a compiled model holds the stream level only, not '{level}'; "
                f"draw that level with Graph.visualize(path, level='{level}')"
            )
        return write(stream_dot(self.module), path)

    @property
    def techniques(self) -> frozenset[str]:
        """The optimization techniques it was compiled with: the `techniques` compile option, or
        those of its optimization level (`ge.passes.pipelines.TECHNIQUES`)."""
        chosen = self.options.get("techniques")
        return frozenset(chosen) if isinstance(chosen, list | tuple) else LEVELS[self.optimization_level]

    @property
    def sunk(self) -> bool:
        """Whether the task list is sunk to the device (one call runs it, no host launch per kernel):
        the `sink` option, else whether sinking is one of its techniques (at O3)."""
        return bool(self.options.get("sink", compile_defaults(self.techniques)["sink"]))

    def kernel_costs(self) -> list[tuple[str, KernelCost]]:
        """Each launch's kernel name and its modelled cost on the target, in task order."""
        soc = soc_figures(self.module)
        return [(info.name, kernel_cost(info, soc, sunk=self.sunk)) for _, info in launches(self.module)]

    def modelled_latency_us(self) -> float:
        """The modelled time of one run on the target: the end of the last task of the timeline
        (`ge.emulator.timeline`), where streams overlap as their events and the cores allow. On one
        stream, every launch's latency added up."""
        from .emulator.timeline import simulate

        return simulate(self.module, sunk=self.sunk).latency_us

    def kernel_histogram(self) -> dict[str, int]:
        """Kernels launched per run by kind: `cube`, `vector`, `aicpu`, `trans_data`."""
        return dict(sorted(Counter(info.kind for _, info in launches(self.module)).items()))

    @property
    def num_operators(self) -> int:
        """Kernels launched per run (views and concat views move no data and launch nothing)."""
        return sum(1 for op in self.model.body.block.ops if isinstance(op, LaunchOp))

    @property
    def binary_size(self) -> int:
        """Bytes of the model as shipped: the stream IR (every gear's) as text plus the weight blob."""
        modules = [gear.module for gear in self.gears] or [self.module]
        return sum(len(str(module).encode()) for module in modules) + len(self.weight_blob)

    @property
    def input_names(self) -> list[str]:
        return [s.data for s in self.model.input_names.data]

    @property
    def inputs(self) -> list[TensorSpec]:
        """Each input's name, shape and dtype; with gears, -1 on the axes where gears differ."""
        if self.gears:
            return _across_gears([gear.inputs for gear in self.gear_models])
        from ge.dialects.stream import BufferOp

        names = [s.data for s in self.model.input_names.data]
        specs: dict[int, TensorSpec] = {}
        for op in self.model.body.block.ops:
            if isinstance(op, BufferOp) and op.input is not None:
                index = op.input.value.data
                t = op.buffer.type
                specs[index] = TensorSpec(names[index], t.get_shape(), numpy_dtype(t.element_type).name)
        return [specs[i] for i in range(len(names))]

    @property
    def outputs(self) -> list[TensorSpec]:
        """Each output's name, shape and dtype; with gears, -1 on the axes where gears differ."""
        if self.gears:
            return _across_gears([gear.outputs for gear in self.gear_models])
        names = [s.data for s in self.model.output_names.data]
        last = self.model.body.block.last_op
        types = [shaped_type(v) for v in last.operands] if last is not None else []
        return [
            TensorSpec(n, t.get_shape(), numpy_dtype(t.element_type).name)
            for n, t in zip(names, types, strict=True)
        ]


def _across_gears(specs: list[list[TensorSpec]]) -> list[TensorSpec]:
    """The specs of the first gear, with -1 where another gear's size differs."""
    return [
        TensorSpec(
            first.name,
            tuple(
                d if all(len(o.shape) > a and o.shape[a] == d for o in others) else -1
                for a, d in enumerate(first.shape)
            ),
            first.dtype,
        )
        for first, *others in zip(*specs, strict=True)
    ]
