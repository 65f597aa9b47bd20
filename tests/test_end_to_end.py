"""End to end: ONNX model and `ge.Graph` -> every lowering -> emulator, against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from models import cnn, mlp
from oracle import run_onnxruntime

import ge
from ge.dialects import graph as ops
from ge.interpreter import run_function

TWINS = {"mlp": mlp, "cnn": cnn}


@pytest.mark.parametrize("name", sorted(TWINS))
@pytest.mark.parametrize("source", ["onnx", "builder"])
def test_matches_onnxruntime(name: str, source: str, rng: np.random.Generator) -> None:
    twin = TWINS[name]()
    x = rng.standard_normal(twin.input_shape).astype(np.float32)
    expected = run_onnxruntime(twin.onnx_model, {twin.input_name: x})
    graph = ge.GraphParser().parse_onnx(twin.onnx_model) if source == "onnx" else twin.graph
    compiled = ge.GraphCompiler().compile(graph, target="Ascend910B2", optimization_level=0)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    actual = executor.run(x)
    assert len(actual) == len(expected) == 1
    assert actual[0].dtype == np.float32
    np.testing.assert_allclose(actual[0], expected[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(TWINS))
def test_kernels_one_per_graph_op_on_their_units(name: str) -> None:
    graph = ge.GraphParser().parse_onnx(TWINS[name]().onnx_model)
    compiled = ge.GraphCompiler().compile(graph, optimization_level=0)
    assert compiled.num_operators == len(graph.nodes)
    units = {k.sym_name.data: k.unit.data for k in compiled.module.walk() if hasattr(k, "unit")}
    cube = {"conv2d", "gemm", "matmul"}
    for node in graph.nodes:
        expected = "cube" if node.op_type in cube else "vector"
        assert units[node.name] == expected, node


def test_emulator_reads_the_planned_arena(rng: np.random.Generator) -> None:
    """A buffer placed over a value that is still needed changes the answer: the arena is real."""
    from ge.dialects.stream import BufferOp, LaunchOp
    from ge.emulator import Emulator

    g = ge.Graph()
    x = g.add_input("x", shape=[4, 8])
    e = g.add_op(ops.NegOp, [x])
    g.add_output(g.add_add(g.add_relu(e), e))
    compiled = ge.GraphCompiler().compile(g, optimization_level=0)
    data = rng.standard_normal((4, 8)).astype(np.float32)
    good = Emulator(compiled.module, compiled.weight_blob).run([data])[0]
    np.testing.assert_allclose(good, np.maximum(-data, 0) - data)

    launches = [op for op in compiled.model.body.block.ops if isinstance(op, LaunchOp)]
    neg_out, relu_out = launches[0].outputs[0].owner, launches[1].outputs[0].owner
    assert isinstance(neg_out, BufferOp) and isinstance(relu_out, BufferOp)
    relu_out.offset = neg_out.offset  # relu now overwrites -x, which add still reads
    bad = Emulator(compiled.module, compiled.weight_blob).run([data])[0]
    np.testing.assert_allclose(bad, 2 * np.maximum(-data, 0))


def test_inputs_and_outputs_are_the_callers_memory(rng: np.random.Generator) -> None:
    """Graph inputs are read where the caller has them and outputs are handed over, not copied."""
    from ge.dialects.stream import BufferOp
    from ge.emulator import Emulator

    twin = mlp()
    compiled = ge.GraphCompiler().compile(twin.graph, optimization_level=3)
    bound = [op for op in compiled.model.body.block.ops if isinstance(op, BufferOp) and op.bound]
    assert sorted((op.input is not None, op.offset.value.data) for op in bound) == [(False, 0), (True, 0)]
    x = rng.standard_normal(twin.input_shape).astype(np.float32)
    emulator = Emulator(compiled.module, compiled.weight_blob)
    first, second = emulator.run([x])[0], emulator.run([x])[0]
    np.testing.assert_array_equal(first, second)
    assert not np.shares_memory(first, second)  # each run hands over fresh memory
    assert (
        compiled.memory.arena_bytes < sum(op.size.value.data for op in bound) + compiled.memory.no_reuse_bytes
    )


def test_emulator_reads_weights_at_their_offsets(rng: np.random.Generator) -> None:
    from ge.dialects.stream import WeightOp
    from ge.emulator import Emulator

    twin = mlp()
    compiled = ge.GraphCompiler().compile(twin.graph, optimization_level=0)
    x = rng.standard_normal(twin.input_shape).astype(np.float32)
    good = Emulator(compiled.module, compiled.weight_blob).run([x])[0]
    weights = [op for op in compiled.model.body.block.ops if isinstance(op, WeightOp)]
    weights[1].offset = weights[0].offset  # fc1.bias now reads the start of fc1.weight
    bad = Emulator(compiled.module, compiled.weight_blob).run([x])[0]
    assert np.abs(bad - good).max() > 1e-3


def test_reference_interpreter_agrees_with_emulator(rng: np.random.Generator) -> None:
    twin = cnn()
    x = rng.standard_normal(twin.input_shape).astype(np.float32)
    reference = run_function(twin.graph.module, [x], twin.graph.weights)
    executor = ge.GraphExecutor()
    executor.load_graph(twin.graph)
    np.testing.assert_allclose(executor.run({"x": x})[0], reference[0], rtol=1e-6, atol=1e-7)
