"""Kernels per light model at O3 beside ONNX Runtime's node count at ORT_ENABLE_ALL, and modelled latency.

`python bench/kernels.py [--target Ascend910B2]` prints, per model: ONNX Runtime's node count after
its full graph optimization (the CPU execution provider, on this machine), our kernels launched at O3
by kind, and the modelled latency at O0 and O3 on the target with their ratio. The counts are exact;
nothing is timed.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import onnx
import onnxruntime as ort

import ge

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def ort_nodes(path: Path) -> int:
    """Nodes of the model as ONNX Runtime runs it after ORT_ENABLE_ALL."""
    with tempfile.TemporaryDirectory() as folder:
        optimized = Path(folder) / "optimized.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.optimized_model_filepath = str(optimized)
        options.log_severity_level = 3
        ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        return len(onnx.load(str(optimized)).graph.node)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="Ascend910B2")
    args = parser.parse_args()
    print(f"target {args.target}")
    print(
        "model | ORT nodes | ge O3 kernels | <= ORT | cube | vector | trans_data | aicpu"
        " | O0 us | O3 us | O0/O3"
    )
    for path in sorted(LIGHT.glob("light_*.onnx")):
        name = path.stem.removeprefix("light_")
        graph = ge.GraphParser().parse_onnx(str(path))
        o3 = ge.GraphCompiler().compile(graph, target=args.target, optimization_level=3)
        o0 = ge.GraphCompiler().compile(graph, target=args.target, optimization_level=0)
        kinds = o3.kernel_histogram()
        reference = ort_nodes(path)
        slow, fast = o0.modelled_latency_us(), o3.modelled_latency_us()
        within = "yes" if o3.num_operators <= reference else "NO"
        print(
            f"{name} | {reference} | {o3.num_operators} | {within} | "
            f"{kinds.get('cube', 0)} | {kinds.get('vector', 0)} | {kinds.get('trans_data', 0)} | "
            f"{kinds.get('aicpu', 0)} | {slow:.1f} | {fast:.1f} | {slow / fast:.2f}"
        )


if __name__ == "__main__":
    main()
