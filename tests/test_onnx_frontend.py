"""The ONNX frontend: each operator and attribute form, across opsets, against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from oracle import run_onnxruntime

import ge

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, opset, inits=(), ir_version=8) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def _io(name: str, shape, dtype=F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], rtol=1e-5, atol=1e-6) -> ge.Graph:
    expected = run_onnxruntime(model, feeds)
    graph = ge.GraphParser().parse_onnx(model.SerializeToString())
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(graph, optimization_level=0))
    actual = executor.run(feeds)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert a.shape == e.shape and a.dtype == e.dtype
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
    return graph


def _x(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("opset", [9, 13, 17, 21])
@pytest.mark.parametrize("auto_pad", ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
def test_conv_auto_pad(opset: int, auto_pad: str, rng) -> None:
    w = numpy_helper.from_array(_x(rng, 4, 3, 3, 3), "w")
    attrs = {"strides": [2, 2], "auto_pad": auto_pad}
    if auto_pad == "NOTSET":
        attrs["pads"] = [0, 1, 1, 2]
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)
    _check(_model([node], [_io("x", [1, 3, 9, 8])], [_io("y", None)], opset, [w]), {"x": _x(rng, 1, 3, 9, 8)})


@pytest.mark.parametrize("opset", [9, 13])
def test_initializers_listed_as_inputs(opset: int, rng) -> None:
    """IR < 4 lists every initializer among the graph inputs too; they stay constants."""
    w = numpy_helper.from_array(_x(rng, 5, 4), "w")
    b = numpy_helper.from_array(_x(rng, 5), "b")
    node = helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc", transB=1)
    inputs = [_io("x", [2, 4]), _io("w", [5, 4]), _io("b", [5])]
    model = _model([node], inputs, [_io("y", [2, 5])], opset, [w, b], ir_version=3)
    graph = _check(model, {"x": _x(rng, 2, 4)})
    assert graph.inputs == ["x"]


@pytest.mark.parametrize("opset", [9, 11, 13, 17])
def test_softmax_axis_semantics_by_opset(opset: int, rng) -> None:
    """Before opset 13 Softmax normalizes over everything after `axis`; from 13 over `axis` only."""
    node = helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)
    _check(_model([node], [_io("x", [2, 3, 4])], [_io("y", [2, 3, 4])], opset), {"x": _x(rng, 2, 3, 4)})


@pytest.mark.parametrize("opset", [9, 17])
def test_reshape_zero_and_minus_one(opset: int, rng) -> None:
    shape = numpy_helper.from_array(np.array([0, -1, 2], np.int64), "shape")
    node = helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")
    _check(_model([node], [_io("x", [3, 4, 2])], [_io("y", None)], opset, [shape]), {"x": _x(rng, 3, 4, 2)})


def test_constant_constant_of_shape_identity_dropout_concat_transpose(rng) -> None:
    nodes = [
        helper.make_node(
            "Constant", [], ["shape"], value=numpy_helper.from_array(np.array([2, 3], np.int64))
        ),
        helper.make_node(
            "ConstantOfShape",
            ["shape"],
            ["fill"],
            value=numpy_helper.from_array(np.array([0.25], np.float32)),
        ),
        helper.make_node("Constant", [], ["bias"], value_floats=[1.0, -1.0, 0.5]),
        helper.make_node("Add", ["x", "fill"], ["a"]),
        helper.make_node("Mul", ["a", "bias"], ["m"]),
        helper.make_node("Identity", ["m"], ["i"]),
        helper.make_node("Dropout", ["i"], ["d"]),
        helper.make_node("Concat", ["d", "x"], ["c"], axis=0),
        helper.make_node("Transpose", ["c"], ["t"]),
        helper.make_node("Div", ["t", "fill2"], ["y"]),
    ]
    fill2 = numpy_helper.from_array(np.full((3, 1), 2.0, np.float32), "fill2")
    _check(_model(nodes, [_io("x", [2, 3])], [_io("y", [3, 4])], 17, [fill2]), {"x": _x(rng, 2, 3)})


@pytest.mark.parametrize("ceil_mode", [0, 1])
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_pools(ceil_mode: int, count_include_pad: int, rng) -> None:
    nodes = [
        helper.make_node(
            "AveragePool",
            ["x"],
            ["a"],
            kernel_shape=[3, 3],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
            ceil_mode=ceil_mode,
            count_include_pad=count_include_pad,
        ),
        helper.make_node(
            "MaxPool",
            ["x"],
            ["m"],
            kernel_shape=[3, 2],
            strides=[2, 2],
            pads=[1, 0, 1, 1],
            ceil_mode=ceil_mode,
        ),
    ]
    model = _model(nodes, [_io("x", [1, 2, 8, 7])], [_io("a", None), _io("m", None)], 17)
    _check(model, {"x": _x(rng, 1, 2, 8, 7)})


def test_gemm_without_bias_and_batched_matmul(rng) -> None:
    a = numpy_helper.from_array(_x(rng, 6, 4), "a")
    nodes = [
        helper.make_node("Gemm", ["x", "a"], ["g"], alpha=0.5, transA=1),
        helper.make_node("MatMul", ["b", "g"], ["y"]),
        helper.make_node("BatchNormalization", ["c", "s", "o", "mu", "var"], ["n"], epsilon=1e-3),
    ]
    inits = [a] + [numpy_helper.from_array(np.abs(_x(rng, 3)) + 0.5, k) for k in ("s", "o", "mu", "var")]
    model = _model(
        nodes,
        [_io("x", [6, 5]), _io("b", [2, 3, 5]), _io("c", [2, 3, 4, 4])],
        [_io("y", None), _io("n", None)],
        15,
        inits,
    )
    _check(model, {"x": _x(rng, 6, 5), "b": _x(rng, 2, 3, 5), "c": _x(rng, 2, 3, 4, 4)})


def test_opset_out_of_range() -> None:
    node = helper.make_node("Relu", ["x"], ["y"])
    model = _model([node], [_io("x", [2])], [_io("y", [2])], 5)
    with pytest.raises(ge.UnsupportedOperatorError, match="opset 5 is outside the supported range 6 to 28"):
        ge.GraphParser().parse_onnx(model)


@pytest.mark.parametrize("opset", [1, 5])
def test_operators_unchanged_since_opset_1_import_at_old_opsets(opset: int, rng) -> None:
    """Not, Greater (with its opset-1 broadcast at an axis) and Transpose are as opset 6 has them."""
    nodes = [
        helper.make_node("Greater", ["x", "t"], ["above"], broadcast=1, axis=1),
        helper.make_node("Not", ["above"], ["below"]),
        helper.make_node("Transpose", ["below"], ["y"], perm=[2, 0, 1]),
    ]
    model = _model(nodes, [_io("x", [2, 3, 4]), _io("t", [3])], [_io("y", None, TensorProto.BOOL)], opset)
    x, t = _x(rng, 2, 3, 4), _x(rng, 3)
    graph = ge.GraphParser().parse_onnx(model)
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(graph, optimization_level=0))
    (y,) = executor.run({"x": x, "t": t})
    np.testing.assert_array_equal(y, np.transpose(~(x > t[:, None]), (2, 0, 1)))


def test_operators_changed_since_an_old_opset_are_refused() -> None:
    """Relu lost `consumed_inputs` in opset 6 and Reshape took its shape as an input in opset 5."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Not", ["b"], ["n"], name="not"),
        helper.make_node("Reshape", ["r"], ["y"], name="reshape", shape=[6]),
    ]
    model = _model(
        nodes, [_io("x", [2, 3]), _io("b", [2], TensorProto.BOOL)], [_io("y", None), _io("n", None)], 4
    )
    with pytest.raises(
        ge.UnsupportedOperatorError, match="opset 4 is outside the supported range 6 to 28"
    ) as info:
        ge.GraphParser().parse_onnx(model)
    assert info.value.category == "operator"
    assert [(u["op_type"], u["node"], u["opset"]) for u in info.value.unsupported] == [
        ("Relu", "relu", 4),
        ("Reshape", "reshape", 4),
    ]
    assert "its opset-4 form (version 1) is not its opset-6 form (version 5)" in str(info.value)


