"""The emulator's view of time and safety: the modelled timeline of a run (`simulate`, from the
cost model's `ge.cost.timeline`) and the race detector that proves a model's streams and memory
plan safe.

The race detector: two launches race when one writes arena bytes that the other reads or writes
and neither happens before the other (stream order plus events), whatever buffers the bytes
belong to, so a missing event and a memory plan that reuses bytes too early are both caught.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ge.cost.timeline import LaunchSpan, Timeline, simulate
from ge.dialects.stream import EventRecordOp, EventWaitOp, LaunchOp, ModelOp
from ge.errors import GeError

__all__ = ["Access", "LaunchSpan", "Timeline", "find_races", "happens_before", "simulate"]


@dataclass(frozen=True)
class Access:
    """Arena bytes one launch reads or writes: `[start, end)` rows, and the buffer they belong to."""

    launch: int
    runs: np.ndarray
    write: bool
    buffer: str


def happens_before(model: ModelOp) -> list[int]:
    """Per launch (task order), the launches that happen before it, as a bitmask: the earlier
    launches of its stream and everything before the records of the events its stream waited for."""
    stream_mask: dict[int, int] = {}
    event_mask: dict[int, int] = {}
    before: list[int] = []
    for op in model.body.block.ops:
        if isinstance(op, LaunchOp):
            s = op.stream.value.data
            before.append(stream_mask.get(s, 0))
            stream_mask[s] = before[-1] | 1 << (len(before) - 1)
        elif isinstance(op, EventRecordOp):
            event_mask[op.event.value.data] = stream_mask.get(op.stream.value.data, 0)
        elif isinstance(op, EventWaitOp):
            s = op.stream.value.data
            stream_mask[s] = stream_mask.get(s, 0) | event_mask.get(op.event.value.data, 0)
    return before


def find_races(model: ModelOp, accesses: Sequence[Access]) -> None:
    """Raises GeError naming both kernels and the bytes if two launches touch the same arena
    bytes, at least one writing, and neither happens before the other."""
    ops = [op for op in model.body.block.ops if isinstance(op, LaunchOp)]
    rows = [(a, run) for a in accesses for run in a.runs]
    if not rows:
        return
    starts = np.array([run[0] for _, run in rows], np.int64)
    ends = np.array([run[1] for _, run in rows], np.int64)
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    # Row k overlaps the later-starting rows k+1 .. last[k]-1 whose start is before its end.
    last = np.searchsorted(starts, ends, side="left")
    counts = np.maximum(last - np.arange(len(starts)) - 1, 0)
    first = np.repeat(np.arange(len(starts)), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    second = first + 1 + offsets
    a_rows, b_rows = order[first], order[second]
    launch = np.array([a.launch for a, _ in rows], np.int64)
    write = np.array([a.write for a, _ in rows], bool)
    ordered = _ordered(happens_before(model), len(ops))
    la, lb = launch[a_rows], launch[b_rows]
    racing = (la != lb) & (write[a_rows] | write[b_rows]) & ~ordered[la, lb] & ~ordered[lb, la]
    if not racing.any():
        return
    candidates = np.flatnonzero(racing)
    k = candidates[np.argmin(np.maximum(la, lb)[candidates])]
    (x, run_x), (y, run_y) = rows[a_rows[k]], rows[b_rows[k]]
    if x.launch > y.launch:
        (x, run_x), (y, run_y) = (y, run_y), (x, run_x)
    low, high = max(run_x[0], run_y[0]), min(run_x[1], run_y[1])
    first_op, second_op = ops[x.launch], ops[y.launch]
    raise GeError(
        f"race: kernel @{first_op.kernel.root_reference.data} (stream {first_op.stream.value.data}) "
        f"{'writes' if x.write else 'reads'} %{x.buffer} and kernel @{second_op.kernel.root_reference.data} "
        f"(stream {second_op.stream.value.data}) {'writes' if y.write else 'reads'} %{y.buffer} over "
        f"arena bytes [{low}, {high}), and no event orders them; an event_record after the first and an "
        f"event_wait before the second would (or plan the buffers apart)"
    )


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _ordered(before: list[int], count: int) -> np.ndarray:
    """`result[a, b]`: launch a happens before launch b."""
    width = max(1, (count + 7) // 8)
    packed = np.frombuffer(b"".join(m.to_bytes(width, "little") for m in before), np.uint8)
    bits = np.unpackbits(packed.reshape(count, width), axis=1, bitorder="little")[:, :count]
    return bits.T.astype(bool)
