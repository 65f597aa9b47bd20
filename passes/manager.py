"""The pass manager: every pipeline (GraphCompiler, GraphOptimizer, ge-opt, the O-levels) runs here,
on xDSL's `PassPipeline`, with one callback between passes (and before the first and after the
last) that verifies, prints, times and lets instruments look at the IR, as mlir-opt's
`--verify-each`, `--mlir-print-ir-after-all` and `--mlir-timing` do; `dump_dir` writes the IR
after every pass into a folder, one numbered file per pass (`03_ge-fuse-conv-bn.mlir`), as GE's
`DUMP_GE_GRAPH` does.

```
manager = PassManager(pipeline(3), print_ir_after={"ge-fuse-conv-bn"}, timing=True)
session = manager.run(module, CompileSession(weights))
print(manager.timing_report())
```
An O-level given as a pass (`ge-O3`) expands into its passes, so each is visible. The manager makes
the compile session current while the passes run (see `passes/session.py`), and names the pass
that failed: a pass that raises, or whose output does not verify.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ge.context import make_context
from ge.dialects.verify import verify
from ge.errors import CompileError, GeError, VerificationError

from .driver import RewritesOnly
from .pipelines import pipeline
from .session import CompileSession, current

Instrument = Callable[[ModulePass | None, ModuleOp, ModulePass | None], None]
"""Called between passes like `PassPipeline`'s callback: (pass that ran, module, pass to run next);
None before the first and after the last pass."""


@dataclass(frozen=True)
class OptimizationLevelPass(ModulePass):
    """One optimization level as a pass (`ge-opt -p ge-O3`); the pass manager runs its passes
    one by one, so each is printed, timed and verified."""

    name = "ge-O"
    LEVEL: ClassVar[int] = 0

    def passes(self) -> list[ModulePass]:
        return pipeline(self.LEVEL)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PassManager(self.passes()).run(op, current(), ctx)


def level_pass(level: int) -> type[ModulePass]:
    """A pass class named `ge-O<level>` that runs that level's pipeline."""
    return type(f"O{level}Pass", (OptimizationLevelPass,), {"name": f"ge-O{level}", "LEVEL": level})


def expand(passes: Iterable[ModulePass]) -> list[ModulePass]:
    """`passes`, with each optimization level replaced by its passes."""
    expanded: list[ModulePass] = []
    for p in passes:
        expanded += expand(p.passes()) if isinstance(p, OptimizationLevelPass) else [p]
    return expanded


