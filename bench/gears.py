"""Gears of a residual CNN from PyTorch, and recompiles of a symbolic graph without gears.

`python bench/gears.py` compiles the CNN (symbolic batch, `torch.export.Dim`) with
`dynamic_batch_size=[1, 4, 8]` and prints per gear its arena, kernels and modelled latency, then
the one shared weight blob and the model's arena (the largest gear's); then runs the symbolic
graph without gears at three batches and prints how many times it compiled again.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn
from torch.export import Dim

import ge

KIB = 1 << 10


class ResidualCnn(nn.Module):
    """conv-bn-relu-pool, a ResNet basic block with its residual add, global pool, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2)
        )
        self.block = nn.Sequential(
            nn.Conv2d(8, 8, 3, padding=1, bias=False),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1, bias=False),
            nn.BatchNorm2d(8),
        )
        self.head = nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.stem(x)
        h = torch.relu(h + self.block(h))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(h, 1), 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gears", default="1,4,8", help="batch gears, as atc's --dynamic_batch_size")
    parser.add_argument("--size", type=int, default=8, help="image height and width")
    args = parser.parse_args()
    batches = [int(b) for b in args.gears.split(",")]
    torch.manual_seed(0)
    model = ResidualCnn().eval()
    example = torch.zeros(2, 3, args.size, args.size)
    graph = ge.GraphParser().parse_pytorch(model, (example,), dynamic_shapes={"x": {0: Dim("batch")}})

    start = time.perf_counter()
    compiled = ge.GraphCompiler().compile(graph, dynamic_batch_size=batches)
    print(f"compiled {len(compiled.gears)} gears in {time.perf_counter() - start:.2f} s\n")
    columns = ["gear", "input", "arena KiB", "kernels", "by kind", "modelled latency us"]
    print(" | ".join(columns))
    print(" | ".join("---" for _ in columns))
    for index, (gear, figures) in enumerate(zip(compiled.gear_models, compiled.gear_memory(), strict=True)):
        kinds = ", ".join(f"{kind} {count}" for kind, count in gear.kernel_histogram().items())
        shape = "x".join(map(str, compiled.gears[index].input_shapes["x"]))
        row = [str(index), shape, f"{figures.arena_bytes / KIB:.1f}", str(gear.num_operators), kinds]
        print(" | ".join([*row, f"{gear.modelled_latency_us():.2f}"]))
    memory = compiled.memory
    print(f"\nshared weight blob: {len(compiled.weight_blob) / KIB:.1f} KiB (one for every gear)")
    print(f"model arena: {memory.arena_bytes / KIB:.1f} KiB (the largest gear's)")
    padding = compiled.batch_padding
    if padding is not None and padding.output_axes is not None:
        print(f"batch padding: a smaller batch runs padded (output sample axes {list(padding.output_axes)})")
    elif padding is not None:
        print(f"batch padding: none, {padding.blocker} may mix samples")

    executor = ge.GraphExecutor()
    executor.load_graph(graph)  # no gears: compiled at each new batch
    sizes = [batches[0], batches[-1] + 1, batches[0] + 1]
    for batch in [*sizes, *sizes]:
        start = time.perf_counter()
        executor.run(np.zeros((batch, 3, args.size, args.size), np.float32))
        took = time.perf_counter() - start
        print(f"symbolic graph, batch {batch}: {took:.2f} s, recompiles {executor.recompiles}")


if __name__ == "__main__":
    main()
