"""`ge run` and `ge inspect`: a compiled `.ge` model run on the emulator, or described (kernels by
unit, streams and events, memory, modelled latency); and the whole model as JSON, which
`ge compile --mode 1` writes, as atc's `--mode=1` turns an .om file into JSON.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import click
import numpy as np
from rich.console import Console
from rich.table import Table
from xdsl.ir import SSAValue

from ge.artifact import read_manifest
from ge.compiler import CompiledModel, GraphCompiler
from ge.cost.timeline import UNIT_OF_KIND
from ge.dialects.stream import BufferOp, EventRecordOp, EventWaitOp, LaunchOp, SubviewOp, ViewOp, WeightOp
from ge.dtypes import numpy_dtype, shaped_type
from ge.executor import GraphExecutor
from ge.passes.pipelines import TECHNIQUES

from .cli_base import check_writable, input_files, logger, read_inputs, require_inputs, step, subcommand


@subcommand("run")
@click.argument("model")
@input_files
@click.option("--output", default=None, metavar="FILE.npz", help="write the outputs there, by name")
def run_command(model: str, inputs: tuple[str, ...], output: str | None) -> None:
    """Run a compiled .ge model on the emulator and print its outputs."""
    check_writable(output)
    compiled = load(model)
    arrays = read_inputs(inputs, compiled.input_names)
    require_inputs(arrays, compiled.inputs)
    executor = GraphExecutor()
    executor.load_graph(compiled)
    start = time.perf_counter()
    with step(f"running {model}"):
        results = executor.run(arrays)
    logger.info("ran in %.2f s", time.perf_counter() - start)
    outputs = {spec.name: array for spec, array in zip(compiled.outputs, results, strict=True)}
    table = Table("output", "shape", "dtype", "min", "max", "mean")
    for name, array in outputs.items():
        table.add_row(name, str(list(array.shape)), str(array.dtype), *_summary(array))
    Console().print(table)
    if output is not None:
        with open(output, "wb") as file:  # numpy would add .npz to a name without it
            np.savez(file, allow_pickle=False, **outputs)
        click.echo(f"wrote {output}")


@subcommand("inspect")
@click.argument("model")
@click.option("--json", "as_json", is_flag=True, help="print the same figures as JSON")
def inspect_command(model: str, as_json: bool) -> None:
    """Kernels by unit, streams and events, memory and modelled latency of a .ge model."""
    summary = describe(load(model))
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    console = Console()
    overview = Table("model", model)
    # with gears, the figures of one plan are the first gear's; each gear's row gives its own
    first = " (first gear)" if "gears" in summary else ""
    for label, key in _OVERVIEW.items():
        overview.add_row(label, str(summary[key]) + (first if key in _PER_GEAR else ""))
    overview.add_row("options", ", ".join(f"{k}={v}" for k, v in summary["options"].items()))
    for kind in ("inputs", "outputs"):
        specs = [f"{s['name']} {s['dtype']}{s['shape']}" for s in summary[kind]]
        overview.add_row(kind, ", ".join(specs))
    for gear in summary.get("gears", []):
        shapes = ", ".join(f"{name}{shape}" for name, shape in gear["input_shapes"].items())
        overview.add_row(
            "gear",
            f"{shapes}: {gear['kernels']} kernels, arena {gear['arena_bytes']} bytes, modelled latency "
            f"{gear['modelled_latency_us']} us",
        )
    if "batch_padding" in summary:
        padding = summary["batch_padding"]
        shown = (
            f"a smaller batch runs padded (output sample axes {padding['output_axes']})"
            if "output_axes" in padding
            else f"none: {padding['blocker']} may mix samples"
        )
        overview.add_row("batch padding", shown)
    console.print(overview)
    kinds = [(kind, UNIT_OF_KIND[kind], n) for kind, n in summary["kernels_by_kind"].items()]
    console.print(_table(f"kernels by unit{first}", ("kind", "unit", "kernels"), kinds))
    streams = [(s["stream"], s["launches"], s["event_records"], s["event_waits"]) for s in summary["streams"]]
    console.print(_table(f"streams{first}", ("stream", "launches", "event records", "event waits"), streams))
    memory = [(key.removesuffix("_bytes").replace("_", " "), n) for key, n in summary["memory"].items()]
    console.print(_table("memory", ("", "bytes"), memory))


def load(path: str) -> CompiledModel:
    """The model of a `.ge` file, logged."""
    with step(f"loading {path}"):
        compiled = GraphCompiler.load(path)
    logger.info("loaded %s: %d kernels for %s", path, compiled.num_operators, compiled.target)
    return compiled


def describe(compiled: CompiledModel) -> dict[str, Any]:
    """What `ge inspect` prints: the figures of `CompiledModel` and its streams."""
    memory = compiled.memory
    per_stream: dict[int, Counter[str]] = {}
    for op in compiled.model.body.block.ops:
        if isinstance(op, LaunchOp | EventRecordOp | EventWaitOp):
            per_stream.setdefault(op.stream.value.data, Counter())[_TASK_KINDS[type(op)]] += 1
    events = {op.event.value.data for op in compiled.model.body.block.ops if isinstance(op, EventRecordOp)}
    units: Counter[str] = Counter()
    for kind, count in compiled.kernel_histogram().items():
        units[UNIT_OF_KIND[kind]] += count
    return (
        {
            "target": compiled.target,
            "optimization_level": compiled.optimization_level,
            "techniques": [name for name in TECHNIQUES if name in compiled.techniques],
            "options": compiled.options,
            "sunk": compiled.sunk,
            "modelled_latency_us": round(compiled.modelled_latency_us(), 3),
            "kernels": compiled.num_operators,
            "kernels_by_kind": compiled.kernel_histogram(),
            "kernels_by_unit": dict(sorted(units.items())),
            "streams": [
                {
                    "stream": stream,
                    "launches": counts["launches"],
                    "event_records": counts["event_records"],
                    "event_waits": counts["event_waits"],
                }
                for stream, counts in sorted(per_stream.items())
            ],
            "events": len(events),
            "memory": {
                "arena_bytes": memory.arena_bytes,
                "lower_bound_bytes": memory.lower_bound_bytes,
                "no_reuse_bytes": memory.no_reuse_bytes,
                "weight_bytes": memory.weight_bytes,
            },
            "inputs": [{"name": s.name, "shape": list(s.shape), "dtype": s.dtype} for s in compiled.inputs],
            "outputs": [{"name": s.name, "shape": list(s.shape), "dtype": s.dtype} for s in compiled.outputs],
        }
        | ({"gears": _gears(compiled)} if compiled.gears else {})
        | ({"batch_padding": compiled.batch_padding.to_json()} if compiled.batch_padding is not None else {})
    )


def _gears(compiled: CompiledModel) -> list[dict[str, Any]]:
    """Each gear's input shapes, kernels, arena and modelled latency (the other figures are the
    first gear's)."""
    return [
        {
            "input_shapes": {name: list(shape) for name, shape in gear.input_shapes.items()},
            "kernels": model.num_operators,
            "arena_bytes": model.memory.arena_bytes,
            "modelled_latency_us": round(model.modelled_latency_us(), 3),
        }
        for gear, model in zip(compiled.gears, compiled.gear_models, strict=True)
    ]


