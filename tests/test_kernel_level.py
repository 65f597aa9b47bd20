"""The kernel level on real models: kernel counts, format conversions, the cost model's bounds."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from models import cnn
from oracle import run_onnxruntime

import ge
from ge.compiler import CompiledModel
from ge.cost import roofline_check
from ge.cost.stream import launches, soc_figures
from ge.dialects.stream import KernelFuncOp, WeightOp

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = sorted(p.stem.removeprefix("light_") for p in LIGHT.glob("light_*.onnx"))

ORT_NODES = {
    "bvlc_alexnet": 20,
    "densenet121": 557,
    "inception_v1": 88,
    "inception_v2": 129,
    "resnet50": 59,
    "shufflenet": 174,
    "squeezenet": 40,
    "vgg19": 27,
    "zfnet512": 20,
}
"""ONNX Runtime's node count per light model at ORT_ENABLE_ALL on this machine (bench/kernels.py
prints it beside ours): the ceiling for our kernel count."""


@cache
def compiled(name: str, level: int) -> CompiledModel:
    graph = ge.GraphParser().parse_onnx(str(LIGHT / f"light_{name}.onnx"))
    return ge.GraphCompiler().compile(graph, optimization_level=level)


@pytest.mark.parametrize("name", MODELS)
def test_kernels_at_most_onnxruntime_nodes(name: str) -> None:
    model = compiled(name, 3)
    histogram = model.kernel_histogram()
    assert sum(histogram.values()) == model.num_operators
    assert model.num_operators <= ORT_NODES[name]
    assert model.num_operators < compiled(name, 0).num_operators


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("level", [0, 3])
def test_no_kernel_beats_its_roofline(name: str, level: int) -> None:
    model = compiled(name, level)
    soc = soc_figures(model.module)
    for _, info in launches(model.module):
        assert roofline_check(info, soc) >= 1.0, info.name


def test_resnet50_converts_formats_once_and_models_3x_faster_than_o0() -> None:
    o3, o0 = compiled("resnet50", 3), compiled("resnet50", 0)
    assert o3.kernel_histogram().get("trans_data", 0) <= 2
    assert o0.kernel_histogram().get("trans_data", 0) == 0
    assert o0.modelled_latency_us() / o3.modelled_latency_us() >= 3.0


def test_weights_are_stored_in_device_formats() -> None:
    model = compiled("resnet50", 3)
    kernels = {op.sym_name.data: op for op in model.module.walk() if isinstance(op, KernelFuncOp)}
    convs = 0
    for launch, info in launches(model.module):
        kernel = kernels[launch.kernel.root_reference.data]
        assert kernel.block_dim is not None and kernel.tiling is not None
        body = [op.name for op in kernel.body.block.ops]
        weight = launch.inputs[1].owner if len(launch.inputs) > 1 else None
        if "ascend.graph.fused_conv2d" in body or "ascend.graph.conv2d" in body:
            convs += 1
            assert isinstance(weight, WeightOp) and weight.stored_format == "FRACTAL_Z", info.name
            assert kernel.in_formats[0] == "NC1HWC0"
        elif "ascend.graph.gemm" in body or "ascend.graph.fused_gemm" in body:
            assert isinstance(weight, WeightOp) and weight.stored_format == "FRACTAL_NZ", info.name
    assert convs == 53


@pytest.mark.parametrize("differ", [None, 0, -1])
def test_weights_with_equal_bytes_share_one_slot_of_the_blob(differ: int | None, rng) -> None:
    """Two initializers of one type and equal bytes are stored once; one byte apart (the first
    or the last), twice."""
    from onnx import TensorProto, helper, numpy_helper

    w = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)
    other = w.copy()
    if differ is not None:
        other.reshape(-1).view(np.uint8)[differ] ^= 1
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w2"], ["b"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["a", "b"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 6, 6])],
        [numpy_helper.from_array(w, "w1"), numpy_helper.from_array(other, "w2")],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model = ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(proto), optimization_level=0)
    weights = [op for op in model.module.walk() if isinstance(op, WeightOp)]
    assert len(weights) == (1 if differ is None else 2)
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    executor = ge.GraphExecutor()
    executor.load_graph(model)
    np.testing.assert_allclose(executor.run(x)[0], run_onnxruntime(proto, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_estimate_speedup_of_the_standard_optimizations() -> None:
    graph = ge.GraphParser().parse_onnx(cnn().onnx_model)
    optimizer = ge.GraphOptimizer()
    assert optimizer.estimate_speedup(graph, graph) == pytest.approx(1.0)
    assert optimizer.estimate_speedup(graph, optimizer.apply_standard_optimizations(graph)) > 1.0


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("target", ["Ascend910A", "Ascend910B2", "Ascend310P3"])
def test_device_formats_match_onnxruntime_on_every_soc(level: int, target: str, rng) -> None:
    twin = cnn()
    x = rng.standard_normal(twin.input_shape).astype(np.float32)
    expected = run_onnxruntime(twin.onnx_model, {twin.input_name: x})
    graph = ge.GraphParser().parse_onnx(twin.onnx_model)
    model = ge.GraphCompiler().compile(graph, target=target, optimization_level=level)
    executor = ge.GraphExecutor()
    executor.load_graph(model)
    np.testing.assert_allclose(executor.run(x)[0], expected[0], rtol=1e-5, atol=1e-6)


def test_chained_transposes_and_spatial_means_match_onnxruntime(rng) -> None:
    """Head splitting (reshape, transpose, reshape, transpose) and a global pooling written as
    ReduceMean over H and W, as torch.export writes them, at O3."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(rng.standard_normal((32, 3, 3, 3)).astype(np.float32), "w")
    fc = numpy_helper.from_array(rng.standard_normal((32, 10)).astype(np.float32), "fc")
    shapes = {
        "s1": np.array([1, 4, 8, 16], np.int64),
        "s2": np.array([1, 32, 16], np.int64),
        "s3": np.array([1, 512], np.int64),
    }
    inits = [w, fc, *(numpy_helper.from_array(v, k) for k, v in shapes.items())]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("ReduceMean", ["r"], ["m"], axes=[2, 3], keepdims=1),
        helper.make_node("Flatten", ["m"], ["f"]),
        helper.make_node("MatMul", ["f", "fc"], ["y"]),
        helper.make_node("Reshape", ["r", "s1"], ["h1"]),
        helper.make_node("Transpose", ["h1"], ["t1"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["t1", "s2"], ["h2"]),
        helper.make_node("Transpose", ["h2"], ["t2"], perm=[0, 2, 1]),
        helper.make_node("Reshape", ["t2", "s3"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "z")],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    expected = run_onnxruntime(model, {"x": x})
    compiled = ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(model), optimization_level=3)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    for got, want in zip(executor.run(x), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert compiled.kernel_histogram()["trans_data"] == 2  # the input, and the head split's NCHW read
