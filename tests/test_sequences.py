"""ONNX sequences and optionals, resolved at import (static per program), against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from oracle import run_onnxruntime

import ge.backend
from ge import GraphParser
from ge.errors import InvalidModelError, RuntimeInputError, UnsupportedOperatorError

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
SEQ_F = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))


def _model(nodes, inputs, outputs, opset: int = 18) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _io(name: str, dtype=F, shape=None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def _seq(name: str) -> onnx.ValueInfoProto:
    return helper.make_value_info(name, SEQ_F)


def _optional(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_value_info(
        name, helper.make_optional_type_proto(helper.make_tensor_type_proto(F, shape))
    )


def _const(name: str, values, dtype=I64) -> onnx.NodeProto:
    array = np.asarray(values)
    tensor = helper.make_tensor(name, dtype, array.shape, array.reshape(-1).tolist())
    return helper.make_node("Constant", [], [name], value=tensor)


def _assert_same(actual, expected) -> None:
    """Arrays equal in shape, dtype and value; lists (sequences) element by element; None alike."""
    if expected is None:
        assert actual is None
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            _assert_same(a, e)
    else:
        assert isinstance(actual, np.ndarray)
        assert actual.shape == expected.shape and actual.dtype == expected.dtype
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def _check(model: onnx.ModelProto, *runs: dict[str, object]) -> ge.backend.GeBackendRep:
    onnx.checker.check_model(model)
    rep = ge.backend.prepare(model)
    for feeds in runs:
        expected = run_onnxruntime(model, feeds)
        actual = rep.run(feeds)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            _assert_same(a, e)
    return rep


def test_split_at_insert_erase_concat_chain(rng) -> None:
    """SplitToSequence -> SequenceAt / SequenceInsert / SequenceErase -> ConcatFromSequence."""
    nodes = [
        _const("sizes", [1, 2, 3]),
        helper.make_node("SplitToSequence", ["x", "sizes"], ["parts"], axis=0),
        _const("last", -1),
        helper.make_node("SequenceAt", ["parts", "last"], ["tail"]),
        helper.make_node("Relu", ["tail"], ["relu_tail"]),
        _const("front", 0),
        helper.make_node("SequenceInsert", ["parts", "relu_tail", "front"], ["grown"]),
        _const("second", 1),
        helper.make_node("SequenceErase", ["grown", "second"], ["pruned"]),
        helper.make_node("SequenceLength", ["pruned"], ["n"]),
        helper.make_node("ConcatFromSequence", ["pruned"], ["joined"], axis=0),
    ]
    model = _model(
        nodes,
        [_io("x", F, [6, 4])],
        [_io("tail", F, [3, 4]), _io("joined", F, [8, 4]), _io("n", I64, [])],
        18,
    )
    x = rng.standard_normal((6, 4)).astype(np.float32)
    _check(model, {"x": x})
    # The same chain written with numpy.
    tail = x[3:]
    joined = np.concatenate([np.maximum(tail, 0), x[1:3], x[3:]])
    out = ge.backend.prepare(model).run({"x": x})
    np.testing.assert_allclose(out[1], joined)
    assert out[2] == 3


@pytest.mark.parametrize("keepdims", [0, 1])
def test_split_to_sequence_without_sizes_and_concat_with_new_axis(keepdims: int, rng) -> None:
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=1, keepdims=keepdims),
        helper.make_node("ConcatFromSequence", ["rows"], ["stacked"], axis=-1, new_axis=1),
        helper.make_node("SequenceLength", ["rows"], ["n"]),
    ]
    stacked = [3, 1, 4] if keepdims else [3, 4]
    model = _model(nodes, [_io("x", F, [3, 4])], [_io("stacked", F, stacked), _io("n", I64, [])], 12)
    _check(model, {"x": rng.standard_normal((3, 4)).astype(np.float32)})


def test_split_to_sequence_scalar_size_leaves_a_shorter_last_part(rng) -> None:
    nodes = [
        _const("size", 2),
        helper.make_node("SplitToSequence", ["x", "size"], ["parts"], axis=-1),
        helper.make_node("SequenceLength", ["parts"], ["n"]),
    ]
    model = _model(nodes, [_io("x", F, [2, 5])], [_seq("parts"), _io("n", I64, [])], 18)
    out = _check(model, {"x": rng.standard_normal((2, 5)).astype(np.float32)}).run(
        {"x": np.arange(10, dtype=np.float32).reshape(2, 5)}
    )
    assert [p.shape for p in out[0]] == [(2, 2), (2, 2), (2, 1)] and out[1] == 3


def test_sequence_input_and_output_with_sequence_map(rng) -> None:
    """SequenceMap over a sequence input and a tensor: one program per length and element shapes."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["element", "bias"], ["shifted"]),
            helper.make_node("ReduceSum", ["shifted"], ["total"], keepdims=0),
            helper.make_node("Shape", ["element"], ["shape"]),
        ],
        "body",
        [_io("element", F, None), _io("bias", F, [])],
        [_io("shifted", F, None), _io("total", F, []), _io("shape", I64, None)],
    )
    nodes = [helper.make_node("SequenceMap", ["xs", "b"], ["ys", "totals", "shapes"], body=body)]
    seq_i64 = helper.make_sequence_type_proto(helper.make_tensor_type_proto(I64, None))
    outputs = [_seq("ys"), _seq("totals"), helper.make_value_info("shapes", seq_i64)]
    model = _model(nodes, [_seq("xs"), _io("b", F, [])], outputs, 17)
    b = np.array(0.5, np.float32)
    first = [rng.standard_normal(s).astype(np.float32) for s in [(2, 3), (4,), (1, 2, 2)]]
    second = [rng.standard_normal(s).astype(np.float32) for s in [(5,)]]
    rep = _check(
        model, {"xs": first, "b": b}, {"xs": second, "b": b}, {"xs": first, "b": np.array(-0.5, np.float32)}
    )
    assert len(rep.steps) == 2  # the third run reuses the first program
    ys, totals, shapes = rep.run({"xs": second, "b": b})
    np.testing.assert_allclose(ys[0], second[0] + 0.5, rtol=1e-6)
    np.testing.assert_allclose(totals[0], np.sum(second[0] + 0.5), rtol=1e-5)
    np.testing.assert_array_equal(shapes[0], [5])


