"""What a compilation starts from and runs: the plan of passes `GraphCompiler.compile` builds from
its options (`compile_plan`), and the copy of a graph's module and weights every pipeline over a
graph begins with (`start_compilation`). The kernel and stream pictures, bisection and the demo
run the same plan, so they compile as `compile` does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from ge.dialects.common import TARGET_ATTR_NAME, value_names
from ge.passes.manager import verify_module
from ge.passes.pipelines import LEVELS, default_streams, pipeline
from ge.passes.session import CompileSession

from .arguments import shown
from .errors import CompileError
from .limits import DEFAULT_MAX_TENSOR_BYTES, check_max_tensor_bytes
from .options import PRECISION_MODES, CheckedOptions
from .soc import load_profile
from .symbolic import input_dims
from .weights import WeightStore


@dataclass(frozen=True)
class CompilePlan:
    """The passes a compilation runs, and the choices they were built from."""

    passes: list[ModulePass]
    disabled: frozenset[str]
    """Fusion passes a fusion switch file turned off."""
    max_streams: int


def compile_plan(
    optimization_level: int,
    checked: CheckedOptions,
    fusion_switch_file: object = None,
) -> CompilePlan:
    """The pipeline `GraphCompiler.compile` runs for `optimization_level` and the compile options
    `checked` (by `ge.options.check_options`): the level's techniques or those `techniques`
    names, the precision mode, `max_streams`, and the fusion passes the switch file turns off."""
    techniques = checked.get("techniques")
    chosen = LEVELS[optimization_level] if techniques is None else frozenset(techniques)
    max_streams = checked.get("max_streams", default_streams(chosen))
    disabled = frozenset(read_fusion_switch(fusion_switch_file))
    precision_mode = checked.get("precision_mode", PRECISION_MODES[0])
    try:
        passes = pipeline(optimization_level, disabled, precision_mode, max_streams, techniques)
    except ValueError as error:
        raise CompileError(str(error)) from None
    return CompilePlan(passes, disabled, max_streams)


def start_compilation(
    module: ModuleOp,
    weights: WeightStore,
    target: str,
    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES,
    verify: bool = False,
) -> tuple[ModuleOp, CompileSession]:
    """What every pipeline over a graph's `module` and `weights` starts from: a copy of the module
    for `target` and a compile session over a copy of the weights, after refusing a tensor over
    `max_tensor_bytes` and a graph input of a dynamic shape (and verifying the copy, when asked)."""
    module = module.clone()
    module.attributes[TARGET_ATTR_NAME] = load_profile(target).target_attr()
    session = CompileSession(weights.copy())
    if verify:
        verify_module(module, "the input graph", session)
    check_max_tensor_bytes(module, max_tensor_bytes, CompileError)
    check_static_inputs(module)
    return module, session


def check_static_inputs(module: ModuleOp) -> None:
    """Refuses a graph input with a dynamic dimension, naming it, the axis, and how to fix it:
    specializing the graph or compiling gears for its batch axis, or sizing it on import."""
    func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
    names = value_names(func.arg_attrs, len(func.body.block.args), "input")
    for name, value, dims in zip(names, func.body.block.args, input_dims(func), strict=True):
        t = value.type
        if isinstance(t, TensorType) and any(d < 0 for d in t.get_shape()):
            axis = next(i for i, d in enumerate(t.get_shape()) if d < 0)
            sizes = ",".join("N" if d < 0 else str(d) for d in t.get_shape())
            gears = (
                ", compile gears for its batch (compile(graph, dynamic_batch_size=[1, 8]))"
                if axis == 0
                else ""
            )
            raise CompileError(
                f"input '{name}' has a dynamic dimension at axis {axis} ({t}); compiling needs static "
                f"shapes: specialize the graph (graph.specialize({{'{dims[axis]}': 8}})){gears}, or "
                f"give its sizes when importing (input_shapes={{'{name}': [...]}} of parse_onnx, "
                "parse_tensorflow or parse_mindspore, "
                f'or ge compile --input_shape "{name}:{sizes}" with N a number)'
            )


def read_fusion_switch(source: object) -> set[str]:
    """The fusion passes a GE-style switch file (a path, or its parsed JSON) turns off."""
    if source is None:
        return set()
    if isinstance(source, Mapping):
        data: object = source
    else:
        if not isinstance(source, str | os.PathLike):
            raise CompileError(
                f"fusion_switch_file (or its parsed JSON, a dict) must be a file path, got {shown(source)}"
            )
        try:
            data = json.loads(Path(source).read_text())
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as error:
            raise CompileError(f"cannot read fusion switch file '{source}': {error}") from None
    switches = data
    for key in ("Switch", "GraphFusion"):
        switches = switches.get(key, {}) if isinstance(switches, Mapping) else None
    if not isinstance(switches, Mapping):
        raise CompileError('a fusion switch file looks like {"Switch": {"GraphFusion": {"<pass>": "off"}}}')
    for name, value in switches.items():
        if str(value).lower() not in ("on", "off"):
            raise CompileError(f'fusion switch \'{name}\' must be "on" or "off", got {value!r}')
    return {name for name, value in switches.items() if str(value).lower() == "off"}
