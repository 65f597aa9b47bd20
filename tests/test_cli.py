"""The `ge` command: each subcommand through click's test runner, and once end to end as a
process, checked against the library (GraphExecutor, CompiledModel) on small models."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner, Result
from models import mlp, relu_add
from onnx import TensorProto, helper
from test_atc_options import O1

import ge
from ge.dialects import graph as ops
from ge.dialects.stream import LaunchOp
from ge.options import COMPILE_OPTIONS
from ge.tools import cli_compile
from ge.tools.cli import cli
from ge.tools.cli_base import step
from ge.tools.cli_compile import compile_command

TINY_CNN = str(Path(ge.__file__).parent / "models" / "tiny_cnn.onnx")
TINY_CNN_NODES = 10
"""Conv, BatchNormalization, Relu, MaxPool, Conv, Relu, GlobalAveragePool, Flatten, Gemm, Softmax."""


def ge_command(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, prog_name="ge")


def error_lines(result: Result) -> list[str]:
    return result.stderr.splitlines()


@pytest.fixture(scope="module")
def relu_add_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("models") / "relu_add.onnx"
    onnx.save(relu_add(), path)
    return str(path)


@pytest.fixture(scope="module")
def tiny_ge(tmp_path_factory) -> str:
    """tiny_cnn compiled by the library at O3."""
    path = tmp_path_factory.mktemp("compiled") / "tiny.ge"
    ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(TINY_CNN)).save(path)
    return str(path)


@pytest.fixture(scope="module")
def branches_ge(tmp_path_factory) -> str:
    """`relu(x) + neg(x)` at O0 on up to 4 streams: the two branches take two streams and an event."""
    g = ge.Graph()
    x = g.add_input("x", shape=[64])
    a = g.add_op(ops.ReluOp, [x], name="a")
    b = g.add_op(ops.NegOp, [x], name="b")
    g.add_output(g.add_op(ops.AddOp, [a, b], name="y"), "y")
    path = tmp_path_factory.mktemp("compiled") / "branches.ge"
    ge.GraphCompiler().compile(g, optimization_level=0, max_streams=4).save(path)
    return str(path)


# --------------------------------------------------------------------------------------------
# compile


def test_every_compile_option_is_a_flag() -> None:
    flags = {opt for p in compile_command.params for opt in (*p.opts, *p.secondary_opts)}
    for option in COMPILE_OPTIONS:
        assert f"--{option}" in flags, f"compile option {option} has no flag"
        assert f"--{option.replace('_', '-')}" in flags
    assert {"--no-sink", "--no-verify_each", "--no-verify-each"} <= flags


def test_compile_writes_a_model_with_the_options_given(tmp_path: Path) -> None:
    result = ge_command(
        "compile", "--model", TINY_CNN, "--framework", "5", "--output", tmp_path / "m",
        "--soc_version", "Ascend310P3", "--optimization-level", "2", "--max_streams", "2", "--no-sink",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"wrote {tmp_path / 'm.ge'}: ")
    compiled = ge.GraphCompiler.load(tmp_path / "m.ge")
    assert (compiled.target, compiled.optimization_level) == ("Ascend310P3", 2)
    assert compiled.options["max_streams"] == 2 and compiled.options["sink"] is False


def test_instrumentation_flags(tmp_path: Path) -> None:
    result = ge_command(
        "compile", "--model", TINY_CNN, "--framework", "onnx", "--output", tmp_path / "m.ge",
        "--optimization_level", "1", "--print_ir_before", "ge-simplify", "--print-ir-after", "dce",
        "--print_ir_after", "ge-tile-kernels", "--pass_timing", "--log", "info",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    headers = [line for line in error_lines(result) if line.startswith("// -----// IR Dump")]
    assert headers == [
        "// -----// IR Dump Before ge-simplify //----- //",
        "// -----// IR Dump After dce //----- //",
        "// -----// IR Dump After ge-tile-kernels //----- //",
    ]
    assert "Pass execution timing report" in result.stderr
    assert any(line.endswith("  ge-lower-kernel-to-stream") for line in error_lines(result))
    assert f"ge: INFO: parsed {TINY_CNN_NODES} ops in " in result.stderr


def test_dump_ir_writes_one_file_per_pass_in_order(tmp_path: Path) -> None:
    args = ["compile", "--model", TINY_CNN, "--framework", "5", "--optimization_level", "1"]
    result = ge_command(*args, "--output", tmp_path / "a", "--dump_ir", tmp_path / "flag")
    assert result.exit_code == 0, result.output
    expected = [f"{i:02d}_{name}.mlir" for i, name in enumerate(O1, 1)]
    assert sorted(p.name for p in (tmp_path / "flag").iterdir()) == expected
    env = {"DUMP_GE_GRAPH": "1", "DUMP_GRAPH_PATH": str(tmp_path / "env")}
    result = ge_command(*args, "--output", tmp_path / "b", env=env)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "env").iterdir()) == expected


def test_an_output_that_names_a_folder_is_refused(relu_add_file: str, tmp_path: Path) -> None:
    for output in (f"{tmp_path}/", str(tmp_path)):
        result = ge_command("compile", "--model", relu_add_file, "--framework", "5", "--output", output)
        assert result.exit_code == 1
        folder = f"--output {output} is a folder; give the model's path in it (PATH writes PATH.ge)"
        assert error_lines(result) == [f"ge compile: error: {folder}"]
    assert not (tmp_path / ".ge").exists()


def test_input_shape_out_nodes_and_output_type(relu_add_file: str, tmp_path: Path) -> None:
    result = ge_command(
        "compile", "--model", relu_add_file, "--framework", "5", "--output", tmp_path / "m",
        "--input_shape", "a:2,4;b:2,4", "--out_nodes", "relu:0", "--output_type", "FP16",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    compiled = ge.GraphCompiler.load(tmp_path / "m.ge")
    assert [(s.name, s.shape, s.dtype) for s in compiled.outputs] == [("r", (2, 4), "float16")]
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    a = np.array([[-1, 2, -3, 4], [5, -6, 7, -8]], np.float32)
    (r,) = executor.run({"a": a, "b": np.zeros((2, 4), np.float32)})
    np.testing.assert_array_equal(r, np.array([[0, 2, 0, 4], [5, 0, 7, 0]], np.float16))


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        (
            "--input_shape",
            "a:2,5;b:2,4",
            "input 'a' axis 1 is 4 in the model, the shape given [2, 5] makes it 5",
        ),
        (
            "--input_shape",
            "x:2,4",
            "--input_shape names 'x', which is no input of the model (its inputs: a, b)",
        ),
        ("--input_shape", "a=2,4", "--input_shape entry 'a=2,4' is not NAME:D,D,..."),
        ("--input_shape", "a:2,4;b:2,4;a:-1,4", "--input_shape names 'a' twice (a:2,4 and a:-1,4)"),
        ("--out_nodes", "sum:0", "out node 'sum' is no node of the model (its nodes: relu, add)"),
        ("--out_nodes", "relu:1", "node 'relu' has 1 output(s); output 1 does not exist"),
    ],
)
def test_bad_shapes_and_outputs_are_one_line(
    relu_add_file: str, tmp_path: Path, flag, value, message
) -> None:
    result = ge_command(
        "compile", "--model", relu_add_file, "--framework", "5", "--output", tmp_path / "m", flag, value
    )
    assert result.exit_code == 1
    (line,) = error_lines(result)
    assert line.startswith(f"ge compile: error: {message}")
    assert not (tmp_path / "m.ge").exists()


def test_mode_1_writes_every_launch_as_json(branches_ge: str, tmp_path: Path) -> None:
    result = ge_command("compile", "--mode", "1", "--om", branches_ge, "--json", tmp_path / "m.json")
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "m.json").read_text())
    compiled = ge.GraphCompiler.load(branches_ge)
    launches = [
        op.kernel.root_reference.data for op in compiled.model.body.block.ops if isinstance(op, LaunchOp)
    ]
    assert [t["launch"] for t in data["tasks"] if "launch" in t] == launches
    assert {t["stream"] for t in data["tasks"] if "launch" in t} == {0, 1}
    assert any("event_record" in t for t in data["tasks"]) and any("event_wait" in t for t in data["tasks"])
    assert data["manifest"]["target"] == compiled.target == "Ascend910B2"
    assert sum(w["size"] for w in data["weights"]) <= len(compiled.weight_blob)
    named = {b["name"] for b in data["buffers"]} | {w["name"] for w in data["weights"]}
    assert all(name in named for t in data["tasks"] if "launch" in t for name in t["inputs"] + t["outputs"])
    assert "ascend.stream.model" in data["ir"]


def unsupported_model() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="ok"),
        helper.make_node("Frobnicate", ["a"], ["b"], name="first"),
        helper.make_node("Twiddle", ["b"], ["y"], name="second"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_mode_3_lists_every_unsupported_op(tmp_path: Path) -> None:
    onnx.save(unsupported_model(), tmp_path / "bad.onnx")
    result = ge_command("compile", "--mode", "3", "--model", tmp_path / "bad.onnx", "--framework", "5")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "unsupported: Frobnicate (domain ai.onnx) at node 'first'",
        "unsupported: Twiddle (domain ai.onnx) at node 'second'",
    ]
    assert error_lines(result) == ["ge compile: error: 2 of 3 ops are not supported"]
    result = ge_command("compile", "--mode", "3", "--model", TINY_CNN, "--framework", "5")
    assert (result.exit_code, result.stdout) == (0, f"all {TINY_CNN_NODES} ops supported\n")


def test_a_tensorflow_model_compiles_runs_and_matches_tensorflow(tmp_path: Path) -> None:
    fixtures = Path(__file__).parent / "frontends" / "fixtures" / "tensorflow"
    recorded = np.load(fixtures / "cnn.npz")
    output = str(recorded["outputs"][0])
    result = ge_command(
        "compile", "--model", fixtures / "cnn.pb", "--framework", "3", "--output", tmp_path / "cnn",
        "--out_nodes", output,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    np.save(tmp_path / "x.npy", recorded["input_input_0"])
    result = ge_command(
        "run", tmp_path / "cnn.ge", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npz"
    )
    assert result.exit_code == 0, result.output
    with np.load(tmp_path / "y.npz") as outputs:
        (got,) = outputs.values()
    np.testing.assert_allclose(got, recorded["output_0"], rtol=1e-4, atol=1e-5)
    result = ge_command("compile", "--mode", "3", "--model", fixtures / "cnn.pb", "--framework", "3")
    assert result.exit_code == 0 and result.stdout.startswith("all ops supported (")


def test_mindspore_and_pytorch_models_compile_and_run_from_the_command_line(tmp_path: Path) -> None:
    import torch

    recorded = np.load(Path(__file__).parent / "frontends" / "fixtures" / "mindspore" / "lenet.npz")
    lenet = Path(__file__).parent / "frontends" / "fixtures" / "mindspore" / "lenet.mindir"
    torch.manual_seed(0)
    linear = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval()
    x = torch.randn(2, 4)
    torch.export.save(torch.export.export(linear, (x,)), tmp_path / "m.pt2")
    cases = [
        (lenet, "1", recorded["x"], recorded["y0"]),
        (tmp_path / "m.pt2", "pytorch", x.numpy(), linear(x).detach().numpy()),
    ]
    for model, framework, given, expected in cases:
        output = tmp_path / f"model_{framework}"
        result = ge_command("compile", "--model", model, "--framework", framework, "--output", output)
        assert result.exit_code == 0, result.output
        np.save(tmp_path / "x.npy", given)
        result = ge_command(
            "run", f"{output}.ge", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npz"
        )
        assert result.exit_code == 0, result.output
        with np.load(tmp_path / "y.npz") as outputs:
            (got,) = outputs.values()
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    result = ge_command(
        "compile", "--model", tmp_path / "m.pt2", "--framework", "pytorch", "--output", tmp_path / "p",
        "--input_shape", "x:2,4",
    )  # fmt: skip
    assert error_lines(result) == [
        "ge compile: error: --input_shape is not supported for PyTorch models: export the program "
        "with the shapes you want (or dynamic_shapes)"
    ]
    result = ge_command(
        "compile", "--model", tmp_path / "m.pt2", "--framework", "5", "--output", tmp_path / "p"
    )
    assert error_lines(result) == [
        f"ge compile: error: '{tmp_path / 'm.pt2'}' is a zip archive, not an ONNX model; a torch.export "
        "archive is --framework pytorch"
    ]


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("ge.frontends.tensorflow", "framework 3 (TensorFlow) is not yet supported: ge reads ONNX (5)"),
        ("tensorboard", "framework 3 (TensorFlow) needs tensorboard: pip install 'ge[tensorflow]'"),
        ("torch", "framework pytorch (PyTorch) needs torch: pip install 'ge[torch]'"),
    ],
)
def test_a_framework_without_its_frontend_or_package_says_so(
    missing: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def absent(name: str) -> None:
        raise ModuleNotFoundError(f"No module named '{missing}'", name=missing)

    monkeypatch.setattr(cli_compile.importlib, "import_module", absent)
    monkeypatch.setattr(
        cli_compile.importlib.util, "find_spec", lambda name: None if name != "ge.frontends.onnx" else 1
    )
    framework = "pytorch" if missing == "torch" else "3"
    result = ge_command("compile", "--model", TINY_CNN, "--framework", framework, "--output", tmp_path / "m")
    assert result.exit_code == 1
    (line,) = error_lines(result)
    assert line.startswith(f"ge compile: error: {message}")


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert ge_command("compile", "--no-such-flag").exit_code == 2
    assert ge_command("compile", "--model", TINY_CNN, "--framework", "5").exit_code == 2  # no --output
    assert ge_command("compile", "--mode", "1", "--om", "m.ge").exit_code == 2  # no --json
    assert ge_command("compile", "--optimization_level", "4").exit_code == 2
    assert ge_command("frobnicate").exit_code == 2


def test_a_missing_model_is_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    args = ["compile", "--model", tmp_path / "none.onnx", "--framework", "5", "--output", tmp_path / "m"]
    result = ge_command(*args)
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"ge compile: error: ONNX model file '{tmp_path / 'none.onnx'}' does not exist"
    ]
    result = ge_command(*args, "--log", "debug")
    assert result.exit_code == 1 and "Traceback (most recent call last)" in result.stderr
    assert error_lines(result)[-1].startswith("ge compile: error: ONNX model file")


def test_help_shows_defaults() -> None:
    for command in ("compile", "run", "inspect", "profile", "report", "bisect"):
        result = ge_command(command, "--help")
        text = " ".join(result.stdout.split())  # as click wraps it
        assert result.exit_code == 0 and text.startswith(f"Usage: ge {command} [OPTIONS]"), command
        assert "--log [debug|info|warning|error] what the ge logger prints" in text
        assert "(debug also shows tracebacks) [default: warning]" in text
    text = " ".join(ge_command("compile", "--help").stdout.split())
    assert "the SoC to compile for [default: Ascend910B2]" in text
    assert "0 (lowering only) to 3 [default: 3; 0<=x<=3]" in text
    assert "kernels listed, longest core time first [default: 10; x>=1]" in " ".join(
        ge_command("profile", "--help").stdout.split()
    )
    assert "or a name [default: 5]" in " ".join(ge_command("report", "--help").stdout.split())


# --------------------------------------------------------------------------------------------
# run, inspect, bisect


def test_run_prints_and_writes_the_executors_outputs(tiny_ge: str, tmp_path: Path) -> None:
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler.load(tiny_ge))
    (expected,) = executor.run(x)
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "x.npz", image=x)
    for given in ("x.npy", "x.npz", f"image={tmp_path / 'x.npy'}"):
        spec = given if "=" in given else str(tmp_path / given)
        result = ge_command("run", tiny_ge, "--input", spec, "--output", tmp_path / "y.npz")
        assert result.exit_code == 0, result.output
        with np.load(tmp_path / "y.npz") as saved:
            assert saved.files == ["probs"]
            np.testing.assert_array_equal(saved["probs"], expected)
    assert "probs" in result.stdout and "[1, 10]" in result.stdout and "float32" in result.stdout


def test_run_refuses_inputs_that_do_not_match(tiny_ge: str, tmp_path: Path) -> None:
    np.save(tmp_path / "small.npy", np.zeros((1, 3, 8, 8), np.float32))
    result = ge_command("run", tiny_ge, "--input", tmp_path / "small.npy")
    assert result.exit_code == 1
    assert error_lines(result) == [
        "ge run: error: input 'image' has shape [1, 3, 8, 8], the model expects [1, 3, 32, 32]"
    ]
    result = ge_command("run", tiny_ge, "--input", "other=x.npy")
    assert error_lines(result) == ["ge run: error: input file 'x.npy' for 'other' does not exist"]
    result = ge_command("run", tiny_ge, "--input", tmp_path)
    assert error_lines(result) == [f"ge run: error: input file '{tmp_path}' is a folder"]


def test_run_refuses_damaged_archives_and_an_input_given_twice(tiny_ge: str, tmp_path: Path) -> None:
    x = np.zeros((1, 3, 32, 32), np.float32)
    np.savez(tmp_path / "x.npz", image=x)
    (tmp_path / "cut.npz").write_bytes((tmp_path / "x.npz").read_bytes()[:100])
    np.savez(tmp_path / "objects.npz", image=np.array([{"a": 1}], dtype=object))
    with zipfile.ZipFile(tmp_path / "bytes.npz", "w") as archive:
        archive.writestr("image.npy", b"not an array")
    np.save(tmp_path / "x.npy", x)
    (tmp_path / "renamed.npz").write_bytes((tmp_path / "x.npy").read_bytes())
    cases = {
        "cut.npz": "cannot read inputs from '{}': it is not an .npz file",
        "renamed.npz": "cannot read inputs from '{}': it is not an .npz file",
        "objects.npz": "cannot read input 'image' from '{}': Object arrays cannot be loaded",
        "bytes.npz": "cannot read input 'image' from '{}': its member is not a .npy array",
    }
    for name, message in cases.items():
        result = ge_command("run", tiny_ge, "--input", tmp_path / name)
        assert result.exit_code == 1
        (line,) = error_lines(result)
        assert line.startswith("ge run: error: " + message.format(tmp_path / name)), line
    again = f"image={tmp_path / 'x.npy'}"
    result = ge_command("run", tiny_ge, "--input", tmp_path / "x.npz", "--input", again)
    assert error_lines(result) == [f"ge run: error: --input gives 'image' twice (the last is {again})"]


def test_inspect_reports_the_compiled_models_figures(branches_ge: str) -> None:
    compiled = ge.GraphCompiler.load(branches_ge)
    result = ge_command("inspect", branches_ge, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    memory = compiled.memory
    assert data["memory"] == {
        "arena_bytes": memory.arena_bytes,
        "lower_bound_bytes": memory.lower_bound_bytes,
        "no_reuse_bytes": memory.no_reuse_bytes,
        "weight_bytes": memory.weight_bytes,
    }
    assert data["kernels_by_kind"] == compiled.kernel_histogram() == {"vector": 3}  # relu, neg, add
    assert data["kernels_by_unit"] == {"vector": 3}
    assert data["techniques"] == []  # O0
    assert data["modelled_latency_us"] == pytest.approx(compiled.modelled_latency_us(), abs=1e-3)
    assert (data["target"], data["optimization_level"], data["sunk"]) == ("Ascend910B2", 0, False)
    assert data["events"] == 1 and len(data["streams"]) == 2
    ops = list(compiled.model.body.block.ops)
    for stream in data["streams"]:
        on = [
            op
            for op in ops
            if getattr(op, "stream", None) is not None and op.stream.value.data == stream["stream"]
        ]
        assert stream["launches"] == sum(op.name == "ascend.stream.launch" for op in on)
        assert stream["event_records"] == sum(op.name == "ascend.stream.event_record" for op in on)
        assert stream["event_waits"] == sum(op.name == "ascend.stream.event_wait" for op in on)
    assert sum(s["launches"] for s in data["streams"]) == compiled.num_operators
    table = ge_command("inspect", branches_ge).stdout
    assert str(memory.arena_bytes) in table and "event records" in table and "modelled latency" in table


def test_bisect_finds_no_culprit_in_a_correct_pipeline(tmp_path: Path) -> None:
    onnx.save(mlp().onnx_model, tmp_path / "mlp.onnx")
    result = ge_command("bisect", tmp_path / "mlp.onnx", "--optimization_level", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("no pass changes the result (")


def test_profile_prints_the_profilers_figures_and_writes_its_files(tiny_ge: str, tmp_path: Path) -> None:
    x = np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    trace, plot, roofline = tmp_path / "t.json", tmp_path / "timeline.png", tmp_path / "roofline.svg"
    result = ge_command(
        "profile", tiny_ge, "--input", tmp_path / "x.npy", "--trace", trace, "--plot", plot,
        "--roofline", roofline, "--top", "2",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler.load(tiny_ge))
    report = ge.GraphProfiler().profile(executor, x)
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Ascend910B2, sunk: 7 launches, modelled {report.latency_us:.2f} us")
    assert lines[1] == (
        f"npu utilization {report.npu_utilization:.1%}, compute (cube) {report.compute_utilization:.1%}, "
        f"HBM bandwidth {report.memory_bandwidth_utilization:.1%}"
    )
    longest = sorted(report.kernels, key=lambda k: -k.modelled_us)[:2]
    listed = [
        line.split()[0]
        for line in lines
        if line.split() and line.split()[0] in {k.kernel for k in report.kernels}
    ]
    assert listed == [k.kernel for k in longest] and "... 5 more kernels" in result.stdout
    events = json.loads(trace.read_text())["traceEvents"]
    assert sum(e["ph"] == "X" and e["pid"] == events[0]["pid"] for e in events) >= 7
    assert plot.read_bytes().startswith(b"\x89PNG") and b"<svg" in roofline.read_bytes()
    result = ge_command("profile", tiny_ge, "--input", tmp_path / "x.npy", "--plot", tmp_path / "t.bmp")
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"ge profile: error: cannot draw '{tmp_path / 't.bmp'}': the format follows the extension, "
        "one of .png, .svg, .pdf"
    ]


def test_report_prints_the_technique_reports_rows(relu_add_file: str) -> None:
    shapes = "a:3,4;b:3,4"
    result = ge_command("report", relu_add_file, "--input_shape", shapes, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    graph = ge.GraphParser().parse_onnx(relu_add_file, input_shapes={"a": [3, 4], "b": [3, 4]})
    compiler = ge.GraphCompiler()
    o0, o3 = compiler.compile(graph, optimization_level=0), compiler.compile(graph, optimization_level=3)
    assert [r["label"] for r in rows[:2]] == ["O0", "O3"]
    assert rows[0]["latency_us"] == pytest.approx(o0.modelled_latency_us())
    assert rows[1]["kernels"] == o3.num_operators
    assert len(rows) == 2 + 2 * 7 + 1  # the baselines, each technique off and on, mixed precision
    text = ge_command("report", relu_add_file, "--input_shape", shapes).stdout
    assert text.startswith("optimization techniques on Ascend910B2") and "O3 - sinking" in text
    result = ge_command("report", relu_add_file, "--framework", "3")
    assert result.exit_code == 1 and "not a frozen TensorFlow GraphDef" in result.stderr


API_MD_TOOLS = """
ge compile --model model.onnx --framework 5 --output model --soc_version Ascend910B2 \\
           --precision_mode allow_mix_precision --fusion_switch_file fusion.json
