"""`ge.GraphProfiler` against timelines worked out by hand from the kernel cost model's per-kernel
costs and the Ascend910B2 figures (24 cube cores, 48 vector cores, 1600 GB/s of HBM, 0.5 us per
sunk task, 5 us per host launch), and the trace and pictures it writes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerAttr, i64

import ge
from ge.cost import KernelCost, kernel_cost
from ge.cost.stream import launches, soc_figures
from ge.dialects import graph as ops
from ge.dialects.stream import EventRecordOp, EventWaitOp, KernelFuncOp, LaunchOp
from ge.errors import GeError, RuntimeInputError

CUBE_CORES, VECTOR_CORES = 24, 48
HBM_BYTES_PER_US = 1600e3
SUNK_TASK_US, HOST_LAUNCH_US = 0.5, 5.0


def _compile(g: ge.Graph, streams: int, sink: bool, block_dim: int | None = None) -> ge.CompiledModel:
    compiled = ge.GraphCompiler().compile(g, optimization_level=0, max_streams=streams, sink=sink)
    if block_dim is not None:
        # One core each keeps the vector kernels slow enough that two running at once stay well
        # under the HBM bandwidth, so neither slows the other.
        for kernel in compiled.module.walk():
            if isinstance(kernel, KernelFuncOp):
                kernel.block_dim = IntegerAttr(block_dim, i64)
    return compiled


def _profile(compiled: ge.CompiledModel, inputs: object) -> tuple[ge.GraphProfiler, ge.ProfileReport]:
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    profiler = ge.GraphProfiler()
    return profiler, profiler.profile(executor, inputs)


def _costs(compiled: ge.CompiledModel) -> list[tuple[int, KernelCost]]:
    """(block_dim, cost) of each launch, task order."""
    soc = soc_figures(compiled.module)
    return [
        (info.block_dim, kernel_cost(info, soc, sunk=compiled.sunk)) for _, info in launches(compiled.module)
    ]


def _core_us(cost: KernelCost) -> float:
    return cost.latency_us - cost.launch_us


def _bytes(cost: KernelCost) -> int:
    return cost.mte2_bytes + cost.mte3_bytes


def _matmul_then_exp() -> tuple[ge.Graph, np.ndarray]:
    g = ge.Graph()
    x = g.add_input("x", shape=[64, 256])
    w = g.add_constant(np.linspace(-1, 1, 256 * 64, dtype=np.float32).reshape(256, 64), name="w")
    g.add_output(g.add_op(ops.ExpOp, [g.add_matmul(x, w, name="mm")], name="e"))
    return g, np.linspace(-1, 1, 64 * 256, dtype=np.float32).reshape(64, 256)


def _fork_join(size: int = 4096) -> ge.Graph:
    """exp and tanh of x, then their sum: on two streams the sum waits for an event."""
    g = ge.Graph()
    x = g.add_input("x", shape=[size])
    a = g.add_op(ops.ExpOp, [x], name="a")
    b = g.add_op(ops.TanhOp, [x], name="b")
    g.add_output(g.add_add(a, b, name="c"))
    return g


# --------------------------------------------------------------------------------------------
# Utilizations against hand-worked timelines
# --------------------------------------------------------------------------------------------


def test_two_launches_on_one_sunk_stream_follow_each_other() -> None:
    g, x = _matmul_then_exp()
    compiled = _compile(g, streams=1, sink=True)
    (mm_dim, mm), (exp_dim, exp) = _costs(compiled)
    mm_cores, exp_cores = min(mm_dim, CUBE_CORES), min(exp_dim, VECTOR_CORES)
    makespan = SUNK_TASK_US + _core_us(mm) + SUNK_TASK_US + _core_us(exp)

    profiler, report = _profile(compiled, x)

    assert report.latency_us == pytest.approx(makespan)
    first, second = report.kernels
    assert (first.kernel, first.unit, first.sources, first.cores) == ("mm", "cube", ("mm",), mm_cores)
    assert (second.kernel, second.unit, second.sources) == ("e", "vector", ("e",))
    assert (first.start_us, first.core_start_us) == (0.0, pytest.approx(SUNK_TASK_US))
    assert second.start_us == pytest.approx(SUNK_TASK_US + _core_us(mm))
    assert second.end_us == pytest.approx(makespan)
    busy = mm_cores * _core_us(mm) + exp_cores * _core_us(exp)
    assert profiler.npu_utilization == pytest.approx(busy / (makespan * (CUBE_CORES + VECTOR_CORES)))
    assert profiler.compute_utilization == pytest.approx(mm_cores * _core_us(mm) / (makespan * CUBE_CORES))
    moved = _bytes(mm) + _bytes(exp)
    assert profiler.memory_bandwidth_utilization == pytest.approx(moved / (makespan * HBM_BYTES_PER_US))
    assert report.npu_utilization == profiler.npu_utilization
    # Launch overhead is not busy: the stream is, the cores are not.
    assert report.stream_busy_us == {0: pytest.approx(makespan)}
    assert report.unit_busy_core_us["cube"] == pytest.approx(mm_cores * _core_us(mm))
    assert first.flops == 2 * 64 * 256 * 64
    assert first.hbm_bytes == (64 * 256 + 256 * 64 + 64 * 64) * 4


def test_two_sunk_streams_without_an_event_overlap() -> None:
    compiled = _compile(_fork_join_without_join(), streams=2, sink=True, block_dim=1)
    (_, a), (_, b) = _costs(compiled)
    # Precondition of the hand calculation: together they stay under the HBM bandwidth.
    assert _bytes(a) / _core_us(a) + _bytes(b) / _core_us(b) < HBM_BYTES_PER_US
    makespan = SUNK_TASK_US + max(_core_us(a), _core_us(b))

    profiler, report = _profile(compiled, np.zeros(4096, np.float32))

    assert [k.stream for k in report.kernels] == [0, 1]
    assert [k.core_start_us for k in report.kernels] == [pytest.approx(SUNK_TASK_US)] * 2
    assert report.latency_us == pytest.approx(makespan)
    busy = _core_us(a) + _core_us(b)
    assert profiler.npu_utilization == pytest.approx(busy / (makespan * (CUBE_CORES + VECTOR_CORES)))
    assert profiler.compute_utilization == 0.0
    moved = _bytes(a) + _bytes(b)
    assert profiler.memory_bandwidth_utilization == pytest.approx(moved / (makespan * HBM_BYTES_PER_US))
    assert report.stream_utilization == {
        0: pytest.approx((SUNK_TASK_US + _core_us(a)) / makespan),
        1: pytest.approx((SUNK_TASK_US + _core_us(b)) / makespan),
    }


def test_host_launches_are_issued_one_after_the_other() -> None:
    compiled = _compile(_fork_join_without_join(), streams=2, sink=False, block_dim=1)
    (_, a), (_, b) = _costs(compiled)
    # The host issues b once it has issued a: b's overhead starts at 5 us, its cores at 10 us.
    makespan = max(HOST_LAUNCH_US + _core_us(a), 2 * HOST_LAUNCH_US + _core_us(b))

    profiler, report = _profile(compiled, np.zeros(4096, np.float32))

    assert [k.start_us for k in report.kernels] == [0.0, pytest.approx(HOST_LAUNCH_US)]
    assert report.latency_us == pytest.approx(makespan)
    busy = _core_us(a) + _core_us(b)
    assert profiler.npu_utilization == pytest.approx(busy / (makespan * (CUBE_CORES + VECTOR_CORES)))


def test_a_cross_stream_event_holds_the_waiting_stream() -> None:
    compiled = _compile(_fork_join(), streams=2, sink=True, block_dim=1)
    body = [
        op for op in compiled.model.body.block.ops if isinstance(op, LaunchOp | EventRecordOp | EventWaitOp)
    ]
    assert [(type(op).__name__, op.stream.value.data) for op in body] == [
        ("LaunchOp", 0),
        ("EventRecordOp", 0),
        ("LaunchOp", 1),
        ("EventWaitOp", 1),
        ("LaunchOp", 1),
    ]
    (_, a), (_, b), (_, c) = _costs(compiled)
    assert _bytes(a) / _core_us(a) + _bytes(b) / _core_us(b) < HBM_BYTES_PER_US
    # The sum continues b's stream; the record after a is a task of its own on stream 0.
    recorded = SUNK_TASK_US + _core_us(a) + SUNK_TASK_US
    waited = max(SUNK_TASK_US + _core_us(b), recorded) + SUNK_TASK_US
    makespan = waited + SUNK_TASK_US + _core_us(c)

    profiler, report = _profile(compiled, np.zeros(4096, np.float32))

    assert report.kernels[2].start_us == pytest.approx(waited)
    assert report.latency_us == pytest.approx(makespan)
    busy = _core_us(a) + _core_us(b) + _core_us(c)
    assert profiler.npu_utilization == pytest.approx(busy / (makespan * (CUBE_CORES + VECTOR_CORES)))
    event = body[1].event.value.data
    assert [(f.event, f.source, f.target) for f in report.flows] == [(event, 0, 2)]


def test_a_kernel_is_as_utilized_as_its_bound_unit() -> None:
    compiled = _compile(_fork_join_without_join(), streams=1, sink=True, block_dim=1)
    (_, a), _ = _costs(compiled)
    _, report = _profile(compiled, np.zeros(4096, np.float32))
    kernel = report.kernels[0]
    # One vector core sweeping exp is slower than HBM: compute-bound at its vector time.
    assert a.vector_us > a.mte2_us + a.mte3_us
    assert kernel.bound == "compute"
    assert kernel.utilization == pytest.approx(a.vector_us / _core_us(a))
    # With every vector core, exp of 4096 floats is bound by HBM.
    compiled = _compile(_fork_join_without_join(), streams=1, sink=True, block_dim=48)
    (_, a), _ = _costs(compiled)
    _, report = _profile(compiled, np.zeros(4096, np.float32))
    assert report.kernels[0].bound == "memory"
    assert report.kernels[0].utilization == pytest.approx(_bytes(a) / (_core_us(a) * HBM_BYTES_PER_US))


def _fork_join_without_join() -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("x", shape=[4096])
    g.add_output(g.add_op(ops.ExpOp, [x], name="a"), "a")
    g.add_output(g.add_op(ops.TanhOp, [x], name="b"), "b")
    return g


# --------------------------------------------------------------------------------------------
# Kernels, trace, pictures
# --------------------------------------------------------------------------------------------


def test_every_launch_is_measured_and_fused_kernels_name_their_nodes(tmp_path: Path) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[1, 3, 16, 16])
    y = g.add_relu(
        g.add_batchnorm(g.add_conv2d(x, out_channels=16, kernel_size=3, padding=1, name="conv"), name="bn"),
        name="relu",
    )
    g.add_output(g.add_softmax(g.add_flatten(y), name="softmax"))
    compiled = ge.GraphCompiler().compile(g, optimization_level=3)
    compiled.save(tmp_path / "m.ge")
    data = np.linspace(-1, 1, 3 * 16 * 16, dtype=np.float32).reshape(1, 3, 16, 16)
    for model in (compiled, ge.GraphCompiler.load(tmp_path / "m.ge")):
        _, report = _profile(model, {"x": data})
        assert len(report.kernels) == model.num_operators
        assert all(k.measured_us > 0 for k in report.kernels)
        by_name = {k.kernel: k for k in report.kernels}
        assert by_name["conv"].sources == ("conv", "bn", "relu")
        assert by_name["softmax"].sources == ("softmax",)
        assert all(k.sources == () for k in report.kernels if k.kind == "trans_data")
        assert report.measured_total_us >= sum(k.measured_us for k in report.kernels)
        text = report.table()
        assert str(report) == text
        assert "conv" in text and "measured us" in text and "npu utilization" in text


def test_trace_has_a_track_per_stream_and_an_arrow_per_event(tmp_path: Path) -> None:
    compiled = _compile(_fork_join(), streams=2, sink=True, block_dim=1)
    _, report = _profile(compiled, np.zeros(4096, np.float32))
    report.save_trace(tmp_path / "trace.json")
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert all({"pid", "tid", "ts", "dur", "name"} <= e.keys() for e in complete)
    assert all(e["ts"] >= 0 and e["dur"] >= 0 for e in complete)
    names = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in events
        if e["ph"] == "M" and e["name"] == "thread_name"
    }
    processes = {
        e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"
    }
    streams_pid = next(pid for pid, name in processes.items() if name == "streams")
    per_stream: dict[str, list[str]] = {}
    for e in complete:
        assert (e["pid"], e["tid"]) in names
        if e["pid"] == streams_pid:
            per_stream.setdefault(names[e["pid"], e["tid"]], []).append(e["name"])
    assert per_stream == {"stream 0": ["a"], "stream 1": ["b", "c"]}
    # Every kernel also shows on its unit's cores: three vector kernels, a and b at once.
    on_units = [e for e in complete if e["pid"] != streams_pid]
    assert sorted(names[e["pid"], e["tid"]] for e in on_units) == ["vector 0", "vector 0", "vector 1"]
    assert all(e["args"]["bound"] in ("compute", "memory") and "flops" in e["args"] for e in complete)
    # One flow: out of a (stream 0, before the record) into c (stream 1, after the wait).
    starts = [e for e in events if e["ph"] == "s"]
    finishes = [e for e in events if e["ph"] == "f"]
    (event,) = [op for op in compiled.model.body.block.ops if isinstance(op, EventRecordOp)]
    assert len(starts) == len(finishes) == 1
    assert starts[0]["id"] == finishes[0]["id"] and finishes[0]["bp"] == "e"
    assert starts[0]["name"] == f"event {event.event.value.data}"
    a, _, c = report.kernels
    assert (
        names[starts[0]["pid"], starts[0]["tid"]] == "stream 0" and a.start_us <= starts[0]["ts"] <= a.end_us
    )
    assert names[finishes[0]["pid"], finishes[0]["tid"]] == "stream 1" and finishes[0]["ts"] == c.start_us


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_pictures_are_written_in_the_format_of_their_extension(tmp_path: Path, suffix: str) -> None:
    g, x = _matmul_then_exp()
    _, report = _profile(_compile(g, streams=1, sink=True), x)
    for draw in (report.plot_timeline, report.plot_roofline):
        path = tmp_path / f"{draw.__name__}.{suffix}"
        draw(path)
        head = path.read_bytes()[:200]
        assert head.startswith(b"\x89PNG") if suffix == "png" else b"<svg" in path.read_bytes()
        assert len(head) == 200


def test_pictures_name_what_they_need(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g, x = _matmul_then_exp()
    _, report = _profile(_compile(g, streams=1, sink=True), x)
    with pytest.raises(GeError, match=r"one of \.png, \.svg, \.pdf"):
        report.plot_timeline(tmp_path / "t.bmp")
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if not installed
    with pytest.raises(GeError, match=r"pip install 'ge\[plot\]'"):
        report.plot_roofline(tmp_path / "r.png")


def test_bad_profile_calls_are_clear_errors() -> None:
    profiler = ge.GraphProfiler()
    with pytest.raises(GeError, match="takes a GraphExecutor.*got str"):
        profiler.profile("model.ge", np.zeros(4096, np.float32))  # type: ignore[arg-type]
    with pytest.raises(GeError, match="no model loaded: call its load_graph"):
        profiler.profile(ge.GraphExecutor(), np.zeros(4096, np.float32))
    executor = ge.GraphExecutor()
    executor.load_graph(_compile(_fork_join(), streams=1, sink=True))
    with pytest.raises(RuntimeInputError, match=r"input 'x' has shape \[3\], the model expects \[4096\]"):
        profiler.profile(executor, np.zeros(3, np.float32))
    with pytest.raises(RuntimeInputError, match="missing"):
        profiler.profile(executor, {"y": np.zeros(4096, np.float32)})
    assert profiler.report is None


def test_the_api_md_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    g, input_data = _matmul_then_exp()
    compiled = ge.GraphCompiler().compile(g, optimization_level=3)
    ex = ge.GraphExecutor()
    ex.load_graph(compiled)
    profiler = ge.GraphProfiler()
    report = profiler.profile(ex, input_data)
    print(profiler.npu_utilization, profiler.memory_bandwidth_utilization, profiler.compute_utilization)
    print(report.kernels)
    report.save_trace("trace.json")
    report.plot_timeline("timeline.png")
    report.plot_roofline("roofline.png")
    assert all(0 < f <= 1 for f in (profiler.npu_utilization, profiler.memory_bandwidth_utilization))
    assert 0 < profiler.compute_utilization <= 1
    assert {p.name for p in tmp_path.iterdir()} == {"trace.json", "timeline.png", "roofline.png"}
