"""Bad input gets a clear `GeError` naming what is wrong, never a stray traceback."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from models import mlp
from onnx import TensorProto, helper

import ge


def _compiled_mlp() -> ge.GraphExecutor:
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(mlp().graph, optimization_level=0))
    return executor


def test_malformed_onnx_file(tmp_path) -> None:
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x08\x07this is not a protobuf \xff\xfe" * 10)
    with pytest.raises(ge.InvalidModelError, match=r"broken\.onnx' is not a valid ONNX model"):
        ge.GraphParser().parse_onnx(str(path))


def test_missing_onnx_file(tmp_path) -> None:
    with pytest.raises(ge.InvalidModelError, match="does not exist"):
        ge.GraphParser().parse_onnx(str(tmp_path / "nope.onnx"))


def test_unsupported_operators_listed_in_one_error() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="ok"),
        helper.make_node("Bernoulli", ["a"], ["b"], name="coin_1"),
        helper.make_node("ImageDecoder", ["b"], ["c"], name="decode_1"),
        helper.make_node("Bernoulli", ["c"], ["y"], name="coin_2"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("i", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    with pytest.raises(ge.UnsupportedOperatorError) as info:
        ge.GraphParser().parse_onnx(model)
    message = str(info.value)
    assert "3 node(s)" in message
    for text in (
        "Bernoulli (domain ai.onnx, opset 20) at node 'coin_1'",
        "'coin_2'",
        "ImageDecoder",
        "'decode_1'",
    ):
        assert text in message
    assert "'ok'" not in message
    assert [u["node"] for u in info.value.unsupported] == ["coin_1", "decode_1", "coin_2"]


def test_unsupported_attribute_value_names_node() -> None:
    ratio = helper.make_tensor("ratio", TensorProto.FLOAT, [], [0.5])
    training = helper.make_tensor("training", TensorProto.BOOL, [], [True])
    node = helper.make_node("Dropout", ["x", "ratio", "training"], ["y"], name="drop")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[ratio, training],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(
        ge.UnsupportedOperatorError, match=r"Dropout \(domain ai.onnx, opset 13\) at node 'drop'.*training"
    ) as info:
        ge.GraphParser().parse_onnx(model)
    assert info.value.category == "attribute"


def test_wrong_input_shape() -> None:
    with pytest.raises(
        ge.RuntimeInputError, match=r"input 'x' has shape \[4, 31\], the model expects \[4, 32\]"
    ):
        _compiled_mlp().run(np.zeros((4, 31), np.float32))


def test_unsafe_input_dtype() -> None:
    with pytest.raises(
        ge.RuntimeInputError, match="dtype float64, which does not cast safely to the declared float32"
    ):
        _compiled_mlp().run(np.zeros((4, 32), np.float64))


def test_a_string_array_for_a_float_input_is_named_by_its_dtype_not_its_shape() -> None:
    with pytest.raises(ge.RuntimeInputError, match="input 'x' has dtype <U3, which does not cast safely"):
        _compiled_mlp().run(np.array("abc"))


def test_safe_input_dtype_is_accepted() -> None:
    out = _compiled_mlp().run(np.zeros((4, 32), np.float16))
    assert out[0].shape == (4, 10) and out[0].dtype == np.float32


def test_wrong_input_names_and_count() -> None:
    executor = _compiled_mlp()
    with pytest.raises(ge.RuntimeInputError, match=r"missing \['x'\], unknown \['y'\]"):
        executor.run({"y": np.zeros((4, 32), np.float32)})
    with pytest.raises(ge.RuntimeInputError, match="takes 1 inputs"):
        executor.run([np.zeros((4, 32), np.float32)] * 2)


def test_builder_shape_error_names_node() -> None:
    g = ge.Graph()
    a = g.add_input("a", shape=[2, 3])
    b = g.add_input("b", shape=[4, 5])
    with pytest.raises(
        ge.VerificationError, match=r"node 'mm' \(matmul\): contracting dimensions differ: 3 and 4"
    ):
        g.add_matmul(a, b, name="mm")


def test_unknown_target_lists_known_socs() -> None:
    with pytest.raises(
        ge.CompileError, match="unknown target 'Ascend999'.*Ascend310P3, Ascend910A, Ascend910B2"
    ):
        ge.GraphCompiler().compile(mlp().graph, target="Ascend999")


def test_ge_opt_reports_bad_input_without_traceback(tmp_path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(
        "func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {\n"
        "  %c = ascend.graph.matmul %a, %b\n"
        '    : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32> loc("mm")\n'
        "  func.return %c : tensor<2x5xf32>\n}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "ge.tools.ge_opt", str(path)], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "'ascend.graph.matmul' at loc(\"mm\"): contracting dimensions differ: 3 and 4" in result.stderr
