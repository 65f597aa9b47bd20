"""Symbolic dimensions: symbols on graph inputs (given, generated, from ONNX `dim_param`), their
propagation through ops' own inference, `Graph.specialize`, and the executor's recompiles."""

from __future__ import annotations

import logging

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.parser import Parser

import ge
from ge.context import make_context
from ge.errors import RuntimeInputError
from ge.symbolic import SpecializationError


def _image_graph(batch: int | str) -> tuple[ge.Graph, list[ge.Tensor]]:
    """conv -> relu -> flatten -> matmul -> concat, and a reshape, over [batch, 3, 8, 8]."""
    g = ge.Graph(seed=7)
    x = g.add_input("x", [batch, 3, 8, 8])
    relu = g.add_relu(g.add_conv2d(x, out_channels=4, kernel_size=3, padding=1))
    flat = g.add_flatten(relu)
    product = g.add_matmul(
        flat, g.add_constant(np.random.default_rng(1).standard_normal((256, 5)), dtype="float32")
    )
    both = g.add_concat([product, product], axis=0)
    reshaped = g.add_reshape(relu, [-1, 4, 64])
    g.add_output(both, "both")
    g.add_output(reshaped, "reshaped")
    return g, [x, relu, flat, product, both, reshaped]


# --------------------------------------------------------------------------------------------
# Symbols on inputs
# --------------------------------------------------------------------------------------------


def test_inputs_record_given_and_generated_symbols_through_printing_and_parsing() -> None:
    g = ge.Graph()
    g.add_input("ids", ["batch", "seq"], "int64")
    g.add_input("mask", [-1, None, 4])
    assert g.input_dims == {"ids": ("batch", "seq"), "mask": ("mask_0", "mask_1", 4)}
    assert g.symbols == ["batch", "seq", "mask_0", "mask_1"]
    text = str(g)
    assert "tensor<?x?xi64>" in text and 'ascend.dims = ["batch", "seq"]' in text
    parsed = ge.Graph.from_module(Parser(make_context(), text).parse_module())
    assert parsed.input_dims == g.input_dims


def test_a_static_input_records_no_symbols() -> None:
    g = ge.Graph()
    g.add_input("x", [2, 3])
    assert "ascend.dims" not in str(g) and g.symbols == []


def test_recorded_dims_must_fit_the_type() -> None:
    text = (
        'func.func @main(%x: tensor<?x3xf32> {ascend.name = "x", ascend.dims = ["n", 4]}) '
        "-> tensor<?x3xf32> {\n  func.return %x : tensor<?x3xf32>\n}"
    )
    with pytest.raises(ge.GeError, match=r"input 'x': ascend.dims = \['n', 4\] does not fit"):
        ge.Graph.from_module(Parser(make_context(), f"builtin.module {{\n{text}\n}}").parse_module())


