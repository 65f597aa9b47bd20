"""The emulator's run plan: built once at load, then runs that bind only inputs and outputs."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from xdsl.ir import Block, Operation

import ge
import ge.backend
from ge.context import make_context
from ge.dialects import graph as ops
from ge.dialects.stream import EventRecordOp, EventWaitOp, KernelFuncOp
from ge.emulator import Emulator, kernels, plan, runtime
from ge.errors import GeError
from ge.passes.stream.plan_memory import PlanMemoryPass
from ge.semantics import core as semantics_core
from tests import test_transformer_graphs as transformer
from tests.models import cnn, relu_add
from tests.sealed import reading_no_ir
from tests.test_gears import compile_gears, small_cnn
from tests.test_semantics_prepared import one_node

RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(scope="module")
def twin_cnn():
    twin = cnn(batch=2, size=16)
    compiled = ge.GraphCompiler().compile(twin.graph, optimization_level=3)
    session = onnxruntime.InferenceSession(twin.onnx_model.SerializeToString())
    return twin, compiled, session


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("a run must not walk the IR nor build any part of the plan")


def test_runs_walk_no_ir_and_build_nothing(twin_cnn, monkeypatch: pytest.MonkeyPatch, rng) -> None:
    twin, _, session = twin_cnn
    compiled = ge.GraphCompiler().compile(twin.graph, optimization_level=0)
    assert "cube" in compiled.kernel_histogram()
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    x = rng.standard_normal(twin.input_shape).astype(np.float32)
    executor.run(x)  # the first run checks races and every vector op's answer
    monkeypatch.setattr(plan, "bind", _refuse)
    monkeypatch.setattr(plan.RunPlan, "_prepare", _refuse)
    monkeypatch.setattr(kernels.PreparedKernel, "_prepare_op", _refuse)
    monkeypatch.setattr(kernels, "evaluator", _refuse)
    monkeypatch.setattr(Block, "ops", property(_refuse))
    monkeypatch.setattr(Operation, "walk", _refuse)
    for _ in range(2):
        x = rng.standard_normal(twin.input_shape).astype(np.float32)
        (got,) = executor.run(x)
        np.testing.assert_allclose(got, session.run(None, {twin.input_name: x})[0], rtol=RTOL, atol=ATOL)


def test_two_runs_give_each_inputs_answer_and_leave_inputs_and_earlier_outputs(twin_cnn, rng) -> None:
    twin, compiled, session = twin_cnn
    emulator = Emulator(compiled.module, compiled.weight_blob)
    first_x = rng.standard_normal(twin.input_shape).astype(np.float32)
    second_x = rng.standard_normal(twin.input_shape).astype(np.float32)
    kept_x = first_x.copy()
    first_x.flags.writeable = False  # a kernel writing the caller's input would raise
    (first,) = emulator.run([first_x])
    kept_first = first.copy()
    (second,) = emulator.run([second_x])
    np.testing.assert_array_equal(first_x, kept_x)
    np.testing.assert_array_equal(first, kept_first)  # run 2 wrote elsewhere
    assert not np.shares_memory(first, emulator.plan.arena)
    assert not np.shares_memory(first, second)
    for x, got in ((first_x, first), (second_x, second)):
        np.testing.assert_allclose(got, session.run(None, {twin.input_name: x})[0], rtol=RTOL, atol=ATOL)
    assert np.abs(first - second).max() > 1e-3


def test_outputs_that_are_inputs_or_weights_are_copies(rng) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[4, 8])
    g.add_output(x, "same")
    g.add_output(g.add_relu(x), "relu")
    compiled = ge.GraphCompiler().compile(g, optimization_level=0)
    data = rng.standard_normal((4, 8)).astype(np.float32)
    emulator = Emulator(compiled.module, compiled.weight_blob)
    same, relu = emulator.run([data])
    np.testing.assert_array_equal(same, data)
    np.testing.assert_array_equal(relu, np.maximum(data, 0))
    assert not np.shares_memory(same, data)
    again, _ = emulator.run([-data])
    np.testing.assert_array_equal(same, data)
    np.testing.assert_array_equal(again, -data)


def test_the_race_detector_runs_once(twin_cnn, monkeypatch: pytest.MonkeyPatch, rng) -> None:
    twin, compiled, _ = twin_cnn
    calls = []
    checked = runtime.find_races
    monkeypatch.setattr(runtime, "find_races", lambda *args: calls.append(1) or checked(*args))
    emulator = Emulator(compiled.module, compiled.weight_blob)
    assert calls == []  # not at load: the first run checks
    for _ in range(3):
        emulator.run([rng.standard_normal(twin.input_shape).astype(np.float32)])
    assert calls == [1]


def test_a_model_with_gears_builds_every_plan_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_gears(small_cnn(), dynamic_batch_size=[1, 4, 8])
    built = []
    original = plan.RunPlan.__init__

    def counting(self, model, *args, **kwargs) -> None:
        built.append(model)
        original(self, model, *args, **kwargs)

    monkeypatch.setattr(plan.RunPlan, "__init__", counting)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    assert len(built) == 3
    arenas = {id(e.plan.arena) for e in executor.emulators}
    assert len(arenas) == 1  # one arena, the largest gear's, as on the device
    assert executor.emulators[0].plan.arena.size == compiled.memory.arena_bytes
    session = onnxruntime.InferenceSession(small_cnn().SerializeToString())
    for batch in (8, 1, 4, 1):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)
        (got,) = executor.run(x)
        np.testing.assert_allclose(got, session.run(None, {"x": x})[0], rtol=RTOL, atol=ATOL)
    assert len(built) == 3


def test_a_wait_before_its_record_is_refused_at_load() -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[64])
    a, b = g.add_op(ops.ReluOp, [x]), g.add_op(ops.NegOp, [x])
    g.add_output(g.add_op(ops.AddOp, [a, b]), "y")
    compiled = ge.GraphCompiler().compile(g, optimization_level=0, max_streams=2)
    module = compiled.module.clone()
    (record,) = [o for o in module.walk() if isinstance(o, EventRecordOp)]
    (wait,) = [o for o in module.walk() if isinstance(o, EventWaitOp)]
    record.detach()
    wait.parent_block().insert_op_after(record, wait)
    with pytest.raises(GeError, match="was never recorded"):
        Emulator(module, compiled.weight_blob)


def test_a_given_arena_too_small_is_refused() -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[64])
    g.add_output(g.add_relu(g.add_op(ops.NegOp, [x])), "y")
    compiled = ge.GraphCompiler().compile(g, optimization_level=0)
    module = compiled.module.clone()
    size = compiled.model.arena_size.value.data
    assert size > 0
    with pytest.raises(GeError, match=f"the model needs {size:,}"):
        Emulator(module, compiled.weight_blob, arena=np.zeros(size - 1, np.uint8))


def test_the_onnx_backend_plans_each_compiled_program_once(monkeypatch: pytest.MonkeyPatch, rng) -> None:
    built = []
    original = plan.RunPlan.__init__

    def counting(self, model, *args, **kwargs) -> None:
        built.append(model)
        original(self, model, *args, **kwargs)

    monkeypatch.setattr(plan.RunPlan, "__init__", counting)
    rep = ge.backend.prepare(relu_add())
    for _ in range(3):
        a, b = (rng.standard_normal((2, 4)).astype(np.float32) for _ in range(2))
        (s,) = rep.run([a, b])
        np.testing.assert_allclose(s, np.maximum(a, 0) + b, rtol=RTOL, atol=ATOL)
    assert len(built) == 1  # the symbolic batch compiles at the first run, then is reused


def test_fused_epilogues_walk_no_ir_after_the_first_run(
    twin_cnn, monkeypatch: pytest.MonkeyPatch, rng
) -> None:
    twin, compiled, session = twin_cnn
    fused = [op for op in compiled.module.walk() if isinstance(op, ops.FusedOp)]
    assert fused, "the O3 model must hold fused ops for this test to mean anything"
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    x = rng.standard_normal(twin.input_shape).astype(np.float32)
    (first,) = executor.run(x)  # the first run checks each epilogue op's answer (`evaluate`)
    monkeypatch.setattr(semantics_core, "run_block", _refuse)
    monkeypatch.setattr(Block, "ops", property(_refuse))
    (again,) = executor.run(x)
    np.testing.assert_array_equal(again, first)  # the prepared steps give the reference's values
    other = rng.standard_normal(twin.input_shape).astype(np.float32)
    (got,) = executor.run(other)
    np.testing.assert_allclose(got, session.run(None, {twin.input_name: other})[0], rtol=RTOL, atol=ATOL)


def test_a_depthwise_convolution_reads_its_operands_as_stored(monkeypatch: pytest.MonkeyPatch, rng) -> None:
    """Only a FRACTAL_Z weight's layout depends on the convolution's groups: the NC1HWC0 input and
    the bias of a grouped convolution are read as stored, not decoded and laid out again per run."""
    from onnx import TensorProto, helper, numpy_helper

    from ge.emulator import cube_steps

    weights = {
        "pointwise": (rng.standard_normal((16, 3, 1, 1)) * 0.3).astype(np.float32),
        "depthwise": (rng.standard_normal((16, 1, 3, 3)) * 0.3).astype(np.float32),
        "bias": (rng.standard_normal(16) * 0.1).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "pointwise"], ["p"]),
        helper.make_node("Relu", ["p"], ["r"]),
        helper.make_node("Conv", ["r", "depthwise", "bias"], ["y"], group=16, pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(
        nodes,
        "depthwise",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 3, 8, 8))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, 16, 8, 8))],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(model), optimization_level=3)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    session = onnxruntime.InferenceSession(model.SerializeToString())
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    executor.run(x)
    monkeypatch.setattr(cube_steps, "from_device", _refuse)
    monkeypatch.setattr(cube_steps, "to_device", _refuse)
    (got,) = executor.run(x)
    np.testing.assert_allclose(got, session.run(None, {"x": x})[0], rtol=RTOL, atol=ATOL)


def test_kept_buffers_and_layouts_take_each_runs_values(rng) -> None:
    """A convolution keeps its padded input, the cube a read-only weight's loaded form and a
    vector op a read-only operand's layout (a Clip's bounds) from run to run: each run still
    reads its own input, and operands the caller passes are read afresh at every run, writable
    or not, even when the caller changes a read-only array's memory through another view."""
    from onnx import TensorProto, helper, numpy_helper

    channels = 20  # padded lanes in the second C0 block
    weights = {
        "depthwise": (rng.standard_normal((channels, 1, 3, 3)) * 0.3).astype(np.float32),
        "bias": (rng.standard_normal(channels) * 0.1).astype(np.float32),
        "low": np.array(0, np.float32),
        "high": np.array(0.5, np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "pointwise"], ["p"]),  # weights from the caller
        helper.make_node("Relu", ["p"], ["r"]),
        helper.make_node("Conv", ["r", "depthwise", "bias"], ["d"], group=channels, pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["d", "low", "high"], ["c"]),
        helper.make_node("Mul", ["c", "scale"], ["m"]),  # a scalar from the caller
        helper.make_node("Add", ["m", "shift"], ["y"]),  # a per-channel vector from the caller
    ]
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "kept",
        [
            value("x", TensorProto.FLOAT, (1, 3, 8, 8)),
            value("pointwise", TensorProto.FLOAT, (channels, 3, 1, 1)),
            value("scale", TensorProto.FLOAT, ()),
            value("shift", TensorProto.FLOAT, (channels, 1, 1)),
        ],
        [value("y", TensorProto.FLOAT, (1, channels, 8, 8))],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(model), optimization_level=3)
    assert compiled.kernel_histogram().get("cube", 0) >= 2
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    session = onnxruntime.InferenceSession(model.SerializeToString())
    memory = {  # the caller's memory, passed as read-only views (but "scale", passed writable)
        "pointwise": np.zeros((channels, 3, 1, 1), np.float32),
        "shift": np.zeros((channels, 1, 1), np.float32),
    }
    views = {name: array.view() for name, array in memory.items()}
    for view in views.values():
        view.flags.writeable = False
    answers = []
    for _ in range(3):
        for array in memory.values():
            array[...] = rng.standard_normal(array.shape)
        feeds = {
            "x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32),
            "scale": np.array(rng.standard_normal(), np.float32),
            **views,
        }
        (got,) = executor.run(feeds)
        (expected,) = session.run(None, {name: np.array(v) for name, v in feeds.items()})
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
        answers.append(got)
    assert np.abs(answers[0] - answers[1]).max() > 1e-2


