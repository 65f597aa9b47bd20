"""What an `ascend.stream.model`'s placement must respect, checked by its verifier: a launch reads
a buffer only after every earlier writer of it (streams ordered by events), arena buffers share
bytes only when one's every access happens before the other's first write, and weights never
partly overlap in the blob.

Order across streams is a vector clock per launch (per stream, how many of its launches happen
before or at it), so each check costs the number of streams, and the arena check is one sweep in
task order over an interval map of who last held each byte: linear in launches and buffers, up
to the sorts.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import DenseResourceAttr
from xdsl.ir import Operation, SSAValue

from ..common import fail
from .buffers import BufferOp, WeightOp
from .tasks import EventRecordOp, EventWaitOp, LaunchOp
from .views import root_buffer

Clock = dict[int, int]
"""Per stream, how many of its launches happen before or at a point of the task list."""


def check_placement(ops: Sequence[Operation], outputs: Sequence[SSAValue]) -> None:
    """Raises VerifyException for a read not ordered after a write on another stream, two arena
    buffers sharing bytes while both live, or two weights partly overlapping. `ops`: the model's
    body in task order (every read already follows a write in it); `outputs`: the values the
    model returns, read after every launch."""
    uses: dict[BufferOp, _Use] = {}
    stream_clock: dict[int, Clock] = {}
    recorded: dict[int, Clock] = {}
    launches = 0
    for op in ops:
        if isinstance(op, LaunchOp):
            stream = op.stream.value.data
            clock = stream_clock.setdefault(stream, {})
            clock[stream] = clock.get(stream, 0) + 1
            stamp = _Stamp(launches, op, stream, dict(clock))
            launches += 1
            for value in op.inputs:
                if (buffer := _arena(value)) is not None:
                    uses.setdefault(buffer, _Use(buffer)).read(stamp)
            for value in op.outputs:
                if (buffer := _arena(value)) is not None:
                    uses.setdefault(buffer, _Use(buffer)).write(stamp)
        elif isinstance(op, EventRecordOp):
            recorded[op.event.value.data] = dict(stream_clock.get(op.stream.value.data, {}))
        elif isinstance(op, EventWaitOp):
            clock = stream_clock.setdefault(op.stream.value.data, {})
            for stream, count in recorded.get(op.event.value.data, {}).items():
                clock[stream] = max(clock.get(stream, 0), count)
    for value in outputs:
        if (buffer := _arena(value)) is not None and buffer in uses:
            uses[buffer].returned = True
    _check_arena([use for use in uses.values() if not use.buffer.bound])
    _check_weights([op for op in ops if isinstance(op, WeightOp)])


@dataclass(frozen=True)
class _Stamp:
    """One launch's access: the launch, its index among the launches in task order, its stream
    and its vector clock."""

    index: int
    launch: LaunchOp
    stream: int
    clock: Clock

    def after(self, other: _Stamp) -> bool:
        """Whether `other` happens before this access (or is the same launch)."""
        return self.clock.get(other.stream, 0) >= other.clock[other.stream]

    def __str__(self) -> str:
        return f"@{self.launch.kernel.root_reference.data} (launch {self.index}, stream {self.stream})"


@dataclass
class _Use:
    """How the launches use one buffer: its writes, and per stream its last access."""

    buffer: BufferOp
    first: _Stamp | None = None
    first_write_by_stream: dict[int, _Stamp] = field(default_factory=dict)
    """The first write on each stream: later ones on that stream follow it."""
    last_write_by_stream: dict[int, _Stamp] = field(default_factory=dict)
    """The last write on each stream so far: a read after it follows the earlier ones."""
    last_by_stream: dict[int, _Stamp] = field(default_factory=dict)
    last: _Stamp | None = None
    last_writes: bool = False
    """Whether the last access writes the buffer (else it only reads it)."""
    returned: bool = False
    """Returned by the model: read after every launch, so live to the end."""

    def read(self, stamp: _Stamp) -> None:
        for write in self.last_write_by_stream.values():
            if not stamp.after(write):
                raise fail(
                    stamp.launch,
                    f"reads %{_name(self.buffer)} on stream {stamp.stream}, written by {write}, and no "
                    "event orders the write before the read; an event_record after the writer and an "
                    "event_wait before the reader would",
                )
        self._access(stamp, write=False)

    def write(self, stamp: _Stamp) -> None:
        if self.first is None:
            self.first = stamp
        self.first_write_by_stream.setdefault(stamp.stream, stamp)
        self.last_write_by_stream[stamp.stream] = stamp
        self._access(stamp, write=True)

    def _access(self, stamp: _Stamp, write: bool) -> None:
        same = self.last is not None and self.last.launch is stamp.launch
        self.last_writes = write or (same and self.last_writes)
        self.last = stamp
        self.last_by_stream[stamp.stream] = stamp

    @property
    def span(self) -> tuple[int, int]:
        offset = self.buffer.offset.value.data
        return offset, offset + self.buffer.size.value.data

    def describe(self) -> str:
        low, high = self.span
        end = "the model's end (returned)" if self.returned else str(self.last)
        return f"%{_name(self.buffer)} at [{low}, {high}), live from {self.first} to {end}"


def _check_arena(uses: list[_Use]) -> None:
    """In order of first write, each buffer takes over its bytes from their last holders, which
    must be dead by then, every access of theirs happening before each of its writes. A launch
    may write an output over an input it reads last, when the two are one slot (in place)."""
    starts: list[int] = []
    ends: list[int] = []
    holders: list[_Use] = []
    written = [u for u in uses if u.first is not None]
    for use in sorted(written, key=lambda u: (u.first.index if u.first else 0, u.span)):
        low, high = use.span  # high > low: a buffer of no bytes has no use (`_arena`)
        index = bisect_right(starts, low) - 1
        if index < 0 or ends[index] <= low:
            index += 1
        stop = index
        while stop < len(starts) and starts[stop] < high:
            _check_handover(holders[stop], use, max(low, starts[stop]), min(high, ends[stop]))
            stop += 1
        pieces = []
        if index < stop and starts[index] < low:
            pieces.append((starts[index], low, holders[index]))
        pieces.append((low, high, use))
        if index < stop and ends[stop - 1] > high:
            pieces.append((high, ends[stop - 1], holders[stop - 1]))
        starts[index:stop] = [p[0] for p in pieces]
        ends[index:stop] = [p[1] for p in pieces]
        holders[index:stop] = [p[2] for p in pieces]


def _check_handover(old: _Use, new: _Use, low: int, high: int) -> None:
    """`new` takes bytes [low, high) over from `old`."""
    first = new.first
    assert old.last is not None and first is not None
    inplace = old.last.launch is first.launch and not old.last_writes and old.span == new.span
    if old.returned or (old.last.index >= first.index and not inplace):
        raise fail(
            new.buffer,
            f"arena bytes [{low}, {high}) are in two buffers live at once: {old.describe()}, and "
            f"{new.describe()}; plan them apart (ge-plan-memory)",
        )
    for write in new.first_write_by_stream.values():
        for stamp in old.last_by_stream.values():
            if not write.after(stamp):
                raise fail(
                    new.buffer,
                    f"arena bytes [{low}, {high}) pass from %{_name(old.buffer)} to %{_name(new.buffer)}, "
                    f"but no event orders {stamp}, which accesses %{_name(old.buffer)}, before {write}, "
                    f"which writes %{_name(new.buffer)}; an event_record after the first and an "
                    "event_wait before the second would (or plan the buffers apart)",
                )


def _check_weights(weights: list[WeightOp]) -> None:
    """Weights lie apart in the blob, or exactly on one another (the gears of a model share one
    blob and place weights of equal bytes once)."""
    spans = [(op.offset.value.data, op.offset.value.data + op.size.value.data, op) for op in weights]
    reach: tuple[int, int, WeightOp] | None = None
    for low, high, op in sorted((s for s in spans if s[1] > s[0]), key=lambda s: s[:2]):
        if reach is not None and low < reach[1] and (low, high) != reach[:2]:
            raise fail(
                op,
                f"weight {_weight_name(op)} at [{low}, {high}) overlaps weight {_weight_name(reach[2])} at "
                f"[{reach[0]}, {reach[1]}) in the weight blob; distinct weights lie apart, equal "
                "ones at one offset and size",
            )
        if reach is None or high > reach[1]:
            reach = (low, high, op)


def _arena(value: SSAValue) -> BufferOp | None:
    """The buffer whose bytes `value` is (None for a weight, or for a buffer of no bytes, an
    empty tensor's, which no access can race on or overlap): arena bytes unless it is bound."""
    owner = root_buffer(value).owner
    return owner if isinstance(owner, BufferOp) and owner.size.value.data > 0 else None


def _name(op: BufferOp) -> str:
    return op.buffer.name_hint or "?"


def _weight_name(op: WeightOp) -> str:
    """A weight by its resource key, which names it uniquely where its SSA name may not."""
    if isinstance(op.value, DenseResourceAttr):
        return f"dense_resource<{op.value.resource_handle.data}>"
    return f"%{op.buffer.name_hint or '?'}"
