"""`ge-plan-memory`: places the arena's buffers by lifetime, so buffers that are never live at
the same time share bytes.

A buffer is live from the task that writes it (graph inputs: from the start) to the last task
that reads it (graph outputs: to the end); a launch's inputs and outputs are live together, so
a kernel never writes over what it reads, except in place: an elementwise kernel may write an
output over an input of the same type that dies at that launch (neither is a graph input or
output), and the pair then takes one slot of bytes. Two strategies place the slots, and the
smaller arena wins (`strategy=best`, the default; `greedy_by_size` or `size_binned` forces one):
- greedy by size (TFLite's and GE's planners): largest first, each at the lowest offset that
  overlaps no live-together slot already placed;
- size-binned block reuse (GE's block memory assigner): in schedule order, each slot takes a
  freed block of its size bin (powers of two times the alignment), else the smallest freed block
  that holds it, else a new block at the end of the arena.
The model records the planned arena (`arena_size`) and, in `ascend.memory`, the arena, the lower
bound (the most bytes live at once), the no-reuse total, the winning strategy and the in-place
count; every plan is checked: no two live-together buffers overlap unless declared in place.

```
%a = ascend.stream.buffer offset 0 size 64 ...      // dead after launch 1
%b = ascend.stream.buffer offset 512 size 64 ...    // written by launch 2
```
becomes `%b = ascend.stream.buffer offset 0 size 64 ...` when `%a` is dead before `%b` is born.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import OpResult, SSAValue
from xdsl.passes import ModulePass

from ge.dialects.graph import ElementwiseOp
from ge.dialects.stream import BufferOp, KernelFuncOp, LaunchOp, ModelOp, OutputsOp, ViewOp, root_buffer
from ge.errors import CompileError

MEMORY_ATTR = "ascend.memory"
"""Model attribute: `{arena_bytes, lower_bound_bytes, no_reuse_bytes, strategy, inplace}`."""

STRATEGIES = ("greedy_by_size", "size_binned")
"""The placement strategies, in the order ties are broken."""


@dataclass(frozen=True)
class Interval:
    """A buffer's lifetime in task positions (inclusive) and its aligned byte size."""

    buffer: BufferOp
    start: int
    end: int
    size: int
    inplace_of: BufferOp | None = None
    """The launch input whose bytes this buffer takes over: it dies where this buffer is born."""


