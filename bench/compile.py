"""Compile time: ONNX import + `GraphCompiler.compile` at O2 beside ONNX Runtime's session creation
(ORT_ENABLE_ALL) on the same model, in one run; medians of several repetitions.

`python bench/compile.py [--model resnet50] [--repeat 5]` (a light model shipped with onnx).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import onnx

import ge

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _median(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--level", type=int, default=2)
    args = parser.parse_args()
    import onnxruntime

    model = onnx.load(str(LIGHT / f"light_{args.model}.onnx"))
    data = model.SerializeToString()

    def ge_compile() -> None:
        graph = ge.GraphParser().parse_onnx(data)
        ge.GraphCompiler().compile(graph, optimization_level=args.level)

    def ort_session() -> None:
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])

    ours = _median(ge_compile, args.repeat)
    theirs = _median(ort_session, args.repeat)
    print(
        f"{args.model}: ge import+compile O{args.level} {ours:.3f} s, "
        f"onnxruntime session {theirs:.3f} s, ratio {ours / theirs:.2f}"
    )


if __name__ == "__main__":
    main()
