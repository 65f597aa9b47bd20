"""Elementwise operators against onnxruntime, through `ge.backend`.

Each case is a one-node ONNX model that `ge` compiles through its whole pipeline and runs on the
emulator, and that onnxruntime runs too. 16-bit float cases are compared with onnxruntime on the
float32 model of the same values (`ge` computes them in float32 and rounds once). Forms that
onnxruntime does not implement (signed BitShift, Mod with fmod=0 on floats before opset 28) are
checked against the worked examples of the ONNX specification.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

import ge.backend
from ge.errors import InvalidModelError, UnsupportedOperatorError
from ge.semantics.unary import erf

BF16 = np.dtype(ml_dtypes.bfloat16)
TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-12}


def one_node(op_type: str, inputs: list[np.ndarray | None], opset: int, outputs: int = 1, **attrs):
    """A model of one node whose inputs are graph inputs; `None` leaves an optional one out."""
    names = [f"in{i}" if a is not None else "" for i, a in enumerate(inputs)]
    graph_inputs = [
        helper.make_tensor_value_info(
            name,
            TensorProto.BFLOAT16 if a.dtype == BF16 else helper.np_dtype_to_tensor_dtype(a.dtype),
            a.shape,
        )
        for name, a in zip(names, inputs, strict=True)
        if a is not None
    ]
    out_names = [f"out{i}" for i in range(outputs)]
    node = helper.make_node(op_type, names, out_names, **attrs)
    graph = helper.make_graph(
        [node], op_type, graph_inputs, [helper.make_empty_tensor_value_info(n) for n in out_names]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def feeds(inputs: list[np.ndarray | None]) -> dict[str, np.ndarray]:
    return {f"in{i}": a for i, a in enumerate(inputs) if a is not None}


def run_ge(op_type: str, inputs, opset: int, outputs: int = 1, **attrs) -> list[np.ndarray]:
    return ge.backend.prepare(one_node(op_type, inputs, opset, outputs, **attrs)).run(feeds(inputs))


def run_onnxruntime(op_type: str, inputs, opset: int, outputs: int = 1, **attrs) -> list[np.ndarray]:
    model = one_node(op_type, inputs, opset, outputs, **attrs)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds(inputs))


WIDER = {np.dtype(np.float16): np.dtype(np.float32), BF16: np.dtype(np.float32)}
"""Input dtypes onnxruntime is given in a wider type (16-bit floats: `ge` computes them in
float32 and rounds once)."""


def check(op_type: str, inputs, opset: int = 22, outputs: int = 1, via=WIDER, **attrs) -> None:
    """`ge` and onnxruntime agree; inputs of a dtype in `via` reach onnxruntime converted, and its
    results in the converted type are rounded back to the original one."""
    got = run_ge(op_type, inputs, opset, outputs, **attrs)
    converted = {a.dtype for a in inputs if a is not None and a.dtype in via}
    narrower = {via[d]: d for d in converted}
    reference_inputs = [a.astype(via[a.dtype]) if a is not None and a.dtype in via else a for a in inputs]
    want = run_onnxruntime(op_type, reference_inputs, opset, outputs, **attrs)
    for g, w in zip(got, want, strict=True):
        if w.dtype in narrower:
            w = w.astype(narrower[w.dtype])
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape
        if g.dtype.kind == "f" or g.dtype == BF16:
            tolerance = TOLERANCE[g.dtype.name]
            np.testing.assert_allclose(
                g.astype(np.float64), w.astype(np.float64), rtol=tolerance, atol=tolerance
            )
        else:
            np.testing.assert_array_equal(g, w)


def values(rng: np.random.Generator, shape, dtype, low: float = -3.0, high: float = 3.0) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, int(low) * 10), min(info.max, int(high) * 10) + 1, shape).astype(
            dtype
        )
    return rng.uniform(low, high, shape).astype(dtype)


# --------------------------------------------------------------------------------------------
# Unary
# --------------------------------------------------------------------------------------------

FLOAT_UNARY = [
    ("Exp", {}, (-3, 3)),
    ("Log", {}, (0.01, 5)),
    ("Sqrt", {}, (0, 5)),
    ("Reciprocal", {}, (0.5, 3)),
    ("Floor", {}, (-3, 3)),
    ("Ceil", {}, (-3, 3)),
    ("Round", {}, (-3, 3)),
    ("Erf", {}, (-4, 4)),
    ("Sin", {}, (-3, 3)),
    ("Cos", {}, (-3, 3)),
    ("Tan", {}, (-1.2, 1.2)),
    ("Asin", {}, (-1, 1)),
    ("Acos", {}, (-1, 1)),
    ("Atan", {}, (-3, 3)),
    ("Sinh", {}, (-3, 3)),
    ("Cosh", {}, (-3, 3)),
    ("Asinh", {}, (-3, 3)),
    ("Acosh", {}, (1, 4)),
    ("Atanh", {}, (-0.95, 0.95)),
    ("Sigmoid", {}, (-6, 6)),
    ("Tanh", {}, (-3, 3)),
    ("Softplus", {}, (-6, 6)),
    ("Softsign", {}, (-3, 3)),
    ("Mish", {}, (-4, 4)),
    ("HardSwish", {}, (-4, 4)),
    ("Gelu", {}, (-4, 4)),
    ("Gelu", {"approximate": "tanh"}, (-4, 4)),
    ("LeakyRelu", {}, (-3, 3)),
    ("LeakyRelu", {"alpha": 0.3}, (-3, 3)),
    ("Elu", {"alpha": 0.5}, (-3, 3)),
    ("Selu", {}, (-3, 3)),
    ("Selu", {"alpha": 2.0, "gamma": 3.0}, (-3, 3)),
    ("Celu", {"alpha": 2.0}, (-3, 3)),
    ("ThresholdedRelu", {"alpha": 0.5}, (-3, 3)),
    ("HardSigmoid", {}, (-4, 4)),
    ("HardSigmoid", {"alpha": 0.5, "beta": 0.6}, (-4, 4)),
    ("Shrink", {"lambd": 0.8, "bias": 0.3}, (-3, 3)),
    ("Abs", {}, (-3, 3)),
    ("Neg", {}, (-3, 3)),
    ("Sign", {}, (-3, 3)),
    ("Relu", {}, (-3, 3)),
]


@pytest.mark.parametrize(("op_type", "attrs", "domain"), FLOAT_UNARY, ids=lambda v: str(v))
def test_float_unary(op_type, attrs, domain, rng):
    x = values(rng, (3, 4, 5), np.float32, *domain)
    check(op_type, [x], 22 if op_type != "Gelu" else 20, **attrs)


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float64])
@pytest.mark.parametrize(
    ("op_type", "attrs"),
    [
        ("Sigmoid", {}),
        ("Exp", {}),
        ("Erf", {}),
        ("Gelu", {}),
        ("Elu", {"alpha": 0.7}),
        ("Abs", {}),
        ("Round", {}),
    ],
)
def test_float_unary_other_widths(op_type, attrs, dtype, rng):
    x = values(rng, (4, 6), dtype)
    opset = 20 if op_type == "Gelu" else 22
    if np.dtype(dtype) == np.float64:
        got = run_ge(op_type, [x], opset, **attrs)[0]
        # onnxruntime lacks some float64 kernels: compare with its float32 answer, loosely.
        want = run_onnxruntime(op_type, [x.astype(np.float32)], opset, **attrs)[0]
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        check(op_type, [x], opset, **attrs)


def test_swish(rng):
    x = values(rng, (2, 8), np.float32)
    check("Swish", [x], 24, alpha=1.5)
    check("Swish", [x], 24)


def test_float_specials():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e30], np.float32)
    for op_type in ("Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Floor", "Relu", "Softsign", "Erf"):
        check(op_type, [x], 13)
    check("IsNaN", [x], 20)
    check("IsInf", [x], 20)
    check("IsInf", [x], 20, detect_negative=0)
    check("IsInf", [x], 20, detect_positive=0)
    check("IsNaN", [x[:-1].astype(np.float16)], 20)


def test_round_halves_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.4999, -3.5], np.float32)
    check("Round", [x], 22)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_unary(dtype, rng):
    x = values(rng, (3, 7), dtype)
    check("Abs", [x], 13)
    check("Neg", [x], 13)
    check("Sign", [x], 13)
    if np.dtype(dtype) != np.int64:  # onnxruntime has no int64 Relu
        check("Relu", [x], 14)
    check("Shrink", [x], 9, lambd=1.5, bias=1.0)


def test_unsigned_and_logical_unary(rng):
    check("Sign", [values(rng, (5,), np.uint8)], 13)
    check("Abs", [values(rng, (5,), np.uint32)], 13)
    check("BitwiseNot", [values(rng, (2, 5), np.uint16)], 18)
    check("BitwiseNot", [values(rng, (2, 5), np.int32)], 18)
    check("Not", [values(rng, (2, 5), np.bool_)], 13)


def test_erf_is_accurate_in_float64():
    x = np.concatenate([np.linspace(-7, 7, 20001), np.geomspace(1e-300, 1, 200)])
    want = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(x), want, rtol=4.5e-16, atol=0)


# --------------------------------------------------------------------------------------------
# Binary and variadic
# --------------------------------------------------------------------------------------------

ALL_NUMERIC = [
    np.float32,
    np.float16,
    BF16,
    np.float64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint64,
]


@pytest.mark.parametrize("dtype", ALL_NUMERIC, ids=lambda d: np.dtype(d).name)
def test_arithmetic_broadcasts(dtype, rng):
    a, b = values(rng, (2, 3, 4), dtype, 1, 5), values(rng, (3, 1), dtype, 1, 5)
    # onnxruntime lacks int16 Max and Min (it computes those in int32) and float64 Mean.
    via = {**WIDER, np.dtype(np.int16): np.dtype(np.int32)}
    for op_type in ("Add", "Sub", "Mul", "Max", "Min"):
        check(op_type, [a, b], 14, via=via)
    for op_type in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"):
        check(op_type, [a, b], 16)
    if np.dtype(dtype).kind == "f" or np.dtype(dtype) == BF16:
        check("Sum", [a, b], 13)
        check("Div", [a, b], 14)
        check("Pow", [np.abs(a), b], 15)
        if np.dtype(dtype) != np.float64:
            check("Mean", [a, b], 13)


def test_integer_division_truncates_toward_zero():
    a = np.array([-7, 7, -7, 7, 0, -1], np.int32)
    b = np.array([2, -2, -2, 2, 3, 4], np.int32)
    check("Div", [a, b], 14)
    check("Div", [a.astype(np.int64), b.astype(np.int64)], 14)


def test_variadic_folds_many_inputs(rng):
    inputs = [values(rng, shape, np.float32) for shape in [(3, 4), (4,), (1, 4), (3, 1)]]
    for op_type in ("Sum", "Mean", "Max", "Min"):
        check(op_type, inputs, 13)
        check(op_type, inputs[:1], 13)
    ints = [values(rng, (2, 3), np.int32) for _ in range(3)]
    check("Max", ints, 13)
    check("Min", ints, 13)


@pytest.mark.parametrize(
    ("base", "exponent"),
    [
        (np.float32, np.float32),
        (np.float32, np.int64),
        (np.float32, np.int32),
        (np.float64, np.float32),
        (np.int32, np.float32),
        (np.int64, np.int64),
        (np.int32, np.int32),
        (np.float16, np.float16),
    ],
    ids=lambda d: np.dtype(d).name,
)
def test_pow_mixed_dtypes(base, exponent, rng):
    x = np.array([[1, 2, 3], [4, 0, 2]]).astype(base)
    y = np.array([2, 3, -1]).astype(exponent) if np.dtype(exponent).kind == "i" else None
    if y is None:
        y = np.array([2.5, 0.5, 3]).astype(exponent)
    check("Pow", [x, y], 15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int32, np.int64, np.uint16])
def test_mod(dtype, rng):
    a = values(rng, (4, 5), dtype, -5, 5)
    b = values(rng, (5,), dtype, 1, 4)
    if np.dtype(dtype).kind != "u":
        b[::2] = -b[::2]
    check("Mod", [a, b], 13, fmod=1)
    if np.dtype(dtype).kind in "iu":
        check("Mod", [a, b], 13)


def test_mod_fmod0_on_floats_takes_the_divisors_sign():
    # The example of ONNX's Mod specification (opset 28: fmod=0 on floats).
    x = np.array([-4.3, 7.2, 5.0, 4.3, -7.2, 8.0], np.float64)
    y = np.array([2.1, -3.4, 8.0, -2.1, 3.4, 5.0], np.float64)
    got = run_ge("Mod", [x, y], 28)[0]
    np.testing.assert_allclose(got, [2.0, -3.0, 5.0, -2.0, 3.0, 3.0], atol=1e-12)
    edge = run_ge(
        "Mod", [np.array([-0.0, 3.0, np.inf, 1.0], np.float32), np.array([2.0, np.inf, 2, 0], np.float32)], 28
    )
    assert np.signbit(edge[0][0]) == np.False_ and edge[0][1] == 3.0 and np.isnan(edge[0][2:]).all()


def test_prelu_slope_broadcasts(rng):
    x = values(rng, (2, 3, 4, 4), np.float32)
    check("PRelu", [x, values(rng, (3, 1, 1), np.float32)], 16)
    check("PRelu", [x, values(rng, (4,), np.float32)], 16)
    check("PRelu", [values(rng, (2, 5), np.int32), values(rng, (5,), np.int32)], 16)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint64])
def test_bitwise(dtype, rng):
    a, b = values(rng, (3, 4), dtype), values(rng, (4,), dtype)
    for op_type in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        check(op_type, [a, b], 18)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_bit_shift_unsigned(dtype, rng):
    x = values(rng, (3, 4), dtype, 0, 10)
    s = np.array([0, 1, 3, 5]).astype(dtype)
    check("BitShift", [x, s], 11, direction="LEFT")
    check("BitShift", [x, s], 11, direction="RIGHT")


def test_bit_shift_signed_follows_opset_28():
    # The examples of ONNX's BitShift specification: arithmetic right shifts, and shifts that
    # are negative or not less than the width leave only the sign fill.
    x = np.array([-8, 4, -1, -128, 64], np.int8)
    s = np.array([1, 9, 127, 1, -1], np.int8)
    left = run_ge("BitShift", [x, s], 28, direction="LEFT")[0]
    right = run_ge("BitShift", [x, s], 28, direction="RIGHT")[0]
    np.testing.assert_array_equal(left, np.array([-16, 0, 0, 0, 0], np.int8))
    np.testing.assert_array_equal(right, np.array([-4, 0, -1, -64, 0], np.int8))
    overflow = run_ge(
        "BitShift",
        [np.array([1073741824, 1, -1073741824], np.int32), np.array([1, 31, 1], np.int32)],
        28,
        direction="LEFT",
    )[0]
    np.testing.assert_array_equal(overflow, np.full(3, -(2**31), np.int32))


def test_logical(rng):
    a, b = values(rng, (3, 4), np.bool_), values(rng, (1, 4), np.bool_)
    for op_type in ("And", "Or", "Xor", "Equal"):
        check(op_type, [a, b], 16)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int64, np.uint8])
def test_where(dtype, rng):
    condition = values(rng, (2, 1, 4), np.bool_)
    check("Where", [condition, values(rng, (3, 4), dtype), values(rng, (4,), dtype)], 16)


def test_where_selects_booleans():
    # onnxruntime has no bool Where.
    got = run_ge(
        "Where", [np.array([True, False, True]), np.array([True, True, False]), np.array([False])], 16
    )
    np.testing.assert_array_equal(got[0], [True, False, False])


# --------------------------------------------------------------------------------------------
# Clip, Cast, Dropout
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int32, np.uint8])
def test_clip_bounds_as_inputs(dtype, rng):
    x = values(rng, (3, 4), dtype, -5, 5)
    low, high = (
        np.array(-2).astype(dtype) if np.dtype(dtype).kind != "u" else np.array(2, dtype),
        np.array(3).astype(dtype),
    )
    check("Clip", [x, low, high], 13)
    check("Clip", [x, low], 13)
    check("Clip", [x, None, high], 13)
    check("Clip", [x], 13)
    check("Clip", [x, high, low], 13)  # min > max: everything becomes max


def test_clip_bounds_as_attributes(rng):
    x = values(rng, (3, 4), np.float32, -5, 5)
    check("Clip", [x], 10, min=-1.5, max=2.0)
    check("Clip", [x], 10, max=0.5)
    check("Clip", [x], 10)


CAST_TYPES = [
    np.float32,
    np.float16,
    BF16,
    np.float64,
    np.int8,
    np.int32,
    np.int64,
    np.uint8,
    np.uint32,
    np.bool_,
]


@pytest.mark.parametrize("source", CAST_TYPES, ids=lambda d: np.dtype(d).name)
def test_cast_between_every_pair(source, rng):
    if np.dtype(source) == np.bool_:
        x = values(rng, (3, 5), np.bool_)
    elif np.dtype(source).kind == "u":
        x = values(rng, (3, 5), source, 0, 9)
    else:
        x = np.array([[0.0, -0.0, 1.5, -2.5, 100.7], [7.0, -3.9, 0.25, 42.0, -100.2], [1, 2, 3, -4, 5]])
        x = x.astype(np.float32).astype(source)
    for target in CAST_TYPES:
        if np.dtype(source).kind == "f" and np.dtype(target).kind == "u":
            continue  # negative floats into unsigned integers: undefined in ONNX (see test_casts.py)
        to = (
            TensorProto.BFLOAT16
            if np.dtype(target) == BF16
            else helper.np_dtype_to_tensor_dtype(np.dtype(target))
        )
        if np.dtype(source) == BF16 or np.dtype(target) == BF16:
            got = run_ge("Cast", [x], 21, to=to)[0]
            assert got.dtype == np.dtype(target)
            np.testing.assert_array_equal(
                got, x.astype(np.float32).astype(target) if np.dtype(target) != BF16 else x.astype(target)
            )
            continue
        check("Cast", [x], 21, via={}, to=to)
        check("CastLike", [x, np.zeros(1, target)], 21, via={})


def test_cast_refuses_what_ge_has_no_type_for(rng):
    x = values(rng, (3,), np.float32)
    for to in (TensorProto.COMPLEX64, TensorProto.FLOAT6E2M3):
        with pytest.raises(UnsupportedOperatorError) as error:
            run_ge("Cast", [x], 21, to=to)
        assert error.value.category == "dtype"


def test_dtypes_the_schema_excludes_are_refused_not_computed(rng):
    with pytest.raises(InvalidModelError, match=r"input #0 \('input'\) is tensor\(int32\)"):
        run_ge("Erf", [values(rng, (3,), np.int32)], 13)
    with pytest.raises(InvalidModelError, match=r"is tensor\(uint8\)"):
        run_ge("Neg", [values(rng, (3,), np.uint8)], 13)


def test_dropout_at_inference_is_identity_with_a_true_mask(rng):
    x = values(rng, (3, 4), np.float32)
    y, mask = run_ge("Dropout", [x], 13, outputs=2)
    np.testing.assert_array_equal(y, x)
    assert mask.dtype == np.bool_ and mask.shape == x.shape and mask.all()
    y, mask = run_ge("Dropout", [x, np.array(0.0, np.float32), np.array(True)], 13, outputs=2)
    np.testing.assert_array_equal(y, x)
    assert mask.all()
    with pytest.raises(UnsupportedOperatorError) as error:
        run_ge("Dropout", [x, np.array(0.5, np.float32), np.array(True)], 13)
    assert error.value.category == "attribute"


def test_identity_and_relu_keep_the_input(rng):
    x = values(rng, (2, 3), np.int32)
    check("Identity", [x], 21)
    check("Relu", [x], 14)


def test_onnx_model_check_passes_on_a_chain():
    """Several elementwise ops in one model: the emulator runs them as one program."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Greater", ["s", "x"], ["g"]),
        helper.make_node("Where", ["g", "s", "x"], ["w"]),
        helper.make_node("Pow", ["w", "x"], ["p"]),
        helper.make_node("Clip", ["p", "lo", "hi"], ["y"]),
    ]
    init = [
        onnx.numpy_helper.from_array(np.array(0.1, np.float32), "lo"),
        onnx.numpy_helper.from_array(np.array(2.0, np.float32), "hi"),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "chain", [x], [y], init),
        opset_imports=[helper.make_opsetid("", 17)],
        ir_version=8,
    )
    onnx.checker.check_model(model)
    data = np.random.default_rng(0).uniform(0.1, 2, (4, 4)).astype(np.float32)
    got = ge.backend.prepare(model).run([data])[0]
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(got, session.run(None, {"x": data})[0], rtol=2e-6)
