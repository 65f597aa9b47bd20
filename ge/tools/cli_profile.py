"""`ge profile` and `ge report`: where a compiled model spends its modelled time (per kernel, the
utilizations, a Chrome trace and pictures), and what each optimization technique gives a model.

```
ge profile m.ge --input x.npy --trace trace.json --plot timeline.png --roofline roofline.png
ge report m.onnx --soc_version Ascend910B2 [--json]
```
"""

from __future__ import annotations

import time

import click

from ge.executor import GraphExecutor
from ge.optimizer import GraphOptimizer
from ge.profiler import GraphProfiler
from ge.profiler_plots import check_picture_path
from ge.soc import DEFAULT_SOC, known_socs

from .cli_base import check_writable, input_files, logger, read_inputs, require_inputs, step, subcommand
from .cli_compile import flags, framework_flag, parse_model
from .cli_model import load


@subcommand("profile")
@click.argument("model")
@input_files
@click.option("--trace", default=None, metavar="FILE.json", help="write a Chrome trace (Perfetto)")
@click.option("--plot", default=None, metavar="FILE.png|svg|pdf", help="draw the timeline")
@click.option("--roofline", default=None, metavar="FILE.png|svg|pdf", help="draw the roofline")
@click.option("--top", default=10, type=click.IntRange(min=1), help="kernels listed, longest core time first")
def profile_command(
    model: str,
    inputs: tuple[str, ...],
    trace: str | None,
    plot: str | None,
    roofline: str | None,
    top: int,
) -> None:
    """Run a .ge model once on the emulator and show its modelled timeline: utilizations, the
    longest kernels, the emulator's measured time beside them."""
    for path in (trace, plot, roofline):
        check_writable(path)  # before the run, not after
    for picture in (plot, roofline):
        if picture is not None:
            check_picture_path(picture)
    compiled = load(model)
    arrays = read_inputs(inputs, compiled.input_names)
    require_inputs(arrays, compiled.inputs)
    executor = GraphExecutor()
    executor.load_graph(compiled)
    with step(f"profiling {model}"):
        report = GraphProfiler().profile(executor, arrays)
    click.echo(report.table(top))
    for path, write in (
        (trace, report.save_trace),
        (plot, report.plot_timeline),
        (roofline, report.plot_roofline),
    ):
        if path is not None:
            write(path)
            click.echo(f"wrote {path}")


@subcommand("report")
@click.argument("model")
@framework_flag(default="5")
@flags("soc_version", type=click.Choice(known_socs()), default=DEFAULT_SOC, help="the SoC to model")
@flags("input_shape", metavar='"NAME:D,D,...;NAME:..."', help="fix input shapes (-1 keeps a dimension)")
@flags("out_nodes", metavar='"NODE:INDEX;..."', help="the outputs, as node names and output indices")
@click.option("--json", "as_json", is_flag=True, help="print the rows as JSON")
def report_command(
    model: str,
    framework: str,
    soc_version: str,
    input_shape: str | None,
    out_nodes: str | None,
    as_json: bool,
) -> None:
    """What each technique gives the model: each switched off alone from O3 and on alone from O0
    (modelled latency, kernels, streams, arena and weight bytes), and mixed precision against O3."""
    with step(f"parsing {model}"):
        graph = parse_model(model, framework, input_shape, out_nodes)
    start = time.perf_counter()
    with step("compiling each technique off and on"):
        report = GraphOptimizer().report(graph, target=soc_version)
    logger.info("%d compilations in %.1f s", len(report.rows), time.perf_counter() - start)
    click.echo(report.to_json() if as_json else str(report))
