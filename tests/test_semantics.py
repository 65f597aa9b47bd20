"""`ge.semantics` against ONNX Runtime: each graph op next to the one-node ONNX model that means it."""

from __future__ import annotations

import time
import weakref

import numpy as np
import onnxruntime
import pytest
from onnx import helper
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    TensorType,
    bf16,
    f32,
    i1,
    i8,
)
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Attribute, Block, Operation

import ge.semantics.core
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.dialects.graph import (
    AddOp,
    AvgPoolOp,
    BatchNormOp,
    CastOp,
    ConcatOp,
    ConstOp,
    Conv2DOp,
    DivOp,
    FlattenOp,
    GemmOp,
    GlobalAvgPoolOp,
    GraphOp,
    MatMulOp,
    MaxPoolOp,
    MulOp,
    ReluOp,
    ReshapeOp,
    SoftmaxOp,
    SubOp,
    TransposeOp,
    float_attr,
)
from ge.dtypes import bfloat16, element_type, numpy_dtype
from ge.errors import GeError, InvalidModelError, RuntimeInputError
from ge.semantics import IMPLEMENTATIONS, constant_array, evaluate, run_block
from ge.semantics.base import mean_over
from ge.weights import WeightStore

ONNX_TYPES: dict[type[GraphOp], str] = {
    AddOp: "Add",
    SubOp: "Sub",
    MulOp: "Mul",
    DivOp: "Div",
    ReluOp: "Relu",
    MatMulOp: "MatMul",
    GemmOp: "Gemm",
    Conv2DOp: "Conv",
    BatchNormOp: "BatchNormalization",
    MaxPoolOp: "MaxPool",
    AvgPoolOp: "AveragePool",
    GlobalAvgPoolOp: "GlobalAveragePool",
    SoftmaxOp: "Softmax",
    FlattenOp: "Flatten",
    TransposeOp: "Transpose",
    ConcatOp: "Concat",
}
ONNX_ATTRIBUTE_NAMES = {"groups": "group", "trans_a": "transA", "trans_b": "transB"}


