"""Pipelines as data: the passes of each optimization level, in order.

O0 lowers only (one kernel per graph op, framework formats, one stream, no memory reuse). O1
adds folding and cleanup; O2 adds pattern fusion (then cleans up again); O3 adds kernel
formation, device formats, multi-stream and memory reuse (planned over the streams' schedule).
Entries are pass specs, options included (`ge-lower-graph-to-kernel{form-kernels=false}`). A
precision mode other than `must_keep_origin_dtype` adds `ge-mixed-precision` before lowering, at
any level. A fusion switch turns named fusion passes off. `max_streams` sets the streams of O3
(default 4) and, above 1, spreads the launches of the lower levels too. `ge-opt -p ge-O2` runs a
level, which the pass manager expands into its passes (`passes/manager.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence

from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.arg_spec import parse_pipeline

from . import PASSES, get_pass

CLEANUP = ("ge-constant-fold", "ge-simplify", "cse", "dce")
PREPARE = ("ge-constant-fold", "ge-simplify", "dce")
"""Before fusion: no CSE yet, which could merge the convs of equal weights that each feed a
batch norm of their own and so keep them from folding."""
FUSION: tuple[str, ...] = (
    "ge-fuse-conv-bn",
    "ge-fuse-gelu",
    "ge-fuse-layer-norm",
    "ge-fuse-attention",
    "ge-fuse-bias-activation",
)
"""Pattern fusion, in the order it runs: later patterns absorb what earlier ones fused."""
CUSTOM_FUSION: list[str] = []
"""Fusion passes registered with `ge.register_fusion_pattern`: they run after the built-in ones
wherever those run, and a fusion switch file turns them off by name."""

CUSTOM_STAGES: dict[str, str] = {}
"""Passes registered with `ge.register_pass(..., after=NAME)`: every pipeline that runs NAME runs
the pass right after it."""


def fusion_passes() -> tuple[str, ...]:
    """The fusion passes a switch file may name: the built-in ones, then the registered ones."""
    return (*FUSION, *CUSTOM_FUSION)


LOWERING = ("ge-lower-graph-to-kernel{form-kernels=false}", "ge-tile-kernels", "ge-lower-kernel-to-stream")
"""One kernel per graph op, in framework formats, tiled for the target."""
KERNEL = ("ge-lower-graph-to-kernel", "ge-assign-formats", "ge-tile-kernels", "ge-lower-kernel-to-stream")
"""Kernel formation and device formats (O3)."""
STREAM = ("ge-assign-streams", "ge-plan-memory")
"""Stream-level passes of O3: multi-stream, then memory reuse that respects the streams' order."""
ASSIGN_STREAMS = "ge-assign-streams"
DEFAULT_STREAMS = {0: 1, 1: 1, 2: 1, 3: 4}
"""Streams per optimization level when `max_streams` is not given."""
DEFAULT_PRECISION = "must_keep_origin_dtype"

PIPELINES: dict[int, tuple[str, ...]] = {
    0: LOWERING,
    1: (*CLEANUP, *LOWERING),
    2: (*PREPARE, *FUSION, *CLEANUP, *LOWERING),
    3: (*PREPARE, *FUSION, *CLEANUP, *KERNEL, *STREAM),
}

XDSL_PASSES: dict[str, type[ModulePass]] = {
    "cse": CommonSubexpressionElimination,
    "dce": DeadCodeElimination,
}


LOWERING_PASS = "ge-lower-graph-to-kernel"
"""The first pass that leaves the graph level."""
STREAM_LOWERING_PASS = "ge-lower-kernel-to-stream"


def _keeps_rounding(name: str) -> bool:
    """Whether the pass has a `keep-rounding` option: a fusion that leaves float16 and bfloat16
    patterns alone unless a precision mode is given (see `passes/graph/match.py`)."""
    return "keep_rounding" in {f.name for f in dataclasses.fields(make_pass(name))}


def make_pass(spec: str) -> ModulePass:
    """The pass instance of a spec such as `cse` or `ge-lower-graph-to-kernel{form-kernels=false}`."""
    (parsed,) = parse_pipeline(spec)
    cls = XDSL_PASSES.get(parsed.name) or get_pass(parsed.name)
    return cls.from_pass_spec(parsed)


