"""`ge-assign-streams`: independent launches on different streams, every dependency ordered by
stream order and events (checked with a transitive closure written here), no event that others
imply, and the light models still computing what onnxruntime does, in about the same arena."""

from __future__ import annotations

import dataclasses
import sys
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest

import ge
from ge.context import make_context
from ge.dialects import graph as ops
from ge.dialects.stream import (
    BufferOp,
    EventRecordOp,
    EventWaitOp,
    LaunchOp,
    ModelOp,
    SubviewOp,
    ViewOp,
    byte_size,
)
from ge.errors import CompileError
from ge.passes.pipelines import pipeline
from ge.passes.stream.assign_streams import STREAMS_ATTR
from ge.passes.stream.plan_memory import PlanMemoryPass

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parents[1] / "onnx_conformance"))
from oracle import run_onnxruntime  # noqa: E402
from test_light_models_random import with_random_weights  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = sorted(p.stem.removeprefix("light_") for p in LIGHT.glob("light_*.onnx"))


# --------------------------------------------------------------------------------------------
# An oracle of the schedule, written apart from the pass: tasks are nodes, stream order and
# record -> wait are edges, happens-before is the transitive closure by repeated squaring.
# --------------------------------------------------------------------------------------------


def _tasks(model: ModelOp) -> list:
    return [op for op in model.body.block.ops if isinstance(op, LaunchOp | EventRecordOp | EventWaitOp)]


def _closure(model: ModelOp, skip: object = None) -> tuple[list[LaunchOp], np.ndarray]:
    """The launches and `reach[a, b]`: launch a happens before launch b (`skip`: a task left out)."""
    tasks = [t for t in _tasks(model) if t is not skip]
    index = {id(t): k for k, t in enumerate(tasks)}
    edge = np.zeros((len(tasks), len(tasks)), bool)
    last: dict[int, int] = {}
    records: dict[int, int] = {}
    for k, task in enumerate(tasks):
        stream = task.stream.value.data
        if stream in last:
            edge[last[stream], k] = True
        last[stream] = k
        if isinstance(task, EventRecordOp):
            records[task.event.value.data] = k
    for k, task in enumerate(tasks):
        if isinstance(task, EventWaitOp) and task.event.value.data in records:
            edge[records[task.event.value.data], k] = True
    reach = edge.copy()
    while True:
        wider = reach | ((reach.astype(np.float32) @ reach.astype(np.float32)) > 0)
        if (wider == reach).all():
            break
        reach = wider
    launches = [t for t in tasks if isinstance(t, LaunchOp)]
    rows = [index[id(t)] for t in launches]
    return launches, reach[np.ix_(rows, rows)]


def _span(value) -> tuple[int, int]:
    """Arena bytes of a buffer, view or subview, by hand: a subview of a batch-1 tensor along an
    axis is one contiguous run."""
    owner = value.owner
    if isinstance(owner, BufferOp) and owner.bound:
        # The caller's memory: a region of its own, apart from the arena and from the others.
        index = owner.input.value.data if owner.input is not None else 1000 + owner.output.value.data
        begin = (1 << 40) * (index + 1)
        return begin, begin + byte_size(owner.buffer.type)
    if isinstance(owner, BufferOp):
        return owner.offset.value.data, owner.offset.value.data + byte_size(owner.buffer.type)
    if isinstance(owner, ViewOp):
        return _span(owner.source)
    assert isinstance(owner, SubviewOp)
    begin, _ = _span(owner.source)
    shape = owner.source.type.get_shape()
    axis = owner.axis.value.data
    assert int(np.prod(shape[:axis])) == 1, "the oracle handles batch-1 slices only"
    inner = int(np.prod(shape[axis + 1 :])) * byte_size(owner.source.type) // int(np.prod(shape))
    return begin + owner.start.value.data * inner, begin + (
        owner.start.value.data + owner.length.value.data
    ) * inner


