"""The modelled timeline of one run: a discrete-event simulation of streams, events and the AI Cores.

Each stream runs its tasks in task order. A launch first takes its launch overhead on the stream
(`sunk_task_us` when the model is sunk; else `host_launch_us`, and the host issues launches one
after the other, so launch i cannot start before the host has issued the launches before it),
then occupies `block_dim` cores of its unit (cube cores for cube kernels, vector cores for
vector and trans_data kernels, the AI CPU for aicpu kernels) for its core time, from the kernel
cost model. Kernels of different streams overlap only on cores that are free; a kernel waiting
for cores takes them, once free, in the order kernels became ready. Overlapping kernels share
the HBM bandwidth: when their traffic together exceeds it, each gets a max-min fair share and
slows down in proportion. An event record or wait is a task of `sunk_task_us`; a wait holds its
stream until the record has happened. On one sunk stream the timeline is the sum of the launch
latencies. The stream pass asks it which schedule is faster; the emulator reports it.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ge.cost import kernel_cost
from ge.cost.model import KernelCost, KernelInfo, unit_cores
from ge.cost.stream import launches, soc_figures
from ge.dialects.stream import EventRecordOp, EventWaitOp, LaunchOp, ModelOp, model_of
from ge.errors import GeError

UNIT_OF_KIND = {"cube": "cube", "vector": "vector", "trans_data": "vector", "aicpu": "aicpu"}
"""The cores a kernel of each kind occupies."""

_EPSILON_US = 1e-9


@dataclass(frozen=True)
class LaunchSpan:
    """One launch on the timeline (microseconds from the start of the run)."""

    index: int
    """Position among the model's launches, in task order."""
    kernel: str
    kind: str
    unit: str
    stream: int
    cores: int
    start_us: float
    """The stream takes the launch up: its launch overhead begins."""
    core_start_us: float
    """Its cores start computing."""
    end_us: float


@dataclass(frozen=True)
class Timeline:
    """The modelled run of one model: when each launch ran, and how busy streams and units were."""

    latency_us: float
    launches: tuple[LaunchSpan, ...]
    stream_busy_us: Mapping[int, float]
    """Per stream, the time it ran a task (launch overhead, kernel, event), not counting waits."""
    unit_cores: Mapping[str, int]
    unit_core_us: Mapping[str, float]
    """Per unit, the core-microseconds its kernels occupied."""

    @property
    def stream_utilization(self) -> dict[int, float]:
        """Per stream, the share of the run it was busy."""
        return {
            s: busy / self.latency_us if self.latency_us else 0.0 for s, busy in self.stream_busy_us.items()
        }

    @property
    def unit_utilization(self) -> dict[str, float]:
        """Per unit (`cube`, `vector`, `aicpu`), the share of its cores' time kernels occupied."""
        return {
            unit: used / (self.unit_cores[unit] * self.latency_us) if self.latency_us else 0.0
            for unit, used in self.unit_core_us.items()
        }

    def start_order(self) -> list[int]:
        """Launch indices in the order their cores started (ties: task order)."""
        return [s.index for s in sorted(self.launches, key=lambda s: (s.core_start_us, s.index))]


def simulate(
    module: ModuleOp,
    sunk: bool = True,
    kernels: tuple[Sequence[KernelInfo], Sequence[KernelCost]] | None = None,
) -> Timeline:
    """The timeline of one run of `module`'s model on its target (see the module docstring).
    `kernels`, each launch's kernel description and cost in task order, saves recomputing them
    when only the streams changed since they were computed."""
    soc = soc_figures(module)
    model = model_of(module)
    if kernels is None:
        infos: Sequence[KernelInfo] = [info for _, info in launches(module)]
        costs: Sequence[KernelCost] = [kernel_cost(info, soc, sunk=sunk) for info in infos]
    else:
        infos, costs = kernels
    pools = {unit: unit_cores(kind, soc) for kind, unit in UNIT_OF_KIND.items()}
    # Not sunk, the host issues launch i once it has issued the ones before it.
    issued = np.cumsum([0.0] + [c.launch_us for c in costs])[:-1] if not sunk else np.zeros(len(costs))
    simulation = _Simulation(
        queues=_stream_queues(model),
        units=[UNIT_OF_KIND[info.kind] for info in infos],
        cores=[min(info.block_dim, pools[UNIT_OF_KIND[info.kind]]) for info in infos],
        launch_us=[c.launch_us for c in costs],
        core_us=[c.latency_us - c.launch_us for c in costs],
        traffic=[c.mte2_bytes + c.mte3_bytes for c in costs],
        issue_us=[float(t) for t in issued],
        pools=pools,
        event_us=float(soc["sunk_task_us"]),
        bandwidth=float(soc["hbm_gbps"]) * 1e3,
    )
    simulation.run()
    spans = tuple(
        LaunchSpan(
            index=i,
            kernel=info.name,
            kind=info.kind,
            unit=simulation.units[i],
            stream=simulation.stream_of[i],
            cores=simulation.cores[i],
            start_us=simulation.start[i],
            core_start_us=simulation.core_start[i],
            end_us=simulation.end[i],
        )
        for i, info in enumerate(infos)
    )
    used = dict.fromkeys(pools, 0.0)
    for span in spans:
        used[span.unit] += span.cores * (span.end_us - span.core_start_us)
    return Timeline(
        latency_us=simulation.now,
        launches=spans,
        stream_busy_us=dict(sorted(simulation.busy.items())),
        unit_cores=pools,
        unit_core_us=used,
    )


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _stream_queues(model: ModelOp) -> dict[int, deque[tuple[str, int]]]:
    """Each stream's tasks in task order: ("launch", launch index), ("record" | "wait", event)."""
    queues: dict[int, deque[tuple[str, int]]] = {}
    index = 0
    for op in model.body.block.ops:
        if isinstance(op, LaunchOp):
            queues.setdefault(op.stream.value.data, deque()).append(("launch", index))
            index += 1
        elif isinstance(op, EventRecordOp | EventWaitOp):
            kind = "record" if isinstance(op, EventRecordOp) else "wait"
            queues.setdefault(op.stream.value.data, deque()).append((kind, op.event.value.data))
    return dict(sorted(queues.items()))