def run_onnx(
    op_type: str, inputs: list[np.ndarray], attrs: dict, output_dtype: np.dtype | None = None
) -> np.ndarray:
    output = helper.np_dtype_to_tensor_dtype(output_dtype or inputs[0].dtype)
    names = [f"input{i}" for i in range(len(inputs))]
    onnx_attrs = {ONNX_ATTRIBUTE_NAMES.get(k, k): v for k, v in attrs.items()}
    node = helper.make_node(op_type, names, ["output"], **onnx_attrs)
    graph = helper.make_graph(
        [node],
        op_type,
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in zip(names, inputs, strict=True)
        ],
        [helper.make_tensor_value_info("output", output, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, dict(zip(names, inputs, strict=True)))[0]


def properties(attrs: dict) -> dict[str, Attribute]:
    """The graph op properties for ONNX-style attribute values."""
    converted: dict[str, Attribute] = {}
    for name, value in attrs.items():
        if isinstance(value, bool):  # before int: a bool is an int, and onnx stores it as one
            converted[name] = bool_attr(value)
        elif isinstance(value, list | tuple):
            converted[name] = ints_attr(value)
        elif isinstance(value, float):
            converted[name] = float_attr(value)
        else:
            converted[name] = int_attr(value)
    return converted


def build(op_class: type[GraphOp], inputs: list[np.ndarray], attrs: dict) -> Operation:
    block = Block(arg_types=[TensorType(element_type(a.dtype), a.shape) for a in inputs])
    return op_class.build_inferred(block.args, properties(attrs))


def run_ge(op_class: type[GraphOp], inputs: list[np.ndarray], attrs: dict) -> np.ndarray:
    op = build(op_class, inputs, attrs)
    (result,) = evaluate(op, inputs)
    assert result.dtype == numpy_dtype(op.result.type.element_type)
    assert result.shape == op.result.type.get_shape()
    return result


def check_against_onnx(
    op_class: type[GraphOp],
    inputs: list[np.ndarray],
    attrs: dict,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    expected = run_onnx(ONNX_TYPES[op_class], inputs, attrs)
    actual = run_ge(op_class, inputs, attrs)
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol)


_rng = np.random.default_rng(0)


def normal(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape, dtype=np.float32)


def away_from_zero(*shape: int) -> np.ndarray:
    magnitude = _rng.uniform(0.5, 2.0, shape).astype(np.float32)
    return magnitude * _rng.choice(np.array([-1, 1], np.float32), shape)


def positive(*shape: int) -> np.ndarray:
    return _rng.uniform(0.1, 2.0, shape).astype(np.float32)


CASES = [
    # Elementwise, with broadcasting both ways.
    pytest.param(AddOp, [normal(2, 3, 4), normal(3, 1)], {}, id="add"),
    pytest.param(AddOp, [normal(4), normal(2, 3, 4)], {}, id="add-lhs-broadcast"),
    pytest.param(SubOp, [normal(2, 1, 4), normal(1, 3, 1)], {}, id="sub"),
    pytest.param(MulOp, [normal(2, 3, 4), normal(1)], {}, id="mul"),
    pytest.param(DivOp, [normal(2, 3, 4), away_from_zero(3, 4)], {}, id="div"),
    pytest.param(
        DivOp,
        [np.array([7, -7, 7, -7, 0, 9], np.int32), np.array([2, 2, -2, -2, 3, 3], np.int32)],
        {},
        id="div-int32-truncates",
    ),
    pytest.param(
        AddOp, [np.arange(6, dtype=np.int64).reshape(2, 3), np.array([5], np.int64)], {}, id="add-int64"
    ),
    pytest.param(ReluOp, [normal(3, 4, 5)], {}, id="relu"),
    # Matrix products.
    pytest.param(MatMulOp, [normal(3, 4), normal(4, 5)], {}, id="matmul-2d"),
    pytest.param(MatMulOp, [normal(2, 3, 4), normal(4, 5)], {}, id="matmul-batched"),
    pytest.param(MatMulOp, [normal(2, 1, 3, 4), normal(3, 4, 6)], {}, id="matmul-broadcast"),
    pytest.param(MatMulOp, [normal(4), normal(2, 4, 5)], {}, id="matmul-vector"),
    pytest.param(
        GemmOp,
        [normal(3, 4), normal(5, 4), normal(5)],
        {"trans_b": True, "alpha": 0.5, "beta": 2.0},
        id="gemm-trans-b-c-alpha-beta",
    ),
    pytest.param(GemmOp, [normal(4, 3), normal(4, 5)], {"trans_a": True}, id="gemm-trans-a"),
    pytest.param(GemmOp, [normal(3, 4), normal(4, 5), normal(3, 1)], {}, id="gemm-c-column"),
    # Convolution.
    pytest.param(Conv2DOp, [normal(1, 3, 9, 9), normal(4, 3, 3, 3)], {}, id="conv"),
    pytest.param(
        Conv2DOp,
        [normal(2, 3, 9, 8), normal(5, 3, 3, 2), normal(5)],
        {"strides": [2, 2], "pads": [1, 0, 2, 1]},
        id="conv-stride-asymmetric-pads-bias",
    ),
    pytest.param(
        Conv2DOp,
        [normal(1, 2, 10, 10), normal(3, 2, 3, 3)],
        {"dilations": [2, 3], "pads": [2, 2, 2, 2], "strides": [1, 2]},
        id="conv-dilation",
    ),
    pytest.param(
        Conv2DOp,
        [normal(2, 4, 7, 7), normal(6, 2, 3, 3), normal(6)],
        {"groups": 2, "pads": [1, 1, 1, 1]},
        id="conv-groups-2",
    ),
    pytest.param(
        Conv2DOp,
        [normal(1, 4, 8, 8), normal(4, 1, 3, 3)],
        {"groups": 4, "strides": [2, 2], "pads": [1, 1, 1, 1]},
        id="conv-depthwise",
    ),
    # Normalization.
    pytest.param(
        BatchNormOp,
        [normal(2, 3, 4, 5), normal(3), normal(3), normal(3), positive(3)],
        {"epsilon": 1e-3},
        id="batch-norm",
    ),
    pytest.param(
        BatchNormOp,
        [normal(4, 3), normal(3), normal(3), normal(3), positive(3)],
        {},
        id="batch-norm-rank-2",
    ),
    # Pooling.
    pytest.param(
        MaxPoolOp,
        [normal(1, 2, 7, 7)],
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        id="max-pool",
    ),
    pytest.param(
        MaxPoolOp,
        [normal(2, 2, 5, 6)],
        {"kernel_shape": [2, 3], "strides": [2, 2], "pads": [0, 1, 1, 0], "ceil_mode": True},
        id="max-pool-ceil-asymmetric",
    ),
    pytest.param(
        MaxPoolOp,
        [normal(1, 2, 5, 8)],
        {"kernel_shape": [2, 2], "strides": [3, 3], "pads": [1, 1, 1, 1], "ceil_mode": True},
        id="max-pool-ceil-drops-window-in-padding",
    ),
    pytest.param(
        MaxPoolOp,
        [normal(1, 2, 9, 9)],
        {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [1, 1, 1, 1]},
        id="max-pool-dilation",
    ),
    pytest.param(
        AvgPoolOp,
        [normal(1, 2, 7, 7)],
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        id="avg-pool-exclude-pad",
    ),
    pytest.param(
        AvgPoolOp,
        [normal(1, 2, 7, 7)],
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": True},
        id="avg-pool-include-pad",
    ),
    pytest.param(
        AvgPoolOp,
        [normal(1, 2, 6, 7)],
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 0, 1], "ceil_mode": True},
        id="avg-pool-ceil-exclude-pad",
    ),
    pytest.param(
        AvgPoolOp,
        [normal(1, 2, 6, 7)],
        {
            "kernel_shape": [3, 3],
            "strides": [2, 2],
            "pads": [1, 1, 1, 1],
            "ceil_mode": True,
            "count_include_pad": True,
        },
        id="avg-pool-ceil-include-pad",
    ),
    pytest.param(GlobalAvgPoolOp, [normal(2, 3, 5, 4)], {}, id="global-avg-pool"),
    pytest.param(GlobalAvgPoolOp, [normal(2, 3, 5)], {}, id="global-avg-pool-rank-3"),
    # Softmax and data movement.
    pytest.param(SoftmaxOp, [normal(2, 3, 4) * 10], {"axis": 1}, id="softmax-axis-1"),
    pytest.param(SoftmaxOp, [normal(2, 3, 4) * 10], {"axis": -1}, id="softmax-axis-last"),
    pytest.param(FlattenOp, [normal(2, 3, 4, 5)], {"axis": 0}, id="flatten-0"),
    pytest.param(FlattenOp, [normal(2, 3, 4, 5)], {"axis": 1}, id="flatten-1"),
    pytest.param(FlattenOp, [normal(2, 3, 4, 5)], {"axis": 2}, id="flatten-2"),
    pytest.param(FlattenOp, [normal(2, 3, 4, 5)], {"axis": -1}, id="flatten-negative"),
    pytest.param(TransposeOp, [normal(2, 3, 4, 5)], {"perm": [0, 2, 3, 1]}, id="transpose"),
    pytest.param(ConcatOp, [normal(2, 3, 4), normal(2, 1, 4), normal(2, 5, 4)], {"axis": 1}, id="concat"),
    pytest.param(ConcatOp, [normal(2, 3), normal(2, 2)], {"axis": -1}, id="concat-negative"),
]


