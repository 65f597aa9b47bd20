"""Multi-stream scheduling of the light model-zoo CNNs at O3, on the modelled timeline.

`python bench/streams.py [--target SOC] [--max-streams N]` prints, per model: the modelled latency
with one stream and with N (default 4) and their ratio, the streams and events used, each
stream's utilization, each unit's core utilization (cube/vector/aicpu), and the arena with one
stream and with N; then resnet50's modelled latency at O0 (one kernel per op, not sunk) against
O3. Targets: inception_v1 at least 1.2x faster on streams; resnet50 O3 at least 3x faster than O0.
The figures are modelled (`ge.emulator.timeline`), so one run is exact: nothing to repeat.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import onnx

import ge
from ge.emulator.timeline import Timeline, simulate
from ge.passes.stream.assign_streams import STREAMS_ATTR

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MIB = 1 << 20


def timeline(compiled: ge.CompiledModel) -> Timeline:
    """The modelled run of a compiled model, sunk or not as it was compiled."""
    return simulate(compiled.module, sunk=compiled.sunk)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="npu")
    parser.add_argument("--max-streams", type=int, default=4)
    args = parser.parse_args()
    columns = ["model", "1 stream us", f"{args.max_streams} streams us", "speedup", "streams", "events"]
    columns += [
        "stream util",
        "cube/vector/aicpu util",
        "arena 1 MiB",
        f"arena {args.max_streams} MiB",
        "ratio",
    ]
    print(" | ".join(columns))
    print(" | ".join("---" for _ in columns))
    for path in sorted(LIGHT.glob("light_*.onnx")):
        graph = ge.GraphParser().parse_onnx(str(path))
        compiler = ge.GraphCompiler()
        single = compiler.compile(graph, target=args.target, optimization_level=3, max_streams=1)
        multi = compiler.compile(
            graph, target=args.target, optimization_level=3, max_streams=args.max_streams
        )
        one, many = timeline(single), timeline(multi)
        recorded = {k: v.value.data for k, v in multi.model.attributes[STREAMS_ATTR].data.items()}
        arenas = [m.model.arena_size.value.data for m in (single, multi)]
        units = many.unit_utilization
        row = [
            path.stem.removeprefix("light_"),
            f"{one.latency_us:.1f}",
            f"{many.latency_us:.1f}",
            f"{one.latency_us / many.latency_us:.3f}",
            str(recorded["streams"]),
            str(recorded["events"]),
            "/".join(f"{u:.2f}" for u in many.stream_utilization.values()),
            "/".join(f"{units[u]:.2f}" for u in ("cube", "vector", "aicpu")),
            f"{arenas[0] / MIB:.2f}",
            f"{arenas[1] / MIB:.2f}",
            f"{arenas[1] / arenas[0]:.3f}",
        ]
        print(" | ".join(row))
    graph = ge.GraphParser().parse_onnx(str(LIGHT / "light_resnet50.onnx"))
    o0 = timeline(ge.GraphCompiler().compile(graph, target=args.target, optimization_level=0))
    o3 = timeline(ge.GraphCompiler().compile(graph, target=args.target, optimization_level=3))
    print()
    print(
        f"resnet50: O0 {o0.latency_us:.1f} us (not sunk, one stream), O3 {o3.latency_us:.1f} us: "
        f"{o0.latency_us / o3.latency_us:.2f}x"
    )


if __name__ == "__main__":
    main()