@dataclass
class _Simulation:
    """The event loop of `simulate`: per-launch figures in, start and end times out."""

    queues: dict[int, deque[tuple[str, int]]]
    units: list[str]
    cores: list[int]
    launch_us: list[float]
    core_us: list[float]
    traffic: list[int]
    issue_us: list[float]
    pools: dict[str, int]
    event_us: float
    bandwidth: float

    def __post_init__(self) -> None:
        count = len(self.units)
        self.now = 0.0
        self.start = [0.0] * count
        self.core_start = [0.0] * count
        self.end = [0.0] * count
        self.stream_of = [0] * count
        self.busy = dict.fromkeys(self.queues, 0.0)
        self.free = dict(self.pools)
        self.timers: list[tuple[float, int, str, int, int]] = []
        self.ready: list[tuple[float, int]] = []
        self.running: dict[int, float] = {}
        """Launch -> core time left at full speed."""
        self.recorded: dict[int, float] = {}
        self.blocked: dict[int, list[int]] = {}
        self._sequence = 0

    def run(self) -> None:
        for stream in self.queues:
            self._next_task(stream)
        while self.timers or self.running or self.ready:
            self._start_kernels()
            rates = self._rates()
            timer_step = self.timers[0][0] - self.now if self.timers else math.inf
            finish_step, finishing = min(
                ((left / rates[i], i) for i, left in self.running.items()), default=(math.inf, -1)
            )
            step = max(min(timer_step, finish_step), 0.0)
            if math.isinf(step):
                break
            for i in self.running:
                self.running[i] -= rates[i] * step
            if finish_step <= timer_step:
                self.running[finishing] = 0.0
            self.now += step
            for i in sorted(i for i, left in self.running.items() if left <= _EPSILON_US):
                self._finish_kernel(i)
            while self.timers and self.timers[0][0] <= self.now + _EPSILON_US:
                _, _, what, stream, value = heapq.heappop(self.timers)
                self._timer(what, stream, value)
        stuck = sorted(
            {s for s, queue in self.queues.items() if queue} | {s for w in self.blocked.values() for s in w}
        )
        if stuck or self.ready:
            raise GeError(f"the timeline cannot go on: streams {stuck} wait for events never recorded")

    def _at(self, time: float, what: str, stream: int, value: int) -> None:
        self._sequence += 1
        heapq.heappush(self.timers, (time, self._sequence, what, stream, value))

    def _next_task(self, stream: int) -> None:
        queue = self.queues[stream]
        if not queue:
            return
        kind, value = queue.popleft()
        if kind == "launch":
            begin = max(self.now, self.issue_us[value])
            self.start[value], self.stream_of[value] = begin, stream
            self.busy[stream] += self.launch_us[value]
            self._at(begin + self.launch_us[value], "dispatched", stream, value)
        elif kind == "record":
            self.busy[stream] += self.event_us
            self._at(self.now + self.event_us, "recorded", stream, value)
        elif value in self.recorded:
            self.busy[stream] += self.event_us
            self._at(self.now + self.event_us, "idle", stream, value)
        else:
            self.blocked.setdefault(value, []).append(stream)

    def _timer(self, what: str, stream: int, value: int) -> None:
        if what == "dispatched":
            self.ready.append((self.now, value))
            return
        if what == "recorded":
            self.recorded[value] = self.now
            for waiting in self.blocked.pop(value, []):
                self.busy[waiting] += self.event_us
                self._at(self.now + self.event_us, "idle", waiting, value)
        self._next_task(stream)

    def _start_kernels(self) -> None:
        self.ready.sort()
        waiting = []
        for ready_at, i in self.ready:
            unit = self.units[i]
            if self.free[unit] >= self.cores[i]:
                self.free[unit] -= self.cores[i]
                self.core_start[i] = self.now
                self.running[i] = self.core_us[i]
            else:
                waiting.append((ready_at, i))
        self.ready = waiting

    def _finish_kernel(self, i: int) -> None:
        del self.running[i]
        self.free[self.units[i]] += self.cores[i]
        self.end[i] = self.now
        self.busy[self.stream_of[i]] += self.end[i] - self.core_start[i]
        self._next_task(self.stream_of[i])

    def _rates(self) -> dict[int, float]:
        """Each running kernel's speed (1 = as modelled alone): a max-min fair share of the HBM
        bandwidth among the kernels whose traffic together exceeds it."""
        demand = {i: self.traffic[i] / self.core_us[i] if self.core_us[i] > 0 else 0.0 for i in self.running}
        rates = dict.fromkeys(self.running, 1.0)
        if sum(demand.values()) <= self.bandwidth:
            return rates
        left, count = self.bandwidth, len(demand)
        for i in sorted(demand, key=lambda k: (demand[k], k)):
            share = left / count
            if demand[i] > share:
                rates[i] = share / demand[i]
            left -= min(demand[i], share)
            count -= 1
        return rates
