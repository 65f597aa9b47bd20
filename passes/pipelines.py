"""Pipelines as data: the passes of each optimization level, in order.

O0 lowers only (one kernel per graph op, framework formats, one stream, no memory reuse). O1
adds folding and cleanup; O2 adds pattern fusion (then cleans up again); O3 adds kernel
formation, device formats, multi-stream and memory reuse (planned over the streams' schedule).
Entries are pass specs, options included (`ge-lower-graph-to-kernel{form-kernels=false}`). A
precision mode other than `must_keep_origin_dtype` adds `ge-mixed-precision` before lowering, at
any level. A fusion switch turns named fusion passes off. `max_streams` sets the streams of O3
(default 4) and, above 1, spreads the launches of the lower levels too. `ge-opt -p ge-O2` runs a
level, which the pass manager expands into its passes (`passes/manager.py`).

Each level is a set of techniques (`LEVELS`), and its pipeline is derived from the set
(`pipeline_names`): `TECHNIQUES` says which passes, pass options and compile options each
technique contributes and which techniques it needs, `SCHEDULE` where its passes run. Any
set closed under its prerequisites compiles (`pipeline(..., techniques=...)`, the `techniques`
compile option), which is how `ge.techniques` measures what each technique gives.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

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
DEFAULT_PRECISION = "must_keep_origin_dtype"
MULTI_STREAM_STREAMS = 4
"""The streams `ge-assign-streams` may use when the multi-stream technique is on and
`max_streams` is not given."""


@dataclass(frozen=True)
class Technique:
    """One optimization technique: what it adds to a compilation when it is on."""

    name: str
    title: str
    off_options: tuple[tuple[str, str], ...] = ()
    """(pass, options) a pass that always runs takes when the technique is off."""
    compile_options: tuple[tuple[str, bool], ...] = ()
    """Compile options whose default it sets when on (the opposite value when off)."""
    requires: tuple[str, ...] = ()
    """Techniques it needs: switching it on switches them on, switching them off switches it off."""
    summary: str = ""

    @property
    def passes(self) -> tuple[str, ...]:
        """The passes it runs, in `SCHEDULE`'s order (a pass it runs twice listed twice)."""
        return tuple(name for name, owner in SCHEDULE if owner == self.name)


TECHNIQUES: dict[str, Technique] = {
    t.name: t
    for t in (
        Technique(
            "constant-folding",
            "constant folding",
            summary="constants computed at compile time, then simplification, CSE and DCE",
        ),
        Technique(
            "operator-fusion",
            "operator fusion",
            requires=("constant-folding",),
            summary="pattern fusion (conv + batch norm, bias and activation tails, GELU, layer norm, "
            "attention); folding computes the fused weights",
        ),
        Technique(
            "kernel-formation",
            "kernel formation",
            off_options=(("ge-lower-graph-to-kernel", "form-kernels=false"),),
            summary="graph ops grouped into kernels by the cost model (else one kernel per op)",
        ),
        Technique(
            "device-formats",
            "device formats",
            summary="NC1HWC0, FRACTAL_Z and FRACTAL_NZ operands, trans_data where formats differ",
        ),
        Technique(
            "multi-stream",
            "multi-stream",
            summary=f"independent kernels spread over up to {MULTI_STREAM_STREAMS} streams, with events",
        ),
        Technique(
            "memory-reuse",
            "memory reuse",
            summary="buffers share arena bytes when their lifetimes do not overlap (else one slot each)",
        ),
        Technique(
            "sinking",
            "sinking",
            compile_options=(("sink", True),),
            summary="the task list sunk to the device: a task costs sunk_task_us, not host_launch_us",
        ),
    )
}
"""The techniques, in the order reports list them."""

SCHEDULE: tuple[tuple[str, str | None], ...] = (
    *((name, "operator-fusion") for name in PREPARE),
    *((name, "operator-fusion") for name in FUSION),
    *((name, "constant-folding") for name in CLEANUP),
    ("ge-lower-graph-to-kernel", None),
    ("ge-assign-formats", "device-formats"),
    ("ge-tile-kernels", None),
    ("ge-lower-kernel-to-stream", None),
    (ASSIGN_STREAMS, "multi-stream"),
    ("ge-plan-memory", "memory-reuse"),
)
"""Every pass a pipeline may run, in order, with the technique that runs it (None: always)."""

LEVELS: dict[int, frozenset[str]] = {
    0: frozenset(),
    1: frozenset({"constant-folding"}),
    2: frozenset({"constant-folding", "operator-fusion"}),
    3: frozenset(TECHNIQUES),
}
"""The techniques of each optimization level."""


def check_techniques(techniques: Iterable[str]) -> frozenset[str]:
    """`techniques` as a set, when each is known and its prerequisites are in it; else ValueError."""
    chosen = _known(techniques)
    for name in TECHNIQUES:
        missing = [r for r in TECHNIQUES[name].requires if name in chosen and r not in chosen]
        if missing:
            raise ValueError(f"technique {name} needs {', '.join(missing)}: add it, or drop {name}")
    return chosen