def _conflicts(launches: list[LaunchOp]) -> list[tuple[int, int]]:
    """Pairs (a < b) of launches touching a common arena byte, at least one of them writing."""

    def spans(values) -> list[tuple[int, int]]:
        return [_span(v) for v in values if _in_arena(v)]

    reads = [spans(op.inputs) for op in launches]
    writes = [spans(op.outputs) for op in launches]
    meet = lambda xs, ys: any(a < d and c < b for a, b in xs for c, d in ys)  # noqa: E731
    return [
        (a, b)
        for b in range(len(launches))
        for a in range(b)
        if meet(writes[a], reads[b] + writes[b]) or meet(reads[a], writes[b])
    ]


def _in_arena(value) -> bool:
    while isinstance(value.owner, ViewOp | SubviewOp):
        value = value.owner.source
    return isinstance(value.owner, BufferOp)


def _check_schedule(model: ModelOp) -> None:
    """Every conflicting pair is ordered, and every wait is needed for some pair."""
    launches, reach = _closure(model)
    pairs = _conflicts(launches)
    unordered = [(a, b) for a, b in pairs if not reach[a, b]]
    assert not unordered, [(launches[a].kernel, launches[b].kernel) for a, b in unordered]
    for wait in (t for t in _tasks(model) if isinstance(t, EventWaitOp)):
        _, without = _closure(model, skip=wait)
        assert any(not without[a, b] for a, b in pairs), f"event {wait.event.value.data} is implied by others"


def _events(model: ModelOp) -> tuple[list[EventRecordOp], list[EventWaitOp]]:
    ops_ = list(model.body.block.ops)
    return [o for o in ops_ if isinstance(o, EventRecordOp)], [o for o in ops_ if isinstance(o, EventWaitOp)]


def _streams(model: ModelOp) -> dict[str, int]:
    return {k: v.value.data for k, v in model.attributes[STREAMS_ATTR].data.items()}


def _run(compiled: ge.CompiledModel, *inputs: np.ndarray) -> list[np.ndarray]:
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    return executor.run(list(inputs))


# --------------------------------------------------------------------------------------------
# Small graphs
# --------------------------------------------------------------------------------------------


def _diamond() -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("x", shape=[64])
    a = g.add_op(ops.ReluOp, [x], name="a")
    b = g.add_op(ops.NegOp, [x], name="b")
    g.add_output(g.add_op(ops.AddOp, [a, b], name="y"), "y")
    return g


def test_a_diamond_takes_two_streams_and_one_event(rng: np.random.Generator) -> None:
    compiled = ge.GraphCompiler().compile(_diamond(), optimization_level=0, max_streams=4)
    model = compiled.model
    launches = {
        op.kernel.root_reference.data: op.stream.value.data
        for op in model.body.block.ops
        if isinstance(op, LaunchOp)
    }
    assert launches["a"] != launches["b"]
    records, waits = _events(model)
    assert len(records) == len(waits) == 1 and records[0].event == waits[0].event
    assert records[0].stream != waits[0].stream
    assert waits[0].stream.value.data == launches["y"]
    assert _streams(model) == {"streams": 2, "events": 1}
    _check_schedule(model)
    x = rng.standard_normal(64).astype(np.float32)
    np.testing.assert_array_equal(_run(compiled, x)[0], np.maximum(x, 0) - x)


def test_events_that_others_imply_are_left_out(rng: np.random.Generator) -> None:
    # p1 -> p2 -> p3 on one stream; q -> r on another; w1 = p3 + r waits for r, which comes after q
    # on its stream, so w2 = w1 + q needs no event of its own.
    g = ge.Graph()
    x = g.add_input("x", shape=[64])
    p = g.add_op(ops.ReluOp, [g.add_op(ops.ReluOp, [g.add_op(ops.ReluOp, [x])])])
    q = g.add_op(ops.NegOp, [x])
    r = g.add_op(ops.AbsOp, [q])
    w1 = g.add_op(ops.AddOp, [p, r])
    g.add_output(g.add_op(ops.AddOp, [w1, q]), "y")
    compiled = ge.GraphCompiler().compile(g, optimization_level=0, max_streams=2)
    records, waits = _events(compiled.model)
    assert len(records) == len(waits) == 1
    _check_schedule(compiled.model)
    x_ = rng.standard_normal(64).astype(np.float32)
    np.testing.assert_array_equal(_run(compiled, x_)[0], np.maximum(x_, 0) + np.abs(-x_) - x_)


