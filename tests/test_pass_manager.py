"""The pass manager: O-levels run as their passes, instrumentation, the compile session, and
custom passes and fusion patterns."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from test_atc_options import O1
from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, TensorType, f32, i64
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

import ge
from ge.dialects import graph as ops
from ge.interpreter import run_function
from ge.options import COMPILE_OPTIONS, INSTRUMENTATION_OPTIONS
from ge.passes import PASSES
from ge.passes.manager import PassManager, level_pass
from ge.passes.pipelines import fusion_passes, pipeline
from ge.passes.session import CompileSession, current
from ge.tools import ge_opt


def _mlp() -> ge.Graph:
    g = ge.Graph("mlp")
    x = g.add_input("x", [4, 8], "float32")
    w = g.add_constant(np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8), "w")
    one = g.add_splat(1.0, [4, 8], "float32", "one")
    h = g.add_relu(g.add_mul(g.add_matmul(x, w), one))
    g.add_output(g.add_add(h, x), "y")
    return g


def _run(compiled: ge.CompiledModel, x: np.ndarray) -> np.ndarray:
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    return executor.run({"x": x})[0]


@pytest.fixture
def registered() -> Iterator[list[str]]:
    """Names registered by a test, unregistered after it (the registry is per process)."""
    names: list[str] = []
    yield names
    for name in reversed(names):
        ge.unregister_pass(name)


# --------------------------------------------------------------------------------------------
# One pass manager


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_an_optimization_level_runs_as_its_passes(level: int) -> None:
    manager = PassManager([level_pass(level)()])
    assert [p.name for p in manager.passes] == [p.name for p in pipeline(level)]
    assert not any(p.name.startswith("ge-O") for p in manager.passes)


def test_instrumentation_options_are_compile_options() -> None:
    assert set(INSTRUMENTATION_OPTIONS) <= set(COMPILE_OPTIONS)
    assert {"verify_each", "print_ir_after_all", "print_ir_before", "print_ir_after", "pass_timing"} <= set(
        INSTRUMENTATION_OPTIONS
    )


def test_pass_timing_lists_every_pass_and_the_verifier() -> None:
    compiled = ge.GraphCompiler().compile(_mlp(), optimization_level=3, pass_timing=True)
    names = [name for name, _ in compiled.pass_timings]
    assert names == [p.name for p in pipeline(3)] + ["verifier"]
    assert all(seconds >= 0 for _, seconds in compiled.pass_timings)
    assert "pass_timing" not in compiled.options  # it watches the compile, it is not the model


def test_print_ir_before_and_after_name_the_passes(capsys: pytest.CaptureFixture[str]) -> None:
    ge.GraphCompiler().compile(
        _mlp(), optimization_level=1, print_ir_before="ge-simplify", print_ir_after=["dce", "ge-tile-kernels"]
    )
    err = capsys.readouterr().err
    headers = [line for line in err.splitlines() if line.startswith("// -----// IR Dump")]
    assert headers == [
        "// -----// IR Dump Before ge-simplify //----- //",
        "// -----// IR Dump After dce //----- //",
        "// -----// IR Dump After ge-tile-kernels //----- //",
    ]
    before_simplify = err.split(headers[0])[1].split(headers[1])[0]
    assert "ascend.graph.mul" in before_simplify  # x * 1 is still there; ge-simplify removes it
    assert "ascend.graph.mul" not in err.split(headers[1])[1].split(headers[2])[0]


def test_print_ir_after_all_prints_after_every_pass(capsys: pytest.CaptureFixture[str]) -> None:
    ge.GraphCompiler().compile(_mlp(), optimization_level=1, print_ir_after_all=True)
    headers = [line for line in capsys.readouterr().err.splitlines() if "IR Dump After" in line]
    assert headers == [f"// -----// IR Dump After {name} //----- //" for name in O1]


def test_printing_a_pass_the_pipeline_does_not_run_is_refused() -> None:
    with pytest.raises(
        ge.CompileError, match="print_ir_before names passes the pipeline does not run: ge-fuse-gelu"
    ):
        ge.GraphCompiler().compile(_mlp(), optimization_level=1, print_ir_before="ge-fuse-gelu")
    with pytest.raises(ge.CompileError, match="print_ir_after takes a pass name or a list of them"):
        ge.GraphCompiler().compile(_mlp(), print_ir_after=3)
    with pytest.raises(ge.CompileError, match="verify_each must be True or False"):
        ge.GraphCompiler().compile(_mlp(), verify_each="yes")


@dataclass(frozen=True)
class BreakResultType(ModulePass):
    """Gives the first relu a result type that contradicts its operand (invalid IR)."""

    name = "test-break-result-type"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        relu = next(o for o in op.walk() if isinstance(o, ops.ReluOp))
        wrong = ops.ReluOp.build(operands=[relu.operands[0]], result_types=[TensorType(f32, [1])])
        relu.parent.insert_op_before(wrong, relu)


def test_verify_each_names_the_pass_that_broke_the_ir(registered: list[str]) -> None:
    ge.register_pass(BreakResultType, after="ge-simplify")
    registered.append(BreakResultType.name)
    with pytest.raises(ge.VerificationError, match="the output of test-break-result-type is invalid"):
        ge.GraphCompiler().compile(_mlp(), optimization_level=1)
    # Without verify_each only the input and the compiled model are verified: the wrong op is
    # dead, DCE drops it, and the broken intermediate IR goes unnoticed.
    ge.GraphCompiler().compile(_mlp(), optimization_level=1, verify_each=False)


# --------------------------------------------------------------------------------------------
# The compile session


@dataclass(frozen=True)
class SeeSession(ModulePass):
    """Records the session current while it runs."""

    name = "test-see-session"
    seen: list = None  # type: ignore[assignment]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.seen.append(current())


def test_the_manager_makes_its_session_current_and_only_while_it_runs() -> None:
    seen: list[CompileSession] = []
    session = CompileSession()
    module = _mlp().module.clone()
    returned = PassManager([SeeSession(seen=seen), SeeSession(seen=seen)]).run(module, session)
    assert returned is session and seen == [session, session]
    assert current() is not session  # outside a run: a fresh session each time
    assert not hasattr(Context(), "weights")


def test_folded_weights_live_in_the_session(rng: np.random.Generator) -> None:
    g = ge.Graph("fold")
    x = g.add_input("x", [32], "float32")
    a = g.add_constant(rng.standard_normal(32).astype(np.float32), "a")
    b = g.add_constant(rng.standard_normal(32).astype(np.float32), "b")
    g.add_output(g.add_add(x, g.add_mul(a, b)))
    module = g.module.clone()
    session = PassManager(pipeline(1)[:1]).run(module, CompileSession(g.weights.copy()))
    assert len(session.weights) > len(g.weights)  # the folded a * b, of 32 elements
    x_value = rng.standard_normal(32).astype(np.float32)
    np.testing.assert_allclose(
        run_function(module, [x_value], session.weights)[0], run_function(g.module, [x_value], g.weights)[0]
    )


def test_pattern_counts_are_kept_per_pass_and_pattern() -> None:
    compiled = ge.GraphCompiler().compile(_mlp(), optimization_level=2)
    passes = compiled.fusion_report["passes"]
    assert passes["ge-fuse-bias-activation"]["AbsorbElementwiseTail"]["applied"] >= 1
    assert set(passes) <= set(fusion_passes())


# --------------------------------------------------------------------------------------------
# Custom passes and fusion patterns


@dataclass(frozen=True)
class DoubleOutput(ModulePass):
    """Multiplies the graph's output by two (a deliberately wrong pass)."""

    name = "test-double-output"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ret = next(o for o in op.walk() if o.name == "func.return")
        value = ret.operands[0]
        two = ops.ConstOp(FloatAttr(2.0, f32), value.type)
        mul = ops.MulOp.build_inferred([value, two.result])
        ret.parent.insert_ops_before([two, mul], ret)
        ret.operands = [mul.results[0]]


