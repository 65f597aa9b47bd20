"""`ge-plan-memory`: places the arena's buffers by lifetime, so buffers that are never live at
the same time share bytes.

Lifetimes follow the schedule's partial order: stream order plus events (`ge-assign-streams`).
Two buffers may share bytes only if every access of one happens before every write of the other
(graph inputs are written at the start, graph outputs read at the end); on one stream that is
the familiar rule that one buffer's last reader comes before the other's first writer. A
launch's inputs and outputs are live together, so a kernel never writes over what it reads,
except in place: an elementwise kernel may write an output over an input of the same type whose
every other access happens before that launch (neither is a graph input or output), and the pair
then takes one slot of bytes. Two strategies place the slots, and the smaller arena wins
(`strategy=best`, the default; `greedy_by_size` or `size_binned` forces one):
- greedy by size (TFLite's and GE's planners): largest first, each at the lowest offset that
  overlaps no slot it is not ordered with;
- size-binned block reuse (GE's block memory assigner): in task order, each slot takes a freed
  block of its size bin (powers of two times the alignment), else the smallest freed block that
  holds it, else a new block at the end of the arena; a block is freed for a slot when the
  block's last slot happens before it.
The model records the planned arena (`arena_size`) and, in `ascend.memory`, the arena, the lower
bound, the no-reuse total, the winning strategy and the in-place count. The lower bound is the
most bytes live at once along the task list (one stream's order): streams only add constraints,
so no plan can go below it. Every plan is checked: no two buffers share a byte unless ordered or
declared in place.

```
%a = ascend.stream.buffer offset 0 size 64 ...      // dead after launch 1
%b = ascend.stream.buffer offset 512 size 64 ...    // written by launch 2
```
becomes `%b = ascend.stream.buffer offset 0 size 64 ...` when `%a` is dead before `%b` is born.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import OpResult, SSAValue
from xdsl.passes import ModulePass

from ge.dialects.graph import ElementwiseOp
from ge.dialects.stream import BufferOp, KernelFuncOp, LaunchOp, ModelOp, OutputsOp, ViewOp, root_buffer
from ge.errors import CompileError
from ge.layout import check_alignment

from .assign_streams import START, bit, happens_before

MEMORY_ATTR = "ascend.memory"
"""Model attribute: `{arena_bytes, lower_bound_bytes, no_reuse_bytes, strategy, inplace}`."""

STRATEGIES = ("greedy_by_size", "size_binned")
"""The placement strategies, in the order ties are broken."""


@dataclass(frozen=True)
class Interval:
    """A buffer's lifetime in task positions (inclusive) and its aligned byte size; with its
    accesses and what happens before its writes in the schedule's partial order when known
    (masks of `assign_streams.bit`s), else taken from the positions (one stream)."""

    buffer: BufferOp
    start: int
    end: int
    size: int
    inplace_of: BufferOp | None = None
    """The launch input whose bytes this buffer takes over: it dies where this buffer is born."""
    accesses: int | None = None
    before_writes: int | None = None

    @property
    def access_mask(self) -> int:
        """The schedule points that read or write the buffer (the start for a graph input, the end
        for a graph output)."""
        if self.accesses is not None:
            return self.accesses
        return ((1 << (self.end - self.start + 1)) - 1) << (self.start + 1)

    @property
    def before_mask(self) -> int:
        """The schedule points that happen before every write of the buffer."""
        if self.before_writes is not None:
            return self.before_writes
        return (1 << (self.start + 1)) - 1


@dataclass(frozen=True)
class Slot:
    """Buffers that share one range of bytes: a buffer and its chain of in-place successors."""

    buffers: tuple[BufferOp, ...]
    start: int
    end: int
    size: int
    access_mask: int = 0
    before_mask: int = 0


def lifetimes(model: ModelOp, alignment: int) -> list[Interval]:
    """Every buffer's interval, in program order; a buffer that the model's plan already puts
    over an input of its launch, where that is allowed in place, says so in `inplace_of`."""
    intervals = _lifetimes(model, alignment)
    offsets = {i.buffer: i.buffer.offset.value.data for i in intervals}
    candidates = _inplace_candidates(model, intervals)
    planned = {
        output: next((i for i in inputs if offsets[i] == offsets[output]), None)
        for output, inputs in candidates.items()
    }
    return [replace(i, inplace_of=planned.get(i.buffer)) for i in intervals]


def inplace_pairs(model: ModelOp, intervals: list[Interval]) -> dict[BufferOp, BufferOp]:
    """Output buffer -> the input buffer it may overwrite: the launch's kernel is elementwise (only
    `ElementwiseOp`s, every result computed by one), the two buffers have one type, format and
    aligned size, every other access of the input happens before the launch (on one stream: the
    input dies there), and neither is a graph input or output. Each input is taken over by one
    output at most."""
    pairs: dict[BufferOp, BufferOp] = {}
    taken: set[BufferOp] = set()
    for output, inputs in _inplace_candidates(model, intervals).items():
        chosen = next((i for i in inputs if i not in taken), None)
        if chosen is not None:
            pairs[output] = chosen
            taken.add(chosen)
    return pairs


def slots(intervals: list[Interval]) -> list[Slot]:
    """The intervals merged along their in-place pairs, in order of their first buffer."""
    by_buffer = {i.buffer: i for i in intervals}
    root: dict[BufferOp, BufferOp] = {}

    def find(buffer: BufferOp) -> BufferOp:
        while root.get(buffer, buffer) is not buffer:
            buffer = root[buffer]
        return buffer

    for interval in intervals:
        if interval.inplace_of is not None and interval.inplace_of in by_buffer:
            root[find(interval.buffer)] = find(interval.inplace_of)
    members: dict[BufferOp, list[Interval]] = {}
    for interval in intervals:
        members.setdefault(find(interval.buffer), []).append(interval)
    merged = []
    for group in members.values():
        accesses, before = 0, -1
        for i in group:
            accesses |= i.access_mask
            before &= i.before_mask
        merged.append(
            Slot(
                tuple(i.buffer for i in group),
                min(i.start for i in group),
                max(i.end for i in group),
                max(i.size for i in group),
                accesses,
                before,
            )
        )
    return merged


def precedence(items: Sequence[Interval | Slot]) -> np.ndarray:
    """`result[x, y]`: every access of item x happens before every write of item y, so y may take
    x's bytes. One matrix product over the schedule points that access anything."""
    accesses = [i.access_mask for i in items]
    width = max((m.bit_length() for m in accesses), default=0)
    access_bits = _bits(accesses, width)
    columns = access_bits.any(axis=0)
    outside = ~_bits([i.before_mask & ((1 << width) - 1) for i in items], width)[:, columns]
    return (access_bits[:, columns].astype(np.float32) @ outside.astype(np.float32).T) == 0