def model_json(path: str | Path, with_ir: bool = True) -> dict[str, Any]:
    """The whole `.ge` model as JSON data: its manifest, `describe`'s summary, every buffer, view
    and weight with its offset and size, every launch (kernel, unit, stream, buffers, modelled
    time) and event in task order, and the stream IR as text."""
    manifest = read_manifest(path)
    compiled = load(str(path))
    names: dict[SSAValue, str] = {}
    buffers, weights, tasks = [], [], []
    costs = iter(compiled.kernel_costs())
    kernels = compiled.model.kernels()
    for op in compiled.model.body.block.ops:
        if isinstance(op, BufferOp | WeightOp):
            prefix = "weight" if isinstance(op, WeightOp) else "buffer"
            entry = {"name": _name(op.buffer, names, prefix), **_placed(op)}
            if isinstance(op, WeightOp):
                entry["format"] = op.stored_format
                weights.append(entry)
                continue
            if op.input is not None:
                entry["input"] = compiled.input_names[op.input.value.data]
            if op.output is not None:
                entry["output"] = compiled.model.output_names.data[op.output.value.data].data
            buffers.append(entry)
        elif isinstance(op, ViewOp | SubviewOp):
            entry = {"name": _name(op.buffer, names), "view_of": _name(op.source, names)}
            buffers.append({**entry, **_type(op.buffer)})
        elif isinstance(op, LaunchOp):
            symbol = op.kernel.root_reference.data
            kernel, (_, cost) = kernels[symbol], next(costs)
            tasks.append(
                {
                    "task": len(tasks),
                    "launch": symbol,
                    "kind": kernel.kernel_kind,
                    "unit": kernel.unit.data,
                    "stream": op.stream.value.data,
                    "block_dim": kernel.block_dim.value.data if kernel.block_dim is not None else 1,
                    "inputs": [_name(v, names) for v in op.inputs],
                    "outputs": [_name(v, names) for v in op.outputs],
                    "modelled_us": round(cost.latency_us, 3),
                    "bound": cost.bound,
                }
            )
        elif isinstance(op, EventRecordOp | EventWaitOp):
            kind = "event_record" if isinstance(op, EventRecordOp) else "event_wait"
            tasks.append({"task": len(tasks), kind: op.event.value.data, "stream": op.stream.value.data})
    data = {
        "manifest": manifest,
        "summary": describe(compiled),
        "arena_bytes": compiled.model.arena_size.value.data,
        "buffers": buffers,
        "weights": weights,
        "tasks": tasks,
    }
    if with_ir:
        data["ir"] = str(compiled.module)
    return data


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