@pytest.mark.parametrize("level", [0, 3])
def test_a_run_sets_the_error_state_once_and_warns_of_nothing(
    level: int, monkeypatch: pytest.MonkeyPatch, rng
) -> None:
    """The device raises no floating-point error: a run of ufunc ops that overflow and subtract
    inf from inf gives inf and NaN as stored, warns of nothing, and sets numpy's error state once,
    not per op."""
    import warnings

    g = ge.Graph()
    x = g.add_input("x", shape=[4, 16])
    y = g.add_mul(g.add_add(x, x), x)
    g.add_output(y, "y")
    g.add_output(g.add_relu(g.add_sub(y, y)), "z")
    compiled = ge.GraphCompiler().compile(g, optimization_level=level)
    emulator = Emulator(compiled.module, compiled.weight_blob)
    xs = rng.standard_normal((4, 16)).astype(np.float32)
    xs[0] *= 1e30
    emulator.run([xs])  # the first run checks every op's answer through the semantics
    made = []
    errstate = np.errstate
    monkeypatch.setattr(np, "errstate", lambda **kwargs: made.append(kwargs) or errstate(**kwargs))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got_y, got_z = emulator.run([xs])
    assert made == [{"all": "ignore"}]
    with np.errstate(all="ignore"):
        expected_y = (xs + xs) * xs
        expected_z = np.maximum(expected_y - expected_y, 0)
    np.testing.assert_array_equal(got_y, expected_y)
    np.testing.assert_array_equal(got_z, expected_z)
    assert np.isinf(got_y[0]).all() and np.isnan(got_z[0]).all() and np.isfinite(got_z[1:]).all()


