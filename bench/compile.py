"""Compile time: ONNX import + `GraphCompiler.compile` beside ONNX Runtime's session creation
(ORT_ENABLE_ALL) on the same model, in one run; medians of several repetitions.

`python bench/compile.py [--model resnet50] [--level 3] [--repeat 5]`: one light model shipped
with onnx, with ms per ONNX node. `python bench/compile.py --curves`: how compile time grows with
graph size, on an elementwise chain and on a stack of transformer-style blocks (matmul, bias,
GELU written out, residual add, a normalization written out), at O1 and O3, each size beside
onnxruntime, with the growth ratios t(5n)/t(n) the compiler is held to (at most 6).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ge

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
SIZES = (200, 1000, 5000)


def _median(run: Callable[[], object], repeat: int) -> float:
    """The median time of `run`; the garbage of earlier runs is collected before each one, untimed
    (as `timeit` keeps the collector out of its timings), so a run does not pay for the last."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _ort_session(data: bytes) -> None:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def _ge_compile(data: bytes, level: int) -> None:
    ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(data), optimization_level=level)


def elementwise_chain(ops: int) -> onnx.ModelProto:
    """x -> relu -> add x -> tanh -> relu -> ... (`ops` nodes)."""
    kinds = ["Relu", "Add", "Tanh"]
    nodes, previous = [], "x"
    for i in range(ops):
        kind = kinds[i % 3]
        inputs = [previous, "x"] if kind == "Add" else [previous]
        output = "y" if i == ops - 1 else f"v{i}"
        nodes.append(helper.make_node(kind, inputs, [output]))
        previous = output
    return _model(nodes, [64, 64], [])


def transformer_stack(ops: int) -> onnx.ModelProto:
    """Blocks of 14 nodes: matmul + bias, GELU (erf form), a residual add, layer norm written
    out; as many blocks as make about `ops` nodes."""
    rng = np.random.default_rng(0)
    nodes, initializers, previous = [], [], "x"
    constants = {"sqrt2": np.sqrt(2.0), "one": 1.0, "half": 0.5, "eps": 1e-5}
    for name, value in constants.items():
        initializers.append(numpy_helper.from_array(np.array(value, np.float32), name))
    for block in range(max(1, ops // 14)):
        p = f"b{block}_"
        initializers += [
            numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32) * 0.1, p + "w"),
            numpy_helper.from_array(np.zeros(64, np.float32), p + "bias"),
        ]
        nodes += [
            helper.make_node("MatMul", [previous, p + "w"], [p + "mm"]),
            helper.make_node("Add", [p + "mm", p + "bias"], [p + "h"]),
            helper.make_node("Div", [p + "h", "sqrt2"], [p + "d"]),
            helper.make_node("Erf", [p + "d"], [p + "e"]),
            helper.make_node("Add", [p + "e", "one"], [p + "a"]),
            helper.make_node("Mul", [p + "h", p + "a"], [p + "m"]),
            helper.make_node("Mul", [p + "m", "half"], [p + "g"]),
            helper.make_node("Add", [p + "g", previous], [p + "r"]),
            helper.make_node("ReduceMean", [p + "r"], [p + "mu"], axes=[-1]),
            helper.make_node("Sub", [p + "r", p + "mu"], [p + "c"]),
            helper.make_node("Mul", [p + "c", p + "c"], [p + "sq"]),
            helper.make_node("ReduceMean", [p + "sq"], [p + "var"], axes=[-1]),
            helper.make_node("Add", [p + "var", "eps"], [p + "ve"]),
            helper.make_node("Sqrt", [p + "ve"], [p + "sd"]),
            helper.make_node("Div", [p + "c", p + "sd"], [p + "out"]),
        ]
        previous = p + "out"
    nodes.append(helper.make_node("Identity", [previous], ["y"]))
    return _model(nodes, [16, 64], initializers)


def _model(nodes: list, shape: list[int], initializers: list) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "bench",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def curves(repeat: int) -> None:
    print("graph | nodes | O1 s | O3 s | O3 ms/node | onnxruntime s | O3 growth")
    for build in (elementwise_chain, transformer_stack):
        previous = None
        for size in SIZES:
            model = build(size)
            data = model.SerializeToString()
            nodes = len(model.graph.node)
            o1 = _median(lambda d=data: _ge_compile(d, 1), repeat)
            o3 = _median(lambda d=data: _ge_compile(d, 3), repeat)
            ort = _median(lambda d=data: _ort_session(d), repeat)
            growth = f"{o3 / previous:.2f}" if previous else "-"
            per_node = 1000 * o3 / nodes
            print(f"{build.__name__} | {nodes} | {o1:.2f} | {o3:.2f} | {per_node:.2f} | {ort:.3f} | {growth}")
            previous = o3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--curves", action="store_true", help="the growth curves instead of one model")
    args = parser.parse_args()
    if args.curves:
        curves(args.repeat)
        return
    model = onnx.load(str(LIGHT / f"light_{args.model}.onnx"))
    data = model.SerializeToString()
    ours = _median(lambda: _ge_compile(data, args.level), args.repeat)
    theirs = _median(lambda: _ort_session(data), args.repeat)
    nodes = len(model.graph.node)
    print(
        f"{args.model}: {nodes} nodes, ge import+compile O{args.level} {ours:.3f} s "
        f"({1000 * ours / nodes:.2f} ms per node), onnxruntime session {theirs:.3f} s, "
        f"ratio {ours / theirs:.2f}"
    )


if __name__ == "__main__":
    main()
