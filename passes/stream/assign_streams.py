"""`ge-assign-streams`: puts independent launches on different streams, ordered by events.

As GE's stream allocator: launches are taken in task order; a launch continues the stream of one
of its producers that is still the last launch of its stream (so chains stay on one stream), else
opens a new stream while fewer than `max-streams` are open, else joins the least-loaded stream
(by the cost model's modelled time, or by launch count when the module names no target). Every
dependency between launches on different streams -- a read of bytes another launch wrote, or a
write over bytes another launch reads or writes (reused memory), through views and subviews
alike -- becomes an `event_record` after the producer and an `event_wait` before the consumer,
unless the consumer's stream already waits, through other events, for that point of the
producer's stream or a later one. The model records `ascend.streams = {streams, events}`. With
`fastest=true` (the default) and a target, the pass keeps the stream count, up to `max-streams`,
whose schedule the modelled timeline (`ge.cost.timeline`) finds fastest: events cost time, and
launches that fill every core of their unit gain nothing from a second stream.

```
%y = ascend.stream.buffer ...   ascend.stream.launch @a(%x) -> (%y) stream 0
%z = ascend.stream.buffer ...   ascend.stream.launch @b(%x) -> (%z) stream 0
%s = ascend.stream.buffer ...   ascend.stream.launch @add(%y, %z) -> (%s) stream 0
```
becomes
```
ascend.stream.launch @a(%x) -> (%y) stream 0
ascend.stream.launch @b(%x) -> (%z) stream 1
ascend.stream.event_record event 0 stream 1
ascend.stream.event_wait event 0 stream 0
ascend.stream.launch @add(%y, %z) -> (%s) stream 0
```
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from ge.cost import kernel_cost
from ge.cost.stream import launches, soc_figures
from ge.cost.timeline import simulate
from ge.dialects.formats import storage_shape
from ge.dialects.stream import (
    BufferOp,
    EventRecordOp,
    EventWaitOp,
    LaunchOp,
    ModelOp,
    SubviewOp,
    ViewOp,
)
from ge.dtypes import numpy_dtype
from ge.errors import CompileError
from ge.layout import address_space, byte_runs, reshaped_view

STREAMS_ATTR = "ascend.streams"
"""Model attribute: `{streams, events}`: the streams used and the events that order them."""

START = 1
"""The bit of the model's start (graph inputs are written there) in a `happens_before` mask."""


def bit(position: int) -> int:
    """The bit of the op at `position` of the model's body in a `happens_before` mask."""
    return 1 << (position + 1)


def happens_before(model: ModelOp) -> dict[int, int]:
    """Launch position -> the positions that happen before it (as a mask of `bit`s, `START`
    included): earlier launches on its stream and, through each event it waits for, everything
    before that event's record. With one stream, every earlier launch."""
    stream_mask: dict[int, int] = {}
    event_mask: dict[int, int] = {}
    before: dict[int, int] = {}
    for position, op in enumerate(model.body.block.ops):
        if isinstance(op, LaunchOp):
            s = op.stream.value.data
            before[position] = stream_mask.get(s, 0) | START
            stream_mask[s] = before[position] | bit(position)
        elif isinstance(op, EventRecordOp):
            event_mask[op.event.value.data] = stream_mask.get(op.stream.value.data, 0)
        elif isinstance(op, EventWaitOp):
            s = op.stream.value.data
            stream_mask[s] = stream_mask.get(s, 0) | event_mask.get(op.event.value.data, 0)
    return before