def _kernel_copies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the kernels whose launches copy a result into its output (`np.copyto` after
    their steps), recorded from here on."""
    copies: list[str] = []
    launching: list[str] = []
    call, copy = kernels.PreparedKernel.__call__, np.copyto

    def launch(self: kernels.PreparedKernel, *args: object) -> None:
        launching.append(self.name)
        call(self, *args)  # pyright: ignore[reportArgumentType]

    def recorded(output: np.ndarray, result: np.ndarray) -> None:
        copies.append(launching[-1])
        copy(output, result)

    monkeypatch.setattr(kernels.PreparedKernel, "__call__", launch)
    monkeypatch.setattr(np, "copyto", recorded)
    return copies


def test_results_are_written_where_they_are_stored(twin_cnn, monkeypatch: pytest.MonkeyPatch, rng) -> None:
    """A convolution's accumulator, and its fused ReLU (one ufunc), go straight into the kernel's
    output, with no copy after the kernel's steps."""
    twin, compiled, session = twin_cnn
    cube = [
        op.sym_name.data
        for op in compiled.module.walk()
        if isinstance(op, KernelFuncOp) and op.unit.data.value == "cube" and "conv" in op.sym_name.data
    ]
    assert len(cube) == 2, "the two convolutions with their ReLUs"
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    executor.run(rng.standard_normal(twin.input_shape).astype(np.float32))
    copies = _kernel_copies(monkeypatch)
    x = rng.standard_normal(twin.input_shape).astype(np.float32)
    (got,) = executor.run(x)
    np.testing.assert_allclose(got, session.run(None, {twin.input_name: x})[0], rtol=RTOL, atol=ATOL)
    assert copies, "the pooling kernels still copy their results: the recording works"
    assert not set(cube) & set(copies)


