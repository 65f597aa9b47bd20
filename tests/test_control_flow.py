"""ONNX control flow (If, Loop, Scan), specialized and unrolled, against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from oracle import run_onnxruntime

import ge.backend
from ge.errors import UnsupportedOperatorError

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _model(nodes, inputs, outputs, opset) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _io(name: str, dtype=F, shape=None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def _check(model: onnx.ModelProto, *runs: dict[str, np.ndarray]) -> None:
    onnx.checker.check_model(model)
    rep = ge.backend.prepare(model)
    for feeds in runs:
        expected = run_onnxruntime(model, feeds)
        actual = rep.run(feeds)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert a.shape == e.shape and a.dtype == e.dtype
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


def _branches(x_shape):
    then_branch = helper.make_graph(
        [
            helper.make_node("Add", ["x", "x"], ["t0"]),
            helper.make_node("Relu", ["t0"], ["then_out"]),
        ],
        "then",
        [],
        [_io("then_out", F, x_shape)],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["else_out"])], "else", [], [_io("else_out", F, x_shape)]
    )
    return then_branch, else_branch


@pytest.mark.parametrize("opset", [13, 16])
def test_if_on_graph_input(opset: int, rng) -> None:
    then_branch, else_branch = _branches([2, 3])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch)
    tail = helper.make_node("Sub", ["y", "x"], ["z"])
    model = _model([node, tail], [_io("c", B, []), _io("x", F, [2, 3])], [_io("z", F, [2, 3])], opset)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    _check(
        model, {"c": np.array(True), "x": x}, {"c": np.array(False), "x": x}, {"c": np.array(True), "x": -x}
    )


@pytest.mark.parametrize("opset", [13, 17])
def test_if_on_computed_condition(opset: int, rng) -> None:
    """The condition depends on data: the prefix that computes it runs first."""
    then_branch, else_branch = _branches([4])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0)
        if opset < 13
        else helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0),
        helper.make_node("Constant", [], ["axes"], value=helper.make_tensor("axes", I64, [1], [0])),
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("zero", F, [], [0.0])),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch),
    ]
    nodes = [nodes[1], nodes[0], *nodes[2:]]
    model = _model(nodes, [_io("x", F, [4])], [_io("y", F, [4])], opset)
    x = np.abs(rng.standard_normal(4)).astype(np.float32)
    _check(model, {"x": x}, {"x": -x})


def _loop_body():
    """y += x[i:i+1] * 2; scan output: y; cond stays as given."""
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", I64, [], [1])),
        helper.make_node("Add", ["i", "one"], ["end"]),
        helper.make_node("Constant", [], ["ax"], value=helper.make_tensor("ax", I64, [1], [0])),
        helper.make_node("Unsqueeze", ["i", "ax"], ["start1"]),
        helper.make_node("Unsqueeze", ["end", "ax"], ["end1"]),
        helper.make_node("Slice", ["x", "start1", "end1"], ["piece"]),
        helper.make_node("Mul", ["piece", "two"], ["scaled"]),
        helper.make_node("Add", ["y_in", "scaled"], ["y_out"]),
        helper.make_node("Identity", ["y_out"], ["scan"]),
    ]
    return helper.make_graph(
        nodes,
        "body",
        [_io("i", I64, []), _io("cond_in", B, []), _io("y_in", F, [1])],
        [_io("cond_out", B, []), _io("y_out", F, [1]), _io("scan", F, [1])],
        initializer=[helper.make_tensor("two", F, [], [2.0])],
    )


@pytest.mark.parametrize("opset", [13, 16])
def test_loop_fixed_trip_count(opset: int, rng) -> None:
    node = helper.make_node("Loop", ["m", "c", "y0"], ["y", "ys"], body=_loop_body())
    model = _model(
        [node],
        [_io("m", I64, []), _io("c", B, []), _io("y0", F, [1]), _io("x", F, [5])],
        [_io("y", F, [1]), _io("ys", F, ["n", 1])],
        opset,
    )
    x = rng.standard_normal(5).astype(np.float32)
    y0 = np.array([0.5], np.float32)
    _check(
        model,
        {"m": np.array(3, np.int64), "c": np.array(True), "y0": y0, "x": x},
        {"m": np.array(5, np.int64), "c": np.array(True), "y0": y0, "x": x},
        {"m": np.array(5, np.int64), "c": np.array(True), "y0": -y0, "x": -x},
    )


@pytest.mark.parametrize("opset", [13, 15])
def test_loop_stopped_by_computed_condition(opset: int) -> None:
    """`while y < limit: y = y * 2 + 1` without trip count: each condition is observed."""
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["y_in", "two"], ["d"]),
            helper.make_node("Add", ["d", "one"], ["y_out"]),
            helper.make_node("ReduceMax", ["y_out"], ["mx"], keepdims=0),
            helper.make_node("Less", ["mx", "limit"], ["cond_out"]),
            helper.make_node("Identity", ["y_out"], ["scan"]),
        ],
        "body",
        [_io("i", I64, []), _io("cond_in", B, []), _io("y_in", F, [3])],
        [_io("cond_out", B, []), _io("y_out", F, [3]), _io("scan", F, [3])],
        initializer=[helper.make_tensor("two", F, [], [2.0]), helper.make_tensor("one", F, [], [1.0])],
    )
    node = helper.make_node("Loop", ["", "c", "y0"], ["y", "ys"], body=body)
    model = _model(
        [node],
        [_io("c", B, []), _io("y0", F, [3]), _io("limit", F, [])],
        [_io("y", F, [3]), _io("ys", F, ["n", 3])],
        opset,
    )
    y0 = np.array([0.0, 1.0, -1.0], np.float32)
    _check(
        model,
        {"c": np.array(True), "y0": y0, "limit": np.array(20.0, np.float32)},
        {"c": np.array(True), "y0": y0, "limit": np.array(2.0, np.float32)},
        {"c": np.array(True), "y0": y0 + 1, "limit": np.array(20.0, np.float32)},
    )


def test_loop_refuses_too_many_iterations() -> None:
    node = helper.make_node("Loop", ["m", "", "y0"], ["y", "ys"], body=_loop_body())
    model = _model(
        [node],
        [_io("m", I64, []), _io("y0", F, [1]), _io("x", F, [5])],
        [_io("y", F, [1]), _io("ys", F, ["n", 1])],
        13,
    )
    with pytest.raises(UnsupportedOperatorError, match="trip count of 5000"):
        ge.backend.prepare(model).run(
            {"m": np.array(5000, np.int64), "y0": np.zeros(1, np.float32), "x": np.zeros(5, np.float32)}
        )


def test_loop_carrying_a_sequence_matches_onnxruntime() -> None:
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("SequenceInsert", ["seq_in", "x"], ["seq_out"]),
        ],
        "body",
        [
            _io("i", I64, []),
            _io("cond_in", B, []),
            helper.make_tensor_sequence_value_info("seq_in", F, None),
        ],
        [_io("cond_out", B, []), helper.make_tensor_sequence_value_info("seq_out", F, None)],
    )
    nodes = [
        helper.make_node("SequenceEmpty", [], ["s0"], dtype=F),
        helper.make_node("Loop", ["m", "", "s0"], ["s"], body=body),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0),
    ]
    model = _model(nodes, [_io("m", I64, []), _io("x", F, [2])], [_io("y", F, None)], 13)
    feeds = {"m": np.array(3, np.int64), "x": np.array([1.0, 2.0], np.float32)}
    expected = run_onnxruntime(model, feeds)
    actual = ge.backend.prepare(model).run(feeds)
    np.testing.assert_array_equal(actual[0], expected[0])


@pytest.mark.parametrize("opset", [11, 16])
def test_scan_two_states_reversed(opset: int, rng) -> None:
    """States (sum, product); scan inputs along axes 0 (reversed) and 1; outputs along axes 0 and 1."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "a"], ["s_out"]),
            helper.make_node("Mul", ["p_in", "b"], ["p_out"]),
            helper.make_node("Sub", ["s_out", "p_out"], ["d"]),
            helper.make_node("Identity", ["s_out"], ["e"]),
        ],
        "body",
        [_io("s_in", F, [3]), _io("p_in", F, [3]), _io("a", F, [3]), _io("b", F, [3])],
        [_io("s_out", F, [3]), _io("p_out", F, [3]), _io("d", F, [3]), _io("e", F, [3])],
    )
    node = helper.make_node(
        "Scan",
        ["s0", "p0", "xa", "xb"],
        ["s", "p", "ds", "es"],
        body=body,
        num_scan_inputs=2,
        scan_input_axes=[0, 1],
        scan_input_directions=[1, 0],
        scan_output_axes=[0, -1],
        scan_output_directions=[0, 1],
    )
    model = _model(
        [node],
        [_io("s0", F, [3]), _io("p0", F, [3]), _io("xa", F, [4, 3]), _io("xb", F, [3, 4])],
        [_io("s", F, [3]), _io("p", F, [3]), _io("ds", F, [4, 3]), _io("es", F, [3, 4])],
        opset,
    )
    feeds = {
        "s0": rng.standard_normal(3).astype(np.float32),
        "p0": np.ones(3, np.float32),
        "xa": rng.standard_normal((4, 3)).astype(np.float32),
        "xb": rng.standard_normal((3, 4)).astype(np.float32),
    }
    _check(model, feeds)


