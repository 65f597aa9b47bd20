"""Bisection: the first pass that changes a model's outputs and, in a pattern pass, the first
rewrite that does; `ge bisect` (also `ge-bisect`) prints it."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from models import cnn, mlp
from wrong_passes import AddIntoSubPass, DropReluPass, ScaleConstantPass, adds
from xdsl.passes import ModulePass

import ge
import ge.tools.bisect
from ge.checking import NumericCheck
from ge.dialects.common import TARGET_ATTR_NAME
from ge.passes.manager import PassManager
from ge.passes.pipelines import pipeline
from ge.passes.session import CompileSession
from ge.soc import load_profile
from ge.tools.bisect import bisect
from ge.tools.cli import bisect_main as main


def with_pass(level: int, wrong: ModulePass, after: str | None = None) -> list[ModulePass]:
    passes = pipeline(level)
    position = 0 if after is None else [p.name for p in passes].index(after) + 1
    passes.insert(position, wrong)
    return passes


def input_adds(count: int = 4) -> ge.Graph:
    """`y = x + a0 + a1 + ...`, every addend an input, each add at loc("add_<i>"): no pass can
    fold them away, and the inputs decide which of them `AddIntoSub` breaks."""
    g = ge.Graph()
    y = g.add_input("x", [4])
    for i in range(count):
        y = g.add_add(y, g.add_input(f"a{i}", [4]), name=f"add_{i}")
    g.add_output(y, "y")
    return g


def rewrites_at(graph: ge.Graph, passes: list[ModulePass], limit: int, inputs) -> tuple[int, bool]:
    """How often AddIntoSub rewrote within the first `limit` actions, and whether the output
    of the last pass is still right."""
    module = graph.module.clone()
    module.attributes[TARGET_ATTR_NAME] = load_profile("npu").target_attr()
    session = CompileSession(graph.weights.copy())
    session.action_limit = limit
    try:
        PassManager(passes, instruments=[NumericCheck(inputs)]).run(module, session)
        right = True
    except ge.CheckError:
        right = False
    return session.rewrites.get("test-add-into-sub", {}).get("AddIntoSub", 0), right


@pytest.mark.parametrize("bad", [0, 2, 3])
def test_the_first_bad_rewrite_is_found(bad: int) -> None:
    """AddIntoSub rewrites every add, but only the one whose addend is not zero goes wrong: its
    application is the one found, however many actions earlier passes ran."""
    inputs = {f"a{i}": np.full(4, 0.5 if i == bad else 0.0, np.float32) for i in range(4)}
    passes = with_pass(3, AddIntoSubPass(), after="ge-fuse-bias-activation")
    result = bisect(input_adds(), inputs=inputs, passes=passes)
    assert result.found
    assert result.failure.pass_name == "test-add-into-sub"
    assert result.failure.output == "y"
    first, last = result.failure.actions
    assert first > 0  # the passes before it ran actions too
    action = result.action
    assert (action.pass_name, action.pattern) == ("test-add-into-sub", "AddIntoSub")
    assert action.op == f"'ascend.graph.add' at loc(\"add_{bad}\")"
    assert first < action.index <= last
    # The action is the pattern's (bad + 1)-th application: the first that breaks the output.
    prefix = passes[: result.failure.pass_index + 1]
    assert rewrites_at(input_adds(), prefix, action.index, inputs) == (bad + 1, False)
    assert rewrites_at(input_adds(), prefix, action.index - 1, inputs) == (bad, True)
    assert result.compilations >= 2
    assert f"first bad rewrite: action #{action.index} (the pass ran #{first + 1} to #{last}), pattern " in (
        result.report()
    )


def test_a_pass_without_patterns_is_named_alone() -> None:
    result = bisect(
        adds(), optimization_level=1, passes=with_pass(1, ScaleConstantPass(), after="ge-simplify")
    )
    assert result.failure.pass_name == "test-scale-constant"
    assert result.action is None and result.compilations == 1
    lines = result.report().splitlines()
    assert lines[0].startswith("test-scale-constant (pass 3 of 8) broke the result: output 'y' differs")
    assert lines[1] == (
        "  ops it changed: added 'ascend.graph.const' at loc(\"c2\"); removed 'ascend.graph.const' at "
        'loc("c2"); modified \'ascend.graph.add\' at loc("add_2")'
    )
    assert lines[2] == "  the pass ran no pattern actions, so the pass is the finest culprit"


@pytest.mark.parametrize("level", [0, 3])
def test_a_correct_pipeline_has_no_culprit(level: int) -> None:
    result = bisect(cnn().graph, level)
    assert not result.found and result.compilations == 1
    assert result.report() == f"no pass changes the result ({result.passes} passes checked)"


def test_precision_mode_sets_the_tolerance() -> None:
    assert not bisect(mlp().graph, precision_mode="force_fp16").found


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ge.CompileError, match="bisect takes a ge.Graph"):
        bisect("model.onnx")
    with pytest.raises(ge.CompileError, match="optimization_level must be 0, 1, 2 or 3"):
        bisect(adds(), optimization_level=5)
    with pytest.raises(ge.CompileError, match="unknown precision_mode"):
        bisect(adds(), precision_mode="fp8")
    with pytest.raises(ge.CompileError, match="bisect takes inputs as a dict of arrays by name"):
        bisect(adds(), inputs=[np.zeros(4)])


@pytest.fixture
def model_file(tmp_path) -> str:
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp().onnx_model, path)
    return str(path)


def run_main(arguments: list[str]) -> int:
    """`ge-bisect ARGUMENTS` in this process; its exit code."""
    with pytest.raises(SystemExit) as exit:
        main(arguments)
    return exit.value.code


def test_cli_reports_the_culprit(model_file: str, monkeypatch, capsys) -> None:
    monkeypatch.setattr(
        ge.tools.bisect, "pipeline", lambda level, *_, **__: with_pass(level, DropReluPass(), after="dce")
    )
    assert run_main([model_file]) == 0
    out = capsys.readouterr().out
    assert out.startswith("test-drop-relu (pass 4 of 19) broke the result: output 'probs' differs")
    assert "first bad rewrite: action #" in out and "pattern DropRelu on 'ascend.graph.relu'" in out


def test_cli_without_a_culprit(model_file: str, tmp_path, capsys) -> None:
    x = tmp_path / "x.npy"
    np.save(x, np.ones((4, 32)))
    assert (
        run_main([model_file, "-O", "2", "--precision-mode", "allow_mix_precision", "--input", f"x={x}"]) == 0
    )
    assert capsys.readouterr().out == "no pass changes the result (18 passes checked)\n"


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["missing.onnx"], "ONNX model file 'missing.onnx' does not exist"),
        (["{model}", "--input", "x"], "input file 'x' does not exist"),
        (["{model}", "--input", "x=missing.npy"], "input file 'missing.npy' for 'x' does not exist"),
        (
            ["{model}", "--input", "y={model}"],
            r"cannot read input for 'y' from '.*mlp.onnx': it is not a .npy",
        ),
        (
            ["{model}", "--input", "y={npy}"],
            r"the checked inputs name what the graph does not take: y \(it takes: x\)",
        ),
    ],
)
def test_cli_errors_are_one_line(
    arguments: list[str], message: str, model_file: str, tmp_path, capsys
) -> None:
    npy = tmp_path / "x.npy"
    np.save(npy, np.zeros((4, 32), np.float32))
    assert run_main([a.format(model=model_file, npy=npy) for a in arguments]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("ge bisect: error: ")
    assert re.search(message, err)


def test_cli_runs_as_a_process(model_file: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ge.tools.cli", "bisect", model_file, "-O", "0"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no pass changes the result")
    usage = subprocess.run(
        [sys.executable, "-m", "ge.tools.cli", "bisect", model_file, "-O", "7"],
        capture_output=True,
        text=True,
    )
    assert usage.returncode == 2
    assert usage.stderr.count("\n") == 1 and usage.stderr.startswith(
        "ge bisect: error: Invalid value for '-O'"
    )
    assert "7 is not in the range 0<=x<=3" in usage.stderr


def softmax_is_relu_plugin(tmp_path, name: str) -> str:
    """A plugin file registering the wrong fusion pattern `name`: softmax rewritten as relu."""
    plugin = tmp_path / f"{name.replace('-', '_')}.py"
    plugin.write_text(
        "import ge\n"
        "from ge.dialects import graph\n"
        "from xdsl.pattern_rewriter import RewritePattern\n"
        "class SoftmaxIsRelu(RewritePattern):\n"
        "    def match_and_rewrite(self, op, rewriter):\n"
        "        if isinstance(op, graph.SoftmaxOp):\n"
        "            rewriter.replace(op, graph.ReluOp.build_inferred([op.operands[0]]))\n"
        f"ge.register_fusion_pattern('{name}', SoftmaxIsRelu)\n"
    )
    return str(plugin)


def test_cli_loads_a_pass_plugin_and_names_its_pattern(model_file: str, tmp_path, capsys) -> None:
    """A wrong fusion pattern registered by a plugin (given twice, loaded once), found from the
    command line."""
    plugin = softmax_is_relu_plugin(tmp_path, "test-plugin-softmax-is-relu")
    try:
        assert run_main([model_file, "--load-pass-plugin", plugin, "--load-pass-plugin", plugin]) == 0
    finally:
        ge.unregister_pass("test-plugin-softmax-is-relu")
    out = capsys.readouterr().out
    assert out.startswith("test-plugin-softmax-is-relu (pass ")
    assert "pattern SoftmaxIsRelu on 'ascend.graph.softmax'" in out


def test_a_fusion_switch_file_turns_a_culprit_off(model_file: str, tmp_path, capsys) -> None:
    """The same pattern, switched off as GE's switch files do: nothing is left to find."""
    plugin = softmax_is_relu_plugin(tmp_path, "test-plugin-softmax-off")
    switch = tmp_path / "switch.json"
    switch.write_text('{"Switch": {"GraphFusion": {"test-plugin-softmax-off": "off"}}}')
    try:
        assert run_main([model_file, "--load-pass-plugin", plugin, "--fusion-switch-file", str(switch)]) == 0
    finally:
        ge.unregister_pass("test-plugin-softmax-off")
    assert capsys.readouterr().out.startswith("no pass changes the result")