def _bits(masks: Sequence[int], width: int) -> np.ndarray:
    """Bit `b` of each mask as a boolean matrix (masks x width)."""
    size = max(1, (width + 7) // 8)
    packed = np.frombuffer(b"".join(m.to_bytes(size, "little") for m in masks), np.uint8)
    return np.unpackbits(packed.reshape(len(masks), size), axis=1, bitorder="little")[:, :width].astype(bool)


def lower_bound(intervals: list[Interval]) -> int:
    """The most bytes live at any one time along the task list, an in-place chain counting once.
    Streams only forbid more sharing than one list does, so no plan goes below it."""
    merged = slots(intervals)
    # A slot ending at t frees its bytes before one starting at t + 1 takes any: -size sorts first.
    events = sorted([(s.start, s.size) for s in merged] + [(s.end + 1, -s.size) for s in merged])
    live = peak = 0
    for _, change in events:
        live += change
        peak = max(peak, live)
    return peak


def arena_bytes(intervals: list[Interval], offsets: dict[BufferOp, int]) -> int:
    """The arena a plan needs: the end of its highest buffer."""
    return max((offsets[i.buffer] + i.size for i in intervals), default=0)


PERTURBATIONS = 32
"""Seeded reorderings greedy-by-size tries beyond its fixed orders, until one meets the lower bound."""


def greedy_by_size(intervals: list[Interval], ordered: np.ndarray | None = None) -> dict[BufferOp, int]:
    """Offsets: largest slots first, each at the lowest offset free of the slots it is not
    ordered with. Slots of equal size go in order of birth (optimal when all sizes are equal)
    and, in a second plan, longest-lived first (the hardest to fit); a third plan places slots
    in order of birth; then seeded perturbations of the size order. The smallest arena is kept.
    `ordered`: the `precedence` of the intervals' `slots`, when already known."""
    merged = slots(intervals)
    ordered = precedence(merged) if ordered is None else ordered
    apart = ~(ordered | ordered.T)
    indices = range(len(merged))
    by_birth = _first_fit(merged, sorted(indices, key=lambda k: (-merged[k].size, merged[k].start)), apart)
    by_length = _first_fit(
        merged,
        sorted(indices, key=lambda k: (-merged[k].size, merged[k].start - merged[k].end, merged[k].start)),
        apart,
    )
    plans = [by_birth, by_length]
    plans.append(_first_fit(merged, sorted(indices, key=lambda k: (merged[k].start, -merged[k].size)), apart))
    best = min(arena_bytes(intervals, p) for p in plans)
    # Near-equal sizes placed in another order often pack tighter: a few seeded perturbations of
    # the size order (the same every compile, so a model always gets the same plan).
    rng = random.Random(len(merged))
    floor = lower_bound(intervals)
    for _ in range(PERTURBATIONS):
        if best <= floor:
            break
        weights = [merged[k].size * rng.uniform(0.5, 1.5) for k in indices]
        plan = _first_fit(merged, sorted(indices, key=lambda k: (-weights[k], merged[k].start)), apart)
        plans.append(plan)
        best = min(best, arena_bytes(intervals, plan))
    return min(plans, key=lambda offsets: arena_bytes(intervals, offsets))


def _first_fit(merged: list[Slot], order: list[int], apart: np.ndarray) -> dict[BufferOp, int]:
    sizes = np.array([slot.size for slot in merged], np.int64)
    start = np.zeros(len(merged), np.int64)
    placed = np.zeros(len(merged), bool)
    offsets: dict[BufferOp, int] = {}
    for k in order:
        slot = merged[k]
        # The slots already placed that may not share bytes with this one, by offset.
        others = np.flatnonzero(placed & apart[k])
        begins = start[others]
        by_offset = np.argsort(begins, kind="stable")
        candidate = 0
        ends = begins + sizes[others]
        for begin, end in zip(begins[by_offset].tolist(), ends[by_offset].tolist(), strict=True):
            if candidate + slot.size <= begin:
                break
            candidate = max(candidate, end)
        offsets.update(dict.fromkeys(slot.buffers, candidate))
        start[k] = candidate
        placed[k] = True
    return offsets


def size_bin(size: int, alignment: int) -> int:
    """The bin of an aligned size: the smallest power of two times `alignment` that holds it."""
    units = -(-size // alignment)
    return alignment << max(units - 1, 0).bit_length()


@dataclass
class _Block:
    offset: int
    capacity: int
    last: int
    """The slot placed in the block last: the block is free for the slots it happens before."""


def size_binned(
    intervals: list[Interval], alignment: int = 512, ordered: np.ndarray | None = None
) -> dict[BufferOp, int]:
    """Offsets: slots in schedule order, each in a freed block of its size bin, else in the
    smallest freed block that holds it, else in a new block appended to the arena. `ordered`: the
    `precedence` of the intervals' `slots`, when already known."""
    merged = slots(intervals)
    ordered = precedence(merged) if ordered is None else ordered
    blocks: list[_Block] = []
    offsets: dict[BufferOp, int] = {}
    end = 0
    for k in sorted(range(len(merged)), key=lambda k: (merged[k].start, -merged[k].size)):
        slot = merged[k]
        capacity = size_bin(slot.size, alignment)
        free = [b for b in blocks if ordered[b.last, k]]
        fitting = [b for b in free if b.capacity == capacity] or [b for b in free if b.capacity >= slot.size]
        if fitting:
            block = min(fitting, key=lambda b: (b.capacity, b.offset))
            block.last = k
        else:
            block = _Block(end, capacity, k)
            blocks.append(block)
            end += capacity
        offsets.update(dict.fromkeys(slot.buffers, block.offset))
    return offsets


PLANNERS: dict[str, Callable[[list[Interval], int, np.ndarray], dict[BufferOp, int]]] = {
    "greedy_by_size": lambda intervals, _alignment, ordered: greedy_by_size(intervals, ordered),
    "size_binned": size_binned,
}
"""Each strategy by name: intervals, the alignment and the `precedence` of the slots in, offsets
out."""


def plan(
    intervals: list[Interval], strategy: str = "best", alignment: int = 512
) -> tuple[str, dict[BufferOp, int]]:
    """The offsets of `strategy` and its name; with `best`, the plan of the smallest arena (ties
    go to the earlier of `STRATEGIES`). Every plan made is validated."""
    _check_strategy(strategy)
    plans = []
    # Every planner orders the same slots, and every plan is checked against the same order.
    ordered_slots, ordered = precedence(slots(intervals)), precedence(intervals)
    for name in STRATEGIES if strategy == "best" else (strategy,):
        offsets = PLANNERS[name](intervals, alignment, ordered_slots)
        validate(intervals, offsets, ordered)
        plans.append((arena_bytes(intervals, offsets), STRATEGIES.index(name), name, offsets))
    _, _, name, offsets = min(plans, key=lambda candidate: candidate[:2])
    return name, offsets


def validate(
    intervals: list[Interval], offsets: dict[BufferOp, int], ordered: np.ndarray | None = None
) -> None:
    """Raises CompileError if two buffers share a byte while neither's accesses all happen before
    the other's writes, unless one is declared in place of the other (same offset and size, born
    at a launch that reads the other after all its other accesses). `ordered`: the intervals'
    `precedence`, when already known."""
    by_buffer = {i.buffer: i for i in intervals}
    for b in intervals:
        if b.inplace_of is None:
            continue
        a = by_buffer.get(b.inplace_of)
        if (
            a is None
            or a.size != b.size
            or offsets[a.buffer] != offsets[b.buffer]
            or not a.access_mask & bit(b.start)
            or a.access_mask & ~bit(b.start) & ~b.before_mask
        ):
            raise CompileError(
                f"memory plan: buffer %{_name(b.buffer)} is declared in place of "
                f"%{_name(b.inplace_of)} but they do not share one slot born where the other dies"
            )
    low = np.array([offsets[i.buffer] for i in intervals], np.int64)
    high = low + np.array([i.size for i in intervals], np.int64)
    ordered = precedence(intervals) if ordered is None else ordered
    clash = (low[:, None] < high[None, :]) & (low[None, :] < high[:, None]) & ~ordered & ~ordered.T
    index = {i.buffer: k for k, i in enumerate(intervals)}
    for b in intervals:
        source = b.inplace_of
        if source is not None and source in index:
            clash[index[b.buffer], index[source]] = clash[index[source], index[b.buffer]] = False
    np.fill_diagonal(clash, False)
    pairs = np.argwhere(np.triu(clash))
    if len(pairs):
        x, y = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))][0]
        a, b = intervals[x], intervals[y]
        lo_a, lo_b = offsets[a.buffer], offsets[b.buffer]
        raise CompileError(
            f"memory plan: buffers %{_name(a.buffer)} and %{_name(b.buffer)} "
            f"are live together (tasks {a.start}-{a.end} and {b.start}-{b.end}, not ordered by the "
            f"streams) but overlap at [{lo_a}, {lo_a + a.size}) and [{lo_b}, {lo_b + b.size})"
        )


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Reuses arena bytes across buffers whose lifetimes do not meet, and in place."""

    name = "ge-plan-memory"

    alignment: int = 512
    strategy: str = "best"
    """`best` (plan with every strategy, keep the smallest arena) or one of `STRATEGIES`."""
    inplace: bool = True
    """Let elementwise kernels write an output over an input that dies at the launch."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _check_strategy(self.strategy)
        check_alignment(self.alignment, self.name)
        for model in [o for o in op.walk() if isinstance(o, ModelOp)]:
            self._plan(model)

    def _plan(self, model: ModelOp) -> None:
        intervals = _lifetimes(model, self.alignment)
        if self.inplace:
            pairs = inplace_pairs(model, intervals)
            intervals = [replace(i, inplace_of=pairs.get(i.buffer)) for i in intervals]
        name, offsets = plan(intervals, self.strategy, self.alignment)
        arena = arena_bytes(intervals, offsets)
        for interval in intervals:
            interval.buffer.offset = IntegerAttr(offsets[interval.buffer], i64)
        model.arena_size = IntegerAttr(arena, i64)
        model.attributes[MEMORY_ATTR] = DictionaryAttr(
            {
                "arena_bytes": IntegerAttr(arena, i64),
                "lower_bound_bytes": IntegerAttr(lower_bound(intervals), i64),
                "no_reuse_bytes": IntegerAttr(sum(i.size for i in intervals), i64),
                "strategy": StringAttr(name),
                "inplace": IntegerAttr(sum(i.inplace_of is not None for i in intervals), i64),
            }
        )


