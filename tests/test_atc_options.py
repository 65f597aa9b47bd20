"""What atc's flags ask of the library: input shapes fixed at import, outputs chosen by name,
float outputs cast, the IR dumped after every pass (also by GE's environment variables), and a
`.ge` file's manifest read alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from models import relu_add

import ge
from ge.artifact import FORMAT_VERSION, read_manifest

O1 = [
    "ge-constant-fold",
    "ge-simplify",
    "cse",
    "dce",
    "ge-lower-graph-to-kernel",
    "ge-tile-kernels",
    "ge-lower-kernel-to-stream",
]
"""The passes of O1, in order (docs/architecture.md lists them)."""


def small_graph() -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("x", [2, 3])
    g.add_output(g.add_relu(g.add_mul(x, x)), "y")
    return g


def run(graph: ge.Graph, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(graph))
    return executor.run(inputs)


# --------------------------------------------------------------------------------------------
# Input shapes and outputs at import


def test_input_shapes_fix_dynamic_dimensions() -> None:
    graph = ge.GraphParser().parse_onnx(relu_add(), input_shapes={"a": [2, 4], "b": [2, -1]})
    module = str(graph)  # -1 keeps the model's dimension: b's axis 1 is 4 in the model
    assert "%a: tensor<2x4xf32>" in module and "%b: tensor<2x4xf32>" in module
    assert "?" not in module
    kept = str(ge.GraphParser().parse_onnx(relu_add(), input_shapes={"a": [-1, -1]}))
    assert "%a: tensor<?x4xf32>" in kept  # and a dynamic one stays dynamic


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ({"c": [1, 4]}, "input_shapes names 'c', which is no input of the model (its inputs: a, b)"),
        ({"a": [2, 5]}, "input 'a' axis 1 is 4 in the model, the shape given [2, 5] makes it 5"),
        ({"a": [2]}, "input 'a' has 2 dimensions in the model, the shape given [2] has 1"),
        ({"a": [2, -2]}, "input_shapes['a'] takes sizes of at least 0, or -1 to keep the model's"),
    ],
)
def test_input_shapes_that_contradict_the_model_are_refused(shapes, message: str) -> None:
    with pytest.raises(ge.CompileError) as error:
        ge.GraphParser().parse_onnx(relu_add(), input_shapes=shapes)
    assert message in str(error.value)


def test_outputs_choose_what_the_graph_returns() -> None:
    model = relu_add()
    graph = ge.GraphParser().parse_onnx(model, input_shapes={"a": [2, 4], "b": [2, 4]}, outputs=["r"])
    assert graph.outputs == ["r"]
    assert [o.name for o in model.graph.output] == ["s"]  # the caller's model is left as it was
    a = np.array([[-1, 2, -3, 4], [5, -6, 7, -8]], np.float32)
    (r,) = run(graph, {"a": a, "b": np.ones((2, 4), np.float32)})
    np.testing.assert_array_equal(r, [[0, 2, 0, 4], [5, 0, 7, 0]])


def test_an_unknown_output_is_refused() -> None:
    with pytest.raises(ge.CompileError) as error:
        ge.GraphParser().parse_onnx(relu_add(), outputs=["q"])
    assert str(error.value) == "output 'q' is no value of the model (its node outputs: r, s)"


# --------------------------------------------------------------------------------------------
# Output dtype


def test_cast_outputs_converts_float_outputs_only() -> None:
    g = ge.Graph()
    x = g.add_input("x", [2, 2])
    g.add_output(g.add_relu(x), "y")
    g.add_output(g.add_cast(x, "int32"), "n")
    str(g)  # a graph whose module was read goes on being built
    g.cast_outputs("float16")
    assert g.outputs == ["y", "n"]
    x = np.array([[-1.5, 0.1], [2.0, 70000.0]], np.float32)
    y, n = run(g, {"x": x})
    assert (y.dtype, n.dtype) == (np.float16, np.int32)
    np.testing.assert_array_equal(y, np.array([[0, 0.1], [2.0, np.inf]], np.float16))
    np.testing.assert_array_equal(n, [[-1, 0], [2, 70000]])


# --------------------------------------------------------------------------------------------
# IR dumps


def dumped(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_dump_ir_writes_one_numbered_file_per_pass(tmp_path: Path) -> None:
    compiled = ge.GraphCompiler().compile(small_graph(), optimization_level=1, dump_ir=tmp_path / "ir")
    assert dumped(tmp_path / "ir") == [f"{i:02d}_{name}.mlir" for i, name in enumerate(O1, 1)]
    assert "ascend.graph.mul" in (tmp_path / "ir" / "01_ge-constant-fold.mlir").read_text()
    assert "ascend.stream.model" in (tmp_path / "ir" / "07_ge-lower-kernel-to-stream.mlir").read_text()
    assert "ascend.stream.model" not in (tmp_path / "ir" / "06_ge-tile-kernels.mlir").read_text()
    assert "dump_ir" not in compiled.options  # it watches the compile, it is not the model


def test_ge_environment_variables_dump_as_dump_ir(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DUMP_GE_GRAPH", "2")
    monkeypatch.setenv("DUMP_GRAPH_PATH", str(tmp_path / "env"))
    ge.GraphCompiler().compile(small_graph(), optimization_level=1)
    assert dumped(tmp_path / "env") == [f"{i:02d}_{name}.mlir" for i, name in enumerate(O1, 1)]
    monkeypatch.delenv("DUMP_GRAPH_PATH")
    monkeypatch.chdir(tmp_path)
    ge.GraphCompiler().compile(small_graph(), optimization_level=0)
    assert dumped(tmp_path / "ge_dump")[0] == "01_ge-lower-graph-to-kernel.mlir"


def test_no_dump_without_the_variable(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DUMP_GE_GRAPH", "")
    monkeypatch.chdir(tmp_path)
    ge.GraphCompiler().compile(small_graph(), optimization_level=0)
    assert list(tmp_path.iterdir()) == []


def test_a_dump_folder_that_cannot_be_made_is_a_compile_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ge.CompileError, match="cannot make the IR dump folder"):
        ge.GraphCompiler().compile(small_graph(), dump_ir=tmp_path / "file")
    with pytest.raises(ge.CompileError, match="dump_ir takes a folder"):
        ge.GraphCompiler().compile(small_graph(), dump_ir=3)


# --------------------------------------------------------------------------------------------
# Manifest


def test_read_manifest_without_loading(tmp_path: Path) -> None:
    ge.GraphCompiler().compile(small_graph(), target="Ascend310P3", optimization_level=2).save(
        tmp_path / "m.ge"
    )
    manifest = read_manifest(tmp_path / "m.ge")
    assert manifest["format_version"] == FORMAT_VERSION and "gears" not in manifest
    assert (manifest["target"], manifest["optimization_level"]) == ("Ascend310P3", 2)
    (tmp_path / "bad.ge").write_bytes(b"not a model")
    with pytest.raises(ge.InvalidModelError, match="is not a .ge model file"):
        read_manifest(tmp_path / "bad.ge")


def test_a_dynamic_input_is_refused_with_the_way_to_size_it() -> None:
    graph = ge.GraphParser().parse_onnx(relu_add())
    with pytest.raises(ge.CompileError) as error:
        ge.GraphCompiler().compile(graph)
    assert str(error.value) == (
        "input 'a' has a dynamic dimension at axis 0 (tensor<?x4xf32>); compiling needs static shapes: "
        "specialize the graph (graph.specialize({'N': 8})), compile gears for its batch "
        "(compile(graph, dynamic_batch_size=[1, 8])), or give its sizes when importing "
        "(input_shapes={'a': [...]} of parse_onnx, parse_tensorflow or parse_mindspore, or ge compile "
        '--input_shape "a:N,4" with N a number)'
    )