@pytest.mark.parametrize(("op_class", "inputs", "attrs"), CASES)
def test_matches_onnxruntime(op_class: type[GraphOp], inputs: list[np.ndarray], attrs: dict):
    check_against_onnx(op_class, inputs, attrs)


HALF_CASES = [
    pytest.param(AddOp, [normal(2, 3, 4), normal(3, 1)], {}, id="add"),
    pytest.param(
        Conv2DOp,
        [normal(1, 4, 9, 9), normal(6, 2, 3, 3), normal(6)],
        {"strides": [2, 2], "pads": [1, 0, 1, 2], "groups": 2},
        id="conv",
    ),
    pytest.param(
        GemmOp,
        [normal(3, 16), normal(5, 16), normal(5)],
        {"trans_b": True, "alpha": 0.5, "beta": 2.0},
        id="gemm",
    ),
]


@pytest.mark.parametrize(("op_class", "inputs", "attrs"), HALF_CASES)
def test_float16_matches_onnxruntime(op_class: type[GraphOp], inputs: list[np.ndarray], attrs: dict):
    halves = [a.astype(np.float16) for a in inputs]
    check_against_onnx(op_class, halves, attrs, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(("op_class", "inputs", "attrs"), HALF_CASES)
def test_bfloat16_computes_in_float32(op_class: type[GraphOp], inputs: list[np.ndarray], attrs: dict):
    narrow = [a.astype(bfloat16) for a in inputs]
    in_float32 = run_ge(op_class, [a.astype(np.float32) for a in narrow], attrs)
    actual = run_ge(op_class, narrow, attrs)
    assert actual.dtype == bfloat16
    np.testing.assert_array_equal(actual, in_float32.astype(bfloat16))


def test_conv_resnet_stem_is_right_and_fast():
    inputs = [normal(1, 3, 224, 224), normal(64, 3, 7, 7), normal(64)]
    attrs = {"strides": [2, 2], "pads": [3, 3, 3, 3]}
    op = build(Conv2DOp, inputs, attrs)
    start = time.perf_counter()
    (actual,) = evaluate(op, inputs)
    assert time.perf_counter() - start < 1.0
    # Sums of 147 products of magnitude ~60 differ by accumulation order in the last float32 bits.
    np.testing.assert_allclose(actual, run_onnx("Conv", inputs, attrs), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (normal(3, 4) * 1000, np.float16),
        (normal(3, 4) * 100, np.int32),
        (normal(3, 4).astype(np.float16), np.float32),
        (np.arange(-6, 6, dtype=np.int64).reshape(3, 4), np.float32),
        (np.array([0.0, -0.0, 2.5, np.nan], np.float32), np.bool_),
    ],
    ids=["f32-f16", "f32-i32-truncates", "f16-f32", "i64-f32", "f32-bool"],
)
def test_cast_matches_onnxruntime(source: np.ndarray, target: type):
    block = Block(arg_types=[TensorType(element_type(source.dtype), source.shape)])
    op = CastOp(block.args[0], element_type(target))
    (actual,) = evaluate(op, [source])
    to = np.dtype(target)
    expected = run_onnx("Cast", [source], {"to": helper.np_dtype_to_tensor_dtype(to)}, to)
    assert actual.dtype == expected.dtype == np.dtype(target)
    np.testing.assert_array_equal(actual, expected)


