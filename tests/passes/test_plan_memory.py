"""`ge-plan-memory`: both strategies and in-place reuse give valid plans near the lower bound, the
validator rejects overlaps that are not declared in place, plans respect the streams' order (and
are exactly the one-list plans on one stream), and the emulator agrees with onnxruntime."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import MemRefType, f32

import ge
from ge.context import make_context
from ge.dialects.graph import NegOp
from ge.dialects.stream import BufferOp, LaunchOp, OutputsOp, SubviewOp, ViewOp
from ge.errors import CompileError
from ge.passes.stream.plan_memory import (
    MEMORY_ATTR,
    Interval,
    PlanMemoryPass,
    _first_fit,
    arena_bytes,
    greedy_by_size,
    inplace_pairs,
    lifetimes,
    lower_bound,
    plan,
    precedence,
    size_bin,
    size_binned,
    slots,
    validate,
)

sys.path.insert(0, str(Path(__file__).parent.parent))
from models import cnn  # noqa: E402
from oracle import run_onnxruntime, without_softmax  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _memory(compiled: ge.CompiledModel) -> dict[str, object]:
    return {k: getattr(v, "value", v).data for k, v in compiled.model.attributes[MEMORY_ATTR].data.items()}


def _root(value):
    while isinstance(value.owner, ViewOp | SubviewOp):
        value = value.owner.source
    return value.owner


def _independent_lower_bound(compiled: ge.CompiledModel) -> int:
    """Max bytes live at once, from the task list, written apart from the planner: an output the
    plan puts at the offset of an input that dies at the same launch counts once."""
    ops = list(compiled.model.body.block.ops)
    born: dict[object, int] = {}
    dies: dict[object, int] = {}
    size: dict[object, int] = {}
    launches = []
    for t, op in enumerate(ops):
        if isinstance(op, BufferOp):
            size[op] = -(-op.size.value.data // 512) * 512
            if op.input is not None:
                born[op] = -1
        elif isinstance(op, LaunchOp):
            reads = [b for b in map(_root, op.inputs) if isinstance(b, BufferOp)]
            writes = [b for b in map(_root, op.outputs) if isinstance(b, BufferOp)]
            launches.append((t, reads, writes))
            for b in reads:
                dies[b] = t
            for b in writes:
                born.setdefault(b, t)
                dies[b] = max(dies.get(b, t), t)
        elif isinstance(op, OutputsOp):
            for b in map(_root, op.values):
                dies[b] = len(ops)
    shared: dict[int, int] = {}
    for t, reads, writes in launches:
        for w in writes:
            over = [r for r in reads if dies[r] == t and r.offset.value.data == w.offset.value.data]
            if born[w] == t and over:
                shared[t] = shared.get(t, 0) + size[w]
    live = [
        sum(size[b] for b in size if born.get(b, -1) <= t <= dies.get(b, born.get(b, -1))) - shared.get(t, 0)
        for t in range(-1, len(ops) + 1)
    ]
    return max(live)


def _replanned(compiled: ge.CompiledModel, **options: object) -> ge.CompiledModel:
    """`compiled` planned again by `ge-plan-memory` with these options."""
    module = compiled.module.clone()
    PlanMemoryPass(**options).apply(make_context(), module)  # type: ignore[arg-type]
    module.verify()
    return dataclasses.replace(compiled, module=module)


def _run(compiled: ge.CompiledModel, *inputs: np.ndarray) -> list[np.ndarray]:
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    return executor.run(*inputs)


def _buffer(size: int) -> BufferOp:
    return BufferOp(0, size, MemRefType(f32, [size // 4]))


def _intervals(spans: list[tuple[int, int, int]]) -> list[Interval]:
    return [Interval(_buffer(size), start, end, size) for start, end, size in spans]


# --------------------------------------------------------------------------------------------
# Whole models
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["resnet50", "squeezenet", "inception_v1"])
def test_light_models_plan_at_the_lower_bound(name: str, rng: np.random.Generator) -> None:
    # The light models' weights are all 0.02, so their logits are equal in exact arithmetic (about
    # 1e10): a softmax over them would turn the last bit of each product's rounding into its whole
    # output. The plan is checked on the logits.
    graph = ge.GraphParser().parse_onnx(without_softmax(onnx.load(str(LIGHT / f"light_{name}.onnx"))))
    compiled = ge.GraphCompiler().compile(graph, optimization_level=3)
    memory = _memory(compiled)
    assert memory["lower_bound_bytes"] == _independent_lower_bound(compiled)
    assert memory["lower_bound_bytes"] <= memory["arena_bytes"] <= 1.05 * memory["lower_bound_bytes"]
    assert memory["no_reuse_bytes"] >= 2 * memory["arena_bytes"]
    assert memory["strategy"] in ("greedy_by_size", "size_binned")
    reference = ge.GraphCompiler().compile(graph, optimization_level=2)
    x = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    np.testing.assert_allclose(_run(compiled, x)[0], _run(reference, x)[0], rtol=1e-4, atol=1e-5)


def test_one_stream_arenas_meet_the_lower_bound_on_the_light_models() -> None:
    ratios = {}
    for path in sorted(LIGHT.glob("light_*.onnx")):
        compiled = ge.GraphCompiler().compile(
            ge.GraphParser().parse_onnx(str(path)), optimization_level=3, max_streams=1
        )
        memory = _memory(compiled)
        assert memory["lower_bound_bytes"] == _independent_lower_bound(compiled)
        ratios[path.stem] = memory["arena_bytes"] / memory["lower_bound_bytes"]
    assert len(ratios) == 9
    assert max(ratios.values()) <= 1.05, ratios
    assert sum(r == 1.0 for r in ratios.values()) >= 8, ratios


def test_compiled_model_reports_memory() -> None:
    graph = ge.GraphParser().parse_onnx(str(LIGHT / "light_squeezenet.onnx"))
    compiled = ge.GraphCompiler().compile(graph, optimization_level=3)
    planned = compiled.memory
    unplanned = ge.GraphCompiler().compile(graph, optimization_level=0).memory
    memory = _memory(compiled)
    assert planned.arena_bytes == memory["arena_bytes"]
    assert planned.lower_bound_bytes == memory["lower_bound_bytes"] <= planned.arena_bytes
    assert planned.arena_bytes < unplanned.arena_bytes
    assert unplanned.arena_bytes == unplanned.no_reuse_bytes
    assert planned.weight_bytes > 0


@pytest.mark.parametrize("strategy", ["greedy_by_size", "size_binned"])
@pytest.mark.parametrize("level", [0, 3])
def test_each_strategy_computes_what_onnxruntime_does(strategy: str, level: int, rng) -> None:
    model = cnn()
    compiled = _replanned(
        ge.GraphCompiler().compile(model.graph, optimization_level=level), strategy=strategy
    )
    memory = _memory(compiled)
    assert memory["strategy"] == strategy
    assert memory["lower_bound_bytes"] == _independent_lower_bound(compiled)
    if level == 0:
        assert memory["inplace"] > 0, "the relu kernels of O0 write over the convolutions' results"
    x = rng.standard_normal(model.input_shape).astype(np.float32)
    expected = run_onnxruntime(model.onnx_model, {model.input_name: x})[0]
    np.testing.assert_allclose(_run(compiled, x)[0], expected, rtol=1e-4, atol=1e-5)


def test_best_keeps_the_smaller_plan() -> None:
    compiled = ge.GraphCompiler().compile(cnn().graph, optimization_level=0)
    arenas = {
        s: _memory(_replanned(compiled, strategy=s))["arena_bytes"] for s in ("greedy_by_size", "size_binned")
    }
    best = _memory(_replanned(compiled))
    assert best["arena_bytes"] == min(arenas.values())
    assert arenas[best["strategy"]] == best["arena_bytes"]


def test_unknown_strategy_is_refused() -> None:
    compiled = ge.GraphCompiler().compile(cnn().graph, optimization_level=0)
    with pytest.raises(CompileError, match="unknown strategy 'first_fit' \\(known: best, greedy_by_size"):
        _replanned(compiled, strategy="first_fit")


# --------------------------------------------------------------------------------------------
# In place
# --------------------------------------------------------------------------------------------


def _relu_chain(rng: np.random.Generator) -> tuple[ge.Graph, np.ndarray, np.ndarray]:
    """x[4, 32] @ w1 -> relu -> relu -> relu -> @ w2: 4 KiB activations between small ends."""
    w1 = rng.standard_normal((32, 256)).astype(np.float32)
    w2 = rng.standard_normal((256, 8)).astype(np.float32)
    g = ge.Graph()
    x = g.add_input("x", shape=[4, 32])
    h = g.add_matmul(x, g.add_constant(w1, name="w1"))
    h = g.add_relu(g.add_relu(g.add_relu(h)))
    g.add_output(g.add_matmul(h, g.add_constant(w2, name="w2")), "y")
    return g, w1, w2


def test_a_relu_chain_uses_fewer_bytes_in_place(rng: np.random.Generator) -> None:
    graph, w1, w2 = _relu_chain(rng)
    compiled = ge.GraphCompiler().compile(graph, optimization_level=0)
    inplace = _replanned(compiled)
    apart = _replanned(compiled, inplace=False)
    # Each relu writes over its input (the first over the matmul's result): one 4 KiB slot for
    # the chain (the input and the output are the caller's memory, not arena bytes).
    assert _memory(inplace)["inplace"] == 3
    assert _memory(inplace)["arena_bytes"] == _memory(inplace)["lower_bound_bytes"] == 4096
    assert _memory(apart)["inplace"] == 0
    assert _memory(apart)["arena_bytes"] == _memory(apart)["lower_bound_bytes"] == 2 * 4096
    assert _independent_lower_bound(inplace) == 4096
    assert inplace.memory.lower_bound_bytes == 4096, "CompiledModel.memory sees the pairs too"
    x = rng.standard_normal((4, 32)).astype(np.float32)
    expected = np.maximum(x @ w1, 0) @ w2
    for planned in (inplace, apart):
        np.testing.assert_allclose(_run(planned, x)[0], expected, rtol=1e-4, atol=1e-4)


def test_an_input_still_read_later_is_not_overwritten(rng: np.random.Generator) -> None:
    w = rng.standard_normal((32, 256)).astype(np.float32)
    g = ge.Graph()
    x = g.add_input("x", shape=[4, 32])
    h = g.add_matmul(x, g.add_constant(w, name="w"), name="h")
    r = g.add_relu(h, name="r")
    s = g.add_add(r, h, name="s")  # h is read again after the relu
    g.add_output(g.add_relu(s, name="y"), "y")  # a graph output: never in place
    compiled = _replanned(ge.GraphCompiler().compile(g, optimization_level=0))
    intervals = lifetimes(compiled.model, 512)
    by_name = {i.buffer.buffer.name_hint: i for i in intervals}
    declared = {i.buffer.buffer.name_hint: i.inplace_of for i in intervals if i.inplace_of is not None}
    assert list(declared) == ["s"] and declared["s"] is by_name["r"].buffer
    assert by_name["r"].buffer.offset.value.data != by_name["h"].buffer.offset.value.data
    assert _memory(compiled)["inplace"] == 1
    xs = rng.standard_normal((4, 32)).astype(np.float32)
    hs = xs @ w
    np.testing.assert_allclose(
        _run(compiled, xs)[0], np.maximum(np.maximum(hs, 0) + hs, 0), rtol=1e-4, atol=1e-4
    )


def test_graph_inputs_and_outputs_are_never_in_place() -> None:
    g = ge.Graph()
    g.add_output(g.add_relu(g.add_relu(g.add_input("x", shape=[64]))), "y")
    compiled = ge.GraphCompiler().compile(g, optimization_level=0)
    assert inplace_pairs(compiled.model, lifetimes(compiled.model, 512)) == {}


# --------------------------------------------------------------------------------------------
# The validator
# --------------------------------------------------------------------------------------------


def test_validator_catches_an_overlapping_plan() -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[16])
    e = g.add_relu(x, name="e")
    g.add_output(g.add_add(g.add_relu(g.add_relu(e, name="r1"), name="r2"), e))
    compiled = ge.GraphCompiler().compile(g, optimization_level=0)
    intervals = lifetimes(compiled.model, 512)
    offsets = greedy_by_size(intervals)
    validate(intervals, offsets)
    by_name = {i.buffer.buffer.name_hint: i for i in intervals}
    broken = dict(offsets)
    broken[by_name["r2"].buffer] = offsets[by_name["e"].buffer]  # e is still read by add
    with pytest.raises(CompileError, match="are live together"):
        validate(intervals, broken)


def test_validator_accepts_exactly_the_declared_inplace_pairs(rng: np.random.Generator) -> None:
    graph, _, _ = _relu_chain(rng)
    compiled = ge.GraphCompiler().compile(graph, optimization_level=0)
    raw = lifetimes(compiled.model, 512)
    pairs = inplace_pairs(compiled.model, raw)
    declared = [dataclasses.replace(i, inplace_of=pairs.get(i.buffer)) for i in raw]
    for strategy in ("greedy_by_size", "size_binned"):
        _, offsets = plan(declared, strategy)
        validate(declared, offsets)
        # The same offsets without the declarations: every in-place pair is an overlap.
        with pytest.raises(CompileError, match="are live together"):
            validate(raw, offsets)
    # A declared pair that does not share its bytes exactly is refused.
    output, source = next(iter(pairs.items()))
    shifted = dict(offsets)
    shifted[output] = offsets[source] + 512
    with pytest.raises(CompileError, match="is declared in place of"):
        validate(declared, shifted)
    # A declaration between buffers that are not born where the other dies is refused.
    first = declared[0]
    wrong = [dataclasses.replace(i, inplace_of=first.buffer) if i is declared[-1] else i for i in declared]
    with pytest.raises(CompileError, match="is declared in place of"):
        validate(wrong, {i.buffer: 0 for i in wrong})


# --------------------------------------------------------------------------------------------
# The strategies on hand-made lifetimes
# --------------------------------------------------------------------------------------------


def _sweep(intervals: list[Interval]) -> int:
    """The lower bound by brute force over every task position."""
    times = range(min(i.start for i in intervals), max(i.end for i in intervals) + 1)
    return max(sum(i.size for i in intervals if i.start <= t <= i.end) for t in times)


def test_size_bins_are_powers_of_two_of_the_alignment() -> None:
    assert [size_bin(n * 512, 512) for n in (1, 2, 3, 4, 5, 8, 9)] == [
        512,
        1024,
        2048,
        2048,
        4096,
        4096,
        8192,
    ]


def test_size_binned_reuses_a_block_of_the_same_bin_then_the_smallest_that_holds() -> None:
    # c (4096) and a (1536, bin 2048) open two blocks; b (2048) takes a's block, of its bin, once
    # a is dead. At task 4, d (1024) finds the 4096 and 2048 blocks free and takes the smaller;
    # f (512) takes the other; g finds none free and opens a block at the end of the arena.
    spans = [(0, 1, 1536), (0, 3, 4096), (2, 3, 2048), (4, 5, 1024), (4, 5, 512), (4, 5, 512)]
    a, c, b, d, f, g = intervals = _intervals(spans)
    offsets = size_binned(intervals)
    assert offsets[c.buffer] == 0 and offsets[a.buffer] == offsets[b.buffer] == 4096
    assert offsets[d.buffer] == 4096 and offsets[f.buffer] == 0
    assert offsets[g.buffer] == 4096 + 2048
    validate(intervals, offsets)


def test_greedy_tries_birth_order_where_largest_first_fragments() -> None:
    # Largest-first in birth order fragments this case (4608 bytes) and size-binned blocks need
    # 4096; greedy-by-size's other orders reach the lower bound, 3584.
    intervals = _intervals([(1, 3, 1536), (3, 4, 1536), (4, 4, 2048), (0, 2, 1536)])
    merged = slots(intervals)
    apart = ~(precedence(merged) | precedence(merged).T)
    largest_first = sorted(range(len(merged)), key=lambda k: (-merged[k].size, merged[k].start))
    assert arena_bytes(intervals, _first_fit(merged, largest_first, apart)) == 4608
    assert arena_bytes(intervals, size_binned(intervals)) == 4096
    assert arena_bytes(intervals, greedy_by_size(intervals)) == 3584
    name, offsets = plan(intervals)
    assert name == "greedy_by_size" and arena_bytes(intervals, offsets) == 3584
    _, binned = plan(intervals, "size_binned")
    assert arena_bytes(intervals, binned) == 4096
    assert lower_bound(intervals) == _sweep(intervals) == 3584


def test_strategies_give_valid_plans_on_random_lifetimes() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        count = int(rng.integers(1, 30))
        starts = rng.integers(-1, 20, count)
        spans = [(int(s), int(s + rng.integers(0, 6)), 512 * int(rng.integers(1, 9))) for s in starts]
        intervals = _intervals(spans)
        assert lower_bound(intervals) == _sweep(intervals)
        for strategy in ("greedy_by_size", "size_binned"):
            _, offsets = plan(intervals, strategy)  # validates
            assert arena_bytes(intervals, offsets) >= _sweep(intervals)


# --------------------------------------------------------------------------------------------
# Streams: buffers share bytes only when the schedule orders them
# --------------------------------------------------------------------------------------------


def _blind(intervals: list[Interval]) -> list[Interval]:
    """The intervals as one stream's task list sees them: by position only."""
    return [dataclasses.replace(i, accesses=None, before_writes=None) for i in intervals]


