"""Gears where the source declares a static dimension that `input_shape` marks -1: an ONNX model is
made dynamic there before each gear's import (`with_dynamic_dims`), a `ge.Graph` built static is
refused up front with the fix."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper
from test_gears import ATOL, RTOL, _api_cnn, onnx_model, small_cnn

import ge
from ge.frontends.onnx import with_dynamic_dims


def static_cnn() -> onnx.ModelProto:
    """`small_cnn` exported at batch 1: every input, output and value declared static."""
    model = onnx.shape_inference.infer_shapes(small_cnn())
    for info in (*model.graph.input, *model.graph.output, *model.graph.value_info):
        dims = info.type.tensor_type.shape.dim
        if dims and dims[0].HasField("dim_param"):
            dims[0].dim_value = 1  # clears dim_param
    assert len(model.graph.value_info) > 0  # the declared shapes that batch 2 contradicts
    return model


def test_with_dynamic_dims_makes_the_marked_static_dimensions_dynamic() -> None:
    relaxed = with_dynamic_dims(static_cnn(), {"x": [-1, 3, 8, 8]})
    (x,) = relaxed.graph.input
    assert [d.dim_param or d.dim_value for d in x.type.tensor_type.shape.dim] == ["x_0", 3, 8, 8]
    for info in (*relaxed.graph.output, *relaxed.graph.value_info):
        assert info.type.tensor_type.elem_type == TensorProto.FLOAT
        assert not info.type.tensor_type.HasField("shape")
    unmarked = static_cnn()
    assert with_dynamic_dims(unmarked, {"x": [1, 3, 8, 8]}) is unmarked


def test_with_dynamic_dims_checks_the_shapes_as_parse_onnx_does() -> None:
    with pytest.raises(ge.CompileError) as error:
        with_dynamic_dims(static_cnn(), {"x": [-1, 3, 8]})
    assert str(error.value) == "input 'x' has 4 dimensions in the model, the shape given [-1, 3, 8] has 3"


def test_a_model_exported_at_batch_1_compiles_batch_gears_from_the_relaxed_model() -> None:
    model = static_cnn()
    relaxed = with_dynamic_dims(model, {"x": [-1, 3, 8, 8]})
    parser = ge.GraphParser()
    compiled = ge.GraphCompiler().compile(
        parser.parse_onnx(relaxed, input_shapes={"x": [1, 3, 8, 8]}),
        specialize=lambda shapes: parser.parse_onnx(relaxed, input_shapes=shapes),
        input_shape={"x": [-1, 3, 8, 8]},
        dynamic_batch_size=[1, 2, 4],
    )
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    session = onnxruntime.InferenceSession(model.SerializeToString())  # the model at batch 1
    x = np.random.default_rng(3).standard_normal((4, 3, 8, 8)).astype(np.float32)
    expected = np.concatenate([session.run(None, {"x": x[i : i + 1]})[0] for i in range(4)])
    for batch in (2, 4):
        np.testing.assert_allclose(executor.run(x[:batch])[0], expected[:batch], rtol=RTOL, atol=ATOL)


def test_a_graph_built_static_where_input_shape_says_minus_1_is_refused_with_the_fix() -> None:
    with pytest.raises(ge.CompileError) as error:
        ge.GraphCompiler().compile(_api_cnn(1), input_shape={"x": [-1, 3, 8, 8]}, dynamic_batch_size=[1, 4])
    assert str(error.value) == (
        "compile option input_shape marks input 'x' axis 0 -1 (a gear dimension), but the graph "
        "declares it static (1); build the graph with a symbol there: add_input('x', ['batch', 3, 8, 8])"
    )


def test_a_rank_that_contradicts_the_graph_shows_the_shape_given() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    graph = ge.GraphParser().parse_onnx(onnx_model(nodes, [x], [y], {}))
    with pytest.raises(ge.CompileError) as error:
        ge.GraphCompiler().compile(graph, input_shape={"x": [-1, 4, 1]}, dynamic_batch_size=[1, 4])
    assert str(error.value) == (
        "compile option input_shape gives input 'x' 3 dimensions ([-1, 4, 1]), the graph's has 2 ([-1, 4])"
    )