def test_sequence_map_over_two_sequences(rng) -> None:
    body = helper.make_graph(
        [helper.make_node("Mul", ["a", "b"], ["c"])],
        "body",
        [_io("a", F, None), _io("b", F, None)],
        [_io("c", F, None)],
    )
    model = _model(
        [helper.make_node("SequenceMap", ["x", "y"], ["z"], body=body)],
        [_seq("x"), _seq("y")],
        [_seq("z")],
        17,
    )
    x = [rng.standard_normal(s).astype(np.float32) for s in [(3,), (2, 2)]]
    y = [rng.standard_normal(s).astype(np.float32) for s in [(3,), (2, 1)]]
    _check(model, {"x": x, "y": y}, {"x": [], "y": []})


def test_position_from_graph_input_is_specialized(rng) -> None:
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
        helper.make_node("SequenceAt", ["s", "pos"], ["picked"]),
        helper.make_node("SequenceErase", ["s", "pos"], ["rest"]),
        helper.make_node("ConcatFromSequence", ["rest"], ["joined"], axis=0),
    ]
    inputs = [_io("a", F, [2]), _io("b", F, [2]), _io("c", F, [2]), _io("pos", I64, [])]
    model = _model(nodes, inputs, [_io("picked", F, [2]), _io("joined", F, [4])], 12)
    a, b, c = (rng.standard_normal(2).astype(np.float32) for _ in range(3))
    runs = [{"a": a, "b": b, "c": c, "pos": np.array(p, np.int64)} for p in (0, -1, 1, 0)]
    rep = _check(model, *runs)
    assert len(rep.steps) == 3  # one program per position value


def test_position_computed_at_run_time_is_observed(rng) -> None:
    """The position comes from the data (ArgMax): the prefix that computes it runs first."""
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        _const("axes", [1]),
        helper.make_node("ReduceSum", ["x", "axes"], ["sums"], keepdims=0),
        helper.make_node("ArgMax", ["sums"], ["pos"], keepdims=0),
        helper.make_node("SequenceAt", ["rows", "pos"], ["row"]),
        helper.make_node("SequenceInsert", ["rows", "row", "pos"], ["doubled"]),
        helper.make_node("ConcatFromSequence", ["doubled"], ["y"], axis=0, new_axis=1),
    ]
    model = _model(nodes, [_io("x", F, [4, 3])], [_io("row", F, [3]), _io("y", F, [5, 3])], 18)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    rep = _check(model, {"x": x}, {"x": x[::-1].copy()})
    assert [s.observes for s in rep.steps.values()].count("pos") == 1  # one prefix, two programs after it
    assert len(rep.steps) == 3


def test_optional_input_present_and_absent(rng) -> None:
    then_branch = helper.make_graph(
        [
            helper.make_node("OptionalGetElement", ["o"], ["value"]),
            helper.make_node("Add", ["value", "x"], ["then_out"]),
        ],
        "then",
        [],
        [_io("then_out", F, [3])],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["else_out"])], "else", [], [_io("else_out", F, [3])]
    )
    nodes = [
        helper.make_node("OptionalHasElement", ["o"], ["has"]),
        helper.make_node("If", ["has"], ["y"], then_branch=then_branch, else_branch=else_branch),
    ]
    model = _model(nodes, [_optional("o", [3]), _io("x", F, [3])], [_io("has", B, []), _io("y", F, [3])], 18)
    x = rng.standard_normal(3).astype(np.float32)
    rep = _check(model, {"o": np.ones(3, np.float32), "x": x}, {"o": None, "x": x})
    has, y = rep.run({"o": None, "x": x})
    assert not has and np.array_equal(y, -x)


