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

Per kernel, over its core time:

- `bound`: the cost model's `KernelCost.bound`, as `ge compile --mode 1` reports it: "cube",
  "vector" or "memory" (MTE2 + MTE3 over HBM), whichever unit is busiest; "launch" when the launch
  overhead is longer than any of them; "aicpu" for AI CPU kernels. `compute_or_memory` groups
  them: cube, vector and aicpu are "compute", memory is "memory", launch stays "launch".
- `busy`: the share of its core time its bound unit works (a launch-bound kernel: its busiest
  unit). It says what limits the kernel, not how fast it is: a kernel can keep its cube busy all
  along and still run far below the cube's peak when its tiles are mostly padding.
- `of_peak`: how fast it is. A memory-bound kernel, or one without FLOPs (trans_data), against
  the HBM bandwidth: HBM bytes over core time over bandwidth (`peak` is "HBM"). Any other
  against the peak FLOP/s of the cores it holds at its type (`ge.profiler_peaks.peak_flops`):
  achieved FLOPs over core time over that peak (`peak` is e.g. "cube fp32", "vector fp16").

`measured_us` is the emulator's wall time of the launch on this machine: it says where the
emulator spends its time, not how fast the NPU would be. `profile` first runs the model `warmup`
times untimed, so one-time costs of a fresh executor (the emulator's race check, first-touch
allocation) do not land on the first kernel.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, NameLoc, StringAttr

from ge.cost import KernelCost, kernel_cost
from ge.cost.model import KernelInfo
from ge.cost.stream import launches, soc_figures
from ge.cost.timeline import LaunchSpan, Timeline, simulate
from ge.dialects.common import TARGET_ATTR_NAME, TargetAttr
from ge.dialects.stream import EventRecordOp, EventWaitOp, KernelFuncOp, LaunchOp, model_of
from ge.dialects.tiling import TILED_UNITS
from ge.passes.fusion import SOURCES

from .errors import GeError
from .executor import GraphExecutor
from .profile_data import Flow, KernelProfile, ProfileData, share
from .profiler_peaks import kernel_dtype, peak_flops


@dataclass(frozen=True)
class ProfileReport(ProfileData):
    """What `GraphProfiler.profile` found; `str(report)` is `report.table()`."""

    def table(self, top: int = 10) -> str:
        """A text summary: the figures, per-stream and per-unit busy shares, then the `top`
        kernels by core time (launch overhead apart), each with its bound, `busy` and `of_peak`."""
        from .profiler_table import table

        return table(self, top)

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
        warmup: int = 1,
    ) -> ProfileReport:
        """Runs the executor's model `warmup` times untimed (an integer >= 0; one-time costs of a
        fresh executor then stay out of the figures), then once more on `inputs` (as
        `GraphExecutor.run` takes them), timing each launch, and returns the report of that run
        on its modelled timeline."""
        if not isinstance(executor, GraphExecutor):
            raise GeError(
                f"profile takes a GraphExecutor with a model loaded, got {type(executor).__name__}; "
                f"create one with ge.GraphExecutor() and call its load_graph(compiled)"
            )
        compiled = executor.compiled
        if compiled is None:
            raise GeError("the executor has no model loaded: call its load_graph(compiled) before profile")
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
            raise GeError(
                f"profile's warmup is the number of untimed runs before the timed one, an integer "
                f">= 0; got {warmup!r}"
            )
        for _ in range(warmup):
            executor.run(inputs)
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
    names = {
        op.sym_name.data: op.kernel_name.data
        for op in module.walk()
        if isinstance(op, KernelFuncOp) and op.kernel_name is not None
    }
    found = launches(module)
    infos = [info for _, info in found]
    if len(measured_us) != len(infos):
        raise GeError(f"{len(measured_us)} measured launch times for {len(infos)} launches")
    costs = [kernel_cost(info, soc, sunk=sunk) for info in infos]
    timeline = simulate(module, sunk=sunk, kernels=(infos, costs))
    bandwidth = float(soc["hbm_gbps"]) * 1e3  # bytes per microsecond
    kernels = [
        _kernel_profile(span, info, names.get(info.name, info.name), cost, soc, measured)
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
    span: LaunchSpan, info: KernelInfo, name: str, cost: KernelCost, soc: Mapping[str, Any], measured: float
) -> KernelProfile:
    hbm_bytes = cost.mte2_bytes + cost.mte3_bytes
    memory_us = cost.mte2_us + cost.mte3_us
    unit_us = {"cube": cost.cube_us, "vector": cost.vector_us, "memory": memory_us, "aicpu": cost.scalar_us}
    # A launch-bound kernel's cores wait on no unit: its busiest one tells how full they are.
    working_us = unit_us.get(cost.bound, max(cost.cube_us, cost.vector_us, memory_us))
    dtype = kernel_dtype(info)
    core_us = span.end_us - span.core_start_us
    if cost.bound == "memory" or cost.flops == 0:
        peak, achieved, rate = "HBM", hbm_bytes, float(soc["hbm_gbps"]) * 1e9
    else:
        peak, rate = peak_flops(span.kind, dtype, span.cores, soc)
        achieved = cost.flops
    return KernelProfile(
        index=span.index,
        kernel=span.kernel,
        sources=source_nodes(info, name),
        kind=span.kind,
        unit=span.unit,
        dtype=dtype,
        stream=span.stream,
        cores=span.cores,
        start_us=span.start_us,
        core_start_us=span.core_start_us,
        end_us=span.end_us,
        launch_us=cost.launch_us,
        flops=cost.flops,
        hbm_bytes=hbm_bytes,
        bound=cost.bound,
        busy=min(1.0, share(working_us, core_us)),
        of_peak=share(achieved, core_us * 1e-6 * rate),
        peak=peak,
        measured_us=measured,
    )


def _figures(timeline: Timeline, kernels: list[KernelProfile], bandwidth: float) -> dict[str, float]:
    """The three utilizations of the module docstring."""
    makespan = timeline.latency_us
    pools = timeline.unit_cores
    held = {unit: sum(k.cores * k.core_us for k in kernels if k.unit == unit) for unit in pools}
    return {
        "npu_utilization": share(
            sum(held[u] for u in TILED_UNITS), makespan * sum(pools[u] for u in TILED_UNITS)
        ),
        "compute_utilization": share(held["cube"], makespan * pools["cube"]),
        "memory_bandwidth_utilization": share(sum(k.hbm_bytes for k in kernels), makespan * bandwidth),
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