def test_nested_if_in_loop_reads_body_values(rng) -> None:
    """An If inside a Loop body reads the body's values and the iteration number."""
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["y_in", "x"], ["t"])], "then", [], [_io("t", F, [2])]
    )
    else_branch = helper.make_graph(
        [helper.make_node("Sub", ["y_in", "x"], ["e"])], "else", [], [_io("e", F, [2])]
    )
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Constant", [], ["two"], value=helper.make_tensor("two", I64, [], [2])),
            helper.make_node("Mod", ["i", "two"], ["r"]),
            helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("zero", I64, [], [0])),
            helper.make_node("Equal", ["r", "zero"], ["even"]),
            helper.make_node("If", ["even"], ["y_out"], then_branch=then_branch, else_branch=else_branch),
        ],
        "body",
        [_io("i", I64, []), _io("cond_in", B, []), _io("y_in", F, [2])],
        [_io("cond_out", B, []), _io("y_out", F, [2])],
    )
    node = helper.make_node("Loop", ["m", "", "y0"], ["y"], body=body)
    model = _model([node], [_io("m", I64, []), _io("y0", F, [2]), _io("x", F, [2])], [_io("y", F, [2])], 13)
    x = rng.standard_normal(2).astype(np.float32)
    _check(model, {"m": np.array(5, np.int64), "y0": np.zeros(2, np.float32), "x": x})
