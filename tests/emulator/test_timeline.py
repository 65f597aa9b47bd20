"""The timeline (streams, events, cores, HBM, host launches) against sums and closed forms of the
kernel cost model's figures, and the race detector against removed events and stream-blind
memory plans."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import IntegerAttr, i64

import ge
from ge.cost import kernel_cost
from ge.cost.stream import launches, soc_figures
from ge.dialects import graph as ops
from ge.dialects.stream import BufferOp, EventRecordOp, EventWaitOp, KernelFuncOp, LaunchOp
from ge.emulator import Emulator
from ge.emulator.runtime import accesses, bind
from ge.emulator.timeline import find_races, simulate
from ge.errors import GeError
from ge.passes.stream.plan_memory import arena_bytes, lifetimes, plan

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _light(name: str, **options: object) -> ge.CompiledModel:
    graph = ge.GraphParser().parse_onnx(str(LIGHT / f"light_{name}.onnx"))
    return ge.GraphCompiler().compile(graph, optimization_level=3, **options)


def _costs(compiled: ge.CompiledModel, sunk: bool) -> list:
    soc = soc_figures(compiled.module)
    return [kernel_cost(info, soc, sunk=sunk) for _, info in launches(compiled.module)]


def _twins(
    size: int, block_dim: int | None = None, kinds: tuple = (ops.ReluOp, ops.NegOp), **options: object
) -> ge.CompiledModel:
    """Two independent kernels of x (relu and neg: memory-bound) on two streams; `block_dim`
    overrides both kernels'."""
    g = ge.Graph()
    x = g.add_input("x", shape=[size])
    for kind, name in zip(kinds, "ab", strict=True):
        g.add_output(g.add_op(kind, [x]), name)
    compiled = ge.GraphCompiler().compile(g, optimization_level=0, max_streams=2, **options)
    if block_dim is not None:
        for kernel in compiled.module.walk():
            if isinstance(kernel, KernelFuncOp):
                kernel.block_dim = IntegerAttr(block_dim, i64)
    return compiled


# --------------------------------------------------------------------------------------------
# The timeline
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["inception_v1", "resnet50"])
@pytest.mark.parametrize("sink", [True, False])
def test_one_stream_is_the_sum_of_the_kernels(name: str, sink: bool) -> None:
    compiled = _light(name, max_streams=1, sink=sink)
    costs = _costs(compiled, sink)
    timeline = simulate(compiled.module, sunk=sink)
    # On one stream the run is the kernels one after the other: the sum of their modelled costs.
    assert compiled.modelled_latency_us() == pytest.approx(sum(c.latency_us for c in costs), rel=1e-9)
    assert timeline.latency_us == pytest.approx(sum(c.latency_us for c in costs), rel=1e-9)
    assert timeline.stream_utilization == pytest.approx({0: 1.0})
    soc = soc_figures(compiled.module)
    cube = sum(
        min(s.cores, soc["cube_cores"]) * (c.latency_us - c.launch_us)
        for s, c in zip(timeline.launches, costs, strict=True)
        if s.unit == "cube"
    )
    assert timeline.unit_utilization["cube"] == pytest.approx(
        cube / (soc["cube_cores"] * timeline.latency_us)
    )
    ends = [s.end_us for s in timeline.launches]
    assert ends == sorted(ends)
    assert [s.start_us for s in timeline.launches[1:]] == pytest.approx(ends[:-1])


def test_inception_runs_faster_on_streams() -> None:
    single, multi = _light("inception_v1", max_streams=1), _light("inception_v1")
    timeline = simulate(multi.module, sunk=True)
    one_stream = sum(c.latency_us for c in _costs(single, sunk=True))
    assert single.modelled_latency_us() == pytest.approx(one_stream, rel=1e-9)
    assert one_stream / multi.modelled_latency_us() >= 1.2
    assert len(timeline.stream_busy_us) == 4
    assert all(0.0 < u <= 1.0 for u in timeline.stream_utilization.values())
    assert all(0.0 <= u <= 1.0 for u in timeline.unit_utilization.values())


