"""What every fusion pass shares: counting matches for the fusion report, and provenance.

A fusion pass calls `record(ctx, pattern, applied)` for every match it finds, whether or not it
rewrites it (a legality check may refuse); the compiler gathers the counts into the fusion
report. A fused op names the source ops it replaced in its `sources` attribute.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, NameLoc, StringAttr
from xdsl.ir import Operation

SOURCES = "sources"
"""Attribute of a fused op: the names of the ops it replaced, in program order."""


def record(ctx: Context, pattern: str, applied: bool, op: Operation | None = None) -> None:
    """Counts one match of `pattern` at `op` (and whether it was applied) in the context's report.

    Given `op`, a match that was not applied is counted once however often the greedy driver
    visits it again.
    """
    counts = getattr(ctx, "fusion_counts", None)
    if counts is None:
        return
    seen = getattr(ctx, "fusion_seen", None)
    if op is not None and not applied and seen is not None:
        if (pattern, id(op)) in seen:
            return
        seen.add((pattern, id(op)))
    entry = counts.setdefault(pattern, {"matched": 0, "applied": 0})
    entry["matched"] += 1
    entry["applied"] += int(applied)


def source_names(ops: Iterable[Operation]) -> ArrayAttr[StringAttr]:
    """The provenance of a fusion of `ops`: their names, or the names they already carry."""
    names: list[str] = []
    for op in ops:
        carried = op.attributes.get(SOURCES)
        if isinstance(carried, ArrayAttr):
            names += [s.data for s in carried.data if isinstance(s, StringAttr)]
        elif isinstance(op.location, NameLoc):
            names.append(op.location.desc.data)
        else:
            names.append(op.name.removeprefix("ascend.graph."))
    return ArrayAttr([StringAttr(n) for n in names])
