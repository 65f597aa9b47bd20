"""`ge compile` with atc's gear flags: the `.ge` it writes runs with `ge run` at each gear, and each
misuse of the flags is one line on standard error."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from click.testing import CliRunner, Result
from test_gears import ATOL, RTOL, small_bert, small_cnn

from ge.artifact import read_manifest
from ge.tools.cli import cli


def ge_command(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="ge")


@pytest.fixture(scope="module")
def cnn_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("models") / "cnn.onnx"
    onnx.save(small_cnn(), path)
    return path


def test_compile_with_dynamic_batch_size_writes_a_model_that_runs_at_batch_4(
    cnn_file: Path, tmp_path: Path
) -> None:
    output = tmp_path / "cnn"
    result = ge_command(
        "compile", "--model", cnn_file, "--framework", "5", "--output", output,
        "--input_shape", "x:-1,3,8,8", "--dynamic_batch_size", "1,4,8",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3 gears (x[1,3,8,8] | x[4,3,8,8] | x[8,3,8,8])" in result.stdout
    assert [g["input_shapes"] for g in read_manifest(f"{output}.ge")["gears"]] == [
        {"x": [1, 3, 8, 8]},
        {"x": [4, 3, 8, 8]},
        {"x": [8, 3, 8, 8]},
    ]
    x = np.random.default_rng(4).standard_normal((4, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    ran = ge_command("run", f"{output}.ge", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npz")
    assert ran.exit_code == 0, ran.output
    (expected,) = onnxruntime.InferenceSession(small_cnn().SerializeToString()).run(None, {"x": x})
    np.testing.assert_allclose(np.load(tmp_path / "y.npz")["y"], expected, rtol=RTOL, atol=ATOL)
    inspected = ge_command("inspect", f"{output}.ge")
    assert inspected.exit_code == 0, inspected.output
    assert "x[4, 3, 8, 8]" in inspected.stdout
    assert "a smaller batch runs padded (output sample axes [0])" in inspected.stdout
    # a batch of 3 runs on gear 4, padded, and gives the 3 real samples
    np.save(tmp_path / "x3.npy", x[:3])
    ran = ge_command("run", f"{output}.ge", "--input", tmp_path / "x3.npy", "--output", tmp_path / "y3.npz")
    assert ran.exit_code == 0, ran.output
    np.testing.assert_allclose(np.load(tmp_path / "y3.npz")["y"], expected[:3], rtol=RTOL, atol=ATOL)


def test_compile_with_dynamic_dims_imports_each_gear(tmp_path: Path) -> None:
    """Each gear is imported again at its shapes, so shape arithmetic folds as at one shape."""
    onnx.save(small_bert(), tmp_path / "bert.onnx")
    result = ge_command(
        "compile", "--model", tmp_path / "bert.onnx", "--framework", "5", "--output", tmp_path / "bert",
        "--input_shape", "ids:-1,-1;mask:-1,-1", "--input_format", "ND", "--dynamic_dims", "1,8,1,8;2,4,2,4",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2 gears (ids[1,8], mask[1,8] | ids[2,4], mask[2,4])" in result.stdout


def test_a_dynamic_input_without_gears_or_input_shape_is_refused(cnn_file: Path, tmp_path: Path) -> None:
    result = ge_command("compile", "--model", cnn_file, "--framework", "5", "--output", tmp_path / "m")
    assert result.exit_code != 0
    (line,) = result.stderr.splitlines()
    assert "input 'x' has a dynamic dimension at axis 0" in line
    assert '--input_shape "x:N,3,8,8"' in line


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--dynamic_batch_size", "1,a"), '--dynamic_batch_size "1,a" is not B,B,... (whole numbers)'),
        (("--dynamic_batch_size", ""), '--dynamic_batch_size "" is not B,B,... (whole numbers)'),
        (
            ("--dynamic_batch_size", "2"),
            "--dynamic_batch_size 2 has 1 gear; atc takes 2 to 100 (a single shape is given by "
            "--input_shape alone)",
        ),
        (
            ("--dynamic_dims", "1;2"),
            '--dynamic_dims "1;2" fills dimensions of ND inputs, as atc\'s does: add --input_format ND',
        ),
        (
            ("--dynamic_batch_size", "1,2", "--dynamic_image_size", "8,8;16,16"),
            "--dynamic_batch_size and --dynamic_image_size are mutually exclusive (as atc's): give one "
            "kind of gears",
        ),
        (
            ("--input_shape", "image:-1,3,8,8", "--dynamic_batch_size", "1,2"),
            "--input_shape names 'image', which is no input of the model (its inputs: x)",
        ),
        (
            ("--input_shape", "x:-1,3,8", "--dynamic_batch_size", "1,2"),
            "input 'x' has 4 dimensions in the model, the shape given [-1, 3, 8] has 3",
        ),
    ],
)
def test_gear_flags_that_break_atcs_rules_are_one_line_naming_the_flags(
    cnn_file: Path, tmp_path: Path, flags: tuple[str, ...], message: str
) -> None:
    shape = () if "--input_shape" in flags else ("--input_shape", "x:-1,3,8,8")
    result = ge_command(
        "compile", "--model", cnn_file, "--framework", "5", "--output", tmp_path / "m", *shape, *flags
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"ge compile: error: {message}"]


def tiny_cnn_path() -> Path:
    return Path(str(files("ge.models") / "tiny_cnn.onnx"))


def test_a_model_exported_at_batch_1_compiles_batch_gears(tmp_path: Path) -> None:
    output = tmp_path / "m"
    result = ge_command(
        "compile", "--model", tiny_cnn_path(), "--framework", "5", "--output", output,
        "--input_shape", "image:-1,3,32,32", "--dynamic_batch_size", "1,2,4",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3 gears (image[1,3,32,32] | image[2,3,32,32] | image[4,3,32,32])" in result.stdout
    session = onnxruntime.InferenceSession(str(tiny_cnn_path()))  # the model at batch 1, per sample
    x = np.random.default_rng(6).standard_normal((4, 3, 32, 32)).astype(np.float32)
    expected = np.concatenate([session.run(None, {"image": x[i : i + 1]})[0] for i in range(4)])
    for batch in (2, 4):
        np.save(tmp_path / "x.npy", x[:batch])
        ran = ge_command("run", f"{output}.ge", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npz")
        assert ran.exit_code == 0, ran.output
        np.testing.assert_allclose(
            np.load(tmp_path / "y.npz")["probs"], expected[:batch], rtol=RTOL, atol=ATOL
        )
    inspected = ge_command("inspect", f"{output}.ge")
    assert inspected.exit_code == 0, inspected.output
    rows = dict(line.split("│")[1:3] for line in inspected.stdout.splitlines() if line.count("│") == 3)
    rows = {label.strip(): value.strip() for label, value in rows.items()}
    assert rows["kernels"].endswith(" (first gear)")
    assert rows["modelled latency (us)"].endswith(" (first gear)")
    assert "kernels by unit (first gear)" in inspected.stdout
    summary = json.loads(ge_command("inspect", f"{output}.ge", "--json").stdout)
    assert [sorted(gear) for gear in summary["gears"]] == [
        ["arena_bytes", "input_shapes", "kernels", "modelled_latency_us"]
    ] * 3


def test_a_model_exported_at_32_by_32_compiles_image_size_gears(tmp_path: Path) -> None:
    output = tmp_path / "m"
    result = ge_command(
        "compile", "--model", tiny_cnn_path(), "--framework", "5", "--output", output,
        "--input_shape", "image:1,3,-1,-1", "--dynamic_image_size", "32,32;64,64",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # the reference: the model with H and W made dynamic by hand, its output's shape left undeclared
    model = onnx.load(tiny_cnn_path())
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[2].dim_param, dims[3].dim_param = "height", "width"
    model.graph.output[0].type.tensor_type.ClearField("shape")
    x = np.random.default_rng(8).standard_normal((1, 3, 64, 64)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"image": x})
    np.save(tmp_path / "x.npy", x)
    ran = ge_command("run", f"{output}.ge", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npz")
    assert ran.exit_code == 0, ran.output
    np.testing.assert_allclose(np.load(tmp_path / "y.npz")["probs"], expected, rtol=RTOL, atol=ATOL)
