"""`ge-plan-memory`: the plan is valid, reaches the lower bound, and the emulator agrees."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import ge
from ge.dialects.stream import BufferOp, LaunchOp, OutputsOp
from ge.errors import CompileError
from ge.passes.stream.plan_memory import MEMORY_ATTR, Interval, greedy_by_size, lifetimes, validate

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _memory(compiled: ge.CompiledModel) -> dict[str, int]:
    return {k: v.value.data for k, v in compiled.model.attributes[MEMORY_ATTR].data.items()}


def _independent_lower_bound(compiled: ge.CompiledModel) -> int:
    """Max bytes live at once, from the task list, written apart from the planner."""
    ops = list(compiled.model.body.block.ops)
    live: dict[object, tuple[int, int, int]] = {}
    for t, op in enumerate(ops):
        if isinstance(op, BufferOp):
            size = -(-op.size.value.data // 512) * 512
            live[op] = (-1 if op.input is not None else len(ops), -1, size)
        elif isinstance(op, LaunchOp | OutputsOp):
            reads = op.inputs if isinstance(op, LaunchOp) else op.values
            for v in reads:
                if isinstance(v.owner, BufferOp):
                    start, _, size = live[v.owner]
                    live[v.owner] = (start, len(ops) if isinstance(op, OutputsOp) else t, size)
            for v in op.outputs if isinstance(op, LaunchOp) else ():
                start, end, size = live[v.owner]
                live[v.owner] = (min(start, t), max(end, t), size)
    return max(
        sum(size for start, end, size in live.values() if start <= t <= max(end, start))
        for t in range(-1, len(ops))
    )


@pytest.mark.parametrize("name", ["resnet50", "squeezenet", "inception_v1"])
def test_light_models_plan_at_the_lower_bound(name: str, rng: np.random.Generator) -> None:
    graph = ge.GraphParser().parse_onnx(str(LIGHT / f"light_{name}.onnx"))
    compiled = ge.GraphCompiler().compile(graph, optimization_level=3)
    memory = _memory(compiled)
    assert memory["lower_bound_bytes"] == _independent_lower_bound(compiled)
    assert memory["arena_bytes"] <= 1.05 * memory["lower_bound_bytes"]
    assert memory["no_reuse_bytes"] >= 3 * memory["arena_bytes"]
    reference = ge.GraphCompiler().compile(graph, optimization_level=2)
    x = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    outputs = []
    for model in (compiled, reference):
        executor = ge.GraphExecutor()
        executor.load_graph(model)
        outputs.append(executor.run(x)[0])
    np.testing.assert_array_equal(outputs[0], outputs[1])


def test_validator_catches_an_overlapping_plan() -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[16])
    g.add_output(g.add_add(g.add_relu(g.add_relu(x)), x))
    compiled = ge.GraphCompiler().compile(g, optimization_level=0)
    intervals = lifetimes(compiled.model, 512)
    offsets = greedy_by_size(intervals)
    validate(intervals, offsets)
    by_name = {i.buffer.buffer.name_hint: i for i in intervals}
    broken = dict(offsets)
    broken[by_name["relu"].buffer] = offsets[by_name["x"].buffer]  # x is still read by add
    with pytest.raises(CompileError, match="are live together"):
        validate(intervals, broken)
    assert isinstance(intervals[0], Interval)


def test_compiled_model_reports_memory() -> None:
    graph = ge.GraphParser().parse_onnx(str(LIGHT / "light_squeezenet.onnx"))
    planned = ge.GraphCompiler().compile(graph, optimization_level=3).memory
    unplanned = ge.GraphCompiler().compile(graph, optimization_level=0).memory
    assert planned.arena_bytes == planned.lower_bound_bytes < unplanned.arena_bytes
    assert unplanned.arena_bytes == unplanned.no_reuse_bytes
    assert planned.weight_bytes > 0


def test_identical_weights_share_one_slot(rng: np.random.Generator) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[4, 32])
    w = rng.standard_normal((32, 32)).astype(np.float32)
    a = g.add_matmul(x, g.add_constant(w, name="first"))
    b = g.add_matmul(x, g.add_constant(w.copy(), name="second"))
    g.add_output(g.add_add(a, b))
    compiled = ge.GraphCompiler().compile(g, optimization_level=0)
    assert compiled.memory.weight_bytes == 32 * 32 * 4
    data = rng.standard_normal((4, 32)).astype(np.float32)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    np.testing.assert_allclose(executor.run(data)[0], 2 * data @ w, rtol=1e-5, atol=1e-5)