def test_a_registered_pass_runs_where_it_is_registered(registered: list[str]) -> None:
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    plain = _run(ge.GraphCompiler().compile(_mlp()), x)
    ge.register_pass(DoubleOutput, after="ge-fuse-bias-activation")
    registered.append(DoubleOutput.name)
    assert "test-double-output" in PASSES
    names = [p.name for p in pipeline(3)]
    assert names[names.index("ge-fuse-bias-activation") + 1] == "test-double-output"
    assert "test-double-output" not in [p.name for p in pipeline(0)]  # O0 runs no fusion
    np.testing.assert_allclose(_run(ge.GraphCompiler().compile(_mlp()), x), 2 * plain, rtol=1e-6)
    np.testing.assert_allclose(_run(ge.GraphCompiler().compile(_mlp(), optimization_level=0), x), plain)


def test_registration_refuses_what_it_cannot_use(registered: list[str]) -> None:
    class NotAPass:
        name = "test-not-a-pass"

    @dataclass(frozen=True)
    class BadName(ModulePass):
        name = "Bad_Name"

        def apply(self, ctx: Context, op: ModuleOp) -> None: ...

    @dataclass(frozen=True)
    class XdslName(ModulePass):
        name = "canonicalize"

        def apply(self, ctx: Context, op: ModuleOp) -> None: ...

    @dataclass(frozen=True)
    class Clash(ModulePass):
        name = "ge-constant-fold"

        def apply(self, ctx: Context, op: ModuleOp) -> None: ...

    cases = [
        (lambda: ge.register_pass(NotAPass), "takes a ModulePass subclass"),
        (lambda: ge.register_pass(BadName), "pass BadName needs a kebab-case name .* got 'Bad_Name'"),
        (lambda: ge.register_pass(XdslName), "'canonicalize' is taken by an xDSL pass"),
        (
            lambda: ge.register_pass(DoubleOutput, description=5),
            "description of 'test-double-output' must be text",
        ),
        (lambda: ge.register_fusion_pattern(3, NegateToRelu), "needs a kebab-case name .* got 3"),
        (lambda: ge.register_fusion_pattern("test-x", lambda a: None), "fails: .*missing 1 required"),
        (lambda: ge.register_fusion_pattern("test-x", int), "takes a RewritePattern class"),
        (lambda: ge.register_pass(Clash), "'ge-constant-fold' is taken by a built-in pass"),
        (lambda: ge.register_pass(DoubleOutput, after="ge-nothing"), "cannot run after 'ge-nothing'"),
        (lambda: ge.unregister_pass("ge-constant-fold"), "is a built-in pass"),
        (lambda: ge.unregister_pass("test-never-registered"), "no registered pass is named"),
    ]
    for call, message in cases:
        with pytest.raises(ge.GeError, match=message):
            call()
    ge.register_pass(DoubleOutput)
    registered.append(DoubleOutput.name)
    assert ge.register_pass(DoubleOutput) is DoubleOutput  # again: nothing changes
    assert "test-double-output" not in [p.name for p in pipeline(3)]  # no `after`: named only