def pipeline(
    level: int,
    disabled: Collection[str] = (),
    precision_mode: str = DEFAULT_PRECISION,
    max_streams: int | None = None,
) -> list[ModulePass]:
    """The pass instances of optimization level `level` (0 to 3).

    `disabled` names fusion passes switched off; `precision_mode` other than the default adds
    the mixed-precision pass before lowering; `max_streams` (default: `DEFAULT_STREAMS` of the
    level) bounds the streams `ge-assign-streams` may use, and above 1 adds that pass to the
    levels that lack it, right after the lowering to the stream level.
    """
    if level not in PIPELINES:
        raise ValueError(f"optimization level {level} is not one of {sorted(PIPELINES)}")
    if max_streams is not None and (
        isinstance(max_streams, bool) or not isinstance(max_streams, int) or max_streams < 1
    ):
        raise ValueError(f"max_streams must be an integer of at least 1, got {max_streams!r}")
    fusion = fusion_passes()
    unknown = set(disabled) - set(fusion)
    if unknown:
        raise ValueError(
            f"unknown fusion passes in the switch: {', '.join(sorted(unknown))} (known: {', '.join(fusion)})"
        )
    names = [n for n in with_registered(PIPELINES[level]) if n not in disabled]
    if precision_mode != DEFAULT_PRECISION:
        # The mode allows fused ops to skip the roundings of 16-bit intermediates.
        names = [f"{n}{{keep-rounding=false}}" if _keeps_rounding(n) else n for n in names]
    streams = DEFAULT_STREAMS[level] if max_streams is None else max_streams
    if ASSIGN_STREAMS not in names and streams > 1:
        names.insert(names.index(STREAM_LOWERING_PASS) + 1, ASSIGN_STREAMS)
    # O3 keeps the stream count the cost model finds fastest; a lower level asked for streams
    # uses them as asked.
    fastest = "true" if level == 3 else "false"
    names = [f"{n}{{max-streams={streams} fastest={fastest}}}" if n == ASSIGN_STREAMS else n for n in names]
    passes = [make_pass(name) for name in names]
    if precision_mode != DEFAULT_PRECISION:
        if "ge-mixed-precision" not in PASSES:
            raise ValueError(
                f"precision_mode '{precision_mode}' needs the mixed-precision pass, which ge lacks"
            )
        position = next(i for i, p in enumerate(passes) if p.name == LOWERING_PASS)
        precision = get_pass("ge-mixed-precision")(mode=precision_mode)  # type: ignore[call-arg]
        passes[position:position] = [precision, *[XDSL_PASSES[n]() for n in ("cse", "dce")]]
    return passes


def with_registered(names: Sequence[str]) -> list[str]:
    """`names` with the registered fusion passes after the last built-in fusion pass, and each
    registered stage right after every run of the pass it follows (after the stages registered
    before it to follow that pass)."""
    result: list[str] = []
    for name in names:
        result.append(name)
        if CUSTOM_FUSION and name == FUSION[-1]:
            result += CUSTOM_FUSION
    for stage, after in CUSTOM_STAGES.items():
        placed: list[str] = []
        index = 0
        while index < len(result):
            placed.append(result[index])
            if result[index] == after:
                while index + 1 < len(result) and CUSTOM_STAGES.get(result[index + 1]) == after:
                    index += 1
                    placed.append(result[index])
                placed.append(stage)
            index += 1
        result = placed
    return result


def graph_passes(
    level: int, disabled: Collection[str] = (), precision_mode: str = DEFAULT_PRECISION
) -> list[ModulePass]:
    """The passes of `level` that work on the graph: everything before the lowering."""
    return _before(LOWERING_PASS, pipeline(level, disabled, precision_mode))


def kernel_passes(
    level: int, disabled: Collection[str] = (), precision_mode: str = DEFAULT_PRECISION
) -> list[ModulePass]:
    """The passes of `level` that end at the kernel level: everything before the lowering to streams."""
    return _before(STREAM_LOWERING_PASS, pipeline(level, disabled, precision_mode))


def _before(name: str, passes: list[ModulePass]) -> list[ModulePass]:
    return passes[: next(i for i, p in enumerate(passes) if p.name == name)]