def test_positions_order_buffers_as_closed_intervals() -> None:
    rng = np.random.default_rng(3)
    starts = rng.integers(-1, 30, 60)
    intervals = _intervals([(int(s), int(s + rng.integers(0, 8)), 512) for s in starts])
    ends = np.array([i.end for i in intervals])
    begins = np.array([i.start for i in intervals])
    np.testing.assert_array_equal(precedence(intervals), ends[:, None] < begins[None, :])


@pytest.mark.parametrize("name", ["inception_v1", "resnet50", "squeezenet", "shufflenet"])
def test_one_stream_plans_as_one_task_list(name: str) -> None:
    graph = ge.GraphParser().parse_onnx(str(LIGHT / f"light_{name}.onnx"))
    compiled = ge.GraphCompiler().compile(graph, optimization_level=3, max_streams=1)
    scheduled = lifetimes(compiled.model, 512)
    np.testing.assert_array_equal(precedence(scheduled), precedence(_blind(scheduled)))
    for strategy in ("greedy_by_size", "size_binned"):
        assert plan(scheduled, strategy)[1] == plan(_blind(scheduled), strategy)[1]
    offsets = {i.buffer: i.buffer.offset.value.data for i in scheduled}
    assert plan(_blind(scheduled))[1] == offsets
    assert _memory(compiled)["arena_bytes"] == arena_bytes(scheduled, offsets)