def test_optional_outputs_present_and_absent(rng) -> None:
    optional_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    nodes = [
        helper.make_node("Optional", ["x"], ["present"]),
        helper.make_node("Optional", [], ["absent"], type=helper.make_tensor_type_proto(F, [2])),
        helper.make_node("OptionalHasElement", ["absent"], ["has_absent"]),
    ]
    outputs = [
        helper.make_value_info("present", optional_type),
        helper.make_value_info("absent", optional_type),
        _io("has_absent", B, []),
    ]
    model = _model(nodes, [_io("x", F, [2])], outputs, 18)
    x = rng.standard_normal(2).astype(np.float32)
    expected = run_onnxruntime(model, {"x": x})
    present, absent, has_absent = ge.backend.prepare(model).run({"x": x})
    _assert_same(present, expected[0])
    assert absent is None and not has_absent
    np.testing.assert_array_equal(present, x)


def test_loop_with_a_sequence_state_and_if_returning_a_sequence(rng) -> None:
    """Loop-carried sequences (appending a computed tensor per iteration) and a sequence-valued If."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Cast", ["i"], ["i_float"], to=F),
            helper.make_node("Mul", ["x", "i_float"], ["scaled"]),
            helper.make_node("SequenceInsert", ["seq_in", "scaled"], ["seq_out"]),
        ],
        "body",
        [_io("i", I64, []), _io("cond_in", B, []), _seq("seq_in")],
        [_io("cond_out", B, []), _seq("seq_out")],
    )
    then_branch = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x", "x"], ["pair"])], "then", [], [_seq("pair")]
    )
    else_branch = helper.make_graph(
        [helper.make_node("SequenceEmpty", [], ["empty"], dtype=F)], "else", [], [_seq("empty")]
    )
    nodes = [
        helper.make_node("If", ["c"], ["start"], then_branch=then_branch, else_branch=else_branch),
        helper.make_node("Loop", ["n", "", "start"], ["result"], body=body),
        helper.make_node("ConcatFromSequence", ["result"], ["stacked"], axis=0, new_axis=1),
    ]
    inputs = [_io("c", B, []), _io("n", I64, []), _io("x", F, [2])]
    model = _model(nodes, inputs, [_seq("result"), _io("stacked", F, ["length", 2])], 16)
    x = rng.standard_normal(2).astype(np.float32)
    _check(
        model,
        {"c": np.array(True), "n": np.array(3, np.int64), "x": x},
        {"c": np.array(False), "n": np.array(2, np.int64), "x": x},
    )


def test_identity_of_a_sequence_input(rng) -> None:
    model = _model([helper.make_node("Identity", ["s"], ["t"])], [_seq("s")], [_seq("t")], 16)
    _check(model, {"s": [rng.standard_normal((2, 2)).astype(np.float32), np.zeros(0, np.float32)]}, {"s": []})


def test_position_that_cannot_be_known_at_import_is_refused() -> None:
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
        helper.make_node("SequenceAt", ["s", "pos"], ["picked"]),
    ]
    model = _model(
        nodes, [_io("a", F, [2]), _io("b", F, [2]), _io("pos", I64, [])], [_io("picked", F, [2])], 12
    )
    with pytest.raises(UnsupportedOperatorError, match=r"SequenceAt \(opset 12\) at node .*input 'pos'"):
        GraphParser().parse_onnx(model)


def test_sequence_input_without_its_structure_is_refused() -> None:
    model = _model([helper.make_node("SequenceLength", ["s"], ["n"])], [_seq("s")], [_io("n", I64, [])], 12)
    with pytest.raises(UnsupportedOperatorError, match="graph input 's' is a sequence") as info:
        GraphParser().parse_onnx(model)
    assert info.value.category == "input"


def test_tensor_operator_fed_a_sequence_is_refused() -> None:
    nodes = [
        helper.make_node("SequenceConstruct", ["a"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    model = _model(nodes, [_io("a", F, [2])], [_io("y", F, [2])], 12)
    with pytest.raises(UnsupportedOperatorError, match="Relu at node .* reads 's', which is a sequence"):
        ge.backend.prepare(model).run([np.ones(2, np.float32)])


def test_out_of_range_position_is_an_invalid_model() -> None:
    nodes = [
        helper.make_node("SequenceConstruct", ["a"], ["s"]),
        _const("pos", 1),
        helper.make_node("SequenceAt", ["s", "pos"], ["y"]),
    ]
    model = _model(nodes, [_io("a", F, [2])], [_io("y", F, [2])], 12)
    with pytest.raises(InvalidModelError, match="position 1 is out of range for a sequence of 1"):
        ge.backend.prepare(model)


def test_sequence_input_given_an_array_is_a_runtime_input_error() -> None:
    model = _model([helper.make_node("SequenceLength", ["s"], ["n"])], [_seq("s")], [_io("n", I64, [])], 12)
    with pytest.raises(RuntimeInputError, match="input 's' is a sequence: give a list of arrays"):
        ge.backend.prepare(model).run([np.ones(2, np.float32)])


def test_every_sequence_operator_may_take_sequences() -> None:
    """`values.STRUCTURED_OPS` names the operators the importer lets read a sequence or an
    optional; each sequence and optional converter must be among them."""
    from ge.frontends.onnx.sequence import CONVERTERS
    from ge.frontends.onnx.values import STRUCTURED_OPS

    assert set(CONVERTERS) <= STRUCTURED_OPS
