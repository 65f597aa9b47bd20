"""`GraphOptimizer` and `MemoryOptimizer` as ../shared/API.md shows them: new graphs out, the
argument untouched; memory figures of graphs re-batched, checked against graphs built at that size."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ge
from ge.interpreter import run_function
from ge.memory import MemoryUsage
from ge.resize import with_batch_size

sys.path.insert(0, str(Path(__file__).parent))
from models import cnn  # noqa: E402
from oracle import run_onnxruntime  # noqa: E402


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


# --------------------------------------------------------------------------------------------
# MemoryOptimizer
# --------------------------------------------------------------------------------------------


def _sequence_graph(batch: int, seq: int) -> tuple[ge.Graph, dict[str, np.ndarray]]:
    """tokens[batch, seq, 32] -> linear 64 -> relu -> reshape [batch * seq, 64] -> linear 16 ->
    reshape [batch, seq, 16]: reshapes that merge and split the batch and sequence dimensions."""
    rng = np.random.default_rng(3)
    w = {
        "up": (rng.standard_normal((64, 32)) * 0.2).astype(np.float32),
        "up_b": (rng.standard_normal(64) * 0.1).astype(np.float32),
        "down": (rng.standard_normal((16, 64)) * 0.2).astype(np.float32),
        "down_b": (rng.standard_normal(16) * 0.1).astype(np.float32),
    }
    g = ge.Graph()
    x = g.add_input("tokens", shape=[batch, seq, 32])
    h = g.add_relu(g.add_linear(x, 64, weight=w["up"], bias_value=w["up_b"], name="up"))
    h = g.add_linear(
        g.add_reshape(h, [batch * seq, 64]), 16, weight=w["down"], bias_value=w["down_b"], name="down"
    )
    g.add_output(g.add_reshape(h, [batch, seq, 16]), "y")
    return g, w


def _as_it_stands(graph: ge.Graph):
    """The memory of `graph` compiled with no rewrites and memory reuse, as calculate_memory_usage
    measures it by default."""
    return ge.GraphCompiler().compile(graph, techniques=["memory-reuse"]).memory


def _figures(memory: object) -> tuple[int, int, int, int]:
    return (memory.arena_bytes, memory.lower_bound_bytes, memory.no_reuse_bytes, memory.weight_bytes)


def test_memory_usage_as_the_api_shows() -> None:
    graph = cnn().graph
    text = str(graph)
    opt = ge.GraphOptimizer()
    before = ge.MemoryOptimizer.calculate_memory_usage(graph, batch_size=32)
    after = ge.MemoryOptimizer.calculate_memory_usage(opt.apply_memory_optimization(graph), batch_size=32)
    assert str(graph) == text, "the argument is left unchanged"
    for usage in (before, after):
        assert isinstance(usage, int) and isinstance(usage, MemoryUsage)
        assert usage.batch_size == 32
        assert int(usage) == usage.arena_bytes + usage.weight_bytes + usage.input_bytes + usage.output_bytes
        assert usage.breakdown == {
            "arena": usage.arena_bytes,
            "weights": usage.weight_bytes,
            "inputs": usage.input_bytes,
            "outputs": usage.output_bytes,
        }
        assert usage.lower_bound_bytes <= usage.arena_bytes <= usage.no_reuse_bytes
        assert usage.weight_bytes > 0 and usage.strategy in ("greedy_by_size", "size_binned")
    # Folding the batch norm into the conv and fusing the relu leave fewer tensors to place;
    # this model's peak is elsewhere, so the arena stays.
    assert after.no_reuse_bytes < before.no_reuse_bytes and after <= before
    # The same figures as the graph built at batch 32 from the start.
    assert _figures(before) == _figures(_as_it_stands(cnn(batch=32).graph))


@pytest.mark.parametrize("batch", [1, 8])
def test_memory_usage_follows_the_batch_size(batch: int) -> None:
    usage = ge.MemoryOptimizer.calculate_memory_usage(cnn(batch=2).graph, batch_size=batch)
    assert _figures(usage) == _figures(_as_it_stands(cnn(batch=batch).graph))
    assert usage.batch_size == batch


def test_memory_optimization_cuts_memory_at_every_level() -> None:
    graph = _cnn()  # a batch norm to fold, a relu to fuse
    optimized = ge.GraphOptimizer().apply_memory_optimization(graph)
    assert optimized is not graph and len(optimized.nodes) < len(graph.nodes)
    unoptimized = ge.MemoryOptimizer.calculate_memory_usage(graph, batch_size=16, optimization_level=0)
    cut = ge.MemoryOptimizer.calculate_memory_usage(optimized, batch_size=16, optimization_level=0)
    assert cut.no_reuse_bytes < unoptimized.no_reuse_bytes and cut < unoptimized


@pytest.mark.parametrize("optimize", [False, True])
def test_rebatched_graphs_compute_what_onnxruntime_does(optimize: bool, rng) -> None:
    graph = cnn(batch=2).graph
    if optimize:  # fused convolutions: their epilogues are re-inferred too
        graph = ge.GraphOptimizer().apply_memory_optimization(graph)
    resized = with_batch_size(graph, 5)
    assert resized.module.body.block.first_op.function_type.inputs.data[0].get_shape() == (5, 3, 16, 16)
    reference = cnn(batch=5)
    x = rng.standard_normal(reference.input_shape).astype(np.float32)
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(resized, optimization_level=3))
    expected = run_onnxruntime(reference.onnx_model, {reference.input_name: x})[0]
    np.testing.assert_allclose(executor.run(x)[0], expected, rtol=1e-4, atol=1e-5)


def test_seq_len_resizes_the_second_dimension(rng) -> None:
    graph, w = _sequence_graph(2, 8)
    resized = with_batch_size(graph, 4, seq_len=10)
    types = resized.module.body.block.first_op.function_type
    assert types.inputs.data[0].get_shape() == (4, 10, 32)
    assert types.outputs.data[0].get_shape() == (4, 10, 16)
    x = rng.standard_normal((4, 10, 32)).astype(np.float32)
    h = np.maximum(x @ w["up"].T + w["up_b"], 0).reshape(40, 64)
    expected = (h @ w["down"].T + w["down_b"]).reshape(4, 10, 16)
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(resized, optimization_level=3))
    np.testing.assert_allclose(executor.run(x)[0], expected, rtol=1e-4, atol=1e-4)
    usage = ge.MemoryOptimizer.calculate_memory_usage(graph, batch_size=4, seq_len=10)
    assert _figures(usage) == _figures(_as_it_stands(_sequence_graph(4, 10)[0]))


def test_fixed_shapes_refuse_another_batch_size(rng) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[2, 16])
    g.add_output(g.add_add(x, g.add_constant(rng.standard_normal((2, 16)).astype(np.float32), name="bias")))
    with pytest.raises(ge.GeError, match="cannot take the new input sizes.*do not allow this batch size"):
        ge.MemoryOptimizer.calculate_memory_usage(g, batch_size=3)
    usage = ge.MemoryOptimizer.calculate_memory_usage(g, batch_size=2)
    # The input and output are the caller's buffers, outside the arena; the blob is 512-aligned.
    assert usage.breakdown == {"arena": 0, "weights": 512, "inputs": 2 * 16 * 4, "outputs": 2 * 16 * 4}
    assert usage == 512 + 2 * 128
    with pytest.raises(ge.GeError, match="batch_size must be an integer of at least 1, got 0"):
        ge.MemoryOptimizer.calculate_memory_usage(g, batch_size=0)


def _tutorial_cnn(batch: int) -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("input", shape=[batch, 3, 224, 224])
    y = g.add_conv2d(x, out_channels=64, kernel_size=7, stride=2, padding=3)
    y = g.add_maxpool(g.add_relu(g.add_batchnorm(y)), kernel_size=3, stride=2, padding=1)
    y = g.add_linear(g.add_flatten(g.add_global_avgpool(y)), out_features=1000)
    g.add_output(g.add_softmax(y))
    return g


def test_memory_snippet_of_the_api_as_written() -> None:
    """shared/API.md's memory snippet on its tutorial CNN: 224 * 224 positions on a 224 x 224
    model change nothing, the figures are those of the model built at batch 32, and the memory
    optimizations lower the peak: before, the conv's and the batch norm's outputs live together
    (the relu works in place); after, the fused conv's output and the max pool's."""
    graph = _tutorial_cnn(1)
    opt = ge.GraphOptimizer()
    before = ge.MemoryOptimizer.calculate_memory_usage(graph, batch_size=32, seq_len=224 * 224)
    after = ge.MemoryOptimizer.calculate_memory_usage(
        opt.apply_memory_optimization(graph), batch_size=32, seq_len=224 * 224
    )
    assert _figures(before) == _figures(_as_it_stands(_tutorial_cnn(32)))
    assert before.input_bytes == after.input_bytes == 32 * 3 * 224 * 224 * 4
    assert before.output_bytes == after.output_bytes == 32 * 1000 * 4
    conv, pool = 32 * 64 * 112 * 112 * 4, 32 * 64 * 56 * 56 * 4
    assert (before.arena_bytes, after.arena_bytes) == (2 * conv, conv + pool)
