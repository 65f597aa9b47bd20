"""The one way pattern passes drive their patterns: xDSL's greedy walker, with every pattern
wrapped so the compile session counts its actions, limits them for bisection and counts what
each pattern rewrote (by pass and pattern name).

```
rewrite(module, [FoldConstantOperands(weights)], session)
```
An action is one pattern tried on one op. With `session.action_limit = n`, the first n actions
of the compilation run and every later one is skipped: the module is then exactly what the full
compilation had after n actions, which is what bisection searches over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from ge.dialects.common import describe

from .session import CompileSession, PatternAction


def pattern_name(pattern: RewritePattern) -> str:
    """How counts, reports and bisection name a pattern: by its class."""
    return type(pattern).__name__


@dataclass
class CountedPattern(RewritePattern):
    """`pattern`, run only while the session allows another action; its rewrites are counted."""

    pattern: RewritePattern
    session: CompileSession

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        session = self.session
        if not session.allow_action():
            return
        done = rewriter.has_done_action
        rewriter.has_done_action = False
        self.pattern.match_and_rewrite(op, rewriter)
        if rewriter.has_done_action:
            name = pattern_name(self.pattern)
            session.last_action = PatternAction(session.actions, session.pass_name, name, describe(op))
            counts = session.rewrites.setdefault(session.pass_name, {})
            counts[name] = counts.get(name, 0) + 1
        rewriter.has_done_action |= done


def rewrite(
    module: ModuleOp,
    patterns: Sequence[RewritePattern],
    session: CompileSession,
    *,
    apply_recursively: bool = True,
) -> bool:
    """Applies `patterns` greedily (the first that matches an op wins) until none applies, or in
    one sweep without `apply_recursively`; True if the module changed."""
    counted: list[RewritePattern] = [CountedPattern(p, session) for p in patterns]
    pattern: RewritePattern = counted[0] if len(counted) == 1 else GreedyRewritePatternApplier(counted)
    changed = PatternRewriteWalker(pattern, apply_recursively=apply_recursively).rewrite_module(module)
    session.rewrote = bool(session.rewrote) or changed
    return changed


class RewritesOnly:
    """Mixin of a pass whose every change to the IR is a pattern rewrite through `rewrite`: when
    its rewrites changed nothing, the IR is as it was, and the pass manager does not verify it
    again."""