def test_opset_zero_is_refused() -> None:
    model = _model(
        [helper.make_node("Not", ["b"], ["y"])], [_io("b", [2], TensorProto.BOOL)], [_io("y", None)], 0
    )
    with pytest.raises(ge.UnsupportedOperatorError, match="opset 0 is outside the supported range 1 to 28"):
        ge.GraphParser().parse_onnx(model)


def test_reshape_with_computed_shape_is_refused_clearly() -> None:
    node = helper.make_node("Reshape", ["x", "s"], ["y"], name="r")
    model = _model([node], [_io("x", [2, 3]), _io("s", [2], TensorProto.INT64)], [_io("y", None)], 17)
    with pytest.raises(
        ge.UnsupportedOperatorError, match="Reshape \\(opset 17\\) at node 'r': input 's' decides a shape"
    ):
        ge.GraphParser().parse_onnx(model)


def test_external_data_files(tmp_path, rng) -> None:
    """Weights stored beside the model (external data) are read from the model's folder."""
    w = numpy_helper.from_array(_x(rng, 8, 16), "w")
    node = helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)
    model = _model([node], [_io("x", [2, 16])], [_io("y", [2, 8])], 17, [w])
    path = tmp_path / "model.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, location="weights.bin", size_threshold=0)
    assert (tmp_path / "weights.bin").stat().st_size == 8 * 16 * 4
    x = _x(rng, 2, 16)
    graph = ge.GraphParser().parse_onnx(str(path))
    executor = ge.GraphExecutor()
    executor.load_graph(graph)
    np.testing.assert_allclose(executor.run(x)[0], x @ numpy_helper.to_array(w).T, rtol=1e-5, atol=1e-6)


def test_node_names_become_locations() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="first"), helper.make_node("Relu", ["a"], ["y"])]
    model = _model(nodes, [_io("x", [2])], [_io("y", [2])], 17)
    graph = ge.GraphParser().parse_onnx(model)
    assert [n.name for n in graph.nodes] == ["first", "Relu_1"]


def test_onnx_shape_inference_catches_a_wrong_shape(monkeypatch) -> None:
    """A converter that gets a shape wrong is stopped by ONNX's own shape inference."""
    from ge.frontends import onnx as frontend

    def wrong_relu(imp, node):
        return [imp.g.add_reshape(node.inputs[0], [6, 2], node.name)]

    monkeypatch.setitem(frontend.CONVERTERS, "Relu", wrong_relu)
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"), helper.make_node("Neg", ["a"], ["y"])]
    model = _model(nodes, [_io("x", [3, 4])], [_io("y", None)], 17)
    with pytest.raises(
        ge.InvalidModelError,
        match=r"value 'a': ge infers shape \[6, 2\] but ONNX shape inference gives \[3, 4\]",
    ):
        ge.GraphParser().parse_onnx(model)
