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
from ge.profile_data import BOUNDS
from ge.profiler import build_report

MODELS = Path(ge.__file__).parent / "models"
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


# Ascend910B2's figures (ge/soc/Ascend910B2.json) for the hand-worked kernel figures below.
CLOCK_HZ = 1800e6
CUBE_FP16_MACS_PER_CYCLE, FP32_CUBE_RATE = 4096, 0.25
VECTOR_BYTES_PER_CYCLE = 256
AICPU_FLOPS = 1e9


def _matmul(dtype: str) -> tuple[ge.Graph, np.ndarray]:
    """(64 x 256) @ (256 x 128): 2 x 64 x 256 x 128 FLOPs; 4 x 8 result tiles of 16 x 16, each
    16 fractal products deep: 512 products of 16 x 16 x 16 multiply-adds."""
    g = ge.Graph()
    x = g.add_input("x", shape=[64, 256], dtype=dtype)
    w = g.add_constant(np.ones((256, 128), dtype), name="w")
    g.add_output(g.add_matmul(x, w, name="mm"))
    return g, np.ones((64, 256), dtype)


def test_an_fp32_matmul_is_cube_bound_and_measured_against_the_fp32_cube_peak() -> None:
    g, x = _matmul("float32")
    compiled = _compile(g, streams=1, sink=True, block_dim=2)
    ((_, cost),) = _costs(compiled)
    _, report = _profile(compiled, x)
    (mm,) = report.kernels
    flops = 2 * 64 * 256 * 128
    fp32_macs_per_cycle = CUBE_FP16_MACS_PER_CYCLE * FP32_CUBE_RATE  # 1024
    cube_us = 512 * 16 * 16 * 16 / fp32_macs_per_cycle / 2 / CLOCK_HZ * 1e6  # two cores share them
    peak = 2 * 2 * fp32_macs_per_cycle * CLOCK_HZ  # two cores: 7.37 TFLOP/s
    assert (mm.flops, mm.cores, mm.dtype) == (flops, 2, "fp32")
    assert (mm.bound, mm.compute_or_memory, mm.peak) == ("cube", "compute", "cube fp32")
    assert cube_us == pytest.approx(0.56889, rel=1e-4)
    assert mm.core_us == pytest.approx(_core_us(cost))
    assert mm.busy == pytest.approx(cube_us / _core_us(cost))
    assert mm.of_peak == pytest.approx(flops / (_core_us(cost) * 1e-6 * peak))
    # Its cube is busy three quarters of the time, yet the kernel reaches only that share of the
    # peak: the rest of the core time goes to laying out the ND inputs and to HBM traffic.
    assert mm.of_peak == pytest.approx(mm.busy)


def test_an_fp16_matmul_on_one_core_is_launch_bound_and_measured_against_the_fp16_cube_peak() -> None:
    g, x = _matmul("float16")
    compiled = _compile(g, streams=1, sink=True, block_dim=1)
    ((_, cost),) = _costs(compiled)
    _, report = _profile(compiled, x)
    (mm,) = report.kernels
    flops = 2 * 64 * 256 * 128
    cube_us = 512 * 16 * 16 * 16 / CUBE_FP16_MACS_PER_CYCLE / CLOCK_HZ * 1e6  # 0.284 us
    peak = 2 * CUBE_FP16_MACS_PER_CYCLE * CLOCK_HZ  # one core: 14.7 TFLOP/s
    # 0.5 us of per-task scheduling is longer than any unit's time: the cost model says launch.
    assert cube_us < SUNK_TASK_US
    assert (mm.bound, mm.compute_or_memory, mm.peak, mm.launch_us) == ("launch", "launch", "cube fp16", 0.5)
    assert mm.busy == pytest.approx(cube_us / _core_us(cost))  # the cube, its busiest unit
    assert mm.of_peak == pytest.approx(flops / (_core_us(cost) * 1e-6 * peak))


def test_a_trans_data_kernel_is_measured_against_the_hbm_bandwidth() -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[1, 3, 16, 16])
    g.add_output(g.add_conv2d(x, out_channels=16, kernel_size=3, padding=1, name="conv"))
    _, report = _profile(
        ge.GraphCompiler().compile(g, optimization_level=3), np.zeros((1, 3, 16, 16), np.float32)
    )
    conversion = report.kernels[0]
    assert (conversion.kind, conversion.unit, conversion.cores) == ("trans_data", "vector", 1)
    # NCHW in (3 x 16 x 16 floats), NC1HWC0 out (C0 = 16 channels, 13 of them padding).
    moved = 3 * 16 * 16 * 4 + 16 * 16 * 16 * 4
    vector_us = moved / VECTOR_BYTES_PER_CYCLE / CLOCK_HZ * 1e6  # re-laying every byte: 0.042 us
    memory_us = moved / HBM_BYTES_PER_US  # 0.012 us
    core_us = vector_us + memory_us  # one tile: no overlap
    assert (conversion.flops, conversion.hbm_bytes) == (0, moved)
    assert conversion.core_us == pytest.approx(core_us)
    assert (conversion.bound, conversion.peak) == ("launch", "HBM")
    assert conversion.busy == pytest.approx(vector_us / core_us)
    assert conversion.of_peak == pytest.approx(moved / (core_us * HBM_BYTES_PER_US))