@dataclass(frozen=True)
class Slot:
    """Buffers that share one range of bytes: a buffer and its chain of in-place successors."""

    buffers: tuple[BufferOp, ...]
    start: int
    end: int
    size: int


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
    aligned size, the input dies at the launch, and neither is a graph input or output. Each input
    is taken over by one output at most."""
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
    return [
        Slot(
            tuple(i.buffer for i in group),
            min(i.start for i in group),
            max(i.end for i in group),
            max(i.size for i in group),
        )
        for group in members.values()
    ]


def lower_bound(intervals: list[Interval]) -> int:
    """The most bytes live at any one time, an in-place chain counting once."""
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


def greedy_by_size(intervals: list[Interval]) -> dict[BufferOp, int]:
    """Offsets: largest slots first, each at the lowest offset free over its lifetime. Slots of
    equal size go in order of birth (optimal when all sizes are equal) and, in a second plan,
    longest-lived first (the hardest to fit); the smaller arena is kept."""
    merged = slots(intervals)
    by_birth = _first_fit(sorted(merged, key=lambda s: (-s.size, s.start)))
    by_length = _first_fit(sorted(merged, key=lambda s: (-s.size, s.start - s.end, s.start)))
    return min(by_birth, by_length, key=lambda offsets: arena_bytes(intervals, offsets))


def _first_fit(ordered: list[Slot]) -> dict[BufferOp, int]:
    placed: list[tuple[Slot, int]] = []
    offsets: dict[BufferOp, int] = {}
    for slot in ordered:
        busy = sorted(
            (offset, offset + other.size)
            for other, offset in placed
            if other.start <= slot.end and slot.start <= other.end
        )
        candidate = 0
        for begin, end in busy:
            if candidate + slot.size <= begin:
                break
            candidate = max(candidate, end)
        offsets.update(dict.fromkeys(slot.buffers, candidate))
        placed.append((slot, candidate))
    return offsets


def size_bin(size: int, alignment: int) -> int:
    """The bin of an aligned size: the smallest power of two times `alignment` that holds it."""
    units = -(-size // alignment)
    return alignment << max(units - 1, 0).bit_length()


@dataclass
class _Block:
    offset: int
    capacity: int
    busy_until: int = field(default=-2)


def size_binned(intervals: list[Interval], alignment: int = 512) -> dict[BufferOp, int]:
    """Offsets: slots in schedule order, each in a freed block of its size bin, else in the
    smallest freed block that holds it, else in a new block appended to the arena."""
    blocks: list[_Block] = []
    offsets: dict[BufferOp, int] = {}
    end = 0
    for slot in sorted(slots(intervals), key=lambda s: (s.start, -s.size)):
        capacity = size_bin(slot.size, alignment)
        free = [b for b in blocks if b.busy_until < slot.start]
        fitting = [b for b in free if b.capacity == capacity] or [b for b in free if b.capacity >= slot.size]
        if fitting:
            block = min(fitting, key=lambda b: (b.capacity, b.offset))
        else:
            block = _Block(end, capacity)
            blocks.append(block)
            end += capacity
        block.busy_until = slot.end
        offsets.update(dict.fromkeys(slot.buffers, block.offset))
    return offsets


PLANNERS: dict[str, Callable[[list[Interval], int], dict[BufferOp, int]]] = {
    "greedy_by_size": lambda intervals, _alignment: greedy_by_size(intervals),
    "size_binned": size_binned,
}
"""Each strategy by name: intervals and the alignment in, offsets out."""


def plan(
    intervals: list[Interval], strategy: str = "best", alignment: int = 512
) -> tuple[str, dict[BufferOp, int]]:
    """The offsets of `strategy` and its name; with `best`, the plan of the smallest arena (ties
    go to the earlier of `STRATEGIES`). Every plan made is validated."""
    _check_strategy(strategy)
    plans = []
    for name in STRATEGIES if strategy == "best" else (strategy,):
        offsets = PLANNERS[name](intervals, alignment)
        validate(intervals, offsets)
        plans.append((arena_bytes(intervals, offsets), STRATEGIES.index(name), name, offsets))
    _, _, name, offsets = min(plans, key=lambda candidate: candidate[:2])
    return name, offsets


def validate(intervals: list[Interval], offsets: dict[BufferOp, int]) -> None:
    """Raises CompileError if two buffers live at the same time share a byte, unless one is
    declared in place of the other (same offset and size, born where the other dies)."""
    by_buffer = {i.buffer: i for i in intervals}
    for b in intervals:
        if b.inplace_of is None:
            continue
        a = by_buffer.get(b.inplace_of)
        if a is None or a.end != b.start or a.size != b.size or offsets[a.buffer] != offsets[b.buffer]:
            raise CompileError(
                f"memory plan: buffer %{_name(b.buffer)} is declared in place of "
                f"%{_name(b.inplace_of)} but they do not share one slot born where the other dies"
            )
    by_start = sorted(intervals, key=lambda i: i.start)
    for index, a in enumerate(by_start):
        for b in by_start[index + 1 :]:
            if b.start > a.end:
                break
            if a.buffer is b.inplace_of or b.buffer is a.inplace_of:
                continue
            lo_a, lo_b = offsets[a.buffer], offsets[b.buffer]
            if lo_a < lo_b + b.size and lo_b < lo_a + a.size:
                raise CompileError(
                    f"memory plan: buffers %{_name(a.buffer)} and %{_name(b.buffer)} "
                    f"are live together (tasks {a.start}-{a.end} and {b.start}-{b.end}) but overlap at "
                    f"[{lo_a}, {lo_a + a.size}) and [{lo_b}, {lo_b + b.size})"
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
        if self.alignment < 1:
            raise CompileError("ge-plan-memory: alignment must be positive")
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
    first: dict[BufferOp, int] = {}
    last: dict[BufferOp, int] = {}
    for position, op in enumerate(ops):
        if isinstance(op, BufferOp):
            if op.input is not None:
                first[op] = -1
        elif isinstance(op, LaunchOp):
            for buffer in _buffers(op.inputs):
                last[buffer] = position
            for buffer in _buffers(op.outputs):
                first.setdefault(buffer, position)
                last[buffer] = max(last.get(buffer, position), position)
        elif isinstance(op, OutputsOp):
            for buffer in _buffers(op.values):
                last[buffer] = end_of_program
    intervals = []
    for op in ops:
        if isinstance(op, BufferOp):
            start = first.get(op, -1)
            end = last.get(op, start)
            size = -(-max(op.size.value.data, 1) // alignment) * alignment
            intervals.append(Interval(op, start, end, size))
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
    graph_io = {i.buffer for i in intervals if i.buffer.input is not None}
    for op in model.body.block.ops:
        if isinstance(op, OutputsOp):
            graph_io.update(_buffers(op.values))
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
                    and by_buffer[source].end == position
                    and by_buffer[source].size == by_buffer[output].size
                    and read.type == written.type
                    and kernel.in_formats.data[i] == kernel.out_formats.data[j]
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