_OVERVIEW = {
    "target": "target",
    "optimization level": "optimization_level",
    "techniques": "techniques",
    "sunk": "sunk",
    "modelled latency (us)": "modelled_latency_us",
    "kernels": "kernels",
    "events": "events",
}
"""Rows of the overview table: label -> key of `describe`."""
_PER_GEAR = ("modelled_latency_us", "kernels", "events")
"""Overview rows that describe one plan: with gears, the first gear's."""
_TASK_KINDS = {LaunchOp: "launches", EventRecordOp: "event_records", EventWaitOp: "event_waits"}


def _summary(array: np.ndarray) -> tuple[str, str, str]:
    """Min, max and mean of a numeric array (blank for an empty or non-numeric one)."""
    if array.size == 0 or not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        return "", "", ""
    values = array.astype(np.float64)
    low, high, mean = (f"{v:.6g}" for v in (values.min(), values.max(), values.mean()))
    return low, high, mean


def _table(title: str, columns: tuple[str, ...], rows) -> Table:
    table = Table(*columns, title=title, title_justify="left")
    for row in rows:
        table.add_row(*map(str, row))
    return table


def _name(value: SSAValue, names: dict[SSAValue, str], prefix: str = "buffer") -> str:
    """A unique name for a buffer: its SSA name where it has one, else `<prefix><n>`."""
    if value not in names:
        base = value.name_hint or f"{prefix}{len(names)}"
        taken = set(names.values())
        name, n = base, 0
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        names[value] = name
    return names[value]


def _placed(op: BufferOp | WeightOp) -> dict[str, Any]:
    return {"offset": op.offset.value.data, "size": op.size.value.data, **_type(op.buffer)}


def _type(value: SSAValue) -> dict[str, Any]:
    t = shaped_type(value)
    return {"shape": list(t.get_shape()), "dtype": numpy_dtype(t.element_type).name}