def test_cast_to_bfloat16_rounds_to_nearest_even():
    # bfloat16 keeps 7 fraction bits: these values lie halfway between two neighbours.
    halfway = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8)], np.float32)
    block = Block(arg_types=[TensorType(f32, [3])])
    (actual,) = evaluate(CastOp(block.args[0], bf16), [halfway])
    assert actual.dtype == bfloat16
    np.testing.assert_array_equal(actual.astype(np.float32), [1.0, 1 + 2**-6, -1.0])


def test_reshape_follows_the_result_type():
    x = normal(2, 3, 4)
    block = Block(arg_types=[TensorType(f32, [2, 3, 4])])
    for shape, expected in (([4, 6], (4, 6)), ([-1, 2, 2], (6, 2, 2))):
        (result,) = evaluate(ReshapeOp(block.args[0], shape), [x])
        np.testing.assert_array_equal(result, x.reshape(expected))


def test_unknown_op_is_an_error():
    with pytest.raises(GeError, match="func.return"):
        evaluate(ReturnOp(), [])


def test_every_graph_op_has_semantics():
    from xdsl.traits import IsTerminator

    from ge.dialects.graph import GRAPH_OPS

    computing = {op for op in GRAPH_OPS if not op.has_trait(IsTerminator)}
    assert computing == set(IMPLEMENTATIONS)


def test_operands_and_results_must_match_their_types():
    block = Block(arg_types=[TensorType(f32, [2, 3]), TensorType(f32, [3])])
    add = AddOp.build_inferred(block.args)
    with pytest.raises(GeError, match="operand #1"):
        evaluate(add, [normal(2, 3), normal(4)])
    with pytest.raises(GeError, match="operand #0"):
        evaluate(add, [normal(2, 3).astype(np.float64), normal(3)])
    wrong = AddOp.build(operands=list(block.args), result_types=[TensorType(f32, [3, 2])])
    with pytest.raises(GeError, match="result of type"):
        evaluate(wrong, [normal(2, 3), normal(3)])


# --------------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------------


def test_dense_constant():
    values = normal(2, 3)
    tensor = TensorType(f32, [2, 3])
    attr = DenseIntOrFPElementsAttr.from_list(tensor, values.ravel().tolist())
    array = constant_array(attr, tensor, None)
    assert array.dtype == np.float32
    np.testing.assert_array_equal(array, values)
    (folded,) = evaluate(ConstOp(attr), [])
    np.testing.assert_array_equal(folded, values)


def test_dense_bool_constant():
    tensor = TensorType(i1, [3])
    attr = DenseIntOrFPElementsAttr.from_list(tensor, [1, 0, 1])
    np.testing.assert_array_equal(constant_array(attr, tensor, None), [True, False, True])


def test_dense_splat_constant_broadcasts():
    tensor = TensorType(f32, [2, 3])
    attr = DenseIntOrFPElementsAttr.from_list(tensor, [1.5])
    np.testing.assert_array_equal(constant_array(attr, tensor, None), np.full((2, 3), 1.5))