@dataclass(frozen=True)
class AssignStreamsPass(ModulePass):
    """Spreads independent launches over up to `max_streams` streams, with events between them."""

    name = "ge-assign-streams"

    max_streams: int = 4

    fastest: bool = True
    """Keep the stream count, up to `max_streams`, whose modelled schedule is fastest (needs a
    target); otherwise spread launches over as many streams as independence allows."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not isinstance(self.max_streams, int) or self.max_streams < 1:
            raise CompileError(f"ge-assign-streams: max-streams must be at least 1, got {self.max_streams}")
        models = [o for o in op.walk() if isinstance(o, ModelOp)]
        try:
            soc = soc_figures(op)
        except ValueError:
            soc = None
        if soc is None or len(models) != 1:
            for model in models:
                assign_streams(model, self.max_streams)
            return
        # The kernels and what each launch reads and writes stay what they are whatever the
        # streams: describe, cost and relate them once.
        (model,) = models
        launched = launches(op)
        infos = [info for _, info in launched]
        sunk_costs = [kernel_cost(info, soc, sunk=True) for info in infos]
        costs = {info.name: cost.latency_us for info, cost in zip(infos, sunk_costs, strict=True)}
        order = dependencies(model, [launch for launch, _ in launched])
        if not self.fastest or self.max_streams == 1:
            assign_streams(model, self.max_streams, costs, order)
            return
        # The cost model decides how many of the allowed streams pay: spreading launches costs
        # events, and launches that fill every core cannot overlap anyway.
        candidates = range(1, self.max_streams + 1) if self.max_streams <= 8 else (1, self.max_streams)
        best, best_latency = 1, math.inf
        for count in candidates:
            assign_streams(model, count, costs, order)
            latency = simulate(op, sunk=True, kernels=(infos, sunk_costs)).latency_us
            if latency < best_latency - 1e-9:
                best, best_latency = count, latency
        assign_streams(model, best, costs, order)


def assign_streams(
    model: ModelOp,
    max_streams: int,
    costs: dict[str, float] | None = None,
    order: tuple[list[list[int]], list[list[int]]] | None = None,
) -> None:
    """Assigns the streams of `model`'s launches and inserts the events their dependencies need
    (`costs`: modelled time per kernel name, missing kernels count 1; `order`: the launches'
    `dependencies`, when already known)."""
    block = model.body.block
    for op in [o for o in block.ops if isinstance(o, EventRecordOp | EventWaitOp)]:
        block.erase_op(op)
    launches = [op for op in block.ops if isinstance(op, LaunchOp)]
    producers, hazards = order if order is not None else dependencies(model, launches)
    cost = [(costs or {}).get(op.kernel.root_reference.data, 1.0) for op in launches]
    streams = _choose_streams(producers, hazards, cost, max_streams)
    records, waits = _events(hazards, streams)
    numbering = {j: e for e, j in enumerate(sorted(records))}
    for i, launch in enumerate(launches):
        launch.stream = IntegerAttr(streams[i], i64)
        for j in waits.get(i, ()):
            block.insert_op_before(EventWaitOp(numbering[j], streams[i]), launch)
        if i in records:
            block.insert_op_after(EventRecordOp(numbering[i], streams[i]), launch)
    model.attributes[STREAMS_ATTR] = DictionaryAttr(
        {
            "streams": IntegerAttr(len(set(streams)), i64),
            "events": IntegerAttr(len(records), i64),
        }
    )


def dependencies(model: ModelOp, launches: Sequence[LaunchOp]) -> tuple[list[list[int]], list[list[int]]]:
    """Per launch (task order), the earlier launches that wrote bytes it reads (its producers), and
    every earlier launch it must follow: producers, and launches that read or wrote bytes it
    writes. Bytes are the arena's, through views and subviews; weights are never written."""
    regions = arena_regions(model)
    empty = np.zeros((0, 2), np.int64)
    seen_start = np.zeros(0, np.int64)
    seen_end = np.zeros(0, np.int64)
    seen_launch = np.zeros(0, np.int64)
    seen_write = np.zeros(0, bool)
    producers: list[list[int]] = []
    hazards: list[list[int]] = []
    for i, launch in enumerate(launches):
        reads = np.concatenate([regions.get(v, empty) for v in launch.inputs] + [empty])
        writes = np.concatenate([regions.get(v, empty) for v in launch.outputs] + [empty])
        read_hit = _touching(reads, seen_start, seen_end)
        write_hit = _touching(writes, seen_start, seen_end)
        producers.append(sorted(set(seen_launch[read_hit & seen_write].tolist())))
        hazards.append(sorted(set(seen_launch[(read_hit & seen_write) | write_hit].tolist())))
        seen_start = np.concatenate([seen_start, reads[:, 0], writes[:, 0]])
        seen_end = np.concatenate([seen_end, reads[:, 1], writes[:, 1]])
        seen_launch = np.concatenate([seen_launch, np.full(len(reads) + len(writes), i)])
        seen_write = np.concatenate([seen_write, np.zeros(len(reads), bool), np.ones(len(writes), bool)])
    return producers, hazards


