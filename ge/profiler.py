"""`GraphProfiler`: one run of a loaded model, measured on the emulator and laid on the modelled timeline.

`profile(executor, inputs)` runs the model once on the emulator, timing each launch, and simulates
the run on the SoC (`ge.cost.timeline.simulate`). Its `ProfileReport` holds one `KernelProfile`
per launch and these figures, each in [0, 1], all from the modelled timeline of makespan T
(`latency_us`, the end of the last task):

- `npu_utilization`: the AI Core time kernels held over the AI Core time there was,
  sum over cube, vector and trans_data launches of cores x core time, over T x (cube cores +
  vector cores of the SoC). `cores` is the launch's `block_dim` capped at its unit's cores; core
  time runs from the moment its cores start (`core_start_us`) to its end, so launch overhead
  (the host launch or the device's per-task scheduling, before `core_start_us`) and waiting for
  free cores are not busy. A kernel slowed by sharing HBM bandwidth holds its cores longer and
  counts so. AI CPU kernels count in neither sum (the AI CPU is not an AI Core) but, like
  everything, lengthen T. On a SoC whose cube and vector units are coupled in one AI Core
  (Ascend910A) each AI Core counts as one cube core and one vector core, as the timeline runs them.
- `compute_utilization`: the same over cube launches and cube cores only.
- `memory_bandwidth_utilization`: HBM bytes moved (MTE2 reads plus MTE3 writes of every launch,
  AI CPU ones included) over T x the HBM bandwidth.

A kernel's own `utilization` is that of the resource it is bound by: a memory-bound kernel's
achieved HBM bandwidth (bytes over its core time) against the SoC's; a compute-bound kernel's
compute busy time at peak rate on its cores (the cost model's cube, vector or AI CPU time) over
its core time. `measured_us` is the emulator's wall time of the launch on this machine: it says
where the emulator spends its time, not how fast the NPU would be.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, NameLoc, StringAttr
from xdsl.ir import Operation

from ge.cost import KernelCost, kernel_cost
from ge.cost.model import KernelInfo
from ge.cost.stream import launches, soc_figures
from ge.cost.timeline import LaunchSpan, Timeline, simulate
from ge.dialects.common import TARGET_ATTR_NAME, TargetAttr
from ge.dialects.stream import EventRecordOp, EventWaitOp, KernelFuncOp, LaunchOp, model_of
from ge.passes.fusion import SOURCES

from .errors import GeError
from .executor import GraphExecutor

AI_CORE_UNITS = ("cube", "vector")
"""Units whose cores are AI Cores (the AI CPU is not)."""


@dataclass(frozen=True)
class KernelProfile:
    """One launch of a profiled run. Times are microseconds from the start of the modelled run,
    except `measured_us`, the emulator's wall time of this launch."""

    index: int
    """Position among the model's launches, in task order."""
    kernel: str
    sources: tuple[str, ...]
    """The graph nodes whose ops the kernel computes (empty for a format conversion)."""
    kind: str
    """`cube`, `vector`, `aicpu` or `trans_data`."""
    unit: str
    """The cores it runs on: `cube`, `vector` or `aicpu`."""
    stream: int
    cores: int
    start_us: float
    """Its stream takes it up: launch overhead begins."""
    core_start_us: float
    """Its cores start computing."""
    end_us: float
    flops: int
    hbm_bytes: int
    """MTE2 reads plus MTE3 writes."""
    utilization: float
    """Of the resource it is bound by (see the module docstring), in [0, 1]."""
    bound: str
    """`compute` or `memory`: which of the cost model's unit times is the longer."""
    measured_us: float
    """Emulator wall time of this launch, measured; not a model of the NPU."""

    @property
    def modelled_us(self) -> float:
        """Modelled time from its start (launch overhead included) to its end."""
        return self.end_us - self.start_us

    @property
    def core_us(self) -> float:
        """Modelled time its cores were held."""
        return self.end_us - self.core_start_us


@dataclass(frozen=True)
class Flow:
    """A cross-stream dependency: `event` recorded after launch `source` on one stream, waited
    for before launch `target` on another (launch indices in task order)."""

    event: int
    source: int
    target: int


