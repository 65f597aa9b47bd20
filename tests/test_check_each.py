"""`check_each`: every stage of a compilation, run on its own executor, computes what the input
graph computes; the first pass that does not is named with the output, the difference and the
ops it changed."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import pytest
from models import cnn, mlp
from test_transformer_graphs import encoder_block
from wrong_passes import (
    AddIntoSubPass,
    DropReluPass,
    OverlapBuffersPass,
    ScaleConstantPass,
    ScaleWeightPass,
    SwapWeightsPass,
    adds,
)
from xdsl.dialects.builtin import bf16, f16, f32, i32
from xdsl.passes import ModulePass

import ge
from ge.checking import NumericCheck, compare, tolerance
from ge.dialects.common import TARGET_ATTR_NAME
from ge.passes.manager import PassManager
from ge.passes.pipelines import pipeline
from ge.passes.session import CompileSession
from ge.soc import load_profile

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def transformer() -> ge.Graph:
    return ge.GraphParser().parse_onnx(encoder_block(17))


def run(graph: ge.Graph, passes: list[ModulePass], **options) -> NumericCheck:
    """Runs `passes` on `graph` as `compile` does, with the numeric check between passes."""
    module = graph.module.clone()
    module.attributes[TARGET_ATTR_NAME] = load_profile("npu").target_attr()
    check = NumericCheck(**options)
    PassManager(passes, instruments=[check]).run(module, CompileSession(graph.weights.copy()))
    return check


def with_pass(level: int, wrong: ModulePass, after: str | None = None) -> list[ModulePass]:
    """The pipeline of `level` with `wrong` first, or right after the pass named `after`."""
    passes = pipeline(level)
    position = 0 if after is None else [p.name for p in passes].index(after) + 1
    passes.insert(position, wrong)
    return passes


@pytest.mark.parametrize("level", [0, 1, 2, 3])
@pytest.mark.parametrize("build", [lambda: cnn().graph, lambda: mlp().graph, transformer])
def test_correct_models_pass_at_every_level(build, level: int) -> None:
    compiled = ge.GraphCompiler().compile(build(), optimization_level=level, check_each=True)
    assert "check_each" not in compiled.options


@pytest.mark.parametrize("mode", ["allow_mix_precision", "force_fp16", "allow_mix_precision_bf16"])
@pytest.mark.parametrize("build", [lambda: cnn().graph, transformer])
def test_correct_models_pass_under_a_precision_mode(build, mode: str) -> None:
    ge.GraphCompiler().compile(build(), precision_mode=mode, check_each=True)


def test_a_light_model_passes_at_o3() -> None:
    graph = ge.GraphParser().parse_onnx(str(LIGHT / "light_squeezenet.onnx"))
    ge.GraphCompiler().compile(graph, check_each=True)


def test_every_level_runs_on_its_executor() -> None:
    """Graph passes on the interpreter, kernel passes with run_kernels, stream passes on the
    emulator; passes that change nothing are not run again."""
    check = run(cnn().graph, pipeline(3))
    assert check.checked == [
        "ge-fuse-bias-activation",
        "ge-lower-graph-to-kernel",
        "ge-assign-formats",
        "ge-tile-kernels",
        "ge-lower-kernel-to-stream",
        "ge-assign-streams",
        "ge-plan-memory",
    ]


def test_a_wrong_pass_is_named_with_the_ops_it_changed() -> None:
    with pytest.raises(ge.CheckError) as info:
        run(adds(), with_pass(3, AddIntoSubPass()))
    message = str(info.value)
    assert message.startswith("test-add-into-sub: output 'y' differs: max |diff| 1 at [")
    assert "added 'ascend.graph.sub' at loc(\"add_0\")" in message
    assert "removed 'ascend.graph.add' at loc(\"add_0\")" in message
    assert "\n" not in message
    failure = info.value.failure
    assert (failure.pass_name, failure.pass_index, failure.output) == ("test-add-into-sub", 0, "y")
    assert failure.max_diff == pytest.approx(1.0)
    assert len(failure.changes.added) == len(failure.changes.removed) == 5
    assert "(and 2 more)" in message  # at most 8 ops are named


def test_a_scaled_constant_is_named() -> None:
    with pytest.raises(ge.CheckError) as info:
        run(adds(), with_pass(1, ScaleConstantPass(), after="ge-simplify"))
    assert info.value.failure.pass_name == "test-scale-constant"
    assert info.value.failure.max_diff == pytest.approx(0.5)
    assert str(info.value.failure.changes) == (
        "ops it changed: added 'ascend.graph.const' at loc(\"c2\"); removed 'ascend.graph.const' "
        'at loc("c2"); modified \'ascend.graph.add\' at loc("add_2")'
    )


def test_a_pass_that_changes_only_weights_is_named() -> None:
    with pytest.raises(ge.CheckError, match=r"^test-scale-weight: output 'probs' .*only weights$"):
        run(mlp().graph, with_pass(2, ScaleWeightPass()))


def test_a_wrong_kernel_level_pass_is_caught_on_the_kernels() -> None:
    passes = with_pass(0, DropReluPass(), after="ge-lower-graph-to-kernel")
    with pytest.raises(
        ge.CheckError, match=r"^test-drop-relu: .*removed 'ascend.graph.relu' at loc\(\"relu\"\)"
    ):
        run(cnn().graph, passes)


def _residual() -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("x", [1, 8, 8, 8])
    a = g.add_relu(g.add_conv2d(x, 8, 3, padding=1, name="a"), name="ra")
    b = g.add_conv2d(g.add_relu(g.add_conv2d(a, 8, 3, padding=1, name="b")), 8, 3, padding=1, name="c")
    g.add_output(g.add_add(b, a, name="residual"), "y")
    return g


@pytest.mark.parametrize("level", [0, 3])
def test_a_wrong_stream_level_pass_is_caught_on_the_emulator(level: int) -> None:
    with pytest.raises(
        ge.CheckError, match=r"^test-swap-weights: output 'y' differs.*'ascend.stream.launch'"
    ):
        run(_residual(), [*pipeline(level), SwapWeightsPass()])


def test_a_stream_level_pass_that_overlaps_live_buffers_is_refused_by_verification() -> None:
    with pytest.raises(
        ge.VerificationError, match=r"^the output of test-overlap-buffers is invalid: .* live at once"
    ):
        run(_residual(), [*pipeline(3), OverlapBuffersPass()])


def test_compile_stops_at_the_wrong_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ge.compile_plan, "pipeline", lambda level, *_: with_pass(level, DropReluPass()))
    graph = cnn().graph
    with pytest.raises(ge.CheckError, match=r"^test-drop-relu: output 'probs' differs"):
        ge.GraphCompiler().compile(graph, check_each=True)
    ge.GraphCompiler().compile(graph)  # unchecked, the wrong result goes unnoticed


def test_given_inputs_are_used() -> None:
    """Dropping relus is right on inputs where no value the relus see is negative."""
    g = ge.Graph()
    g.add_output(g.add_relu(g.add_input("x", [2, 3]), name="relu"), "y")
    passes = with_pass(0, DropReluPass())
    with pytest.raises(ge.CheckError, match="test-drop-relu"):
        run(g, passes)
    positive = np.arange(6, dtype=np.float32).reshape(2, 3)
    check = run(g, passes, inputs={"x": positive})
    np.testing.assert_array_equal(check.arguments[0], positive)
    compiled = ge.GraphCompiler().compile(g, check_each={"x": positive})
    assert "check_each" not in compiled.options


def test_seeded_inputs() -> None:
    """Floats uniform in [-1, 1] from a fixed seed, integers zeros."""
    first, again = run(transformer(), pipeline(0)), run(transformer(), pipeline(0))
    (ids,) = first.arguments
    assert ids.dtype == np.int64 and not ids.any()
    (x,) = run(cnn().graph, pipeline(0)).arguments
    assert x.dtype == np.float32 and -1 <= x.min() < -0.9 and 0.9 < x.max() <= 1
    np.testing.assert_array_equal(run(cnn().graph, pipeline(0)).arguments[0], x)
    np.testing.assert_array_equal(first.reference[0], again.reference[0])


@pytest.mark.parametrize(
    "value, message",
    [
        ("yes", "check_each takes True, False or a dict of input arrays by name"),
        ({"x": [1.0]}, "check_each input 'x' must be a numpy array"),
        (
            {"z": np.zeros(4, np.float32)},
            r"the checked inputs name what the graph does not take: z \(it takes: x\)",
        ),
        ({"x": np.zeros(3, np.float32)}, r"checked input 'x' has shape \[3\], the graph takes \[4\]"),
        ({"x": np.zeros(4, np.complex64)}, "checked input 'x' is complex64, the graph takes float32"),
    ],
)
def test_bad_check_each_values_are_refused(value: object, message: str) -> None:
    with pytest.raises(ge.CompileError, match=message):
        ge.GraphCompiler().compile(adds(), check_each=value)


def test_compare_nans_infinities_and_integers() -> None:
    tight = (1e-4, 1e-5)
    nan = np.float32(np.nan)
    assert compare(np.array([1.0, nan], np.float32), np.array([1.00001, nan], np.float32), tight) is None
    problem, worst = compare(np.array([1.0, 2.0], np.float32), np.array([1.0, nan], np.float32), tight)
    assert worst == math.inf and "at [1] (expected 2, got nan; 1 of 2 elements" in problem
    inf = np.float32(np.inf)
    assert compare(np.array([inf, -inf]), np.array([inf, -inf]), tight) is None
    assert compare(np.array([inf]), np.array([1e30]), tight)[1] == math.inf
    problem, worst = compare(np.array([[1, 5]]), np.array([[1, 7]]), None)
    assert worst == 2 and "at [0, 1] (expected 5, got 7; 1 of 2 elements beyond exactly)" in problem
    assert compare(np.array([True]), np.array([False]), None) is not None
    assert compare(np.array(["a"]), np.array(["a"]), None) is None
    assert (
        "is float16 [2], the reference float32 [2]"
        in compare(np.zeros(2, np.float32), np.zeros(2, np.float16), tight)[0]
    )


def test_tolerance_follows_dtype_and_precision_mode() -> None:
    """must_keep_origin_dtype holds float32 outputs to 1e-4 and float16 to 1e-2; a mode that
    changes dtypes on purpose is held to 5e-2."""
    assert tolerance(f32, "must_keep_origin_dtype") == (1e-4, 1e-5)
    assert (
        tolerance(f16, "must_keep_origin_dtype") == tolerance(bf16, "must_keep_origin_dtype") == (1e-2, 1e-2)
    )
    assert tolerance(f32, "force_fp16") == (5e-2, 5e-2)
    assert tolerance(i32, "force_fp16") is None