def test_streams_run_in_order_and_waits_hold_them() -> None:
    compiled = _light("inception_v1")
    timeline = simulate(compiled.module, sunk=True)
    event_us = soc_figures(compiled.module)["sunk_task_us"]
    by_stream: dict[int, list] = {}
    for span in timeline.launches:
        by_stream.setdefault(span.stream, []).append(span)
    for spans in by_stream.values():
        for before, after in zip(spans, spans[1:], strict=False):
            assert before.index < after.index and after.start_us >= before.end_us - 1e-9
    recorded_after: dict[int, int] = {}
    last_launch: dict[int, int] = {}
    pending: dict[int, list[int]] = {}
    index = 0
    for op in compiled.model.body.block.ops:
        if isinstance(op, LaunchOp):
            for event in pending.pop(op.stream.value.data, []):
                producer = timeline.launches[recorded_after[event]]
                assert timeline.launches[index].start_us >= producer.end_us + 2 * event_us - 1e-9
            last_launch[op.stream.value.data] = index
            index += 1
        elif isinstance(op, EventRecordOp):
            recorded_after[op.event.value.data] = last_launch[op.stream.value.data]
        elif isinstance(op, EventWaitOp):
            pending.setdefault(op.stream.value.data, []).append(op.event.value.data)


def test_kernels_overlap_only_on_free_cores() -> None:
    # exp and tanh on 2 cores are vector-bound, so their traffic leaves HBM room for both; on 30
    # cores each they are short and cannot share the 48 vector cores.
    for block_dim, overlap in ((2, True), (30, False)):
        compiled = _twins(1 << 16, block_dim, (ops.ExpOp, ops.TanhOp))
        first, second = _costs(compiled, sunk=True)
        timeline = simulate(compiled.module, sunk=True)
        assert [s.cores for s in timeline.launches] == [block_dim, block_dim]
        assert {s.stream for s in timeline.launches} == {0, 1}
        core = [c.latency_us - c.launch_us for c in (first, second)]
        if overlap:
            assert first.bound == second.bound == "vector"
            expected = max(first.latency_us, second.latency_us)
        else:  # the second kernel takes the cores when the first lets them go
            expected = first.launch_us + core[0] + core[1]
        assert timeline.latency_us == pytest.approx(expected)
        assert timeline.unit_utilization["vector"] == pytest.approx(
            block_dim * sum(core) / (48 * timeline.latency_us)
        )


def test_overlapping_kernels_share_the_hbm_bandwidth() -> None:
    compiled = _twins(1 << 22, 24)  # 16 MiB in and out each: memory-bound
    relu, neg = _costs(compiled, sunk=True)
    assert relu.bound == neg.bound == "memory" and relu.latency_us == pytest.approx(neg.latency_us)
    bandwidth = soc_figures(compiled.module)["hbm_gbps"] * 1e3  # bytes per microsecond
    traffic = relu.mte2_bytes + relu.mte3_bytes
    timeline = simulate(compiled.module, sunk=True)
    # Each gets half the bandwidth throughout: both move their bytes at bandwidth / 2.
    assert timeline.latency_us == pytest.approx(relu.launch_us + 2 * traffic / bandwidth)
    assert relu.latency_us < timeline.latency_us < relu.latency_us + neg.latency_us