def test_an_ai_cpu_kernel_is_aicpu_bound_and_measured_against_the_ai_cpu_rate() -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[1000], dtype="float64")
    g.add_output(g.add_add(x, x, name="sum"))
    _, report = _profile(_compile(g, streams=1, sink=False), np.zeros(1000))
    (kernel,) = report.kernels
    # 1000 additions at 1 GFLOP/s, plus the AI CPU's 2 us launch, then 16 KB through HBM.
    scalar_us = 1000 / AICPU_FLOPS * 1e6 + 2.0
    core_us = scalar_us + 16000 / HBM_BYTES_PER_US
    assert (kernel.unit, kernel.dtype, kernel.flops, kernel.hbm_bytes) == ("aicpu", "fp64", 1000, 16000)
    assert (kernel.bound, kernel.compute_or_memory, kernel.peak) == ("aicpu", "compute", "aicpu")
    assert kernel.launch_us == HOST_LAUNCH_US
    assert kernel.core_us == pytest.approx(core_us)
    assert kernel.busy == pytest.approx(scalar_us / core_us)
    assert kernel.of_peak == pytest.approx(1000 / (core_us * 1e-6 * AICPU_FLOPS))


def test_a_memory_bound_kernel_is_measured_against_the_hbm_bandwidth() -> None:
    # exp of 2^18 floats on every vector core: 2 MiB through HBM take 1.31 us, longer than the
    # vector sweep and the launch.
    g = ge.Graph()
    x = g.add_input("x", shape=[1 << 18])
    g.add_output(g.add_op(ops.ExpOp, [x], name="e"))
    compiled = _compile(g, streams=1, sink=True, block_dim=48)
    ((_, exp),) = _costs(compiled)
    _, report = _profile(compiled, np.zeros(1 << 18, np.float32))
    (kernel,) = report.kernels
    moved = 2 * (1 << 18) * 4
    assert moved / HBM_BYTES_PER_US == pytest.approx(1.31072)
    assert (kernel.bound, kernel.compute_or_memory, kernel.peak) == ("memory", "memory", "HBM")
    assert kernel.hbm_bytes == moved
    assert kernel.busy == pytest.approx(moved / HBM_BYTES_PER_US / _core_us(exp))
    assert kernel.of_peak == pytest.approx(moved / (_core_us(exp) * HBM_BYTES_PER_US))


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
        assert "core us" in text and "of peak" in text


def test_kernels_are_listed_by_core_time_not_by_launch_overhead() -> None:
    graph = ge.GraphParser().parse_onnx(MODELS / "tiny_cnn.onnx")
    compiled = ge.GraphCompiler().compile(graph, optimization_level=3, sink=False)
    names = [info.name for _, info in launches(compiled.module)]
    core_us = [_core_us(cost) for _, cost in _costs(compiled)]
    expected = [
        name for _, _, name in sorted(zip([-t for t in core_us], range(len(names)), names, strict=True))
    ]
    _, report = _profile(compiled, np.zeros((1, 3, 32, 32), np.float32))
    lines = report.table(top=len(names)).splitlines()
    header = lines.index(next(line for line in lines if line.startswith("kernel ")))
    rows = [line.split() for line in lines[header + 1 : header + 1 + len(names)]]
    assert [row[0] for row in rows] == expected
    assert expected[0] != names[0]  # not task order
    launch_column = lines[header].split("  ")
    assert "launch us" in [c.strip() for c in launch_column if c.strip()]
    assert all("5.00" in row for row in rows)  # every host launch, apart from the core time


def test_warmup_runs_the_model_untimed_first(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _compile(_fork_join(), streams=1, sink=True)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    timed: list[bool] = []
    run = executor.run

    def counting_run(inputs: object, launch_times: list[float] | None = None) -> list[np.ndarray]:
        timed.append(launch_times is not None)
        return run(inputs, launch_times=launch_times)  # type: ignore[arg-type]

    monkeypatch.setattr(executor, "run", counting_run)
    profiler = ge.GraphProfiler()
    profiler.profile(executor, np.zeros(4096, np.float32))
    assert timed == [False, True]
    timed.clear()
    profiler.profile(executor, np.zeros(4096, np.float32), warmup=3)
    assert timed == [False, False, False, True]
    timed.clear()
    profiler.profile(executor, np.zeros(4096, np.float32), warmup=0)
    assert timed == [True]
    timed.clear()
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(GeError, match=f"warmup .*an integer >= 0; got {bad!r}"):
            profiler.profile(executor, np.zeros(4096, np.float32), warmup=bad)  # type: ignore[arg-type]
    assert timed == []


def test_an_event_recorded_before_any_launch_of_its_stream_has_no_flow() -> None:
    compiled = _compile(_fork_join(), streams=2, sink=True, block_dim=1)
    body = compiled.model.body.block
    (record,) = [op for op in body.ops if isinstance(op, EventRecordOp)]
    record.detach()
    body.insert_op_before(record, body.first_op)  # type: ignore[arg-type]
    report = build_report(compiled.module, True, [1.0, 1.0, 1.0])
    assert report.flows == []
    assert len(report.kernels) == 3


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
    assert all(e["args"]["bound"] in BOUNDS and "flops" in e["args"] for e in complete)
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
