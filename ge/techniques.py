"""What each optimization technique gives on one graph, as GE's tutorial tables show it.

`technique_report(graph, target)` (also `GraphOptimizer().report`) compiles the graph at O0 and
O3, then once per technique of `ge.passes.pipelines.TECHNIQUES` with that technique switched off
alone from O3 (with the techniques that need it) and once switched on alone from O0 (with the
techniques it needs), and once at O3 with the `allow_mix_precision` precision mode. Each row
holds the modelled latency, the kernels launched, the streams used, the arena and weight bytes;
the mixed-precision row also the largest difference of its outputs from O3's on the emulator.

```python
report = ge.GraphOptimizer().report(graph, target="npu")
print(report)                      # a table
report.row("memory-reuse", "off")  # a TechniqueRow
report.to_json()
```
"""

from __future__ import annotations

import dataclasses
import io
import json
from dataclasses import dataclass

import numpy as np
from rich import box
from rich.console import Console
from rich.table import Table

from ge.dialects.stream import LaunchOp
from ge.passes.pipelines import LEVELS, TECHNIQUES, with_prerequisites, without_dependents

from .checking import seeded_inputs
from .compiler import CompiledModel, GraphCompiler, require_graph
from .dtypes import element_type, numpy_dtype
from .errors import GeError
from .executor import GraphExecutor
from .graph import Graph

MIXED_PRECISION = "allow_mix_precision"
"""The precision mode of the mixed-precision row, compared with O3 in the default mode."""
SEED = 0
"""The seed of the inputs both models of the mixed-precision row run on."""


@dataclass(frozen=True)
class TechniqueRow:
    """One compilation of the report and what it gives."""

    label: str
    """How the table names it: `O0`, `O3`, `O3 - memory reuse`, `O0 + sinking`, ..."""
    technique: str | None
    """The technique the row is about (None for the O0 and O3 baselines)."""
    change: str
    """`baseline`, `off` (from O3), `on` (from O0), or `precision` (the precision mode from O3)."""
    techniques: tuple[str, ...]
    """The techniques the model was compiled with, in `TECHNIQUES` order."""
    precision_mode: str
    latency_us: float
    """Modelled latency of one run (`CompiledModel.modelled_latency_us`)."""
    kernels: int
    """Kernels launched per run (`CompiledModel.num_operators`)."""
    streams: int
    arena_bytes: int
    weight_bytes: int
    sunk: bool
    max_error: float | None = None
    """Largest absolute difference of its outputs from O3's on the same inputs (precision row)."""


@dataclass(frozen=True)
class TechniqueReport:
    """The rows of a technique report: O0, O3, each technique off then on, mixed precision."""

    target: str
    rows: tuple[TechniqueRow, ...]

    def row(self, technique: str | None, change: str) -> TechniqueRow:
        """The row of `technique` and `change` (`off` or `on`); `row(None, "precision")` is the
        mixed-precision row, and `baseline` gives the O0 and O3 rows."""
        for row in self.rows:
            if row.technique == technique and row.change == change:
                return row
        known = ", ".join(f"({r.technique}, {r.change})" for r in self.rows)
        raise GeError(f"the technique report has no row ({technique}, {change}); it has {known}")

    def baseline(self, level: str) -> TechniqueRow:
        """The `O0` or `O3` row."""
        for row in self.rows:
            if row.change == "baseline" and row.label == level:
                return row
        raise GeError(f"the technique report has no baseline '{level}' (it has O0 and O3)")

    def as_dict(self) -> dict[str, object]:
        """The target and every row's fields, as plain data."""
        return {"target": self.target, "rows": [dataclasses.asdict(row) for row in self.rows]}

    def to_json(self) -> str:
        """`as_dict()` as indented JSON."""
        return json.dumps(self.as_dict(), indent=2)

    def __str__(self) -> str:
        table = Table(
            title=f"optimization techniques on {self.target}", box=box.SIMPLE_HEAD, title_justify="left"
        )
        for heading in ("compiled as", "latency (us)", "speedup", "kernels", "streams", "arena (B)"):
            table.add_column(heading, justify="left" if heading == "compiled as" else "right")
        table.add_column("weights (B)", justify="right")
        table.add_column("max error", justify="right")
        for row in self.rows:
            speedup = self.speedup(row)
            table.add_row(
                row.label,
                f"{row.latency_us:.2f}",
                "" if speedup is None else f"{speedup:.2f}x",
                str(row.kernels),
                str(row.streams),
                f"{row.arena_bytes:,}",
                f"{row.weight_bytes:,}",
                "" if row.max_error is None else f"{row.max_error:.2e}",
            )
        buffer = io.StringIO()
        Console(file=buffer, width=160, color_system=None).print(table)
        lines = [line.rstrip() for line in buffer.getvalue().strip("\n").splitlines()]
        notes = (
            "speedup: latency without the technique over latency with it (off rows: the row's over "
            "O3's; on rows: O0's over the row's; mixed precision: O3's over the row's)"
        )
        return "\n".join([*lines, notes])

    def speedup(self, row: TechniqueRow) -> float | None:
        """How many times faster the model runs with the row's technique than without it: for an
        `off` row O3 over the row, for an `on` row the row over O0, for the precision row the row
        over O3 (None for the baselines)."""
        if row.change == "baseline":
            return None
        if row.change == "on":
            return self.baseline("O0").latency_us / row.latency_us
        if row.change == "off":
            return row.latency_us / self.baseline("O3").latency_us
        return self.baseline("O3").latency_us / row.latency_us