def arena_regions(model: ModelOp) -> dict[SSAValue, np.ndarray]:
    """Each arena buffer, view and subview -> the arena bytes it covers, as `[start, end)` rows
    (one per contiguous run). numpy lays the views out over an unread arena, as the emulator does."""
    bound = [op for op in model.body.block.ops if isinstance(op, BufferOp) and op.bound]
    # Buffers in the caller's memory get addresses of their own past the arena's end.
    extra = {op: 0 for op in bound}
    end = model.arena_size.value.data
    for op in bound:
        extra[op] = end
        end += max(op.size.value.data, 1)
    arena = address_space(end)
    base = arena.__array_interface__["data"][0]
    arrays: dict[SSAValue, np.ndarray] = {}
    for op in model.body.block.ops:
        if isinstance(op, BufferOp):
            offset = extra[op] if op.bound else op.offset.value.data
            arrays[op.buffer] = _typed(arena, offset, op.buffer.type)
        elif isinstance(op, ViewOp) and op.source in arrays:
            # Raises rather than copy, as the emulator's views do.
            arrays[op.buffer] = reshaped_view(arrays[op.source], storage_shape(op.buffer.type))
        elif isinstance(op, SubviewOp) and op.source in arrays:
            axis, start, length = op.stored_slice()
            index = (slice(None),) * axis + (slice(start, start + length),)
            arrays[op.buffer] = arrays[op.source][index]
    return {value: byte_runs(array, base) for value, array in arrays.items()}


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _choose_streams(
    producers: list[list[int]], hazards: list[list[int]], cost: list[float], max_streams: int
) -> list[int]:
    """The stream of each launch, GE-style (see the module docstring). Among producers whose
    stream is free to continue, the one that finishes last (ignoring core contention) wins."""
    streams: list[int] = []
    tail: dict[int, int] = {}
    load: dict[int, float] = {}
    finish: list[float] = []
    available: dict[int, float] = {}
    for i, (mine, after) in enumerate(zip(producers, hazards, strict=True)):
        open_tails = [p for p in mine if tail.get(streams[p]) == p]
        if open_tails:
            stream = streams[max(open_tails, key=lambda p: (finish[p], p))]
        elif len(load) < max_streams:
            stream = len(load)
        else:
            stream = min(load, key=lambda s: (load[s], s))
        streams.append(stream)
        tail[stream] = i
        load[stream] = load.get(stream, 0.0) + cost[i]
        start = max([available.get(stream, 0.0), *(finish[j] for j in after)])
        finish.append(start + cost[i])
        available[stream] = finish[i]
    return streams


def _events(hazards: list[list[int]], streams: list[int]) -> tuple[set[int], dict[int, list[int]]]:
    """The launches that record an event after them, and per launch the launches whose events it
    waits for. A wait is added only for a dependency its stream does not already follow: the
    latest dependency first, since waiting for it may cover the earlier ones."""
    stream_mask: dict[int, int] = {}
    after: list[int] = []
    records: set[int] = set()
    waits: dict[int, list[int]] = {}
    for i, stream in enumerate(streams):
        mask = stream_mask.get(stream, 0)
        for j in sorted((j for j in hazards[i] if streams[j] != stream), reverse=True):
            if not mask >> j & 1:
                records.add(j)
                waits.setdefault(i, []).append(j)
                mask |= after[j]
        after.append(mask | 1 << i)
        stream_mask[stream] = after[i]
    return records, waits


def _touching(spans: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which of the byte runs `[starts, ends)` share a byte with any of `spans`."""
    if not len(spans) or not len(starts):
        return np.zeros(len(starts), bool)
    return np.asarray(((spans[:, :1] < ends[None, :]) & (starts[None, :] < spans[:, 1:])).any(axis=0))


def _typed(arena: np.ndarray, offset: int, t: MemRefType) -> np.ndarray:
    dtype = numpy_dtype(t.element_type)
    shape = storage_shape(t)
    count = int(np.prod(shape))
    return arena[offset : offset + count * dtype.itemsize].view(dtype).reshape(shape)
