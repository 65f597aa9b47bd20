"""Pictures of a profiled run with matplotlib (the optional `plot` extra): a Gantt chart of the
modelled timeline and a roofline of the kernels. matplotlib is imported when a picture is drawn,
and draws on its Agg canvas, so `ge` imports without it and draws without a display."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import GeError

if TYPE_CHECKING:
    from .profiler import ProfileReport

FORMATS = (".png", ".svg", ".pdf")
UNIT_COLOURS = {"cube": "tab:red", "vector": "tab:blue", "aicpu": "tab:green"}
CONVERSION_COLOUR = "tab:purple"
"""trans_data kernels run on the vector cores but are shown apart: they only move data."""


def plot_timeline(report: ProfileReport, path: str | Path) -> None:
    """One lane per stream; a launch is a bar from its start to its end, its launch overhead
    lighter, coloured by unit and labelled with its name where the name fits."""
    figure_class = _figure_class(path)
    streams = sorted({k.stream for k in report.kernels}) or [0]
    figure = figure_class(figsize=(12, 1.2 + 0.6 * len(streams)))
    axes = figure.subplots()
    span = report.latency_us or 1.0
    for k in report.kernels:
        lane = streams.index(k.stream)
        colour = CONVERSION_COLOUR if k.kind == "trans_data" else UNIT_COLOURS.get(k.unit, "tab:gray")
        axes.broken_barh(
            [(k.start_us, k.core_start_us - k.start_us)], (lane - 0.4, 0.8), color=colour, alpha=0.3
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
        f"{report.soc}: {report.latency_us:.2f} us, NPU {report.npu_utilization:.0%}, "
        f"cube {report.compute_utilization:.0%}, HBM {report.memory_bandwidth_utilization:.0%}"
    )
    patches = _patches(report)
    handles = [patches[name] for name in patches]
    axes.legend(handles=handles, loc="upper right", fontsize=8)
    _save(figure, path)


def plot_roofline(report: ProfileReport, path: str | Path) -> None:
    """Each kernel with FLOPs and HBM bytes at (FLOPs per byte, achieved FLOP/s over its core
    time), under the roofline of its SoC: the HBM bandwidth's slope and the cube and vector peaks
    (fp16; the vector peak counts one operation per 16-bit lane per cycle)."""
    figure_class = _figure_class(path)
    figures = report.figures
    clock_hz = float(figures["clock_mhz"]) * 1e6
    bandwidth = float(figures["hbm_gbps"]) * 1e9
    cube_peak = int(figures["cube_cores"]) * 2 * float(figures["cube_fp16_macs_per_cycle"]) * clock_hz
    vector_peak = int(figures["vector_cores"]) * float(figures["vector_bytes_per_cycle"]) / 2 * clock_hz
    shown = [k for k in report.kernels if k.flops > 0 and k.hbm_bytes > 0 and k.core_us > 0]
    figure = figure_class(figsize=(8, 6))
    axes = figure.subplots()
    intensities = [k.flops / k.hbm_bytes for k in shown]
    low = min([0.01, *intensities]) / 2
    high = max([10 * cube_peak / bandwidth, *intensities]) * 2
    grid = [low * (high / low) ** (i / 200) for i in range(201)]
    axes.plot(grid, [min(cube_peak, bandwidth * x) for x in grid], color="black", label="roofline (cube)")
    axes.plot(
        grid,
        [min(vector_peak, bandwidth * x) for x in grid],
        color="gray",
        linestyle="--",
        label="roofline (vector)",
    )
    for k, intensity in zip(shown, intensities, strict=True):
        colour = UNIT_COLOURS.get(k.unit, "tab:gray")
        achieved = k.flops / (k.core_us * 1e-6)
        axes.scatter(intensity, achieved, color=colour, s=20, zorder=3)
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


def _patches(report: ProfileReport, only_units: bool = False) -> dict[str, Any]:
    from matplotlib.patches import Patch

    patches = {unit: Patch(color=colour, label=unit) for unit, colour in UNIT_COLOURS.items()}
    kinds = {k.unit for k in report.kernels}
    found = {unit: patch for unit, patch in patches.items() if unit in kinds}
    if not only_units and any(k.kind == "trans_data" for k in report.kernels):
        found["trans_data"] = Patch(color=CONVERSION_COLOUR, label="trans_data")
    return found


def _save(figure: Any, path: str | Path) -> None:
    try:
        figure.tight_layout()
        figure.savefig(path)
    except OSError as error:
        raise GeError(f"cannot write '{path}': {error.strerror}") from None