def technique_report(graph: Graph, target: str = "npu") -> TechniqueReport:
    """The report of what each technique gives `graph` on `target` (see the module docstring)."""
    graph = require_graph(graph, "technique report", GeError)
    compiler = GraphCompiler()
    rows: list[TechniqueRow] = []

    def add(sign: str, technique: str, change: str, chosen: frozenset[str]) -> None:
        # A technique goes off with those that need it and on with those it needs: say which.
        level = LEVELS[3] if change == "off" else LEVELS[0]
        others = [TECHNIQUES[n].title for n in TECHNIQUES if n != technique and (n in level) != (n in chosen)]
        label = f"{'O3' if change == 'off' else 'O0'} {sign} {TECHNIQUES[technique].title}"
        label += f" (with {', '.join(others)})" if others else ""
        compiled = compiler.compile(graph, target=target, techniques=sorted(chosen))
        rows.append(_row(label, technique, change, compiled))

    rows.append(_row("O0", None, "baseline", compiler.compile(graph, target=target, optimization_level=0)))
    optimized = compiler.compile(graph, target=target, optimization_level=3)
    rows.append(_row("O3", None, "baseline", optimized))
    for name in TECHNIQUES:
        add("-", name, "off", without_dependents(LEVELS[3], [name]))
        add("+", name, "on", with_prerequisites([name]))
    mixed = compiler.compile(graph, target=target, optimization_level=3, precision_mode=MIXED_PRECISION)
    error = max_output_error(optimized, mixed)
    rows.append(dataclasses.replace(_row("O3 mixed precision", None, "precision", mixed), max_error=error))
    return TechniqueReport(target=optimized.target, rows=tuple(rows))


def max_output_error(expected: CompiledModel, actual: CompiledModel, seed: int = SEED) -> float:
    """The largest absolute difference between the outputs of two compilations of one graph, both
    run on the emulator on the same seeded inputs (floats uniform in [-1, 1], others zeros)."""
    dtypes = [(spec.name, spec.shape, numpy_dtype(element_type(spec.dtype))) for spec in expected.inputs]
    inputs = seeded_inputs(dtypes, seed)
    outputs = []
    for model in (expected, actual):
        executor = GraphExecutor()
        executor.load_graph(model)
        outputs.append(executor.run(inputs))
    return max((_difference(e, a) for e, a in zip(*outputs, strict=True)), default=0.0)


def _difference(expected: np.ndarray, actual: np.ndarray) -> float:
    """The largest absolute difference; inf where one side is not finite and the other differs
    (a 16-bit overflow), rather than the nan that subtracting infinities gives."""
    e, a = expected.astype(np.float64), actual.astype(np.float64)
    same = (e == a) | (np.isnan(e) & np.isnan(a))
    with np.errstate(invalid="ignore"):
        difference = np.where(same, 0.0, np.abs(e - a))
    return float(np.max(np.nan_to_num(difference, nan=np.inf, posinf=np.inf), initial=0.0))


def _row(label: str, technique: str | None, change: str, compiled: CompiledModel) -> TechniqueRow:
    memory = compiled.memory
    streams = {op.stream.value.data for op in compiled.model.body.block.ops if isinstance(op, LaunchOp)}
    return TechniqueRow(
        label=label,
        technique=technique,
        change=change,
        techniques=tuple(name for name in TECHNIQUES if name in compiled.techniques),
        precision_mode=str(compiled.options.get("precision_mode", "must_keep_origin_dtype")),
        latency_us=compiled.modelled_latency_us(),
        kernels=compiled.num_operators,
        streams=len(streams),
        arena_bytes=memory.arena_bytes,
        weight_bytes=memory.weight_bytes,
        sunk=compiled.sunk,
    )
