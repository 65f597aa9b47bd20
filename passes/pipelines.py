"""Pipelines as data: the passes of each optimization level, in order.

O0 lowers only (one kernel per graph op, framework formats, one stream, no memory reuse). The
higher levels add their passes as they land; until then they run the O0 pipeline.
"""

from __future__ import annotations

from xdsl.passes import ModulePass

from . import get_pass

LOWERING = ("ge-lower-graph-to-kernel", "ge-lower-kernel-to-stream")

PIPELINES: dict[int, tuple[str, ...]] = {
    0: LOWERING,
    1: LOWERING,
    2: LOWERING,
    3: LOWERING,
}


def pipeline(level: int) -> list[ModulePass]:
    """The pass instances of optimization level `level` (0 to 3)."""
    if level not in PIPELINES:
        raise ValueError(f"optimization level {level} is not one of {sorted(PIPELINES)}")
    return [get_pass(name)() for name in PIPELINES[level]]