def test_onnx_dim_params_become_symbols_and_unnamed_dims_generated_ones() -> None:
    ids = helper.make_tensor_value_info("ids", TensorProto.FLOAT, ["batch", "seq"])
    mask = helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", None])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, None)
    node = helper.make_node("Relu", ["ids"], ["out"])
    other = helper.make_node("Relu", ["mask"], ["other"])
    graph = helper.make_graph(
        [node, other],
        "g",
        [ids, mask],
        [out, helper.make_tensor_value_info("other", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    g = ge.GraphParser().parse_onnx(model)
    assert g.input_dims == {"ids": ("batch", "seq"), "mask": ("batch", "mask_1")}


# --------------------------------------------------------------------------------------------
# Propagation
# --------------------------------------------------------------------------------------------


def test_symbols_propagate_through_conv_relu_flatten_matmul_concat_reshape() -> None:
    g, (x, relu, flat, product, both, reshaped) = _image_graph("batch")
    shapes = g.symbolic_shapes()
    assert shapes[x.value] == ("batch", 3, 8, 8)
    assert shapes[relu.value] == ("batch", 4, 8, 8)
    assert shapes[flat.value] == ("batch", 256)
    assert shapes[product.value] == ("batch", 5)
    assert shapes[both.value] == ("2*batch", 5)
    assert shapes[reshaped.value] == ("batch", 4, 64)


def test_equal_symbols_stay_equal_through_broadcast_reshape_concat_and_matmul() -> None:
    g = ge.Graph()
    a = g.add_input("a", ["batch", "seq", 8])
    b = g.add_input("b", ["batch", "seq", 8])
    c = g.add_input("c", ["batch", "len", 8])
    added = g.add_add(a, g.add_constant(np.ones((1, 1, 8), np.float32)))
    joined = g.add_concat([a, b], axis=1)
    mixed = g.add_concat([a, c], axis=1)
    rows = g.add_reshape(added, [-1, 8])
    scores = g.add_matmul(a, g.add_transpose(b, [0, 2, 1]))
    shapes = g.symbolic_shapes()
    assert shapes[added.value] == ("batch", "seq", 8)
    assert shapes[joined.value] == ("batch", "2*seq", 8)
    assert shapes[mixed.value] == ("batch", "seq+len", 8)
    assert shapes[rows.value] == ("batch*seq", 8)
    assert shapes[scores.value] == ("batch", "seq", "seq")


def test_a_size_no_combination_fits_gets_one_fresh_symbol_shared_by_equal_sizes() -> None:
    g = ge.Graph()
    x = g.add_input("x", [1, 3, "side", "side"])
    down = g.add_conv2d(x, out_channels=4, kernel_size=3, stride=2, padding=1)  # (side - 1) // 2 + 1
    relu = g.add_relu(down)
    shapes = g.symbolic_shapes()
    assert shapes[down.value] == (1, 4, "s1", "s1")
    assert shapes[relu.value] == (1, 4, "s1", "s1")


# --------------------------------------------------------------------------------------------
# Specialization
# --------------------------------------------------------------------------------------------


def test_specialize_by_symbol_or_input_gives_static_types_and_shares_weights() -> None:
    g, _ = _image_graph("batch")
    for sizes in ({"batch": 3}, {"x": [3, 3, 8, 8]}):
        special = g.specialize(sizes)
        assert special.symbols == [] and special.weights is g.weights
        text = str(special)
        assert "tensor<3x3x8x8xf32>" in text and "tensor<6x5xf32>" in text and "tensor<3x4x64xf32>" in text
    assert "tensor<?x3x8x8xf32>" in str(g), "the graph itself is unchanged"


def test_a_specialized_graph_computes_what_the_static_graph_computes() -> None:
    dynamic, _ = _image_graph("batch")
    static, _ = _image_graph(2)
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    results = []
    for graph in (dynamic.specialize({"batch": 2}), static):
        executor = ge.GraphExecutor()
        executor.load_graph(ge.GraphCompiler().compile(graph, optimization_level=3))
        results.append(executor.run(x))
    for got, want in zip(*results, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        (
            {"x": [2, 4, 8, 8]},
            r"input 'x' axis 1: declared 3, 4 given \(shape \[2, 4, 8, 8\], declared \[batch, 3, 8, 8\]\)",
        ),
        ({"x": [2, 3, 8]}, r"input 'x' has rank 3 \(shape \[2, 3, 8\]\), declared rank 4"),
        ({"y": [2, 3, 8, 8]}, r"the graph has no input 'y'; its inputs are \['x'\]"),
        ({"height": 2}, r"the graph has no symbol 'height'; its symbols are \['batch'\]"),
        (
            {"batch": 2, "x": [3, 3, 8, 8]},
            r"symbol 'batch' is given two sizes: 2 by symbol 'batch' and 3 by input 'x' axis 0",
        ),
        ({"batch": -2}, r"symbol 'batch': a size is a whole number >= 0"),
        ([2], r"must map input names to shapes or symbols to sizes"),
    ],
)
def test_specialize_refuses_sizes_that_do_not_fit(sizes, message) -> None:
    g, _ = _image_graph("batch")
    with pytest.raises(SpecializationError, match=message):
        g.specialize(sizes)


def test_specialize_names_the_op_that_cannot_take_the_sizes() -> None:
    g = ge.Graph()
    x = g.add_input("x", ["n"])
    g.add_output(g.add_reshape(x, [-1, 4], name="pairs"), "y")
    assert str(g.specialize({"n": 8})).count("tensor<2x4xf32>") >= 1
    with pytest.raises(SpecializationError, match=r"'ascend.graph.reshape' at loc\(\"pairs\"\) cannot take"):
        g.specialize({"n": 6})


# --------------------------------------------------------------------------------------------
# Recompiles
# --------------------------------------------------------------------------------------------


def test_the_executor_compiles_once_per_new_size_and_logs_each_recompile(caplog) -> None:
    g, _ = _image_graph("batch")
    executor = ge.GraphExecutor()
    executor.load_graph(g)
    rng = np.random.default_rng(0)
    with caplog.at_level(logging.INFO, logger="ge"):
        first = executor.run(rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
        assert executor.recompiles == 0 and first[0].shape == (4, 5)
        assert not [r for r in caplog.records if "recompiling" in r.getMessage()]
        second = executor.run({"x": rng.standard_normal((3, 3, 8, 8)).astype(np.float32)})
        assert executor.recompiles == 1 and second[0].shape == (6, 5) and second[1].shape == (3, 4, 64)
        executor.run(rng.standard_normal((3, 3, 8, 8)).astype(np.float32))
        executor.run(rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
        assert executor.recompiles == 1
    lines = [r.getMessage() for r in caplog.records if "recompiling" in r.getMessage()]
    assert lines == ["recompiling graph 'main' for new input sizes batch=3 (recompile 1)"]


def test_the_executor_refuses_an_input_contradicting_a_static_dimension() -> None:
    g, _ = _image_graph("batch")
    executor = ge.GraphExecutor()
    executor.load_graph(g)
    with pytest.raises(RuntimeInputError, match=r"input 'x' axis 2: declared 8, 9 given"):
        executor.run(np.zeros((2, 3, 9, 8), np.float32))
    with pytest.raises(RuntimeInputError, match=r"input 'x' has rank 2"):
        executor.run(np.zeros((2, 3), np.float32))
    assert executor.compiled is None, "nothing was compiled for refused inputs"


def _tiny_bert() -> onnx.ModelProto:
    """Embedding, self-attention scores, softmax and a projection over ids [batch, seq]."""
    rng = np.random.default_rng(3)
    table = helper.make_tensor("table", TensorProto.FLOAT, [11, 8], rng.standard_normal((11, 8)).ravel())
    weight = helper.make_tensor("weight", TensorProto.FLOAT, [8, 8], rng.standard_normal((8, 8)).ravel() / 3)
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["embedded"]),
        helper.make_node("MatMul", ["embedded", "weight"], ["projected"]),
        helper.make_node("Transpose", ["projected"], ["keys"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["projected", "keys"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["attention"], axis=-1),
        helper.make_node("MatMul", ["attention", "embedded"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_bert",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", 8])],
        initializer=[table, weight],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_backend_runs_a_bert_like_model_at_two_sequence_lengths_and_counts_the_recompile(caplog) -> None:
    import onnxruntime

    import ge.backend

    model = _tiny_bert()
    rep = ge.backend.prepare(model, "CPU")
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(5)
    with caplog.at_level(logging.INFO, logger="ge"):
        for seq, recompiles in ((5, 0), (7, 1), (5, 1)):
            ids = rng.integers(0, 11, (2, seq)).astype(np.int64)
            (want,) = session.run(None, {"ids": ids})
            (got,) = rep.run([ids])
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
            assert rep.recompiles == recompiles
    lines = [r.getMessage() for r in caplog.records if "recompiling" in r.getMessage()]
    assert lines == ["recompiling model 'tiny_bert' for new input sizes ids=[2, 7] (recompile 1)"]
