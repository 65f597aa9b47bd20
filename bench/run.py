"""Run time on the emulator beside ONNX Runtime: per-launch overhead, a light CNN, small PyTorch models.

`python bench/run.py [--runs 20]` prints, per model: the median wall time of a run on the emulator
(`ge.GraphExecutor`, compiled at O3; the chain at O0) and in ONNX Runtime (ORT_ENABLE_ALL, 2
intra-op threads), their ratio, launches per run, the target (`TARGETS`: light resnet50 2x ONNX
Runtime; the small models max(4x ONNX Runtime, ONNX Runtime + 30 us x launches)), and the peak
memory a run allocates beyond the arena and weights (tracemalloc, one run). Every timed run gets
fresh random inputs and its outputs are checked against ONNX Runtime's; the emulator runs all its
inputs, then ONNX Runtime all of them, so neither's idle threads slow the other. BLAS runs on 2
threads, as ONNX Runtime does. The first row is the per-launch overhead: a chain of 500 one-op
vector kernels on a 1 x 64 tensor, median run / 500 (target <= 30 us). The bench reports; it exits
0 whether or not a row meets its target ("within" says which do).
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "2"  # before numpy loads BLAS: as many threads as ONNX Runtime's

import argparse  # noqa: E402
import io  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import ge  # noqa: E402
from ge.emulator import blas  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
THREADS = 2
CHAIN = 500
STEPS = 32
"""Time steps of the LSTM."""
Inputs = Callable[[np.random.Generator], dict[str, np.ndarray]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmups", type=int, default=3)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # the exporter's notes on tracing would bury the table
    ort.set_default_logger_severity(3)  # errors only: not its notes on unused initializers
    print(f"{args.runs} timed runs after {args.warmups} warm-ups; medians; BLAS and ORT threads {THREADS}")
    chosen = os.environ.get("OPENBLAS_CORETYPE")
    source = f"OPENBLAS_CORETYPE={chosen}" if chosen else "detected"
    alike = "alike" if blas.columns_alike() else "not alike"
    kernels = blas.kernel_set() or "unknown"
    print(f"BLAS: numpy's OpenBLAS, {kernels} kernels ({source}), equal columns rounded {alike}")
    print("model | ge ms | ORT ms | ratio | launches | target ms | within | extra peak MB | note")
    for name, model, level, inputs, note in cases():
        row = measure(model, level, inputs, args.runs, args.warmups)
        ge_ms, ort_ms, launches, peak = row
        target = TARGETS.get(name, _small_model_target)(ort_ms, launches)
        extra = note(ge_ms, launches) if note else ""
        print(
            f"{name} | {ge_ms:.2f} | {ort_ms:.3f} | {ge_ms / ort_ms:.1f} | {launches} | {target:.2f} | "
            f"{'yes' if ge_ms <= target else 'NO'} | {peak / 2**20:.2f} | {extra}"
        )


def measure(model: onnx.ModelProto, level: int, inputs: Inputs, runs: int, warmups: int):
    """Median ms on ge and on ONNX Runtime, launches, and a run's peak allocation beyond the arena."""
    compiled = ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(model), optimization_level=level)
    if level == 0 and model.graph.name == "chain":
        assert compiled.num_operators == CHAIN, compiled.num_operators
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    all_feeds = [inputs(rng) for _ in range(warmups + runs)]
    # Each side runs all its inputs in one block: interleaved, the threads one side leaves
    # spinning (OpenBLAS's, ONNX Runtime's pool) would take cores from the other.
    ge_times, got = _timed(executor.run, all_feeds)
    ort_times, expected = _timed(lambda feeds: session.run(None, feeds), all_feeds)
    for ge_outputs, ort_outputs in zip(got, expected, strict=True):
        for g, e in zip(ge_outputs, ort_outputs, strict=True):
            np.testing.assert_allclose(g, e, rtol=2e-3, atol=2e-4)
    ge_times, ort_times = ge_times[warmups:], ort_times[warmups:]
    feeds = inputs(rng)
    tracemalloc.start()
    executor.run(feeds)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median = statistics.median
    return median(ge_times) * 1e3, median(ort_times) * 1e3, compiled.num_operators, peak


def _timed(run: Callable[[dict[str, np.ndarray]], list], all_feeds: list[dict[str, np.ndarray]]):
    """Each run's wall time in seconds and outputs, in order."""
    times, outputs = [], []
    for feeds in all_feeds:
        began = time.perf_counter()
        outputs.append(run(feeds))
        times.append(time.perf_counter() - began)
    return times, outputs


def cases() -> list[tuple[str, onnx.ModelProto, int, Inputs, Callable[[float, int], str] | None]]:
    found: list = [("chain of 500 @ 1x64, O0", chain(), 0, _floats({"x": (1, 64)}), _per_launch)]
    resnet = LIGHT / "light_resnet50.onnx"
    if resnet.exists():
        model = onnx.load(str(resnet))
        name = model.graph.input[0].name
        found.append(("light resnet50", model, 3, _floats({name: (1, 3, 224, 224)}), None))
    else:
        print(f"light resnet50 is not available offline ({resnet} missing): row left out")
    found += torch_cases()
    return found


