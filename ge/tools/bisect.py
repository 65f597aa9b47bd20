"""`ge-bisect`: finds the pass that changes what a model computes and, in a pattern pass, the one
rewrite that does, as LLVM's `-opt-bisect-limit` and debug counters do.

```
ge bisect model.onnx --optimization_level 3 --input x=x.npy      # or ge-bisect model.onnx ...
```
The pipeline runs once with the numeric check between passes (`ge.checking`); the first pass
whose outputs leave the tolerance is the culprit. When that pass ran pattern actions (each a
pattern tried on an op, counted by the compile session), a binary search over
`CompileSession.action_limit`, between the counts when the pass started and ended, finds the
first action after which its output is wrong: each step compiles up to that pass, with only the
first `limit` actions run, and checks its output alone. The action is named by the last rewrite
of the run at the limit found (`CompileSession.last_action`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.passes import ModulePass

from ge.arguments import shown
from ge.checking import NumericCheck
from ge.compile_plan import read_fusion_switch, start_compilation
from ge.compiler import require_graph
from ge.errors import CheckError, CheckFailure, CompileError, GeError
from ge.graph import Graph
from ge.options import PRECISION_MODES, check_optimization_level, check_options
from ge.passes.manager import PassManager, expand
from ge.passes.pipelines import pipeline
from ge.passes.session import CompileSession, PatternAction
from ge.soc import load_profile


@dataclass(frozen=True)
class BisectResult:
    """What bisection found: the failing pass (None when no pass changes the result) and, in a
    pattern pass, the first action after which its output is wrong."""

    failure: CheckFailure | None
    action: PatternAction | None
    passes: int
    """Passes in the pipeline."""
    compilations: int
    """Pipelines run: the checked one, then one per bisection step."""
    seconds: float

    @property
    def found(self) -> bool:
        return self.failure is not None

    def report(self) -> str:
        """The result as a few lines for a person."""
        failure = self.failure
        if failure is None:
            return f"no pass changes the result ({self.passes} passes checked)"
        first, last = failure.actions
        if self.action is not None:
            action = self.action
            culprit = (
                f"first bad rewrite: action #{action.index} (the pass ran #{first + 1} to #{last}), "
                f"pattern {action.pattern} on {action.op}"
            )
        elif first == last:
            culprit = "the pass ran no pattern actions, so the pass is the finest culprit"
        else:
            culprit = f"no single action of #{first + 1} to #{last} reproduces the failure"
        return "\n".join(
            [
                f"{failure.pass_name} (pass {failure.pass_index + 1} of {self.passes}) broke the "
                f"result: {failure.problem}",
                f"  {failure.changes}",
                f"  {culprit}",
                f"  {self.compilations} compilations, {self.seconds:.1f} s",
            ]
        )

    def __str__(self) -> str:
        return self.report()


def bisect(
    graph: Graph,
    optimization_level: int = 3,
    precision_mode: str = PRECISION_MODES[0],
    inputs: Mapping[str, np.ndarray] | None = None,
    *,
    target: str = "npu",
    passes: Sequence[ModulePass] | None = None,
    fusion_switch_file: str | Path | Mapping[str, object] | None = None,
) -> BisectResult:
    """Finds the first pass of the pipeline (that of `optimization_level`, `precision_mode` and
    `fusion_switch_file`, as `GraphCompiler.compile` builds it, or `passes`) whose output leaves
    the tolerance on seeded inputs (`inputs` fixes some by name), and within it the first bad
    pattern action; see the module doc."""
    start = time.perf_counter()
    graph = require_graph(graph, "bisect", CompileError)
    disabled = read_fusion_switch(fusion_switch_file)
    if inputs is not None and not isinstance(inputs, Mapping):
        raise CompileError(f"bisect takes inputs as a dict of arrays by name, got {shown(inputs)}")
    checked = check_options({"precision_mode": precision_mode, "check_each": dict(inputs or {})})
    given = checked.get("check_each")
    assert isinstance(given, dict)  # check_options gives a dict of arrays back for one
    if passes is None:
        try:
            level = check_optimization_level(optimization_level)
            passes = pipeline(level, disabled, precision_mode=precision_mode)
        except ValueError as error:
            raise CompileError(str(error)) from None
    passes = expand(passes)
    load_profile(target)  # a bad target is refused before the first compilation

    def result(failure: CheckFailure | None, action: PatternAction | None, runs: int) -> BisectResult:
        return BisectResult(failure, action, len(passes), runs, time.perf_counter() - start)

    check = NumericCheck(given, precision_mode)
    session, error = _compile(graph, target, passes, check)
    if error is None:
        return result(None, None, 1)
    if not isinstance(error, CheckError):
        raise error
    failure = error.failure
    good, bad = failure.actions
    if good == bad:
        return result(failure, None, 1)
    # After `good` actions the module is the failing pass's input, which the check passed; after
    # `bad` it is its wrong output. Each step keeps that so, and `failing` is the run at `bad`.
    failing = session
    prefix = passes[: failure.pass_index + 1]
    runs = 1
    while bad - good > 1:
        limit = (good + bad) // 2
        probe = NumericCheck(given, precision_mode, at=failure.pass_index, reference=check.reference)
        session, error = _compile(graph, target, prefix, probe, limit)
        runs += 1
        if error is None:
            good = limit
        else:
            bad, failing = limit, session
    action = failing.last_action
    if action is None or action.index <= good:
        action = None
    return result(failure, action, runs)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _compile(
    graph: Graph,
    target: str,
    passes: Sequence[ModulePass],
    check: NumericCheck,
    limit: int | None = None,
) -> tuple[CompileSession, GeError | None]:
    """Runs `passes` on a copy of `graph` for `target` as `GraphCompiler.compile` does, with
    `check` between passes and at most `limit` pattern actions; the session, and the error that
    stopped the run (None if it completed)."""
    module, session = start_compilation(graph.module, graph.weights, target)
    session.action_limit = limit
    try:
        PassManager(passes, instruments=[check]).run(module, session)
    except GeError as error:
        return session, error
    return session, None