def test_one_stream_needs_no_events() -> None:
    for graph in (_diamond(), ge.GraphParser().parse_onnx(str(LIGHT / "light_inception_v1.onnx"))):
        model = ge.GraphCompiler().compile(graph, optimization_level=3, max_streams=1).model
        assert _events(model) == ([], [])
        assert {op.stream.value.data for op in model.body.block.ops if isinstance(op, LaunchOp)} == {0}
        assert _streams(model) == {"streams": 1, "events": 0}


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_are_ordered_and_race_free(seed: int) -> None:
    """Random elementwise DAGs, one kernel per op, spread over streams and then planned with
    reuse: every dependency is ordered, and the emulator (race detector on) computes numpy's."""
    rng = np.random.default_rng(seed)
    g = ge.Graph()
    inputs = [rng.standard_normal(256).astype(np.float32) for _ in range(2)]
    tensors = [g.add_input(f"x{i}", shape=[256]) for i in range(2)]
    values = list(inputs)
    unary = [(ops.ReluOp, lambda a: np.maximum(a, 0)), (ops.NegOp, np.negative), (ops.AbsOp, np.abs)]
    binary = [(ops.AddOp, np.add), (ops.SubOp, np.subtract), (ops.MaxOp, np.maximum)]
    for _ in range(int(rng.integers(8, 20))):
        if rng.random() < 0.5:
            op, f = unary[rng.integers(len(unary))]
            k = int(rng.integers(len(tensors)))
            tensors.append(g.add_op(op, [tensors[k]]))
            values.append(f(values[k]))
        else:
            op, f = binary[rng.integers(len(binary))]
            k, m = (int(i) for i in rng.integers(len(tensors), size=2))
            tensors.append(g.add_op(op, [tensors[k], tensors[m]]))
            values.append(f(values[k], values[m]))
    outputs = sorted({int(i) for i in rng.integers(2, len(tensors), size=2)})
    for i in outputs:
        g.add_output(tensors[i], f"y{i}")
    streams = int(rng.integers(2, 5))
    compiled = ge.GraphCompiler().compile(g, optimization_level=0, max_streams=streams)
    module = compiled.module.clone()
    PlanMemoryPass().apply(make_context(), module)
    module.verify()
    planned = dataclasses.replace(compiled, module=module)
    model = planned.model
    assert len({op.stream.value.data for op in model.body.block.ops if isinstance(op, LaunchOp)}) <= streams
    _check_schedule(model)
    for actual, i in zip(_run(planned, *inputs), outputs, strict=True):
        np.testing.assert_array_equal(actual, values[i])


# --------------------------------------------------------------------------------------------
# The light models
# --------------------------------------------------------------------------------------------


@cache
def _light(name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    model = with_random_weights(onnx.load(str(LIGHT / f"light_{name}.onnx")), seed=7)
    initializers = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {
        v.name: rng.standard_normal([d.dim_value for d in v.type.tensor_type.shape.dim]).astype(np.float32)
        for v in model.graph.input
        if v.name not in initializers
    }
    return model, feeds


@cache
def _compiled(name: str, max_streams: int) -> ge.CompiledModel:
    graph = ge.GraphParser().parse_onnx(_light(name)[0])
    return ge.GraphCompiler().compile(graph, optimization_level=3, max_streams=max_streams)


@pytest.mark.parametrize("name", MODELS)
def test_light_models_with_streams_match_onnxruntime(name: str) -> None:
    model, feeds = _light(name)
    compiled = _compiled(name, 4)
    assert compiled.options["max_streams"] == 4
    expected = run_onnxruntime(model, feeds)
    actual = _run(compiled, *feeds.values())  # the emulator checks for races first
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-3, atol=1e-5 * max(1.0, float(np.abs(e).max())))