def test_a_kernel_writing_over_its_input_computes_before_it_stores(
    monkeypatch: pytest.MonkeyPatch, rng
) -> None:
    """A ReLU the memory planner puts over its input (in place) is not written while it is read:
    its result is computed first, then stored; a matmul writing apart from its inputs stores in
    place."""
    w1, w2 = (rng.standard_normal(shape).astype(np.float32) for shape in ((32, 256), (256, 8)))
    g = ge.Graph()
    x = g.add_input("x", shape=[4, 32])
    h = g.add_relu(g.add_relu(g.add_matmul(x, g.add_constant(w1, name="w1"))))
    g.add_output(g.add_matmul(h, g.add_constant(w2, name="w2")), "y")
    compiled = ge.GraphCompiler().compile(g, optimization_level=0)
    module = compiled.module.clone()
    PlanMemoryPass().apply(make_context(), module)  # each ReLU over its input
    emulator = Emulator(module, compiled.weight_blob)
    launches = list(emulator.plan._launches)  # pyright: ignore[reportPrivateUsage]
    apart = {launch.func.name: launch.args[2] for launch in launches}  # pyright: ignore[reportAttributeAccessIssue]
    relus = [name for name in apart if "relu" in name.lower()]
    assert len(relus) == 2 and all(apart[name] == (False,) for name in relus)
    assert [apart[name] for name in apart if name not in relus] == [(True,), (True,)]
    data = rng.standard_normal((4, 32)).astype(np.float32)
    emulator.run([data])
    copies = _kernel_copies(monkeypatch)
    (y,) = emulator.run([data])
    np.testing.assert_allclose(y, np.maximum(data @ w1, 0) @ w2, rtol=1e-4, atol=1e-4)
    assert sorted(copies) == sorted(relus)