@dataclass(frozen=True)
class ProfileReport:
    """What `GraphProfiler.profile` found; `str(report)` is `report.table()`."""

    soc: str
    sunk: bool
    latency_us: float
    """The modelled makespan of the run."""
    kernels: list[KernelProfile]
    flows: list[Flow]
    npu_utilization: float
    compute_utilization: float
    memory_bandwidth_utilization: float
    stream_busy_us: dict[int, float]
    """Per stream, modelled time it ran a task (launch overhead, kernel, event), waits excluded."""
    unit_cores: dict[str, int]
    unit_busy_core_us: dict[str, float]
    """Per unit, core-microseconds its kernels held."""
    figures: Mapping[str, Any]
    """The SoC profile's figures the model was compiled with."""
    outputs: list[np.ndarray]
    measured_total_us: float
    """Wall time of the whole profiled run: the launches plus the input checks and, on an
    executor's first run, the emulator's race check."""

    @property
    def stream_utilization(self) -> dict[int, float]:
        return {s: _share(busy, self.latency_us) for s, busy in self.stream_busy_us.items()}

    @property
    def unit_utilization(self) -> dict[str, float]:
        return {
            unit: _share(used, self.unit_cores[unit] * self.latency_us)
            for unit, used in self.unit_busy_core_us.items()
        }

    def table(self, top: int = 10) -> str:
        """A text summary: the figures, per-stream and per-unit busy shares, then the `top`
        kernels by modelled time."""
        lines = [
            f"{self.soc}, {'sunk' if self.sunk else 'launched from the host'}: "
            f"{len(self.kernels)} launches, modelled {self.latency_us:.2f} us, "
            f"measured on the emulator {self.measured_total_us:.0f} us",
            f"npu utilization {self.npu_utilization:.1%}, compute (cube) {self.compute_utilization:.1%}, "
            f"HBM bandwidth {self.memory_bandwidth_utilization:.1%}",
            "streams busy: " + ", ".join(f"{s}: {u:.1%}" for s, u in self.stream_utilization.items()),
            "units busy: " + ", ".join(f"{u}: {v:.1%}" for u, v in self.unit_utilization.items()),
            "",
        ]
        header = (
            "kernel",
            "unit",
            "stream",
            "start us",
            "model us",
            "measured us",
            "MFLOP",
            "KiB",
            "util",
            "bound",
        )
        rows = [
            (
                k.kernel,
                k.unit,
                str(k.stream),
                f"{k.start_us:.2f}",
                f"{k.modelled_us:.2f}",
                f"{k.measured_us:.0f}",
                f"{k.flops / 1e6:.3f}",
                f"{k.hbm_bytes / 1024:.1f}",
                f"{k.utilization:.0%}",
                k.bound,
            )
            for k in sorted(self.kernels, key=lambda k: (-k.modelled_us, k.index))[:top]
        ]
        widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
        for row in (header, *rows):
            cells = [
                c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ]
            lines.append("  ".join(cells).rstrip())
        if len(self.kernels) > top:
            lines.append(f"... {len(self.kernels) - top} more kernels")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def save_trace(self, path: str | Path) -> None:
        """Writes the run as Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev)."""
        from .profiler_trace import save_trace

        save_trace(self, path)

    def plot_timeline(self, path: str | Path) -> None:
        """A Gantt chart of the modelled run, one lane per stream; the format follows the
        extension (png, svg, pdf). Needs matplotlib (`pip install 'ge[plot]'`)."""
        from .profiler_plots import plot_timeline

        plot_timeline(self, path)

    def plot_roofline(self, path: str | Path) -> None:
        """Each kernel at its arithmetic intensity and achieved FLOP/s under the SoC's roofline."""
        from .profiler_plots import plot_roofline

        plot_roofline(self, path)


class GraphProfiler:
    """`GraphProfiler().profile(executor, inputs)`; the latest figures stay on the profiler."""

    def __init__(self) -> None:
        self.report: ProfileReport | None = None
        self.npu_utilization = 0.0
        self.compute_utilization = 0.0
        self.memory_bandwidth_utilization = 0.0

    def profile(
        self,
        executor: GraphExecutor,
        inputs: np.ndarray | Sequence[np.ndarray] | Mapping[str, np.ndarray],
    ) -> ProfileReport:
        """Runs the executor's model once on `inputs` (as `GraphExecutor.run` takes them), timing
        each launch, and returns the report of that run on its modelled timeline."""
        if not isinstance(executor, GraphExecutor):
            raise GeError(
                f"profile takes a GraphExecutor with a model loaded, got {type(executor).__name__}; "
                f"create one with ge.GraphExecutor() and call its load_graph(compiled)"
            )
        compiled = executor.compiled
        if compiled is None:
            raise GeError("the executor has no model loaded: call its load_graph(compiled) before profile")
        seconds: list[float] = []
        began = time.perf_counter()
        outputs = executor.run(inputs, launch_times=seconds)
        total_us = (time.perf_counter() - began) * 1e6
        report = build_report(compiled.module, compiled.sunk, [s * 1e6 for s in seconds], outputs, total_us)
        self.report = report
        self.npu_utilization = report.npu_utilization
        self.compute_utilization = report.compute_utilization
        self.memory_bandwidth_utilization = report.memory_bandwidth_utilization
        return report


