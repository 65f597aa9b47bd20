"""`GraphOptimizer` as ../shared/API.md shows it: new graphs out, the argument untouched."""

from __future__ import annotations

import numpy as np
import pytest

import ge
from ge.interpreter import run_function


def _cnn() -> ge.Graph:
    g = ge.Graph(seed=5)
    x = g.add_input("input", shape=[1, 3, 32, 32])
    y = g.add_conv2d(x, out_channels=16, kernel_size=3, stride=2, padding=1)
    y = g.add_relu(g.add_batchnorm(y))
    y = g.add_maxpool(y, kernel_size=3, stride=2, padding=1)
    y = g.add_linear(g.add_flatten(g.add_global_avgpool(y)), out_features=10)
    g.add_output(g.add_softmax(y))
    return g


def _run(g: ge.Graph, x: np.ndarray) -> np.ndarray:
    return run_function(g.module, [x], g.weights)[0].astype(np.float32)


@pytest.mark.parametrize(
    ("method", "tolerance"),
    [
        ("apply_standard_optimizations", 1e-5),
        ("apply_operator_fusion", 1e-5),
        ("apply_advanced_optimizations", 1e-2),
        ("apply_mixed_precision_optimization", 1e-2),
    ],
)
def test_methods_return_new_graphs_with_the_same_results(method: str, tolerance: float, rng) -> None:
    graph = _cnn()
    text = str(graph)
    optimized = getattr(ge.GraphOptimizer(), method)(graph)
    assert str(graph) == text, "the argument is left unchanged"
    assert optimized is not graph
    if "precision" not in method and "advanced" not in method:
        assert len(optimized.nodes) < len(graph.nodes)
    x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    expected = _run(graph, x)
    np.testing.assert_allclose(
        _run(optimized, x), expected, rtol=tolerance, atol=tolerance * np.abs(expected).max()
    )


def test_standard_optimizations_fold_batch_norm_and_fuse_relu() -> None:
    g2 = ge.GraphOptimizer().apply_standard_optimizations(_cnn())
    kinds = [n.op_type for n in g2.nodes]
    assert "batch_norm" not in kinds and "relu" not in kinds
    assert kinds[0] == "fused_conv2d"


def test_mixed_precision_keeps_the_named_layers() -> None:
    opt = ge.GraphOptimizer()
    g5 = opt.apply_mixed_precision_optimization(
        _cnn(), target_precision="float16", preserve_precision_layers=["softmax", "conv"]
    )
    dtypes = {n.name: n.op.results[0].type.element_type for n in g5.nodes}
    assert str(dtypes["conv"]) == "f32" and str(dtypes["softmax"]) == "f32"
    assert any(str(t) == "f16" for t in dtypes.values())
    with pytest.raises(ge.CompileError, match="target_precision must be one of float16, bfloat16"):
        opt.apply_mixed_precision_optimization(_cnn(), target_precision="int8")
