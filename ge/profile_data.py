"""The figures of a profiled run as plain data: one `KernelProfile` per launch, the `Flow`s
between streams, and `ProfileData`, the run's figures. `ge.profiler` measures them; its
`ProfileReport` adds the table, the trace and the plots, which read this data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

BOUNDS = ("cube", "vector", "memory", "launch", "aicpu")
"""What a kernel can be bound by, as the cost model names it."""


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
    dtype: str
    """The type it computes in: its matrix products' input type for a cube kernel, else the
    narrowest type it reads or writes (`fp32`, `fp16`, `bf16`, `int8`, ...)."""
    stream: int
    cores: int
    start_us: float
    """Its stream takes it up: launch overhead begins."""
    core_start_us: float
    """Its cores start computing; after `launch_us` of overhead, and any wait for free cores."""
    end_us: float
    launch_us: float
    """Launch overhead: the host launch, or the device's per-task scheduling of a sunk model."""
    flops: int
    hbm_bytes: int
    """MTE2 reads plus MTE3 writes."""
    bound: str
    """The cost model's `KernelCost.bound`: `cube`, `vector`, `memory`, `launch` or `aicpu`."""
    busy: float
    """Share of its core time its bound unit works, in [0, 1] (see the module docstring)."""
    of_peak: float
    """Achieved rate over the peak named by `peak` (see the module docstring)."""
    peak: str
    """What `of_peak` is measured against: `HBM`, or the cores and type, e.g. `cube fp32`."""
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

    @property
    def utilization(self) -> float:
        """The kernel's utilization: `of_peak`, how much of the peak it holds it reaches."""
        return self.of_peak

    @property
    def compute_or_memory(self) -> str:
        """`compute` (bound by cube, vector or AI CPU), `memory` or `launch`."""
        return {"memory": "memory", "launch": "launch"}.get(self.bound, "compute")


@dataclass(frozen=True)
class Flow:
    """A cross-stream dependency: `event` recorded after launch `source` on one stream, waited
    for before launch `target` on another (launch indices in task order)."""

    event: int
    source: int
    target: int


@dataclass(frozen=True)
class ProfileData:
    """The figures of one profiled run (`ge.profiler.ProfileReport` adds its renderings)."""

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
        """Per stream, the share of the makespan it ran a task (`stream_busy_us` over
        `latency_us`): launch overhead, kernels and events count, waiting for an event does not."""
        return {s: share(busy, self.latency_us) for s, busy in self.stream_busy_us.items()}

    @property
    def unit_utilization(self) -> dict[str, float]:
        """Per unit (`cube`, `vector`, `aicpu`), the core-microseconds its kernels held over its
        cores x the makespan; trans_data kernels count on the vector cores they run on."""
        return {
            unit: share(used, self.unit_cores[unit] * self.latency_us)
            for unit, used in self.unit_busy_core_us.items()
        }


def share(part: float, whole: float) -> float:
    return part / whole if whole > 0 else 0.0