@dataclass
class NegateToRelu(RewritePattern):
    """Rewrites `neg(x)` as `relu(x)` (deliberately wrong)."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        if isinstance(op, ops.NegOp):
            rewriter.replace(op, ops.ReluOp.build_inferred([op.operands[0]]))


def _negations() -> ge.Graph:
    g = ge.Graph("neg")
    x = g.add_input("x", [8], "float32")
    g.add_output(g.add_mul(g.add_op(ops.NegOp, [x]), g.add_op(ops.NegOp, [g.add_op(ops.TanhOp, [x])])), "y")
    return g


def test_a_registered_fusion_pattern_runs_with_the_fusions_and_can_be_switched_off(
    registered: list[str], tmp_path: Path
) -> None:
    ge.register_fusion_pattern("test-negate-to-relu", NegateToRelu)
    registered.append("test-negate-to-relu")
    assert fusion_passes()[-1] == "test-negate-to-relu"
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    compiled = ge.GraphCompiler().compile(_negations(), optimization_level=2)
    np.testing.assert_allclose(
        _run_named(compiled, x), np.maximum(x, 0) * np.maximum(np.tanh(x), 0), rtol=1e-6
    )
    counts = compiled.fusion_report["passes"]["test-negate-to-relu"]["NegateToRelu"]
    assert counts == {"matched": 2, "applied": 2}
    switch = tmp_path / "switch.json"
    switch.write_text(json.dumps({"Switch": {"GraphFusion": {"test-negate-to-relu": "off"}}}))
    off = ge.GraphCompiler().compile(_negations(), optimization_level=2, fusion_switch_file=switch)
    np.testing.assert_allclose(_run_named(off, x), x * np.tanh(x), rtol=1e-6)
    assert off.fusion_report["disabled"] == ["test-negate-to-relu"]


def _run_named(compiled: ge.CompiledModel, x: np.ndarray) -> np.ndarray:
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    return executor.run([x])[0]


def test_ge_opt_loads_a_pass_plugin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plugin = tmp_path / "my_plugin.py"
    plugin.write_text(
        "import ge\n"
        "from ge.dialects import graph\n"
        "from xdsl.pattern_rewriter import RewritePattern\n"
        "class NegToRelu(RewritePattern):\n"
        "    def match_and_rewrite(self, op, rewriter):\n"
        "        if isinstance(op, graph.NegOp):\n"
        "            rewriter.replace(op, graph.ReluOp.build_inferred([op.operands[0]]))\n"
        "ge.register_fusion_pattern('test-plugin-neg-to-relu', NegToRelu)\n"
    )
    source = tmp_path / "neg.mlir"
    source.write_text(
        "func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
        "  %0 = ascend.graph.neg %a : (tensor<8xf32>) -> tensor<8xf32>\n"
        "  func.return %0 : tensor<8xf32>\n"
        "}\n"
    )
    try:
        ge_opt.main([str(source), "--load-pass-plugin", str(plugin), "-p", "test-plugin-neg-to-relu"])
        out = capsys.readouterr().out
        assert "ascend.graph.relu" in out and "ascend.graph.neg" not in out
    finally:
        ge.unregister_pass("test-plugin-neg-to-relu")
    missing = tmp_path / "nothing.py"
    with pytest.raises(SystemExit) as exited:
        ge_opt.main([str(source), "--load-pass-plugin", str(missing), "-p", "dce"])
    assert exited.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("ge-opt: error: pass plugin") and "\n" not in err


def test_a_pattern_pass_that_rewrote_nothing_is_not_verified_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """ge-fuse-gelu finds no GELU in the MLP: the IR it returns is the IR it got."""
    from ge.passes import manager

    verified: list[str] = []
    real = manager.verify_module
    monkeypatch.setattr(
        manager, "verify_module", lambda m, what, s: (verified.append(what), real(m, what, s))
    )
    ge.GraphCompiler().compile(_mlp(), optimization_level=2)
    assert "the output of ge-fuse-gelu" not in verified
    assert "the output of ge-fuse-bias-activation" in verified  # it fused the matmul's tail
    assert "the output of ge-lower-graph-to-kernel" in verified  # not a pattern pass: always


@dataclass(frozen=True)
class CountRuns(ModulePass):
    """Counts its runs in the session's rewrites, as a pattern pass would."""

    name = "test-count-runs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        runs = current().rewrites.setdefault(self.name, {})
        runs["runs"] = runs.get("runs", 0) + 1


