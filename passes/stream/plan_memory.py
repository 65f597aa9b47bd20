"""`ge-plan-memory`: places the arena's buffers by lifetime, so buffers that are never live at
the same time share bytes.

A buffer is live from the task that writes it (graph inputs: from the start) to the last task
that reads it (graph outputs: to the end); a launch's inputs and outputs are live together, so
a kernel never writes over what it reads. Buffers are placed greedily by size, each at the
lowest offset that overlaps no live-together buffer already placed (the greedy-by-size
strategy of TFLite's and GE's planners). The model records the planned arena (`arena_size`),
the lower bound (the most bytes live at once) and the no-reuse total, and the plan is checked:
no two live-together buffers overlap.

```
%a = ascend.stream.buffer offset 0 size 64 ...      // dead after launch 1
%b = ascend.stream.buffer offset 512 size 64 ...    // written by launch 2
```
becomes `%b = ascend.stream.buffer offset 0 size 64 ...` when `%a` is dead before `%b` is born.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from ge.dialects.stream import BufferOp, LaunchOp, ModelOp, OutputsOp
from ge.errors import CompileError

MEMORY_ATTR = "ascend.memory"
"""Model attribute: `{arena_bytes, lower_bound_bytes, no_reuse_bytes}` of the plan."""


@dataclass(frozen=True)
class Interval:
    """A buffer's lifetime in task positions (inclusive) and its aligned byte size."""

    buffer: BufferOp
    start: int
    end: int
    size: int


def lifetimes(model: ModelOp, alignment: int) -> list[Interval]:
    ops = list(model.body.block.ops)
    end_of_program = len(ops)
    first: dict[BufferOp, int] = {}
    last: dict[BufferOp, int] = {}
    for position, op in enumerate(ops):
        if isinstance(op, BufferOp):
            if op.input is not None:
                first[op] = -1
        elif isinstance(op, LaunchOp):
            for value in op.inputs:
                if isinstance(value.owner, BufferOp):
                    last[value.owner] = position
            for value in op.outputs:
                if isinstance(value.owner, BufferOp):
                    first.setdefault(value.owner, position)
                    last[value.owner] = max(last.get(value.owner, position), position)
        elif isinstance(op, OutputsOp):
            for value in op.values:
                if isinstance(value.owner, BufferOp):
                    last[value.owner] = end_of_program
    intervals = []
    for op in ops:
        if isinstance(op, BufferOp):
            start = first.get(op, -1)
            end = last.get(op, start)
            size = -(-max(op.size.value.data, 1) // alignment) * alignment
            intervals.append(Interval(op, start, end, size))
    return intervals


def lower_bound(intervals: list[Interval]) -> int:
    """The most bytes live at any one time."""
    events = sorted({i.start for i in intervals})
    return max((sum(i.size for i in intervals if i.start <= t <= i.end) for t in events), default=0)


def greedy_by_size(intervals: list[Interval]) -> dict[BufferOp, int]:
    """Offsets: largest buffers first, each at the lowest offset free over its lifetime."""
    placed: list[tuple[Interval, int]] = []
    offsets: dict[BufferOp, int] = {}
    for interval in sorted(intervals, key=lambda i: (-i.size, i.start)):
        busy = sorted(
            (offset, offset + other.size)
            for other, offset in placed
            if other.start <= interval.end and interval.start <= other.end
        )
        candidate = 0
        for begin, end in busy:
            if candidate + interval.size <= begin:
                break
            candidate = max(candidate, end)
        offsets[interval.buffer] = candidate
        placed.append((interval, candidate))
    return offsets


def validate(intervals: list[Interval], offsets: dict[BufferOp, int]) -> None:
    """Raises CompileError if two buffers live at the same time share a byte."""
    by_start = sorted(intervals, key=lambda i: i.start)
    for index, a in enumerate(by_start):
        for b in by_start[index + 1 :]:
            if b.start > a.end:
                break
            lo_a, lo_b = offsets[a.buffer], offsets[b.buffer]
            if lo_a < lo_b + b.size and lo_b < lo_a + a.size:
                raise CompileError(
                    f"memory plan: buffers %{a.buffer.buffer.name_hint} and %{b.buffer.buffer.name_hint} "
                    f"are live together (tasks {a.start}-{a.end} and {b.start}-{b.end}) but overlap at "
                    f"[{lo_a}, {lo_a + a.size}) and [{lo_b}, {lo_b + b.size})"
                )


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Reuses arena bytes across buffers whose lifetimes do not meet."""

    name = "ge-plan-memory"

    alignment: int = 512

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for model in [o for o in op.walk() if isinstance(o, ModelOp)]:
            intervals = lifetimes(model, self.alignment)
            offsets = greedy_by_size(intervals)
            validate(intervals, offsets)
            for interval in intervals:
                interval.buffer.offset = IntegerAttr(offsets[interval.buffer], i64)
            arena = max((offsets[i.buffer] + i.size for i in intervals), default=0)
            model.arena_size = IntegerAttr(arena, i64)
            model.attributes[MEMORY_ATTR] = DictionaryAttr(
                {
                    "arena_bytes": IntegerAttr(arena, i64),
                    "lower_bound_bytes": IntegerAttr(lower_bound(intervals), i64),
                    "no_reuse_bytes": IntegerAttr(sum(i.size for i in intervals), i64),
                }
            )