def test_scalar_splat_is_not_materialized():
    tensor = TensorType(f32, [64, 3, 7, 7])
    array = constant_array(FloatAttr(0.25, f32), tensor, None)
    assert array.dtype == np.float32 and array.shape == (64, 3, 7, 7)
    assert array.strides == (0, 0, 0, 0) and not array.flags.writeable
    assert np.all(array == 0.25)
    integers = constant_array(IntegerAttr(-3, i8), TensorType(i8, [2, 2]), None)
    assert integers.dtype == np.int8
    np.testing.assert_array_equal(integers, np.full((2, 2), -3))


def test_dense_resource_constant():
    weights = WeightStore()
    values = normal(4, 2)
    weights.put("fc.weight", values)
    tensor = TensorType(f32, [4, 2])
    op = ConstOp(DenseResourceAttr.from_params("fc.weight", tensor))
    (array,) = evaluate(op, [], weights)
    np.testing.assert_array_equal(array, values)


def test_bfloat16_resource_stored_as_bytes():
    weights = WeightStore()
    values = normal(3, 5).astype(bfloat16)
    weights.put("w", values.view(np.uint8))
    tensor = TensorType(bf16, [3, 5])
    array = constant_array(DenseResourceAttr.from_params("w", tensor), tensor, weights)
    assert array.dtype == bfloat16 and array.shape == (3, 5)
    np.testing.assert_array_equal(array, values)


def test_dense_resource_errors():
    tensor = TensorType(f32, [4, 2])
    attr = DenseResourceAttr.from_params("w", tensor)
    with pytest.raises(InvalidModelError, match="weight store"):
        constant_array(attr, tensor, None)
    weights = WeightStore()
    weights.put("w", normal(3, 2))
    with pytest.raises(InvalidModelError, match="bytes"):
        constant_array(attr, tensor, weights)


# --------------------------------------------------------------------------------------------
# Blocks
# --------------------------------------------------------------------------------------------


def _graph(ops_from_args) -> Block:
    block = Block(arg_types=[TensorType(f32, [2, 3])])
    ops = ops_from_args(block.args[0])
    block.add_ops([*ops, ReturnOp(ops[-1].results[0], ops[-2].results[0])])
    return block


def test_run_block():
    bias = normal(3)

    def ops(x):
        constant = ConstOp(DenseIntOrFPElementsAttr.from_list(TensorType(f32, [3]), bias.tolist()))
        add = AddOp.build_inferred([x, constant.result])
        return [constant, add, ReluOp.build_inferred([add.results[0]])]

    x = normal(2, 3)
    relu, add = run_block(_graph(ops), [x])
    np.testing.assert_allclose(add, x + bias)
    np.testing.assert_allclose(relu, np.maximum(x + bias, 0))
    with pytest.raises(RuntimeInputError, match="input #0"):
        run_block(_graph(ops), [normal(3, 2)])


def test_run_block_frees_values_after_last_use(monkeypatch: pytest.MonkeyPatch):
    def ops(x):
        chain = [ReluOp.build_inferred([x])]
        for _ in range(3):
            chain.append(ReluOp.build_inferred([chain[-1].results[0]]))
        return chain

    produced: list[weakref.ref] = []
    alive_at_each_op: list[list[bool]] = []
    evaluate_one = ge.semantics.core.evaluate

    def spy(op, operands, weights=None):
        alive_at_each_op.append([ref() is not None for ref in produced])
        results = evaluate_one(op, operands, weights)
        produced.append(weakref.ref(results[0]))
        return results

    monkeypatch.setattr(ge.semantics.core, "evaluate", spy)
    run_block(_graph(ops), [normal(2, 3)])
    # Each relu result lives until the next relu has read it (the last two are returned).
    assert alive_at_each_op == [[], [True], [False, True], [False, False, True]]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize(
    ("shape", "axes"),
    [
        ((1, 32, 64), (2,)),
        ((3, 5, 7, 9), (1, 2, 3)),
        ((2, 3, 4), (0, 2)),
        ((2, 3, 4), (-1, -3)),
        ((2, 3), ()),
        ((), ()),
    ],
)
def test_the_semantics_mean_is_numpys_bit_for_bit(dtype: type, shape: tuple, axes: tuple) -> None:
    rng = np.random.default_rng(7)
    for scale in (1e-3, 1.0, 300.0):
        x = (rng.standard_normal(shape) * scale).astype(dtype)
        expected = np.mean(x, axis=axes, keepdims=True)
        got = mean_over(x, axes)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def test_the_semantics_mean_refuses_an_axis_out_of_range_as_numpy_does() -> None:
    with pytest.raises(np.exceptions.AxisError):
        mean_over(np.zeros((2, 3), np.float32), (2,))