def test_weights_are_laid_out_for_the_cube_at_the_first_run_only(
    twin_cnn, monkeypatch: pytest.MonkeyPatch, rng
) -> None:
    """The convolutions' FRACTAL_Z weights become their L0B matrices once: later runs reuse them."""
    from ge.emulator import convolution

    twin, compiled, session = twin_cnn
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    executor.run(rng.standard_normal(twin.input_shape).astype(np.float32))
    monkeypatch.setattr(convolution, "l0b_columns", _refuse)  # the general route's L0B load
    monkeypatch.setattr(convolution, "from_device", _refuse)  # the narrow route's (3 channels)
    x = rng.standard_normal(twin.input_shape).astype(np.float32)
    (got,) = executor.run(x)
    np.testing.assert_allclose(got, session.run(None, {twin.input_name: x})[0], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("optimization_level", [0, 3])
def test_matmuls_writing_their_slices_of_a_concat(optimization_level: int, rng) -> None:
    """Two matmuls concatenated on their last axis each write a strided slice of the concat's
    buffer (a concat view): the accumulator cannot be summed there, so it is summed apart and
    copied, on every run."""
    w1, w2 = (rng.standard_normal(shape).astype(np.float32) for shape in ((32, 16), (32, 24)))
    g = ge.Graph()
    x = g.add_input("x", shape=[2, 8, 32])
    a = g.add_matmul(x, g.add_constant(w1, name="w1"))
    b = g.add_matmul(x, g.add_constant(w2, name="w2"))
    g.add_output(g.add_relu(g.add_concat([a, b], axis=-1)), "y")
    compiled = ge.GraphCompiler().compile(g, optimization_level=optimization_level)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    for _ in range(3):  # the first run's checked steps, then the fast ones
        data = rng.standard_normal((2, 8, 32)).astype(np.float32)
        (y,) = executor.run(data)
        want = np.maximum(np.concatenate([data @ w1, data @ w2], axis=-1), 0)
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


def _reading_no_ir_cases() -> list:
    rng = np.random.default_rng(5)
    ids = rng.integers(0, transformer.V, (transformer.B, transformer.S)).astype(np.int64)
    x, w, r = (rng.standard_normal(shape).astype(np.float32) for shape in ((6, 2, 4), (1, 20, 4), (1, 20, 5)))
    lstm = one_node("LSTM", 14, [x, w, r], known=(1, 2), outputs=3, hidden_size=5, direction="reverse")
    image = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    return [
        pytest.param(transformer.encoder_block(17), {"ids": ids}, id="encoder"),
        pytest.param(lstm, {"in0": x}, id="lstm"),
        pytest.param(cnn(batch=2, size=16).onnx_model, {"x": image}, id="cnn"),
    ]


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize(("model", "feeds"), _reading_no_ir_cases())
def test_a_run_after_the_first_reads_no_ir(model, feeds: dict[str, np.ndarray], level: int) -> None:
    """Every op's semantics are prepared at load (`ge.semantics.base.Prepared`): a run reads no
    op property and calls nothing of xDSL, and gives the first run's outputs."""
    compiled = ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(model), optimization_level=level)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    first = executor.run(feeds)
    with reading_no_ir([compiled.module]):
        second = executor.run(feeds)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