ge run model.ge --input x.npy --output y.npz
ge profile model.ge --input x.npy --trace trace.json --plot timeline.png
ge inspect model.ge
ge report model.onnx
ge compile --mode 1 --om model.ge --json m.json
ge bisect model.onnx
"""
"""The Tools block of shared/API.md that the `ge` command covers, with its `m.ge` named `model.ge`;
its gears line (`--dynamic_batch_size`) comes with dynamic shapes, a later issue."""


def test_api_md_tools_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    onnx.save(onnx.load(TINY_CNN), "model.onnx")
    Path("fusion.json").write_text(json.dumps({"Switch": {"GraphFusion": {"ge-fuse-gelu": "off"}}}))
    np.save("x.npy", np.random.default_rng(4).standard_normal((1, 3, 32, 32)).astype(np.float32))
    for line in API_MD_TOOLS.replace("\\\n", " ").strip().splitlines():
        result = ge_command(*shlex.split(line)[1:])
        assert result.exit_code == 0, f"{line}\n{result.output}"
    for written in ("model.ge", "y.npz", "trace.json", "timeline.png", "m.json"):
        assert Path(written).stat().st_size > 0, written
    assert ge.GraphCompiler.load("model.ge").options["precision_mode"] == "allow_mix_precision"


# --------------------------------------------------------------------------------------------
# End to end, as processes


def test_end_to_end(tmp_path: Path) -> None:
    def ge_process(*args: object) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "ge.tools.cli", *map(str, args)]
        return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)

    done = ge_process("compile", "--model", TINY_CNN, "--framework", "5", "--output", "m", "--log", "info")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m.ge").is_file() and "ge: INFO: compiled in " in done.stderr
    assert "\x1b" not in done.stderr  # no spinner when standard error is not a terminal
    x = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    done = ge_process("run", "m.ge", "--input", "x.npy", "--output", "y.npz")
    assert done.returncode == 0, done.stderr
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler.load(tmp_path / "m.ge"))
    with np.load(tmp_path / "y.npz") as saved:
        np.testing.assert_array_equal(saved["probs"], executor.run(x)[0])
    done = ge_process("inspect", "m.ge", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["kernels"] == executor.compiled.num_operators
    onnx.save(mlp().onnx_model, tmp_path / "mlp.onnx")
    done = ge_process("profile", "m.ge", "--input", "x.npy", "--trace", "t.json")
    assert done.returncode == 0 and (tmp_path / "t.json").is_file(), done.stderr
    done = ge_process("report", TINY_CNN, "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["rows"][0]["label"] == "O0", done.stderr
    done = ge_process("bisect", "mlp.onnx")
    assert done.returncode == 0 and done.stdout.startswith("no pass changes the result ("), done.stderr
    done = ge_process("compile", "--no-such-flag")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "ge compile: error: No such option '--no-such-flag'. (ge compile --help lists the options)"
    ]
    done = ge_process("inspect", "missing.ge")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "ge inspect: error: cannot read 'missing.ge': [Errno 2] No such file or directory: 'missing.ge'"
    ]


def test_a_spinner_shows_on_a_terminal_only_for_long_steps(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich then takes standard error for a terminal
    with step("quick", after_seconds=5.0):
        pass
    assert capsys.readouterr().err == ""
    with step("compiling", after_seconds=0.05):
        time.sleep(0.5)
    assert "compiling" in capsys.readouterr().err
