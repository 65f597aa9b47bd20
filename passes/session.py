"""The compile session: the state of one compilation that passes share, made current by the pass
manager (a `ContextVar`), so it never rides on xDSL's `Context`.

It holds the weight store (constants behind `dense_resource<key>`), per pass and pattern how
often a pattern applied, the signatures the verifier has already checked, and the pattern
action counter that bisection limits (as LLVM's debug counters do):

```
session = PassManager(pipeline(2)).run(module, CompileSession(weights))
session.rewrites  # {"ge-constant-fold": {"FoldConstantOperands": 12}, ...}
session.patterns  # {"ge-fuse-conv-bn": {"FoldBatchNormIntoConv": {"matched": 2, "applied": 2}}, ...}
```

A pass run with no session current gets a fresh one (the weights it folds are then lost with it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from xdsl.ir import Operation

from ge.dialects.verify import VerifiedSignatures
from ge.weights import WeightStore


@dataclass
class PatternAction:
    """One attempt of a pattern on an op, as bisection names it."""

    index: int
    pass_name: str
    pattern: str
    op: str
    """The op's name and location, as when the action ran."""


@dataclass
class CompileSession:
    """What the passes of one compilation share; see the module doc."""

    weights: WeightStore = field(default_factory=WeightStore)
    patterns: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    """Per fusion pass, per pattern: how many matches it found (`matched`) and how many it rewrote
    (`applied`; a legality check may refuse a match)."""
    rewrites: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per pass, per pattern: how many times the pattern rewrote the IR (see `passes/driver.py`)."""
    verified: VerifiedSignatures = field(default_factory=VerifiedSignatures)
    """Op signatures the verifier has checked (see `ge.dialects.verify`)."""
    action_limit: int | None = None
    """Run only the first `action_limit` pattern actions of the compilation (None: all)."""
    actions: int = 0
    """Pattern actions run so far: one per pattern tried on an op."""
    last_action: PatternAction | None = None
    """The last action that ran (bisection names it)."""
    pass_name: str = ""
    """The pass running now."""
    rewrote: bool | None = None
    """Whether the running pass's pattern rewrites changed the IR (None: it drove no patterns)."""
    _seen: set[tuple[str, str, Operation]] = field(default_factory=set, repr=False)

    @contextmanager
    def activate(self) -> Iterator[CompileSession]:
        """Makes this session current for the passes run inside the `with`."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)

    def record(self, pattern: str, applied: bool, op: Operation | None = None) -> None:
        """Counts one match of `pattern` by the running pass, and whether it was rewritten.

        Given `op`, a match that was not applied is counted once however often the greedy driver
        visits it again (the session holds the op, so its identity cannot be reused)."""
        if op is not None and not applied:
            key = (self.pass_name, pattern, op)
            if key in self._seen:
                return
            self._seen.add(key)
        entry = self.patterns.setdefault(self.pass_name, {}).setdefault(pattern, {"matched": 0, "applied": 0})
        entry["matched"] += 1
        entry["applied"] += int(applied)

    def allow_action(self) -> bool:
        """Whether the next pattern action may run (the action limit is not reached); counts it."""
        if self.action_limit is not None and self.actions >= self.action_limit:
            return False
        self.actions += 1
        return True


_CURRENT: ContextVar[CompileSession | None] = ContextVar("ge_compile_session", default=None)


def current() -> CompileSession:
    """The session the pass manager made current; a pass run outside one gets a fresh session,
    which it should fetch once and pass along."""
    session = _CURRENT.get()
    return session if session is not None else CompileSession()
