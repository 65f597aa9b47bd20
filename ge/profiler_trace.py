"""A profiled run as Chrome trace-event JSON, which chrome://tracing and ui.perfetto.dev open.

Process 1, "streams", has a thread per stream: each launch is a complete ("X") event from its
start (launch overhead included) to its end. Process 2, "units", shows the cores: a unit's
kernels overlap when they hold different cores, and a thread's events must nest, so each unit
(in the order of the kernel dialect's `UNITS`) gets as many lanes ("cube 0", "cube 1", ...) as
it ever had kernels at once, each kernel an "X" event from its cores' start to its end. Each
cross-stream event is a flow arrow ("s" in the launch before the record, "f" with `"bp": "e"` at
the start of the launch after the wait).
Timestamps are microseconds of the modelled run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ge.dialects.kernel import UNITS

from .errors import GeError
from .profile_data import KernelProfile, ProfileData

STREAMS_PID = 1
UNITS_PID = 2


def save_trace(report: ProfileData, path: str | Path) -> None:
    """Writes `trace_events(report)` as JSON to `path`."""
    try:
        Path(path).write_text(json.dumps(trace_events(report), indent=1))
    except OSError as error:
        raise GeError(f"cannot write the trace to '{path}': {error.strerror}") from None


def trace_events(report: ProfileData) -> dict[str, Any]:
    """The trace as a JSON-ready object: {"traceEvents": [...], "displayTimeUnit": "ns", ...}."""
    events: list[dict[str, Any]] = [
        _metadata("process_name", STREAMS_PID, 0, "streams"),
        _metadata("process_name", UNITS_PID, 0, "units"),
    ]
    for stream in sorted({k.stream for k in report.kernels} | set(report.stream_busy_us)):
        events.append(_metadata("thread_name", STREAMS_PID, _stream_tid(stream), f"stream {stream}"))
    for k in report.kernels:
        events.append(_complete(k, STREAMS_PID, _stream_tid(k.stream), k.start_us, k.end_us))
    lanes = _unit_lanes(report.kernels)
    named: set[int] = set()
    for k in report.kernels:
        unit_index, lane, tid = lanes[k.index]
        if tid not in named:
            named.add(tid)
            events.append(_metadata("thread_name", UNITS_PID, tid, f"{k.unit} {lane}"))
            events.append(_metadata("thread_sort_index", UNITS_PID, tid, None, sort_index=tid))
        events.append(_complete(k, UNITS_PID, tid, k.core_start_us, k.end_us))
    by_index = {k.index: k for k in report.kernels}
    for number, flow in enumerate(report.flows):
        source, target = by_index[flow.source], by_index[flow.target]
        common = {"cat": "event", "name": f"event {flow.event}", "id": number, "pid": STREAMS_PID}
        # "s" sits inside the source's slice so viewers bind it there; "f" binds to the slice
        # that begins at its timestamp.
        events.append(
            {
                **common,
                "ph": "s",
                "tid": _stream_tid(source.stream),
                "ts": (source.start_us + source.end_us) / 2,
            }
        )
        events.append(
            {**common, "ph": "f", "bp": "e", "tid": _stream_tid(target.stream), "ts": target.start_us}
        )
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "soc": report.soc,
            "sunk": report.sunk,
            "latency_us": report.latency_us,
            "npu_utilization": report.npu_utilization,
            "compute_utilization": report.compute_utilization,
            "memory_bandwidth_utilization": report.memory_bandwidth_utilization,
        },
    }


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _stream_tid(stream: int) -> int:
    # Some viewers treat thread 0 as the process itself.
    return stream + 1


def _metadata(
    name: str, pid: int, tid: int, value: str | None, sort_index: int | None = None
) -> dict[str, Any]:
    args: dict[str, Any] = {"name": value} if sort_index is None else {"sort_index": sort_index}
    return {"ph": "M", "name": name, "pid": pid, "tid": tid, "args": args}


def _complete(k: KernelProfile, pid: int, tid: int, start_us: float, end_us: float) -> dict[str, Any]:
    return {
        "ph": "X",
        "name": k.kernel,
        "cat": k.kind,
        "pid": pid,
        "tid": tid,
        "ts": start_us,
        "dur": max(0.0, end_us - start_us),
        "args": {
            "launch": k.index,
            "sources": list(k.sources),
            "unit": k.unit,
            "stream": k.stream,
            "cores": k.cores,
            "flops": k.flops,
            "hbm_bytes": k.hbm_bytes,
            "dtype": k.dtype,
            "bound": k.bound,
            "busy": round(k.busy, 4),
            "of_peak": round(k.of_peak, 4),
            "peak": k.peak,
            "launch_us": k.launch_us,
            "core_start_us": k.core_start_us,
            "measured_us": k.measured_us,
        },
    }


def _unit_lanes(kernels: list[KernelProfile]) -> dict[int, tuple[int, int, int]]:
    """Per launch: (unit number, lane within the unit, thread id), lanes given greedily so that
    no two kernels of one lane overlap."""
    units = [u for u in UNITS if any(k.unit == u for k in kernels)]
    lane_ends: dict[str, list[float]] = {u: [] for u in units}
    found: dict[int, tuple[int, int, int]] = {}
    for k in sorted(kernels, key=lambda k: (k.core_start_us, k.index)):
        ends = lane_ends[k.unit]
        lane = next((i for i, end in enumerate(ends) if end <= k.core_start_us), len(ends))
        if lane == len(ends):
            ends.append(k.end_us)
        else:
            ends[lane] = k.end_us
        unit_index = units.index(k.unit)
        found[k.index] = (unit_index, lane, 1000 * (unit_index + 1) + lane)
    return found
