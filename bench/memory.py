"""Memory plans of the light model-zoo CNNs shipped with onnx, compiled at O3, per strategy.

`python bench/memory.py` prints, per model: the lower bound (the most bytes live at once), the
arena of each strategy of `ge-plan-memory` and its ratio to the lower bound, the total with no
reuse and its ratio to the chosen arena, the strategy that wins and the launches done in place.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import onnx

import ge
from ge.context import make_context
from ge.dialects.stream import model_of
from ge.passes.stream.plan_memory import MEMORY_ATTR, STRATEGIES, PlanMemoryPass

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MIB = 1 << 20


def plans(compiled: ge.CompiledModel) -> dict[str, dict[str, object]]:
    """The `ascend.memory` figures of the model planned again with each strategy, and with `best`."""
    figures = {}
    for strategy in ("best", *STRATEGIES):
        module = compiled.module.clone()
        PlanMemoryPass(strategy=strategy).apply(make_context(), module)
        recorded = model_of(module).attributes[MEMORY_ATTR].data
        figures[strategy] = {k: getattr(v, "value", v).data for k, v in recorded.items()}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", type=int, default=3)
    args = parser.parse_args()
    columns = ["model", "lower MiB"]
    for strategy in STRATEGIES:
        columns += [f"{strategy} MiB", "/lower"]
    columns += ["no-reuse MiB", "/arena", "winner", "in place"]
    print(" | ".join(columns))
    print(" | ".join("---" for _ in columns))
    for path in sorted(LIGHT.glob("light_*.onnx")):
        graph = ge.GraphParser().parse_onnx(str(path))
        figures = plans(ge.GraphCompiler().compile(graph, optimization_level=args.level))
        best = figures["best"]
        lower = best["lower_bound_bytes"]
        row = [path.stem.removeprefix("light_"), f"{lower / MIB:.2f}"]
        for strategy in STRATEGIES:
            arena = figures[strategy]["arena_bytes"]
            row += [f"{arena / MIB:.2f}", f"{arena / lower:.3f}"]
        row += [
            f"{best['no_reuse_bytes'] / MIB:.2f}",
            f"{best['no_reuse_bytes'] / best['arena_bytes']:.2f}",
            str(best["strategy"]),
            str(best["inplace"]),
        ]
        print(" | ".join(row))


if __name__ == "__main__":
    main()
