"""Pictures of a profiled run with matplotlib (the optional `plot` extra): a Gantt chart of the
modelled timeline and a roofline of the kernels. matplotlib is imported when a picture is drawn,
and draws on its Agg canvas, so `ge` imports without it and draws without a display."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import GeError
from .palette import UNIT_COLOURS, UNKNOWN_COLOUR
from .profile_data import ProfileData
from .profiler_peaks import peak_flops

FORMATS = (".png", ".svg", ".pdf")
LAUNCH_HATCH = "////"
"""Launch overhead: the kernel's colour, lighter and hatched."""


def plot_timeline(report: ProfileData, path: str | Path) -> None:
    """One lane per stream; a launch is a bar from its start to its end, its launch overhead
    lighter and hatched, coloured by unit (trans_data apart) and labelled with its name where the
    name fits; the legend sits right of the chart, clear of the last kernels."""
    figure_class = _figure_class(path)
    streams = sorted({k.stream for k in report.kernels}) or [0]
    figure = figure_class(figsize=(12, 1.2 + 0.6 * len(streams)))
    axes = figure.subplots()
    span = report.latency_us or 1.0
    for k in report.kernels:
        lane = streams.index(k.stream)
        colour = _colour(k.kind, k.unit)
        axes.broken_barh(
            [(k.start_us, k.core_start_us - k.start_us)],
            (lane - 0.4, 0.8),
            facecolor=colour,
            alpha=0.4,
            hatch=LAUNCH_HATCH,
            edgecolor="gray",
            linewidth=0,
        )
        axes.broken_barh(
            [(k.core_start_us, k.core_us)], (lane - 0.4, 0.8), color=colour, edgecolor="black", linewidth=0.3
        )
        # About 0.8% of the run's width per character at this figure size.
        if k.core_us > span * 0.008 * (len(k.kernel) + 1):
            axes.text(k.core_start_us + k.core_us / 2, lane, k.kernel, ha="center", va="center", fontsize=7)
    axes.set_yticks(range(len(streams)), [f"stream {s}" for s in streams])
    axes.invert_yaxis()
    axes.set_xlim(0, span)
    axes.set_xlabel("modelled time (us)")
    axes.set_title(
        f"{report.soc}: {report.latency_us:.2f} us, NPU {report.npu_utilization:.1%}, "
        f"cube {report.compute_utilization:.1%}, HBM {report.memory_bandwidth_utilization:.1%}"
    )
    handles = list(_patches(report).values())
    if any(k.core_start_us > k.start_us for k in report.kernels):
        from matplotlib.patches import Patch

        handles.append(
            Patch(facecolor="white", edgecolor="gray", hatch=LAUNCH_HATCH, label="launch overhead")
        )
    axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8)
    _save(figure, path)