def test_without_sinking_the_host_issues_launches_one_by_one() -> None:
    compiled = _twins(64, 20, sink=False)
    assert not compiled.sunk
    relu, neg = _costs(compiled, sunk=False)
    host = soc_figures(compiled.module)["host_launch_us"]
    assert relu.launch_us == neg.launch_us == host
    timeline = simulate(compiled.module, sunk=False)
    assert [s.start_us for s in timeline.launches] == pytest.approx([0.0, host])
    assert timeline.latency_us == pytest.approx(max(relu.latency_us, host + neg.latency_us))
    assert compiled.modelled_latency_us() == pytest.approx(max(relu.latency_us, host + neg.latency_us))
    model = _light("inception_v1", sink=False)
    timeline = simulate(model.module, sunk=False)
    assert all(s.start_us >= s.index * host - 1e-9 for s in timeline.launches)
    assert timeline.latency_us >= len(timeline.launches) * host
    assert timeline.latency_us <= sum(c.latency_us for c in _costs(model, sunk=False))


# --------------------------------------------------------------------------------------------
# The race detector
# --------------------------------------------------------------------------------------------


def _race_free(compiled: ge.CompiledModel) -> None:
    model = compiled.model
    arena = np.zeros(model.arena_size.value.data, np.uint8)
    views = bind(model, arena, np.frombuffer(compiled.weight_blob, np.uint8))
    find_races(model, accesses(model, views, arena))


def test_a_removed_event_is_a_race(rng: np.random.Generator) -> None:
    compiled = _light("inception_v1")
    waits = [op for op in compiled.model.body.block.ops if isinstance(op, EventWaitOp)]
    assert waits
    _race_free(compiled)
    x = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    for wait in waits:
        module = compiled.module.clone()
        victim = [op for op in module.walk() if isinstance(op, EventWaitOp)][waits.index(wait)]
        victim.parent_block().erase_op(victim)
        broken = dataclasses.replace(compiled, module=module)
        if wait is waits[0]:
            executor = ge.GraphExecutor()
            executor.load_graph(broken)
            with pytest.raises(
                GeError, match=r"race: kernel @\w+ \(stream \d\) (reads|writes) %\S+ and kernel"
            ):
                executor.run(x)
        else:
            with pytest.raises(GeError, match="no event orders them"):
                _race_free(broken)


def test_a_memory_plan_blind_to_streams_is_a_race() -> None:
    compiled = _light("inception_v1")
    model = compiled.model
    # Plan again by task positions only, as if everything ran on one stream.
    blind = [dataclasses.replace(i, accesses=None, before_writes=None) for i in lifetimes(model, 512)]
    _, offsets = plan(blind)
    module = compiled.module.clone()
    buffers = [op for op in module.walk() if isinstance(op, BufferOp) and not op.bound]
    for op, interval in zip(buffers, blind, strict=True):
        op.offset = IntegerAttr(offsets[interval.buffer], i64)
    broken = dataclasses.replace(compiled, module=module)
    broken.model.arena_size = IntegerAttr(max(arena_bytes(blind, offsets), model.arena_size.value.data), i64)
    with pytest.raises(GeError, match="no event orders them"):
        _race_free(broken)
    with pytest.raises(GeError, match="race"):
        Emulator(broken.module, broken.weight_blob).run([np.zeros((1, 3, 224, 224), np.float32)])


def test_race_checking_can_be_switched_off(rng: np.random.Generator) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[64])
    a, b = g.add_op(ops.ReluOp, [x]), g.add_op(ops.NegOp, [x])
    g.add_output(g.add_op(ops.AddOp, [a, b]), "y")
    compiled = ge.GraphCompiler().compile(g, optimization_level=0, max_streams=2)
    module = compiled.module.clone()
    events = [o for o in module.walk() if isinstance(o, EventWaitOp | EventRecordOp)]
    assert len(events) == 2
    for op in events:
        op.parent_block().erase_op(op)
    xs = rng.standard_normal(64).astype(np.float32)
    with pytest.raises(GeError, match="race: kernel @relu"):
        Emulator(module, compiled.weight_blob).run([xs])
    # Task order still respects the data flow, so without the check the answer is right.
    np.testing.assert_array_equal(
        Emulator(module, compiled.weight_blob, check_races=False).run([xs])[0], np.maximum(xs, 0) - xs
    )
