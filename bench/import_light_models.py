"""Times the ONNX import of the light model-zoo CNNs shipped with onnx (target: under 2 s each).

`python bench/import_light_models.py [--repeat N]` prints, per model, the number of nodes and the
median import time over N runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import onnx

import ge

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'model':<16} {'nodes':>6} {'median s':>9} {'min s':>7}")
    for path in sorted(LIGHT.glob("light_*.onnx")):
        model = onnx.load(str(path))
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            graph = ge.GraphParser().parse_onnx(model)
            times.append(time.perf_counter() - start)
        name = path.stem.removeprefix("light_")
        print(f"{name:<16} {len(graph.nodes):>6} {statistics.median(times):>9.3f} {min(times):>7.3f}")


if __name__ == "__main__":
    main()