def test_a_registered_stage_runs_after_every_run_of_its_pass(registered: list[str]) -> None:
    ge.register_pass(CountRuns, after="ge-simplify")
    registered.append(CountRuns.name)
    names = [p.name for p in pipeline(2)]
    assert names.count("ge-simplify") == 2
    assert [names[i + 1] for i, n in enumerate(names) if n == "ge-simplify"] == ["test-count-runs"] * 2
    fused = ge.GraphOptimizer().apply_operator_fusion(_mlp())  # its own list of passes
    assert fused is not None
    module = _mlp().module.clone()
    session = PassManager([level_pass(2)()]).run(module, CompileSession())
    assert session.rewrites["test-count-runs"]["runs"] == 2


def test_an_optimization_level_run_as_a_pass_keeps_the_session(rng: np.random.Generator) -> None:
    """`ge-O1` applied inside a session folds into that session's weights."""
    g = ge.Graph("fold")
    x = g.add_input("x", [32], "float32")
    a = g.add_constant(rng.standard_normal(32).astype(np.float32), "a")
    g.add_output(g.add_add(x, g.add_mul(a, a)))
    module = g.module.clone()
    session = CompileSession(g.weights.copy())
    with session.activate():
        level_pass(1)().apply(Context(), module)
    assert any(op.name == "ascend.stream.model" for op in module.walk())
    assert len(session.weights) > len(g.weights)


@dataclass(frozen=True)
class Crash(ModulePass):
    """Fails the way a user's pass with a bug does."""

    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("index 3 is out of range")


def test_a_pass_that_raises_is_named(registered: list[str]) -> None:
    ge.register_pass(Crash, after="dce")
    registered.append(Crash.name)
    with pytest.raises(ge.CompileError, match="^test-crash: RuntimeError: index 3 is out of range$"):
        ge.GraphCompiler().compile(_mlp(), optimization_level=1)


@dataclass
class BreakSoftmaxAxis(RewritePattern):
    """Sets a softmax's axis out of range in place, without telling the rewriter."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        if isinstance(op, ops.SoftmaxOp) and op.properties["axis"] != IntegerAttr(7, i64):
            op.properties["axis"] = IntegerAttr(7, i64)


def test_a_registered_pattern_is_verified_even_when_it_says_it_changed_nothing(registered: list[str]) -> None:
    ge.register_fusion_pattern("test-break-softmax-axis", BreakSoftmaxAxis)
    registered.append("test-break-softmax-axis")
    g = ge.Graph("soft")
    x = g.add_input("x", [2, 8], "float32")
    g.add_output(g.add_softmax(g.add_relu(x)))
    with pytest.raises(ge.VerificationError, match="the output of test-break-softmax-axis is invalid"):
        ge.GraphCompiler().compile(g, optimization_level=2)