def test_validator_refuses_reuse_between_unordered_streams() -> None:
    graph = ge.GraphParser().parse_onnx(str(LIGHT / "light_inception_v1.onnx"))
    compiled = ge.GraphCompiler().compile(graph, optimization_level=3)
    scheduled = lifetimes(compiled.model, 512)
    validate(scheduled, {i.buffer: i.buffer.offset.value.data for i in scheduled})
    _, blind_offsets = plan(_blind(scheduled))  # valid for one stream only
    with pytest.raises(CompileError, match="are live together .* not ordered by the streams"):
        validate(scheduled, blind_offsets)


def test_in_place_waits_for_readers_on_other_streams(rng: np.random.Generator) -> None:
    # h is read by neg and then by relu; on one stream relu is h's last reader and may write over
    # it. On two streams neg continues h's stream and relu opens another: neither is ordered
    # before the other, so relu may not overwrite what neg may still be reading.
    w = rng.standard_normal((32, 256)).astype(np.float32)
    g = ge.Graph()
    x = g.add_input("x", shape=[4, 32])
    h = g.add_matmul(x, g.add_constant(w, name="w"), name="h")
    s = g.add_op(NegOp, [h], name="s")
    r = g.add_relu(h, name="r")
    g.add_output(g.add_add(s, r, name="y"), "y")
    xs = rng.standard_normal((4, 32)).astype(np.float32)
    expected = -(xs @ w) + np.maximum(xs @ w, 0)
    for streams, inplace in ((1, 1), (2, 0)):
        compiled = _replanned(ge.GraphCompiler().compile(g, optimization_level=0, max_streams=streams))
        by_name = {i.buffer.buffer.name_hint: i for i in lifetimes(compiled.model, 512)}
        assert _memory(compiled)["inplace"] == inplace
        assert (by_name["r"].inplace_of is by_name["h"].buffer) == (inplace == 1)
        np.testing.assert_allclose(_run(compiled, xs)[0], expected, rtol=1e-4, atol=1e-4)