def build_report(
    module: ModuleOp,
    sunk: bool,
    measured_us: Sequence[float],
    outputs: list[np.ndarray] | None = None,
    measured_total_us: float | None = None,
) -> ProfileReport:
    """The report of a stream-level `module` whose launches took `measured_us` (microseconds, task
    order) on the emulator, laid on its modelled timeline (`sunk` as the model was compiled)."""
    soc = soc_figures(module)
    target = module.attributes[TARGET_ATTR_NAME]
    assert isinstance(target, TargetAttr)  # soc_figures has checked it
    names = {op.sym_name.data: op.kernel_name.data for op in module.walk() if _named_kernel(op)}
    found = launches(module)
    infos = [info for _, info in found]
    if len(measured_us) != len(infos):
        raise GeError(f"{len(measured_us)} measured launch times for {len(infos)} launches")
    costs = [kernel_cost(info, soc, sunk=sunk) for info in infos]
    timeline = simulate(module, sunk=sunk, kernels=(infos, costs))
    bandwidth = float(soc["hbm_gbps"]) * 1e3  # bytes per microsecond
    kernels = [
        _kernel_profile(span, info, names.get(info.name, info.name), cost, bandwidth, measured)
        for span, info, cost, measured in zip(timeline.launches, infos, costs, measured_us, strict=True)
    ]
    return ProfileReport(
        soc=target.soc.data,
        sunk=sunk,
        latency_us=timeline.latency_us,
        kernels=kernels,
        flows=_flows(module),
        **_figures(timeline, kernels, bandwidth),
        stream_busy_us=dict(timeline.stream_busy_us),
        unit_cores=dict(timeline.unit_cores),
        unit_busy_core_us=dict(timeline.unit_core_us),
        figures=dict(soc),
        outputs=outputs if outputs is not None else [],
        measured_total_us=sum(measured_us) if measured_total_us is None else measured_total_us,
    )


def source_nodes(info: KernelInfo, kernel_name: str | None = None) -> tuple[str, ...]:
    """The graph nodes a kernel's ops came from: a fused op's `sources`, else an op's name
    location. IR read back from a `.ge` file keeps `sources` but no locations; a kernel whose ops
    carry neither is named after its root node by lowering, so that name stands for them."""
    names: list[str] = []
    for op in info.ops:
        carried = op.attributes.get(SOURCES)
        if isinstance(carried, ArrayAttr):
            names += [s.data for s in carried.data if isinstance(s, StringAttr)]
        elif isinstance(op.location, NameLoc):
            names.append(op.location.desc.data)
    if not names and info.ops and kernel_name:
        names.append(kernel_name)
    return tuple(dict.fromkeys(names))


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _kernel_profile(
    span: LaunchSpan, info: KernelInfo, name: str, cost: KernelCost, bandwidth: float, measured: float
) -> KernelProfile:
    hbm_bytes = cost.mte2_bytes + cost.mte3_bytes
    memory_us = cost.mte2_us + cost.mte3_us
    compute_us = max(cost.cube_us, cost.vector_us, cost.scalar_us)
    bound = "memory" if memory_us > compute_us else "compute"
    core_us = span.end_us - span.core_start_us
    if core_us <= 0:
        utilization = 0.0
    elif bound == "memory":
        utilization = hbm_bytes / (core_us * bandwidth)
    else:
        utilization = compute_us / core_us
    return KernelProfile(
        index=span.index,
        kernel=span.kernel,
        sources=source_nodes(info, name),
        kind=span.kind,
        unit=span.unit,
        stream=span.stream,
        cores=span.cores,
        start_us=span.start_us,
        core_start_us=span.core_start_us,
        end_us=span.end_us,
        flops=cost.flops,
        hbm_bytes=hbm_bytes,
        utilization=min(1.0, utilization),
        bound=bound,
        measured_us=measured,
    )


def _figures(timeline: Timeline, kernels: list[KernelProfile], bandwidth: float) -> dict[str, float]:
    """The three utilizations of the module docstring."""
    makespan = timeline.latency_us
    pools = timeline.unit_cores
    held = {unit: sum(k.cores * k.core_us for k in kernels if k.unit == unit) for unit in pools}
    return {
        "npu_utilization": _share(
            sum(held[u] for u in AI_CORE_UNITS), makespan * sum(pools[u] for u in AI_CORE_UNITS)
        ),
        "compute_utilization": _share(held["cube"], makespan * pools["cube"]),
        "memory_bandwidth_utilization": _share(sum(k.hbm_bytes for k in kernels), makespan * bandwidth),
    }


def _flows(module: ModuleOp) -> list[Flow]:
    """From the last launch before each `event_record` on its stream to the first launch after
    each matching `event_wait` on the waiting stream."""
    last_launch: dict[int, int] = {}
    recorded: dict[int, int] = {}
    pending: dict[int, list[int]] = {}
    flows: list[Flow] = []
    index = 0
    for op in model_of(module).body.block.ops:
        if isinstance(op, LaunchOp):
            stream = op.stream.value.data
            for event in pending.pop(stream, []):
                if event in recorded:
                    flows.append(Flow(event, recorded[event], index))
            last_launch[stream] = index
            index += 1
        elif isinstance(op, EventRecordOp):
            stream = op.stream.value.data
            if stream in last_launch:
                recorded[op.event.value.data] = last_launch[stream]
        elif isinstance(op, EventWaitOp):
            pending.setdefault(op.stream.value.data, []).append(op.event.value.data)
    return flows


def _named_kernel(op: Operation) -> bool:
    return isinstance(op, KernelFuncOp) and op.kernel_name is not None


def _share(part: float, whole: float) -> float:
    return part / whole if whole > 0 else 0.0