def _lifetimes(model: ModelOp, alignment: int) -> list[Interval]:
    ops = list(model.body.block.ops)
    end_of_program = len(ops)
    before = happens_before(model)
    first: dict[BufferOp, int] = {}
    last: dict[BufferOp, int] = {}
    accesses: dict[BufferOp, int] = {}
    before_writes: dict[BufferOp, int] = {}
    for position, op in enumerate(ops):
        if isinstance(op, BufferOp):
            if op.input is not None:
                first[op] = -1
                accesses[op] = START
                before_writes[op] = 0
        elif isinstance(op, LaunchOp):
            for buffer in _buffers(op.inputs):
                last[buffer] = position
                accesses[buffer] = accesses.get(buffer, 0) | bit(position)
            for buffer in _buffers(op.outputs):
                first.setdefault(buffer, position)
                last[buffer] = max(last.get(buffer, position), position)
                accesses[buffer] = accesses.get(buffer, 0) | bit(position)
                before_writes[buffer] = before_writes.get(buffer, before[position]) & before[position]
        elif isinstance(op, OutputsOp):
            for buffer in _buffers(op.values):
                last[buffer] = end_of_program
                accesses[buffer] = accesses.get(buffer, 0) | bit(end_of_program)
    intervals = []
    for op in ops:
        if isinstance(op, BufferOp) and not op.bound:  # bound ones are the caller's memory
            start = first.get(op, -1)
            end = last.get(op, start)
            size = -(-max(op.size.value.data, 1) // alignment) * alignment
            if op not in before_writes:  # never written: there from the start, as an input
                accesses[op] = accesses.get(op, 0) | START
            intervals.append(
                Interval(op, start, end, size, accesses=accesses[op], before_writes=before_writes.get(op, 0))
            )
    return intervals


def _buffers(values: Sequence[SSAValue]) -> list[BufferOp]:
    """The arena buffers that values (buffers, or views and subviews of them) live in."""
    owners = (root_buffer(v).owner for v in values)
    return [owner for owner in owners if isinstance(owner, BufferOp)]


def _whole_buffer(value: SSAValue) -> BufferOp | None:
    """The buffer whose bytes `value` is, all of them (the buffer itself or a view of it)."""
    while isinstance(value.owner, ViewOp):
        value = value.owner.source
    return value.owner if isinstance(value.owner, BufferOp) else None


def _inplace_candidates(model: ModelOp, intervals: list[Interval]) -> dict[BufferOp, list[BufferOp]]:
    """Output buffer -> the input buffers it could overwrite, in operand order."""
    module = model.parent_op()
    kernels = {
        k.sym_name.data: k
        for k in (module.walk() if module is not None else ())
        if isinstance(k, KernelFuncOp)
    }
    by_buffer = {i.buffer: i for i in intervals}
    graph_io = {op for op in model.body.block.ops if isinstance(op, BufferOp) and op.bound}
    for op in model.body.block.ops:
        if isinstance(op, OutputsOp):
            graph_io.update(_buffers(op.values))
    before = happens_before(model)
    candidates: dict[BufferOp, list[BufferOp]] = {}
    for position, op in enumerate(model.body.block.ops):
        if not isinstance(op, LaunchOp):
            continue
        kernel = kernels.get(op.kernel.root_reference.data)
        if kernel is None or not _elementwise(kernel):
            continue
        for j, written in enumerate(op.outputs):
            output = written.owner
            if not isinstance(output, BufferOp) or output in graph_io or by_buffer[output].start != position:
                continue
            for i, read in enumerate(op.inputs):
                source = _whole_buffer(read)
                if (
                    source is not None
                    and source not in graph_io
                    and source is not output
                    and not by_buffer[source].access_mask & ~bit(position) & ~before[position]
                    and by_buffer[source].size == by_buffer[output].size
                    and read.type == written.type
                    and kernel.in_formats[i] == kernel.out_formats[j]
                ):
                    candidates.setdefault(output, [])
                    if source not in candidates[output]:
                        candidates[output].append(source)
    return candidates


def _elementwise(kernel: KernelFuncOp) -> bool:
    """Every op of the body is elementwise and every returned value is computed by one, so each
    output element depends only on the same element of a same-shaped input."""
    block = kernel.body.block
    terminator = block.last_op
    body = [o for o in block.ops if o is not terminator]
    return (
        bool(body)
        and all(isinstance(o, ElementwiseOp) for o in body)
        and terminator is not None
        and all(isinstance(v, OpResult) for v in terminator.operands)
    )


def _check_strategy(strategy: str) -> None:
    if strategy not in ("best", *STRATEGIES):
        known = ", ".join(("best", *STRATEGIES))
        raise CompileError(f"ge-plan-memory: unknown strategy '{strategy}' (known: {known})")


def _name(buffer: BufferOp) -> str:
    return buffer.buffer.name_hint or "?"