def chain() -> onnx.ModelProto:
    """500 elementwise ops in a row (Relu, Neg, Abs), each its own launch at O0."""
    kinds, nodes, previous = ("Relu", "Neg", "Abs"), [], "x"
    for index in range(CHAIN):
        nodes.append(helper.make_node(kinds[index % 3], [previous], [f"t{index}"]))
        previous = f"t{index}"
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "chain",
        [value("x", TensorProto.FLOAT, [1, 64])],
        [value(previous, TensorProto.FLOAT, [1, 64])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def torch_cases() -> list:
    """Small models exported from PyTorch (torch.onnx, TorchScript exporter)."""
    import torch

    torch.manual_seed(0)
    found = []
    for name, module, shapes, note in _torch_models():
        module.eval()
        examples = tuple(torch.randn(*shape) for shape in shapes.values())
        buffer = io.BytesIO()
        torch.onnx.export(module, examples, buffer, input_names=list(shapes), dynamo=False, opset_version=17)
        found.append((name, onnx.load_from_string(buffer.getvalue()), 3, _floats(shapes), note))
    return found


def _torch_models() -> list:
    """(name, module, input shapes, note) of each small PyTorch model; built here so torch loads
    only when they run."""
    import torch
    from torch import nn

    class Attention(nn.Module):
        def __init__(self, width: int, heads: int, causal: bool, length: int):
            super().__init__()
            self.heads, self.qkv, self.out = heads, nn.Linear(width, 3 * width), nn.Linear(width, width)
            mask = torch.triu(torch.full((length, length), float("-inf")), 1) if causal else None
            self.register_buffer("mask", mask)

        def forward(self, x):
            batch, length, width = x.shape
            q, k, v = self.qkv(x).reshape(batch, length, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
            scores = q @ k.transpose(-1, -2) / (width // self.heads) ** 0.5
            if self.mask is not None:
                scores = scores + self.mask
            y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, length, width)
            return self.out(y)

    class Block(nn.Module):
        def __init__(self, width: int, causal: bool, length: int):
            super().__init__()
            self.attention = Attention(width, 4, causal, length)
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
            self.pre = causal  # GPT-2 normalizes before, BERT after

        def forward(self, x):
            if self.pre:
                x = x + self.attention(self.norm1(x))
                return x + self.mlp(self.norm2(x))
            x = self.norm1(x + self.attention(x))
            return self.norm2(x + self.mlp(x))

    def transformer(causal: bool) -> nn.Module:
        return nn.Sequential(*(Block(64, causal, 32) for _ in range(2)))

    class Residual(nn.Module):
        def __init__(self, channels: int, stride: int):
            super().__init__()
            inner = channels // stride
            self.body = nn.Sequential(
                nn.Conv2d(inner, channels, 3, stride, 1, bias=False),
                nn.BatchNorm2d(channels),
                nn.ReLU(),
                nn.Conv2d(channels, channels, 3, 1, 1, bias=False),
                nn.BatchNorm2d(channels),
            )
            self.skip = nn.Conv2d(inner, channels, 1, stride, bias=False) if stride > 1 else nn.Identity()

        def forward(self, x):
            return (self.body(x) + self.skip(x)).relu()

    def resnet() -> nn.Module:
        stages = [Residual(c, s) for c, s in ((16, 1), (16, 1), (32, 2), (32, 1), (64, 2), (64, 1))]
        stages += [Residual(128, 2), Residual(128, 1)]
        head = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)]
        return nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.ReLU(), *stages, *head)

    class Inverted(nn.Module):
        def __init__(self, inner: int, outer: int, stride: int):
            super().__init__()
            wide = inner * 4
            self.body = nn.Sequential(
                nn.Conv2d(inner, wide, 1, bias=False),
                nn.BatchNorm2d(wide),
                nn.ReLU6(),
                nn.Conv2d(wide, wide, 3, stride, 1, groups=wide, bias=False),
                nn.BatchNorm2d(wide),
                nn.ReLU6(),
                nn.Conv2d(wide, outer, 1, bias=False),
                nn.BatchNorm2d(outer),
            )
            self.residual = stride == 1 and inner == outer

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    def mobilenet() -> nn.Module:
        shape = ((16, 16, 1), (16, 24, 2), (24, 24, 1), (24, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1))
        head = [nn.Conv2d(64, 128, 1), nn.ReLU6(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)]
        return nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU6(), *(Inverted(*s) for s in shape), *head)

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm, self.head = nn.LSTM(32, 64, batch_first=True), nn.Linear(64, 10)

        def forward(self, x):
            return self.head(self.lstm(x)[0])

    return [
        ("BERT-like encoder (2 layers, seq 32)", transformer(False), {"x": (1, 32, 64)}, None),
        ("GPT-2-like decoder (2 layers, seq 32)", transformer(True), {"x": (1, 32, 64)}, None),
        ("ResNet-18-like @ 64x64", resnet(), {"x": (1, 3, 64, 64)}, None),
        ("MobileNetV2-like @ 64x64", mobilenet(), {"x": (1, 3, 64, 64)}, None),
        ("LSTM (seq 32, hidden 64)", Recurrent(), {"x": (1, STEPS, 32)}, _per_step),
    ]


def _small_model_target(ort_ms: float, launches: int) -> float:
    return max(4 * ort_ms, ort_ms + 0.030 * launches)


TARGETS: dict[str, Callable[[float, int], float]] = {
    "chain of 500 @ 1x64, O0": lambda ort_ms, launches: 0.030 * launches,  # 30 us per launch
    "light resnet50": lambda ort_ms, launches: 2 * ort_ms,
}
"""Each row's target in ms from ONNX Runtime's ms and the launches; the small models' otherwise."""


def _per_step(ms: float, launches: int) -> str:
    return f"{ms * 1e3 / STEPS:.1f} us per time step (whole model)"


def _floats(shapes: dict[str, tuple[int, ...]]) -> Inputs:
    return lambda rng: {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}


def _per_launch(ms: float, launches: int) -> str:
    per = ms * 1e3 / CHAIN
    return f"{per:.1f} us per launch (target <= 30: {'yes' if per <= 30 else 'NO'})"


if __name__ == "__main__":
    main()