@pytest.mark.parametrize("name", MODELS)
def test_light_models_arena_with_streams_is_near_one_stream(name: str) -> None:
    single, multi = _compiled(name, 1).model, _compiled(name, 4).model
    assert multi.arena_size.value.data <= 1.10 * single.arena_size.value.data
    assert _streams(single) == {"streams": 1, "events": 0}
    assert _streams(multi)["streams"] <= 4


@pytest.mark.parametrize("max_streams", [2, 3, 4])
def test_inception_schedule_is_ordered_and_minimal(max_streams: int) -> None:
    model = _compiled("inception_v1", max_streams).model
    launches = [op for op in model.body.block.ops if isinstance(op, LaunchOp)]
    assert len({op.stream.value.data for op in launches}) == _streams(model)["streams"] == max_streams
    assert len(_events(model)[0]) == _streams(model)["events"] > 0
    _check_schedule(model)


def test_chains_stay_on_one_stream() -> None:
    """A launch whose one producer has no other consumer runs on the producer's stream."""
    model = _compiled("inception_v1", 4).model
    launches = [op for op in model.body.block.ops if isinstance(op, LaunchOp)]
    written: list[tuple[int, int, int]] = []  # byte ranges and the launch that wrote them last
    producers: list[set[int]] = []
    for k, op in enumerate(launches):
        reads = [_span(v) for v in op.inputs if _in_arena(v)]
        producers.append({w for a, b, w in written for c, d in reads if a < d and c < b})
        for c, d in (_span(v) for v in op.outputs):
            kept = [(a, min(b, c), w) for a, b, w in written] + [(max(a, d), b, w) for a, b, w in written]
            written = [(a, b, w) for a, b, w in kept if a < b] + [(c, d, k)]
    consumers = {p: {k for k, ps in enumerate(producers) if p in ps} for p in range(len(launches))}
    chained = [(p, k) for k, ps in enumerate(producers) if len(ps) == 1 for p in ps if consumers[p] == {k}]
    assert len(chained) > 10
    assert all(launches[p].stream == launches[k].stream for p, k in chained)


# --------------------------------------------------------------------------------------------
# The compile option and the pipeline
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, -1, 2.5, True, "4"])
def test_max_streams_must_be_a_positive_integer(value: object) -> None:
    with pytest.raises(CompileError, match="max_streams must be an integer of at least 1"):
        ge.GraphCompiler().compile(_diamond(), max_streams=value)


def test_max_streams_reaches_the_pass_and_the_artifact(tmp_path: Path) -> None:
    names = [p.name for p in pipeline(3)]
    assert names.index("ge-lower-kernel-to-stream") + 1 == names.index("ge-assign-streams")
    assert names.index("ge-assign-streams") + 1 == names.index("ge-plan-memory")
    for level in (0, 1, 2):
        assert "ge-assign-streams" not in [p.name for p in pipeline(level)]
    assert [p.max_streams for p in pipeline(3, max_streams=3) if p.name == "ge-assign-streams"] == [3]
    assert [p.max_streams for p in pipeline(3) if p.name == "ge-assign-streams"] == [4]
    assert [p.max_streams for p in pipeline(0, max_streams=2) if p.name == "ge-assign-streams"] == [2]
    assert ge.GraphCompiler().compile(_diamond(), optimization_level=0).options["max_streams"] == 1
    compiled = ge.GraphCompiler().compile(_diamond(), max_streams=2, sink=False)
    assert compiled.options["max_streams"] == 2 and compiled.options["sink"] is False
    compiled.save(tmp_path / "m.ge")
    assert ge.GraphCompiler.load(tmp_path / "m.ge").options == compiled.options