@dataclass
class PassManager:
    """Runs `passes` in order on a module; see the module doc."""

    passes: Sequence[ModulePass]
    verify_each: bool = True
    """Verify the input and the output of every pass (else only nothing: the caller verifies)."""
    print_ir_before: Collection[str] = ()
    """Names of passes to print the IR before."""
    print_ir_after: Collection[str] = ()
    """Names of passes to print the IR after."""
    print_ir_after_all: bool = False
    timing: bool = False
    """Time every pass (and the verifier) for `timing_report`."""
    instruments: Sequence[Instrument] = ()
    """Further callbacks, run after verification (e.g. the numeric checks of `check_each`)."""
    stream: TextIO | None = None
    """Where IR dumps go (default: standard error, as mlir-opt's)."""
    dump_dir: str | Path | None = None
    """A folder (made if missing) to write the IR into after every pass, as `NN_<pass>.mlir`
    numbered from 01 in the order the passes run."""
    timings: list[tuple[str, float]] = field(default_factory=list)
    """(pass name, seconds) per pass run, in order; ("verifier", seconds) last, if timed."""

    def __post_init__(self) -> None:
        self.passes = expand(self.passes)
        known = {p.name for p in self.passes}
        printed = {"print_ir_before": self.print_ir_before, "print_ir_after": self.print_ir_after}
        for option, names in printed.items():
            unknown = sorted(set(names) - known)
            if unknown:
                raise CompileError(
                    f"{option} names passes the pipeline does not run: {', '.join(unknown)} "
                    f"(it runs: {', '.join(dict.fromkeys(p.name for p in self.passes))})"
                )

    def run(
        self, module: ModuleOp, session: CompileSession | None = None, ctx: Context | None = None
    ) -> CompileSession:
        """Runs the passes on `module` with `session` current (a new one if None); returns it."""
        session = session if session is not None else CompileSession()
        ctx = ctx if ctx is not None else make_context()
        self.timings = []
        verifying = 0.0
        started = time.perf_counter()
        dumped = 0
        digits = max(2, len(str(len(self.passes))))  # file names sort in the order the passes ran
        if self.dump_dir is not None:
            try:
                Path(self.dump_dir).mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise CompileError(f"cannot make the IR dump folder '{self.dump_dir}': {error}") from None

        def callback(previous: ModulePass | None, op: ModuleOp, following: ModulePass | None) -> None:
            nonlocal started, verifying, dumped
            if previous is not None:
                self.timings.append((previous.name, time.perf_counter() - started))
            unchanged = isinstance(previous, RewritesOnly) and session.rewrote is False
            if self.verify_each and not unchanged:
                begin = time.perf_counter()
                what = "the input" if previous is None else f"the output of {previous.name}"
                verify_module(op, what, session)
                verifying += time.perf_counter() - begin
            if previous is not None and (self.print_ir_after_all or previous.name in self.print_ir_after):
                self._dump(op, f"IR Dump After {previous.name}")
            if previous is not None and self.dump_dir is not None:
                dumped += 1
                self._write(op, Path(self.dump_dir) / f"{dumped:0{digits}d}_{previous.name}.mlir")
            for instrument in self.instruments:
                instrument(previous, op, following)
            if following is not None:
                if following.name in self.print_ir_before:
                    self._dump(op, f"IR Dump Before {following.name}")
                session.pass_name = following.name
                session.rewrote = None
            started = time.perf_counter()

        with session.activate():
            try:
                PassPipeline(tuple(self.passes), callback).apply(ctx, module)
            except GeError:
                raise
            except (VerifyException, DiagnosticException, ValueError) as error:
                raise CompileError(f"{session.pass_name or 'the input'}: {error}") from None
            except Exception as error:  # a pass's own bug (a registered pass's too): name the pass
                where = session.pass_name or "the input"
                raise CompileError(f"{where}: {type(error).__name__}: {error}") from None
            finally:
                session.pass_name = ""
        if self.verify_each:
            self.timings.append(("verifier", verifying))
        return session

    def timing_report(self) -> str:
        """The timings as mlir-opt's `--mlir-timing` report: wall time per pass, with its share."""
        return timing_report(self.timings)

    def _dump(self, module: ModuleOp, title: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        print(f"// -----// {title} //----- //", file=stream)
        Printer(stream=stream).print_op(module)
        print("\n", file=stream)

    @staticmethod
    def _write(module: ModuleOp, path: Path) -> None:
        try:
            with path.open("w", encoding="utf-8") as file:
                Printer(stream=file).print_op(module)
                file.write("\n")
        except OSError as error:
            raise CompileError(f"cannot write the IR dump '{path}': {error}") from None


def timing_report(timings: Sequence[tuple[str, float]]) -> str:
    """(pass, seconds) pairs (`PassManager.timings`, `CompiledModel.pass_timings`) as mlir-opt's
    `--mlir-timing` report: wall time per pass, with its share."""
    total = sum(seconds for _, seconds in timings)
    rule = "===" + "-" * 73 + "==="
    lines = [
        rule,
        "Pass execution timing report".center(79).rstrip(),
        rule,
        f"  Total Execution Time: {total:.4f} seconds",
        "",
        "  ----Wall Time----  ----Name----",
    ]
    for name, seconds in timings:
        share = 100 * seconds / total if total else 0.0
        lines.append(f"  {seconds:8.4f} ({share:5.1f}%)  {name}")
    lines.append(f"  {total:8.4f} (100.0%)  Total")
    return "\n".join(lines)


def verify_module(module: ModuleOp, what: str, session: CompileSession) -> None:
    """Verifies `module` with the session's verified signatures; a failure is a
    `VerificationError` that says what was verified ("the output of ge-simplify is invalid")."""
    try:
        verify(module, session.verified)
    except VerifyException as error:
        raise VerificationError(f"{what} is invalid: {error}") from None
