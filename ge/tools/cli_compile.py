"""`ge compile`: atc's command. `--mode 0` (the default) compiles a framework model into a `.ge`
file, `--mode 1` writes a `.ge` model as JSON, `--mode 3` only checks that every operator of a
model is supported. Atc's flags keep atc's names and underscores (the dash spellings work too);
every keyword option of `GraphCompiler.compile` (`ge.options.COMPILE_OPTIONS`) is a flag made from
that tuple by `compile_option_flags`, so a new option is a new flag.

```
ge compile --model m.onnx --framework 5 --output m --soc_version Ascend910B2 --input_shape "x:1,3,224,224"
```
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import onnx

from ge.compiler import GraphCompiler
from ge.errors import CompileError, GeError, UnsupportedOperatorError
from ge.frontends.onnx import check_supported, check_versions, default_opset, load_model
from ge.frontends.onnx.selection import node_output
from ge.gears import describe_gears
from ge.graph import Graph
from ge.limits import DEFAULT_MAX_TENSOR_BYTES
from ge.options import COMPILE_OPTIONS, PRECISION_MODES
from ge.parser import GraphParser
from ge.passes.manager import timing_report
from ge.passes.pipelines import TECHNIQUES
from ge.soc import DEFAULT_SOC, known_socs

from .cli_base import check_writable, logger, step, subcommand
from .cli_gears import (
    FLAGS,
    OnnxGears,
    entries,
    gear_options,
    input_shapes,
    onnx_gears,
    shape_text,
    spelled_as_flags,
)
from .cli_model import model_json

FRAMEWORKS = {"5": "onnx", "onnx": "onnx", "1": "mindspore", "mindspore": "mindspore"}
FRAMEWORKS |= {"3": "tensorflow", "tensorflow": "tensorflow", "pytorch": "pytorch"}
"""atc's framework codes (and names) to the frontend package under `ge.frontends`."""
FRAMEWORK_NAMES = {"onnx": "ONNX", "mindspore": "MindSpore", "tensorflow": "TensorFlow", "pytorch": "PyTorch"}
EXTRAS = {"pytorch": "torch"}
"""The pip extra of a frontend package, where its name differs."""
UNSET_BY = {
    ("pytorch", "input_shapes"): "export the program with the shapes you want (or dynamic_shapes)",
    ("pytorch", "outputs"): "return the values you want from forward and export it again",
}
"""How to get what an atc flag asks of a framework whose loader does not take it."""

OUTPUT_TYPES = {"FP32": "float32", "FP16": "float16"}