def plot_roofline(report: ProfileData, path: str | Path) -> None:
    """Each kernel with FLOPs and HBM bytes at (FLOPs per byte, achieved FLOP/s over its core
    time), under the roofline of its SoC: the HBM bandwidth's slope and, for each type the kernels
    compute in, the peak of all cube cores (cube kernels) or all vector cores (the others) at that
    type (`ge.profiler_peaks.peak_flops`), each ceiling labelled with its unit, type and rate."""
    figure_class = _figure_class(path)
    figures = report.figures
    bandwidth = float(figures["hbm_gbps"]) * 1e9
    ceilings = _ceilings(report)
    shown = [k for k in report.kernels if k.flops > 0 and k.hbm_bytes > 0 and k.core_us > 0]
    figure = figure_class(figsize=(8, 6))
    axes = figure.subplots()
    intensities = [k.flops / k.hbm_bytes for k in shown]
    top = max(ceilings.values())
    low = min([0.01, *intensities]) / 2
    high = max([10 * top / bandwidth, *intensities]) * 2
    grid = [low * (high / low) ** (i / 200) for i in range(201)]
    for number, (name, peak) in enumerate(sorted(ceilings.items(), key=lambda item: -item[1])):
        axes.plot(
            grid,
            [min(peak, bandwidth * x) for x in grid],
            color="black" if name.startswith("cube") else "dimgray",
            linestyle=("-", "--", "-.", ":")[number % 4],
            label=f"roofline, {name}: {peak / 1e12:.3g} TFLOP/s",
        )
    for k, intensity in zip(shown, intensities, strict=True):
        achieved = k.flops / (k.core_us * 1e-6)
        colour = _colour(k.kind, k.unit)
        axes.scatter(intensity, achieved, color=colour, edgecolor="black", linewidth=0.5, s=24, zorder=3)
        axes.annotate(k.kernel, (intensity, achieved), fontsize=6, xytext=(3, 3), textcoords="offset points")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("arithmetic intensity (FLOPs per HBM byte)")
    axes.set_ylabel("achieved FLOP/s")
    left_out = len(report.kernels) - len(shown)
    note = f" ({left_out} without FLOPs or HBM bytes not shown)" if left_out else ""
    axes.set_title(f"{report.soc}: {len(shown)} kernels{note}", fontsize=10)
    patches = _patches(report, only_units=True)
    handles, _ = axes.get_legend_handles_labels()
    axes.legend(handles=[*handles, *patches.values()], fontsize=8, loc="lower right")
    _save(figure, path)


def check_picture_path(path: str | Path) -> None:
    """Refuses a path whose extension names no format the plots are drawn in."""
    if Path(path).suffix.lower() not in FORMATS:
        raise GeError(f"cannot draw '{path}': the format follows the extension, one of {', '.join(FORMATS)}")


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _figure_class(path: str | Path) -> Any:
    """matplotlib's `Figure`, once the extension of `path` is known good. A `Figure` made without
    pyplot draws on the Agg canvas (vector formats on their own) and leaves pyplot's backend and
    figure list as the caller had them."""
    check_picture_path(path)
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise GeError("drawing needs matplotlib: pip install 'ge[plot]'") from None
    return Figure


def _patches(report: ProfileData, only_units: bool = False) -> dict[str, Any]:
    from matplotlib.patches import Patch

    shown = {k.unit for k in report.kernels}
    if not only_units:
        shown |= {k.kind for k in report.kernels if k.kind == "trans_data"}
    return {
        name: Patch(facecolor=colour, edgecolor="black", linewidth=0.5, label=name)
        for name, colour in UNIT_COLOURS.items()
        if name in shown
    }


def _colour(kind: str, unit: str) -> str:
    return UNIT_COLOURS["trans_data"] if kind == "trans_data" else UNIT_COLOURS.get(unit, UNKNOWN_COLOUR)


def _ceilings(report: ProfileData) -> dict[str, float]:
    """Peak FLOP/s by name ("cube fp32", "vector fp16", ...) of every type the kernels compute
    in, on all the cores of their unit; fp16 on cube and vector cores when no kernel says more."""
    cube_cores, vector_cores = int(report.figures["cube_cores"]), int(report.figures["vector_cores"])
    wanted = {("cube", k.dtype) for k in report.kernels if k.kind == "cube"}
    wanted |= {("vector", k.dtype) for k in report.kernels if k.kind in ("vector", "trans_data")}
    if not wanted:
        wanted = {("cube", "fp16"), ("vector", "fp16")}
    found = [
        peak_flops(kind, dtype, cube_cores if kind == "cube" else vector_cores, report.figures)
        for kind, dtype in wanted
    ]
    return dict(found)


def _save(figure: Any, path: str | Path) -> None:
    try:
        figure.tight_layout()
        # "tight" keeps a legend placed outside the axes inside the picture.
        figure.savefig(path, bbox_inches="tight")
    except OSError as error:
        raise GeError(f"cannot write '{path}': {error.strerror}") from None
