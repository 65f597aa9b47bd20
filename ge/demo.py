"""`python -m ge.demo`: compile the bundled CNN through every level and run it on the emulator.

Prints what each level holds (graph ops, kernels, the stream model) and the result, checked
against the reference interpreter and, when it is installed, against ONNX Runtime.
"""

from __future__ import annotations

import sys
from collections import Counter
from importlib import resources

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ge.dialects.kernel import KernelOp
from ge.dialects.stream import BufferOp, LaunchOp, WeightOp, model_of
from ge.passes import get_pass
from ge.passes.manager import PassManager

from . import GraphCompiler, GraphExecutor, GraphParser
from .compile_plan import start_compilation
from .errors import GeError
from .interpreter import run_function
from .soc import load_profile

TARGET = "Ascend910B2"


def main() -> int:
    model_bytes = resources.files("ge").joinpath("models/tiny_cnn.onnx").read_bytes()
    graph = GraphParser().parse_onnx(model_bytes)
    ops = Counter(n.op_type for n in graph.nodes)
    print(f"ascend.graph   {len(graph.nodes)} ops: " + ", ".join(f"{k} x{v}" for k, v in ops.items()))

    module, session = start_compilation(graph.module, graph.weights, TARGET)
    PassManager([get_pass("ge-lower-graph-to-kernel")()]).run(module, session)
    _print_kernels(module)

    compiled = GraphCompiler().compile(graph, target=TARGET, optimization_level=0)
    _print_stream(compiled.module, compiled.weight_blob)
    optimized = GraphCompiler().compile(graph, target=TARGET, optimization_level=3)
    memory = optimized.memory
    kinds = ", ".join(f"{k} x{n}" for k, n in optimized.kernel_histogram().items())
    print(
        f"O3             {optimized.num_operators} launches after folding, fusion and kernel formation "
        f"({kinds}), a {memory.arena_bytes}-byte arena (lower bound {memory.lower_bound_bytes})"
    )
    # Like for like: O0 does not sink its task list and O3 does, so each is also modelled the
    # other way, and the gain of sinking is shown on its own.
    o0_sunk = GraphCompiler().compile(graph, target=TARGET, optimization_level=0, sink=True)
    o3_host = GraphCompiler().compile(graph, target=TARGET, optimization_level=3, sink=False)
    o0_host_us, o3_sunk_us = compiled.modelled_latency_us(), optimized.modelled_latency_us()
    o0_sunk_us, o3_host_us = o0_sunk.modelled_latency_us(), o3_host.modelled_latency_us()
    print(
        f"modelled       O0 {o0_host_us:.1f} us, O3 {o3_host_us:.1f} us launched from the host; "
        f"O0 {o0_sunk_us:.1f} us, O3 {o3_sunk_us:.1f} us sunk, on {TARGET}"
    )
    profile = load_profile(TARGET)
    per_launch = profile["host_launch_us"] - profile["sunk_task_us"]
    print(
        f"sinking        {per_launch:.1f} us less per launch: {o0_host_us - o0_sunk_us:.1f} us at O0 "
        f"({compiled.num_operators} launches), {o3_host_us - o3_sunk_us:.1f} us at O3 "
        f"({optimized.num_operators} launches)"
    )

    image = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    executor = GraphExecutor()
    executor.load_graph(compiled)
    (probs,) = executor.run({"image": image})
    executor.load_graph(optimized)
    (probs_o3,) = executor.run({"image": image})
    reference = run_function(graph.module, [image], graph.weights)[0]
    print(f"emulator       probs {np.array2string(probs[0], precision=4, max_line_width=200)}")
    print(
        f"               class {int(probs.argmax())}; max |emulator - reference| = "
        f"{np.abs(probs - reference).max():.2e} (O0), {np.abs(probs_o3 - reference).max():.2e} (O3)"
    )
    try:
        import onnxruntime
    except ImportError:
        return 0
    session = onnxruntime.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    expected = session.run(None, {"image": image})[0]
    print(f"               max |emulator - onnxruntime| = {np.abs(probs - expected).max():.2e}")
    return 0


def _print_kernels(module: ModuleOp) -> None:
    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    units = Counter(k.UNIT for k in kernels)
    print(f"ascend.kernel  {len(kernels)} kernels: " + ", ".join(f"{u} x{n}" for u, n in units.items()))


def _print_stream(module: ModuleOp, blob: bytes) -> None:
    model = model_of(module)
    ops = list(model.body.block.ops)
    launches = sum(isinstance(op, LaunchOp) for op in ops)
    buffers = sum(isinstance(op, BufferOp) for op in ops)
    weights = sum(isinstance(op, WeightOp) for op in ops)
    print(
        f"ascend.stream  {launches} launches on 1 stream, {buffers} buffers in a "
        f"{model.arena_size.value.data}-byte arena, {weights} weights in a {len(blob)}-byte blob"
    )


if __name__ == "__main__":
    try:
        sys.exit(main())
    except GeError as error:
        print(f"ge demo: error: {error}", file=sys.stderr)
        sys.exit(1)