def with_prerequisites(techniques: Iterable[str]) -> frozenset[str]:
    """`techniques` with every technique they need, transitively."""
    chosen = set(_known(techniques))
    while needed := {r for name in chosen for r in TECHNIQUES[name].requires} - chosen:
        chosen |= needed
    return frozenset(chosen)


def without_dependents(techniques: Iterable[str], removed: Iterable[str]) -> frozenset[str]:
    """`techniques` less `removed` and every technique that needs one of them, transitively."""
    chosen, gone = _known(techniques), set(_known(removed))
    while more := {n for n in chosen if n not in gone and set(TECHNIQUES[n].requires) & gone}:
        gone |= more
    return chosen - gone


def _known(techniques: Iterable[str]) -> frozenset[str]:
    """`techniques` as a set when each is a name of `TECHNIQUES`; else ValueError."""
    if isinstance(techniques, str):
        raise ValueError(f"techniques takes a collection of technique names, got the string '{techniques}'")
    chosen = frozenset(techniques)
    unknown = sorted(str(name) for name in chosen - set(TECHNIQUES))
    if unknown:
        raise ValueError(f"unknown techniques: {', '.join(unknown)} (known: {', '.join(TECHNIQUES)})")
    return chosen


def pipeline_names(techniques: Iterable[str]) -> tuple[str, ...]:
    """The pass specs a set of techniques runs, in `SCHEDULE`'s order (options of
    `ge-assign-streams` and of the registered passes are added by `pipeline`)."""
    chosen = check_techniques(techniques)
    off_options = {
        name: options
        for technique in TECHNIQUES.values()
        if technique.name not in chosen
        for name, options in technique.off_options
    }
    return tuple(
        f"{name}{{{off_options[name]}}}" if name in off_options else name
        for name, owner in SCHEDULE
        if owner is None or owner in chosen
    )


def default_streams(techniques: Iterable[str]) -> int:
    """The streams `ge-assign-streams` may use when `max_streams` is not given."""
    return MULTI_STREAM_STREAMS if "multi-stream" in set(techniques) else 1


def compile_defaults(techniques: Iterable[str]) -> dict[str, bool]:
    """The compile options the techniques set: each technique's value when on, the opposite
    when off (`sink` is True exactly when sinking is on)."""
    chosen = set(techniques)
    return {
        option: value if t.name in chosen else not value
        for t in TECHNIQUES.values()
        for option, value in t.compile_options
    }


PIPELINES: dict[int, tuple[str, ...]] = {level: pipeline_names(chosen) for level, chosen in LEVELS.items()}
"""The passes of each optimization level, derived from its techniques."""
DEFAULT_STREAMS = {level: default_streams(chosen) for level, chosen in LEVELS.items()}
"""Streams per optimization level when `max_streams` is not given."""

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
    techniques: Iterable[str] | None = None,
) -> list[ModulePass]:
    """The pass instances of optimization level `level` (0 to 3), or of the set `techniques`
    (names of `TECHNIQUES`, each with its prerequisites) when given instead of the level's.

    `disabled` names fusion passes switched off; `precision_mode` other than the default adds
    the mixed-precision pass before lowering; `max_streams` (default: 4 with multi-stream, else
    1) bounds the streams `ge-assign-streams` may use, and above 1 adds that pass where
    multi-stream is off, right after the lowering to the stream level.
    """
    if level not in PIPELINES:
        raise ValueError(f"optimization level {level} is not one of {sorted(PIPELINES)}")
    chosen = LEVELS[level] if techniques is None else check_techniques(techniques)
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
    names = [n for n in with_registered(pipeline_names(chosen)) if n not in disabled]
    if precision_mode != DEFAULT_PRECISION:
        # The mode allows fused ops to skip the roundings of 16-bit intermediates.
        names = [f"{n}{{keep-rounding=false}}" if _keeps_rounding(n) else n for n in names]
    streams = default_streams(chosen) if max_streams is None else max_streams
    if ASSIGN_STREAMS not in names and streams > 1:
        names.insert(names.index(STREAM_LOWERING_PASS) + 1, ASSIGN_STREAMS)
    # Multi-stream keeps the stream count the cost model finds fastest; without it, streams
    # asked for are used as asked.
    fastest = "true" if "multi-stream" in chosen else "false"
    names = [f"{n}{{max-streams={streams} fastest={fastest}}}" if n == ASSIGN_STREAMS else n for n in names]
    passes = [make_pass(name) for name in names]
    if precision_mode != DEFAULT_PRECISION:
        if "ge-mixed-precision" not in PASSES:
            raise ValueError(
                f"precision_mode '{precision_mode}' needs the mixed-precision pass, which ge lacks"
            )
        position = next(i for i, p in enumerate(passes) if p.name == LOWERING_PASS)
        from .graph.mixed_precision import MixedPrecisionPass  # its options, typed

        precision = MixedPrecisionPass(mode=precision_mode)
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
    return passes_before(LOWERING_PASS, pipeline(level, disabled, precision_mode))


def passes_before(name: str, passes: list[ModulePass]) -> list[ModulePass]:
    """The passes of `passes` that run before the first one named `name`."""
    return passes[: next(i for i, p in enumerate(passes) if p.name == name)]