COMPILE_OPTION_FLAGS: dict[str, dict[str, Any]] = {
    "sink": {"on_off": True, "default": None, "show_default": "on at O3", "help": "sink the task list"},
    "max_streams": {
        "type": click.IntRange(min=1),
        "default": None,
        "show_default": "4 at O3, 1 below",
        "help": "streams independent kernels are spread over",
    },
    "max_tensor_bytes": {
        "type": click.IntRange(min=1),
        "default": DEFAULT_MAX_TENSOR_BYTES,
        "help": "refuse a model with a larger tensor",
    },
    "techniques": {
        "default": None,
        "metavar": "NAME,NAME,...",
        "callback": lambda _context, _param, value: None if value is None else _names(value),
        "help": "compile with exactly these techniques instead of the level's "
        f"({', '.join(TECHNIQUES)}; an empty string for none)",
    },
    "verify_each": {
        "on_off": True,
        "default": True,
        "show_default": "on",
        "help": "verify the IR after every pass",
    },
    "print_ir_after_all": {"is_flag": True, "help": "print the IR to standard error after every pass"},
    "print_ir_before": {"multiple": True, "metavar": "PASS", "help": "print the IR before PASS (repeatable)"},
    "print_ir_after": {"multiple": True, "metavar": "PASS", "help": "print the IR after PASS (repeatable)"},
    "pass_timing": {"is_flag": True, "help": "time every pass and print the table to standard error"},
    "check_each": {
        "is_flag": True,
        "help": "run the graph after every pass on seeded inputs; name the first that changes the outputs",
    },
    "dump_ir": {
        "default": None,
        "metavar": "DIR",
        "help": "write the IR after every pass into DIR, one numbered file per pass "
        "(also: DUMP_GE_GRAPH=1 with DUMP_GRAPH_PATH=DIR)",
    },
}
"""How each of `COMPILE_OPTIONS` is spelled on the command line (click's option settings; `on_off`
makes a `--x/--no-x` pair)."""


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def framework_flag(default: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """atc's `--framework`: its codes (5 ONNX, 1 MindSpore, 3 TensorFlow) or a name."""
    return flags(
        "framework",
        type=click.Choice(list(FRAMEWORKS), case_sensitive=False),
        default=default,
        help="atc's codes: 5 ONNX, 1 MindSpore, 3 TensorFlow, or a name",
    )


def compile_option_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """Adds a flag for each of `COMPILE_OPTIONS` that `COMPILE_OPTION_FLAGS` says how to spell."""
    for name in reversed(COMPILE_OPTIONS):
        if name not in COMPILE_OPTION_FLAGS:
            raise AssertionError(f"compile option {name} has no flag: add it to COMPILE_OPTION_FLAGS")
        settings = dict(COMPILE_OPTION_FLAGS[name])
        if settings.pop("on_off", False):
            dashed = name.replace("_", "-")
            pairs = dict.fromkeys([f"--{name}/--no-{name}", f"--{dashed}/--no-{dashed}"])
            command = click.option(*pairs, name, **settings)(command)
        else:
            command = flags(name, **settings)(command)
    return command


def flags(name: str, **settings: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An atc flag, `--name`, also spelled with dashes."""
    return click.option(*dict.fromkeys([f"--{name}", f"--{name.replace('_', '-')}"]), name, **settings)


@subcommand("compile")
@flags("mode", type=click.Choice(["0", "1", "3"]), default="0", help="0 compile, 1 .ge to JSON, 3 check only")
@flags("model", metavar="FILE", help="the framework model (mode 0 and 3)")
@framework_flag()
@flags("output", metavar="PATH", help="the compiled model, PATH.ge (mode 0)")
@flags("soc_version", type=click.Choice(known_socs()), default=DEFAULT_SOC, help="the SoC to compile for")
@flags("input_shape", metavar='"NAME:D,D,...;NAME:..."', help="fix input shapes (-1 keeps a dimension)")
@flags(
    "input_format",
    type=click.Choice(["NCHW", "NHWC", "ND"]),
    default=None,
    help="the inputs' layout, as atc takes it; ge keeps each input in the layout the model declares "
    "(a TensorFlow model's NHWC too), so every value compiles alike",
)
@flags(
    "dynamic_batch_size", metavar='"B,B,..."', help="batch-size gears for the -1 at axis 0 of --input_shape"
)
@flags(
    "dynamic_image_size", metavar='"H,W;H,W;..."', help="image-size gears for the -1 H and W of --input_shape"
)
@flags(
    "dynamic_dims",
    metavar='"D,D;D,D;..."',
    help="gears filling every -1 of --input_shape in order (with --input_format ND)",
)
@flags("out_nodes", metavar='"NODE:INDEX;..."', help="the outputs, as node names and output indices")
@flags("output_type", type=click.Choice(list(OUTPUT_TYPES)), help="cast float outputs (unset: as the model)")
@flags("precision_mode", type=click.Choice(PRECISION_MODES), default=PRECISION_MODES[0], help="dtype changes")
@flags("fusion_switch_file", metavar="FILE", help='passes to turn off: {"Switch": {"GraphFusion": ...}}')
@flags("optimization_level", type=click.IntRange(0, 3), default=3, help="0 (lowering only) to 3")
@flags("om", metavar="FILE.ge", help="the model to write as JSON (mode 1)")
@flags("json", metavar="FILE.json", help="where mode 1 writes the JSON")
@compile_option_flags
def compile_command(mode: str, **settings: Any) -> None:
    """Compile a model into a .ge file, as atc does; or write a .ge as JSON (--mode 1), or check a
    model's operators (--mode 3)."""
    try:
        if mode == "1":
            _to_json(settings["om"], settings["json"])
        elif mode == "3":
            _check(_model_path(settings), settings["framework"])
        else:
            _compile(settings)
    except CompileError as error:
        error.args = (spelled_as_flags(str(error)),)  # the flags typed, not the Python keywords
        raise


# --------------------------------------------------------------------------------------------
# The three modes
# --------------------------------------------------------------------------------------------


def _compile(settings: dict[str, Any]) -> None:
    path = _model_path(settings)
    if not settings["output"]:
        raise click.UsageError("--output is required to compile (--mode 0)")
    given = settings["output"]
    if given.endswith(("/", "\\")) or Path(given).is_dir():
        raise GeError(f"--output {given} is a folder; give the model's path in it (PATH writes PATH.ge)")
    output = given if given.endswith(".ge") else f"{given}.ge"
    check_writable(output)
    options = {
        name: settings[name]
        for name in COMPILE_OPTIONS
        if name in settings and settings[name] not in (None, ())
    }
    options |= gear_options(settings)
    limit = settings.get("max_tensor_bytes", DEFAULT_MAX_TENSOR_BYTES)
    gears: OnnxGears | None = None  # with gears, the ONNX model each gear is imported from

    def load(shapes: str | None) -> Graph:
        if gears is None:
            graph = parse_model(path, settings["framework"], shapes, settings["out_nodes"], limit)
        else:
            graph = parse_onnx_model(gears.model, shapes, settings["out_nodes"], limit)
        if settings["output_type"]:
            graph.cast_outputs(OUTPUT_TYPES[settings["output_type"]])
        return graph

    start = time.perf_counter()
    with step(f"parsing {path}"):
        if FRAMEWORKS[settings["framework"].lower()] == "onnx":
            gears = onnx_gears(path, options)
        graph = load(settings["input_shape"] if gears is None else shape_text(gears.first))
    logger.info("parsed %d ops in %.2f s", len(graph.nodes), time.perf_counter() - start)
    with step(f"compiling for {settings['soc_version']}"):
        compiled = GraphCompiler().compile(
            graph,
            target=settings["soc_version"],
            optimization_level=settings["optimization_level"],
            precision_mode=settings["precision_mode"],
            fusion_switch_file=settings["fusion_switch_file"],
            # Each gear imports the model again at its shapes, so shape arithmetic folds as at one shape.
            specialize=lambda shapes: load(shape_text(shapes)),
            **options,
        )
    logger.info("compiled in %.2f s: %d kernels", compiled.compilation_time, compiled.num_operators)
    if compiled.pass_timings:
        click.echo(timing_report(compiled.pass_timings), err=True)
    compiled.save(output)
    size = Path(output).stat().st_size
    if compiled.gears:
        arenas = ", ".join(str(m.arena_bytes) for m in compiled.gear_memory())
        click.echo(
            f"wrote {output}: {len(compiled.gears)} gears ({describe_gears(compiled.gears)}), one "
            f"{compiled.memory.weight_bytes}-byte weight blob, arenas {arenas} bytes (one of "
            f"{compiled.memory.arena_bytes}), {size} bytes"
        )
    else:
        click.echo(f"wrote {output}: {compiled.num_operators} kernels, {size} bytes")


def _to_json(model: str | None, output: str | None) -> None:
    if not model or not output:
        raise click.UsageError("--mode 1 takes --om FILE.ge and --json FILE.json")
    check_writable(output)
    data = model_json(model)
    with open(output, "w", encoding="utf-8") as file:
        json.dump(data, file, indent=2)
        file.write("\n")
    click.echo(f"wrote {output}: {len(data['tasks'])} tasks, {len(data['buffers'])} buffers")


def _check(path: str, framework: str) -> None:
    """Every unsupported operator of the model on standard output, then exit 1; or one line."""
    if FRAMEWORKS[framework.lower()] != "onnx":
        try:
            with step(f"parsing {path}"):
                graph = frontend_loader(framework)(path)
        except UnsupportedOperatorError as error:
            for node in error.unsupported:
                click.echo(f"unsupported: {node['op_type']} at node '{node['node']}'")
            raise
        click.echo(f"all ops supported ({len(graph.nodes)} ge ops imported)")
        return
    model = load_model(path)
    check_versions(model)
    try:
        check_supported(model, default_opset(model))
    except UnsupportedOperatorError as error:
        for node in error.unsupported:
            missing = f": {node['missing']}" if node.get("missing") else ""
            domain = f" (domain {node['domain']})" if node.get("domain") else ""
            click.echo(f"unsupported: {node['op_type']}{domain} at node '{node['node']}'{missing}")
        raise UnsupportedOperatorError(
            f"{len(error.unsupported)} of {_count_nodes(model.graph)} ops are not supported",
            error.unsupported,
            error.category,
        ) from None
    with step(f"parsing {path}"):
        GraphParser().parse_onnx(model)  # dtypes and attribute values are checked as the ops import
    click.echo(f"all {_count_nodes(model.graph)} ops supported")


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _model_path(settings: dict[str, Any]) -> str:
    """The model file, after checking its framework has an importer."""
    if not settings["model"] or not settings["framework"]:
        raise click.UsageError("--model and --framework are required (atc's --framework 5 is ONNX)")
    if FRAMEWORKS[settings["framework"].lower()] != "onnx":
        frontend_loader(settings["framework"])
    return settings["model"]


def frontend_loader(code: str) -> Callable[..., Graph]:
    """The `load_model_file` of the frontend of a framework (atc's code or a name) other than ONNX."""
    package = FRAMEWORKS[code.lower()]
    name = FRAMEWORK_NAMES[package]
    try:
        module = importlib.import_module(f"ge.frontends.{package}")
    except ModuleNotFoundError as error:
        if error.name == f"ge.frontends.{package}":
            codes = {v: k for k, v in FRAMEWORKS.items() if k.isdigit()}
            readable = [
                f"{FRAMEWORK_NAMES[p]} ({codes.get(p, p)})"
                for p in FRAMEWORK_NAMES
                if importlib.util.find_spec(f"ge.frontends.{p}") is not None
            ]
            raise GeError(
                f"framework {code} ({name}) is not yet supported: ge reads {', '.join(readable)} models"
            ) from None
        extra = EXTRAS.get(package, package)
        raise GeError(f"framework {code} ({name}) needs {error.name}: pip install 'ge[{extra}]'") from None
    return module.load_model_file


def parse_model(
    path: str,
    framework: str,
    input_shape: str | None = None,
    out_nodes: str | None = None,
    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES,
) -> Graph:
    """The graph of a framework model, with atc's `--input_shape` and `--out_nodes` applied."""
    if FRAMEWORKS[framework.lower()] != "onnx":
        shapes = input_shapes(input_shape) if input_shape else None
        loader = frontend_loader(framework)
        given = {"input_shapes": shapes, "outputs": entries(out_nodes) if out_nodes else None}
        accepted = inspect.signature(loader).parameters
        for name, value in given.items():
            if value is not None and name not in accepted:
                package = FRAMEWORKS[framework.lower()]
                fix = UNSET_BY.get((package, name))
                raise GeError(
                    f"{FLAGS[name]} is not supported for {FRAMEWORK_NAMES[package]} models"
                    + (f": {fix}" if fix else "")
                )
        return loader(path, **{name: value for name, value in given.items() if value is not None})
    if zipfile.is_zipfile(path):
        raise GeError(
            f"'{path}' is a zip archive, not an ONNX model; a torch.export archive is --framework pytorch"
        )
    return parse_onnx_model(load_model(path), input_shape, out_nodes, max_tensor_bytes)


def parse_onnx_model(
    model: onnx.ModelProto,
    input_shape: str | None = None,
    out_nodes: str | None = None,
    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES,
) -> Graph:
    """The graph of an ONNX model, with atc's `--input_shape` and `--out_nodes` applied."""
    shapes = input_shapes(input_shape) if input_shape else None
    outputs = [_out_node(model, spec) for spec in entries(out_nodes)] if out_nodes else None
    return GraphParser(max_tensor_bytes).parse_onnx(model, input_shapes=shapes, outputs=outputs)


def _out_node(model: onnx.ModelProto, entry: str) -> str:
    """The value name of `node:index`."""
    node, separator, index = entry.rpartition(":")
    if not separator or not node or not index.strip().isdigit():
        raise GeError(f"--out_nodes entry '{entry}' is not NODE:INDEX (e.g. conv1:0)")
    return node_output(model, node, int(index))


def _count_nodes(graph: onnx.GraphProto) -> int:
    """Nodes of the graph and of its subgraphs."""
    count = 0
    for node in graph.node:
        count += 1
        for attribute in node.attribute:
            for sub in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                count += _count_nodes(sub)
    return count
