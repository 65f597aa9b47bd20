"""The Python API as ../shared/API.md shows it: builder, compiler, executor."""

from __future__ import annotations

import numpy as np
import pytest

import ge
from ge.interpreter import run_function


def _api_md_graph() -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("input", shape=[1, 3, 64, 64])
    y = g.add_conv2d(x, out_channels=16, kernel_size=7, stride=2, padding=3)
    y = g.add_batchnorm(y)
    y = g.add_relu(y)
    y = g.add_maxpool(y, kernel_size=3, stride=2, padding=1)
    y = g.add_global_avgpool(y)
    y = g.add_linear(g.add_flatten(y), out_features=100)
    g.add_output(g.add_softmax(y))
    return g


def test_builder_as_api_md_shows_it(rng: np.random.Generator) -> None:
    g = _api_md_graph()
    assert [n.op_type for n in g.nodes] == [
        "conv2d",
        "batch_norm",
        "relu",
        "max_pool",
        "global_avg_pool",
        "flatten",
        "gemm",
        "softmax",
    ]
    assert g.inputs == ["input"]
    assert g.outputs == ["softmax"]
    text = str(g)
    assert "ascend.graph.conv2d" in text and "dense_resource<conv.weight>" in text
    compiled = ge.GraphCompiler().compile(g, target="npu", optimization_level=0)
    assert compiled.target == "Ascend910B2"
    assert compiled.num_operators == 8
    assert compiled.compilation_time > 0
    assert compiled.binary_size > len(compiled.weight_blob) > 16 * 3 * 7 * 7 * 4
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    x = rng.standard_normal((1, 3, 64, 64)).astype(np.float32)
    (probs,) = executor.run(x)
    assert probs.shape == (1, 100)
    np.testing.assert_allclose(probs.sum(), 1.0, rtol=1e-5)
    np.testing.assert_allclose(probs, run_function(g.module, [x], g.weights)[0], rtol=1e-5, atol=1e-7)


def test_weights_are_deterministic() -> None:
    a, b = _api_md_graph(), _api_md_graph()
    assert str(a) == str(b)
    assert list(a.weights) == list(b.weights)
    for key in a.weights:
        np.testing.assert_array_equal(a.weights.get(key), b.weights.get(key))


def test_outputs_default_to_unconsumed_values() -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[2, 4])
    r = g.add_relu(x, name="r")
    g.add_softmax(r, name="s")
    g.add_flatten(r, axis=0, name="f")
    assert g.outputs == ["s", "f"]
    executor = ge.GraphExecutor()
    executor.load_graph(g)
    data = np.arange(8, dtype=np.float32).reshape(2, 4) - 4
    s, f = executor.run({"x": data})
    assert s.shape == (2, 4) and f.shape == (1, 8)
    np.testing.assert_array_equal(f, np.maximum(data, 0).reshape(1, 8))


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_every_level_compiles_and_runs(level: int, rng: np.random.Generator) -> None:
    g = _api_md_graph()
    compiled = ge.GraphCompiler().compile(g, target="Ascend910A", optimization_level=level)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    x = rng.standard_normal((1, 3, 64, 64)).astype(np.float32)
    np.testing.assert_allclose(
        executor.run(x)[0], run_function(g.module, [x], g.weights)[0], rtol=1e-5, atol=1e-7
    )


def test_float16_layers(rng: np.random.Generator) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[1, 3, 8, 8])
    y = g.add_conv2d(x, out_channels=4, kernel_size=3, padding=1, dtype="float16")
    y = g.add_relu(y)
    g.add_output(g.add_linear(g.add_flatten(g.add_global_avgpool(y)), 5))
    assert [n.op_type for n in g.nodes][:2] == ["cast", "conv2d"]
    executor = ge.GraphExecutor()
    executor.load_graph(g)
    data = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    (out,) = executor.run(data)
    assert out.dtype == np.float16
    # The same graph computed in float32 agrees to fp16 precision.
    weights = {k: g.weights.get(k).astype(np.float32) for k in g.weights}
    conv_w, lin_w = weights["conv.weight"], weights["linear.weight"]
    conv_b = np.asarray([op.op for op in g.nodes][1].operands[2].owner.value.get_values(), np.float32)
    lin_b = np.asarray([op.op for op in g.nodes][-1].operands[2].owner.value.get_values(), np.float32)
    h = _conv_reference(data, conv_w, conv_b)
    expected = np.maximum(h, 0).mean(axis=(2, 3)) @ lin_w.T + lin_b
    np.testing.assert_allclose(out.astype(np.float32), expected, rtol=2e-2, atol=2e-2)


def _conv_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Direct 3x3, stride 1, pad 1 convolution, written independently of ge.semantics."""
    n, c, h, width = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, width), np.float32)
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", padded[:, :, i : i + h, j : j + width], w[:, :, i, j])
    return out + b[None, :, None, None]


def test_compile_rejects_unknown_options() -> None:
    with pytest.raises(ge.CompileError, match="unknown compile options: fancy"):
        ge.GraphCompiler().compile(_api_md_graph(), fancy=True)


def test_api_md_build_snippet_as_written() -> None:
    g = ge.Graph()
    x = g.add_input("input", shape=[1, 3, 224, 224])
    y = g.add_conv2d(x, out_channels=64, kernel_size=7, stride=2, padding=3)
    y = g.add_batchnorm(y)
    y = g.add_relu(y)
    y = g.add_maxpool(y, kernel_size=3, stride=2, padding=1)
    y = g.add_global_avgpool(y)
    y = g.add_linear(g.add_flatten(y), out_features=1000)
    g.add_output(g.add_softmax(y))
    executor = ge.GraphExecutor()
    executor.load_graph(g)
    data = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    (probs,) = executor.run(data)
    assert probs.shape == (1, 1000)
    np.testing.assert_allclose(probs, run_function(g.module, [data], g.weights)[0], rtol=1e-5, atol=1e-8)


def test_linear_on_a_4d_input_applies_to_the_last_dimension(rng: np.random.Generator) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[2, 3, 4, 5])
    weight = rng.standard_normal((6, 5)).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    g.add_output(g.add_linear(x, 6, weight=weight, bias_value=bias))
    executor = ge.GraphExecutor()
    executor.load_graph(g)
    data = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    (out,) = executor.run(data)
    np.testing.assert_allclose(out, data @ weight.T + bias, rtol=1e-5, atol=1e-6)
