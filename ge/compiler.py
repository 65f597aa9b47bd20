"""`GraphCompiler`: a graph through the pipeline of its optimization level to a `CompiledModel`
(`ge.compiled`): the stream-level module (kernels, buffers at planned offsets, the task list) plus
the one weight blob it addresses; the emulator runs exactly that.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from ge.cost.stream import launches
from ge.dialects.stream import model_of
from ge.passes.manager import Instrument, PassManager, verify_module

from . import arguments, artifact, gears
from .arguments import shown
from .checking import NumericCheck
from .collection import without_collection
from .compile_plan import CompilePlan, compile_plan, start_compilation
from .compiled import CompiledModel, MemoryStats, TensorSpec
from .errors import CompileError, GeError
from .graph import Graph
from .limits import DEFAULT_MAX_TENSOR_BYTES
from .options import (
    INSTRUMENTATION_OPTIONS,
    PRECISION_MODES,
    CheckedOptions,
    check_optimization_level,
    check_options,
)
from .soc import load_profile
from .weight_blob import pack_weights

__all__ = [
    "CompiledModel",
    "GraphCompiler",
    "MemoryStats",
    "TensorSpec",
    "dump_folder_from_environment",
    "launches",
    "require_graph",
]
"""`CompiledModel` and its figures live in `ge.compiled`; they are importable from here too."""


class GraphCompiler:
    """Compiles `ge.Graph`s: `GraphCompiler().compile(graph, target="Ascend910B2")`."""

    @staticmethod
    def load(path: str | Path) -> CompiledModel:
        """Reads a `.ge` file, checking its version and checksums."""
        saved = artifact.load(path)
        return CompiledModel(
            module=saved.module,
            weight_blob=saved.weight_blob,
            target=saved.target,
            optimization_level=saved.optimization_level,
            compilation_time=0.0,
            options=saved.options,
            gears=saved.gears,
            batch_padding=saved.batch_padding,
        )

    @without_collection
    def compile(
        self,
        graph: Graph,
        target: str = "npu",
        optimization_level: int = 3,
        precision_mode: str = "must_keep_origin_dtype",
        fusion_switch_file: str | Path | Mapping[str, object] | None = None,
        fusion_report: str | Path | None = None,
        specialize: Callable[[dict[str, tuple[int, ...]]], Graph] | None = None,
        **options: object,
    ) -> CompiledModel:
        """Compiles `graph` for `target` at `optimization_level` (0 to 3), or with the optimization
        techniques named by the `techniques` option (see `ge.options.COMPILE_OPTIONS`).

        `fusion_switch_file` (a path or its parsed JSON) turns fusion passes off, as GE's:
        `{"Switch": {"GraphFusion": {"ge-fuse-conv-bn": "off"}}}`; `fusion_report` names a JSON
        file to write the per-pattern counts to (they are also in `CompiledModel.fusion_report`).

        Gears (`ge.options.GEAR_OPTIONS`, as atc's `--dynamic_batch_size` and its kin) compile one
        static graph per gear into one model with one weight blob; `specialize` makes a gear's
        graph from the gear's input shapes (default: `graph.specialize`). An imported model is
        best imported again at each gear, e.g. `specialize=lambda shapes:
        ge.GraphParser().parse_onnx(model, input_shapes=shapes)`. The fusion report is the first
        gear's; pass timings are every gear's in turn.
        """
        graph = require_graph(graph, "GraphCompiler.compile", CompileError)
        optimization_level = check_optimization_level(optimization_level)
        checked = check_options({"precision_mode": precision_mode, **options})
        if fusion_report is not None:
            arguments.path(fusion_report, "fusion_report", CompileError)
        start = time.perf_counter()
        plan = compile_plan(optimization_level, checked, fusion_switch_file)
        shapes = gears.gear_shapes(
            gears.declared_shapes(graph.module), checked, reimported=specialize is not None
        )
        if shapes is None:
            sources = [graph]
        else:
            make = specialize if specialize is not None else graph.specialize
            sources = [require_graph(make(gear), "specialize", CompileError) for gear in shapes]
        compiled = [_compile_static(source, target, plan, checked) for source in sources]
        (module, blob, report, timings), *others = compiled
        gear_list: tuple[gears.Gear, ...] = ()
        padding: gears.BatchPadding | None = None
        if len(compiled) > 1:
            modules = [c[0] for c in compiled]
            blob = gears.share_weights(modules, [c[1] for c in compiled])
            assert shapes is not None
            gear_list = tuple(gears.Gear(s, m) for s, m in zip(shapes, modules, strict=True))
            timings = [t for c in compiled for t in c[3]]
            if "dynamic_batch_size" in checked:
                batched = [any(g[name][:1] != shapes[0][name][:1] for g in shapes) for name in shapes[0]]
                padding = gears.batch_padding([source.module for source in sources], batched)
        if fusion_report is not None:
            try:
                Path(fusion_report).write_text(json.dumps(report, indent=2) + "\n")
            except OSError as error:
                raise CompileError(f"cannot write the fusion_report '{fusion_report}': {error}") from None
        model_options = {k: v for k, v in checked.items() if k not in INSTRUMENTATION_OPTIONS}
        return CompiledModel(
            module=module,
            weight_blob=blob,
            target=load_profile(target).name,
            optimization_level=optimization_level,
            compilation_time=time.perf_counter() - start,
            options={**model_options, "max_streams": plan.max_streams},
            fusion_report=report,
            pass_timings=timings,
            gears=gear_list,
            batch_padding=padding,
        )


def _compile_static(
    graph: Graph, target: str, plan: CompilePlan, checked: CheckedOptions
) -> tuple[ModuleOp, bytes, dict[str, object], list[tuple[str, float]]]:
    """One static graph through `plan`: its stream module, weight blob, fusion report and pass
    timings."""
    verify_each = checked.get("verify_each", True)
    module, session = start_compilation(
        graph.module,
        graph.weights,
        target,
        checked.get("max_tensor_bytes", DEFAULT_MAX_TENSOR_BYTES),
        verify=not verify_each,
    )
    manager = PassManager(
        plan.passes,
        verify_each=verify_each,
        print_ir_before=checked.get("print_ir_before", ()),
        print_ir_after=checked.get("print_ir_after", ()),
        print_ir_after_all=checked.get("print_ir_after_all", False),
        timing=checked.get("pass_timing", False),
        instruments=_instruments(
            checked.get("check_each", False), checked.get("precision_mode", PRECISION_MODES[0])
        ),
        dump_dir=checked.get("dump_ir") or dump_folder_from_environment(),
    )
    manager.run(module, session)
    if not verify_each:
        verify_module(module, "the compiled model", session)
    blob = pack_weights(model_of(module), session.weights)
    report: dict[str, object] = {
        "disabled": sorted(plan.disabled),
        "passes": {name: dict(sorted(counts.items())) for name, counts in session.patterns.items()},
    }
    return module, blob, report, list(manager.timings) if manager.timing else []


def _instruments(check_each: object, precision_mode: str) -> list[Instrument]:
    """The numeric check between passes when `check_each` asks for it (True or inputs by name)."""
    if check_each is False:
        return []
    inputs = check_each if isinstance(check_each, Mapping) else {}
    return [NumericCheck(inputs, precision_mode)]


def dump_folder_from_environment() -> str | None:
    """The folder GE's environment variables ask the IR to be dumped into: `DUMP_GRAPH_PATH`
    (default `./ge_dump`) when `DUMP_GE_GRAPH` is set (GE's levels 1 to 3 differ in how much of
    the weights they write; `ge`'s IR holds no weight data, so every level dumps the same)."""
    if not os.environ.get("DUMP_GE_GRAPH"):
        return None
    return os.environ.get("DUMP_GRAPH_PATH") or "ge_dump"


def require_graph(graph: object, where: str, error: type[GeError] = GeError) -> Graph:
    """`graph` when it is a `ge.Graph`; anything else is refused with the way to get one."""
    if not isinstance(graph, Graph):
        raise error(
            f"{where} takes a ge.Graph, got {shown(graph)} (an ONNX model is read by "
            "ge.GraphParser().parse_onnx, which returns a ge.Graph)"
        )
    return graph
