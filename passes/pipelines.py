"""Pipelines as data: the passes of each optimization level, in order.

O0 lowers only (one kernel per graph op, framework formats, one stream, no memory reuse). O1
adds folding and cleanup (`ge-constant-fold`, `ge-simplify`, `cse`, `dce`); the passes of O2 (pattern fusion)
and O3 (kernel formation, formats, memory reuse, streams) join their levels as they land, and
until then those levels run what exists. `ge-opt -p ge-O1` runs a level as one pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from . import get_pass

CLEANUP = ("ge-constant-fold", "ge-simplify", "cse", "dce")
LOWERING = ("ge-lower-graph-to-kernel", "ge-lower-kernel-to-stream")

PIPELINES: dict[int, tuple[str, ...]] = {
    0: LOWERING,
    1: (*CLEANUP, *LOWERING),
    2: (*CLEANUP, *LOWERING),
    3: (*CLEANUP, *LOWERING),
}

_XDSL_PASSES: dict[str, type[ModulePass]] = {
    "cse": CommonSubexpressionElimination,
    "dce": DeadCodeElimination,
}


def pipeline(level: int) -> list[ModulePass]:
    """The pass instances of optimization level `level` (0 to 3)."""
    if level not in PIPELINES:
        raise ValueError(f"optimization level {level} is not one of {sorted(PIPELINES)}")
    return [(_XDSL_PASSES.get(name) or get_pass(name))() for name in PIPELINES[level]]


@dataclass(frozen=True)
class OptimizationLevelPass(ModulePass):
    """Runs the whole pipeline of one optimization level."""

    name = "ge-O"
    LEVEL: ClassVar[int] = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for compiler_pass in pipeline(self.LEVEL):
            compiler_pass.apply(ctx, op)


def level_pass(level: int) -> type[ModulePass]:
    """A pass class named `ge-O<level>` that runs that level's pipeline (for `ge-opt -p`)."""
    return type(f"O{level}Pass", (OptimizationLevelPass,), {"name": f"ge-O{level}", "LEVEL": level})
