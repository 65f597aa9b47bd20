"""Reductions, the softmax family and normalizations against onnxruntime, through `ge.backend`.

Each case is a one-node ONNX model that `ge` compiles through its whole pipeline and runs on the
emulator, and that onnxruntime runs too. 16-bit float cases are compared with onnxruntime on the
float32 model of the same values (onnxruntime has few bfloat16 kernels); CumProd (opset 26, newer
than onnxruntime knows) is checked against worked examples.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge.backend
from ge.errors import UnsupportedOperatorError

BF16 = np.dtype(ml_dtypes.bfloat16)
NARROW = (np.dtype(np.float16), BF16)
TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float64": 1e-10}


@dataclass(frozen=True)
class Const:
    """An input given as an initializer: a value known when the model is imported."""

    value: np.ndarray


Input = np.ndarray | Const | None


def one_node(op_type: str, inputs: list[Input], outputs: int, opset: int, **attrs) -> onnx.ModelProto:
    """A model of one node; `None` leaves an optional input out."""
    names, graph_inputs, initializers = [], [], []
    for index, given in enumerate(inputs):
        name = f"in{index}"
        if given is None:
            name = ""
        elif isinstance(given, Const):
            initializers.append(numpy_helper.from_array(given.value, name))
        else:
            elem = (
                TensorProto.BFLOAT16 if given.dtype == BF16 else helper.np_dtype_to_tensor_dtype(given.dtype)
            )
            graph_inputs.append(helper.make_tensor_value_info(name, elem, given.shape))
        names.append(name)
    while names and not names[-1]:
        names.pop()  # an omitted trailing input is left out, not named ""
    out_names = [f"out{i}" for i in range(outputs)]
    node = helper.make_node(op_type, names, out_names, **attrs)
    graph = helper.make_graph(
        [node],
        op_type,
        graph_inputs,
        [helper.make_empty_tensor_value_info(n) for n in out_names],
        initializer=initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def feeds(inputs: list[Input]) -> dict[str, np.ndarray]:
    return {f"in{i}": a for i, a in enumerate(inputs) if isinstance(a, np.ndarray)}


def run_ge(op_type: str, inputs: list[Input], outputs: int, opset: int, **attrs) -> list[np.ndarray]:
    rep = ge.backend.prepare(one_node(op_type, inputs, outputs, opset, **attrs))
    return rep.run(feeds(inputs))


def run_onnxruntime(op_type: str, inputs: list[Input], outputs: int, opset: int, **attrs) -> list[np.ndarray]:
    model = one_node(op_type, inputs, outputs, opset, **attrs)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds(inputs))


def check(op_type: str, inputs: list[Input], opset: int, outputs: int = 1, **attrs) -> None:
    """`ge` and onnxruntime agree on every output: dtype, shape and values."""
    got = run_ge(op_type, inputs, outputs, opset, **attrs)
    assert len(got) == outputs
    narrow = next((a.dtype for a in _arrays(inputs) if a.dtype in NARROW), None)
    if narrow is None:
        want = run_onnxruntime(op_type, inputs, outputs, opset, **attrs)
    else:
        widened = [_widen(a) for a in inputs]
        want = run_onnxruntime(op_type, widened, outputs, opset, **attrs)
        want = [
            w.astype(narrow) if w.dtype == np.float32 and g.dtype == narrow else w
            for g, w in zip(got, want, strict=True)
        ]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            tolerance = TOLERANCE[(narrow or g.dtype).name]
            np.testing.assert_allclose(
                g.astype(np.float64), w.astype(np.float64), rtol=tolerance, atol=tolerance, equal_nan=True
            )


def _arrays(inputs: list[Input]) -> list[np.ndarray]:
    return [a.value if isinstance(a, Const) else a for a in inputs if a is not None]


def _widen(given: Input) -> Input:
    if isinstance(given, Const):
        return Const(_widen(given.value))
    if given is not None and given.dtype in NARROW:
        return given.astype(np.float32)
    return given


def data(shape: tuple[int, ...], dtype: str = "float32", low: float = -2.0, high: float = 2.0, seed: int = 0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(max(low, np.iinfo(dtype).min), high, shape, endpoint=True).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def axes(*values: int) -> Const:
    return Const(np.array(values, np.int64))


# --------------------------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------------------------

REDUCTIONS = [
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
]


def _reduce_opset(op_type: str) -> int:
    return 13 if op_type == "ReduceSum" else 18


def _reduce_data(op_type: str, shape=(2, 3, 4), dtype: str = "float32"):
    # A log-sum of positive values is finite; elsewhere negative values matter.
    low = 0.25 if op_type == "ReduceLogSum" else -2.0
    return data(shape, dtype, low=low)


@pytest.mark.parametrize("op_type", REDUCTIONS)
@pytest.mark.parametrize(
    ("axes_input", "attrs"),
    [
        (axes(1), {}),
        (axes(-1, 0), {"keepdims": 0}),
        (None, {"keepdims": 0}),
        (None, {}),
        (axes(), {}),
        (None, {"noop_with_empty_axes": 1}),
        (axes(2), {"noop_with_empty_axes": 1}),
    ],
    ids=["axis1", "two_axes_drop", "all_drop", "all_keep", "empty_input", "noop", "noop_ignored"],
)
def test_reduction_axes_input(op_type: str, axes_input: Const | None, attrs: dict) -> None:
    inputs = [_reduce_data(op_type)] + ([axes_input] if axes_input is not None else [])
    check(op_type, inputs, _reduce_opset(op_type), **attrs)


@pytest.mark.parametrize("op_type", REDUCTIONS)
@pytest.mark.parametrize(
    "attrs", [{"axes": [0, 2]}, {"axes": [-2], "keepdims": 0}, {}], ids=["two_axes", "negative", "all"]
)
def test_reduction_axes_attribute(op_type: str, attrs: dict) -> None:
    check(op_type, [_reduce_data(op_type)], 11, **attrs)


@pytest.mark.parametrize("op_type", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_reduction_float_dtypes(op_type: str, dtype: str) -> None:
    x = _reduce_data(op_type, (3, 5), "float32").astype(BF16 if dtype == "bfloat16" else dtype)
    check(op_type, [x, axes(1)], _reduce_opset(op_type))


@pytest.mark.parametrize(
    ("op_type", "dtype"),
    [
        *[
            (op, d)
            for op in ("ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin")
            for d in ("int32", "int64")
        ],
        *[(op, d) for op in ("ReduceMax", "ReduceMin") for d in ("int8", "uint8")],
        ("ReduceL1", "int32"),
        ("ReduceL2", "int64"),
        ("ReduceSumSquare", "int64"),
        ("ReduceLogSum", "int32"),
    ],
)
def test_reduction_integer_dtypes(op_type: str, dtype: str) -> None:
    low = 1 if op_type == "ReduceLogSum" else -9
    x = data((4, 5), dtype, low=low, high=9)
    check(op_type, [x, axes(1)], _reduce_opset(op_type), keepdims=0)


def test_reduce_mean_of_integers_truncates_toward_zero() -> None:
    x = np.array([[-7, 5, 1], [7, -5, 0]], np.int32)
    check("ReduceMean", [x, axes(1)], 18)


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin"])
def test_reduction_of_bool(op_type: str) -> None:
    check(op_type, [data((3, 4), "bool"), axes(1)], 20)
    check(op_type, [data((3, 4), "bool"), axes(0, 1)], 20, keepdims=0)


@pytest.mark.parametrize(("op_type", "identity"), [("ReduceMax", False), ("ReduceMin", True)])
def test_reduction_of_bool_over_an_empty_set(op_type: str, identity: bool) -> None:
    [y] = run_ge(op_type, [np.zeros((3, 0), np.bool_), axes(1)], 1, 20)
    assert y.dtype == np.bool_
    np.testing.assert_array_equal(y, np.full((3, 1), identity))


@pytest.mark.parametrize("op_type", REDUCTIONS)
def test_reduction_over_an_empty_set(op_type: str) -> None:
    check(op_type, [np.zeros((2, 0, 4), np.float32), axes(1)], _reduce_opset(op_type))


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd"])
def test_integer_reduction_over_an_empty_set(op_type: str) -> None:
    check(op_type, [np.zeros((0, 3), np.int32), axes(0)], _reduce_opset(op_type))


def test_reduce_log_sum_exp_is_stable() -> None:
    x = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, -np.inf, -np.inf]], np.float32)
    [y] = run_ge("ReduceLogSumExp", [x, axes(1)], 1, 18, keepdims=0)
    np.testing.assert_allclose(y, [1000.0 + np.log(2.0), -np.inf], rtol=1e-6)


def test_reduction_axes_from_a_graph_input_specializes() -> None:
    x = data((2, 3, 4))
    check("ReduceSum", [x, np.array([0, 2], np.int64)], 13, keepdims=0)


def test_reduction_repeated_axis_is_invalid() -> None:
    with pytest.raises(ge.errors.InvalidModelError, match="twice"):
        run_ge("ReduceSum", [data((2, 3)), axes(1, -1)], 1, 13)


# --------------------------------------------------------------------------------------------
# Arg-reductions, scans, TopK
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"axis": 1},
        {"axis": -1, "keepdims": 0},
        {"axis": 1, "select_last_index": 1},
        {"select_last_index": 1},
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "float64"])
def test_arg_reduction(op_type: str, attrs: dict, dtype: str) -> None:
    # Few distinct values: many ties, which select_last_index decides.
    x = data((3, 4, 2), "int32", low=0, high=3).astype(dtype)
    check(op_type, [x], 13, **attrs)


def test_arg_reduction_of_bfloat16() -> None:
    x = data((3, 4), "int32", low=0, high=3).astype(BF16)
    check("ArgMax", [x], 13, axis=1, select_last_index=1)


@pytest.mark.parametrize("attrs", [{}, {"exclusive": 1}, {"reverse": 1}, {"exclusive": 1, "reverse": 1}])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "float16"])
def test_cum_sum(attrs: dict, axis: int, dtype: str) -> None:
    x = data((3, 5), "int32", low=-5, high=5).astype(dtype)
    check("CumSum", [x, Const(np.array(axis, np.int32))], 14, **attrs)


@pytest.mark.parametrize(
    ("attrs", "want"),
    [
        ({}, [1, 2, 6]),
        ({"exclusive": 1}, [1, 1, 2]),
        ({"reverse": 1}, [6, 6, 3]),
        ({"exclusive": 1, "reverse": 1}, [6, 3, 1]),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint64"])
def test_cum_prod_examples(attrs: dict, want: list[int], dtype: str) -> None:
    x = np.array([1, 2, 3], dtype)
    [y] = run_ge("CumProd", [x, Const(np.array(0, np.int64))], 1, 26, **attrs)
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(y, np.array(want, dtype))


def test_cum_prod_along_the_last_axis() -> None:
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    [y] = run_ge("CumProd", [x, Const(np.array([-1], np.int32))], 1, 26)
    np.testing.assert_array_equal(y, [[1, 2, 6], [4, 20, 120]])


@pytest.mark.parametrize(
    "attrs",
    [{}, {"axis": 0}, {"largest": 0}, {"axis": 0, "largest": 0}],
    ids=["last", "axis0", "smallest", "axis0_smallest"],
)
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", "bfloat16", "float64", "int32"])
def test_top_k(attrs: dict, dtype: str) -> None:
    # Repeated values: equal elements come in index order.
    x = data((4, 6), "int32", low=0, high=4).astype(BF16 if dtype == "bfloat16" else dtype)
    # ONNX takes bfloat16 in TopK from opset 24 on.
    check("TopK", [x, Const(np.array([3], np.int64))], 24 if dtype == "bfloat16" else 11, outputs=2, **attrs)


def test_top_k_of_uint64_and_every_element() -> None:
    x = np.array([[3, 1, 3, 2], [0, 0, 7, 7]], np.uint64)
    [values, indices] = run_ge("TopK", [x, Const(np.array([4], np.int64))], 2, 11)
    np.testing.assert_array_equal(values, [[3, 3, 2, 1], [7, 7, 0, 0]])
    np.testing.assert_array_equal(indices, [[0, 2, 3, 1], [2, 3, 0, 1]])


def test_top_k_before_opset_10_takes_k_as_attribute() -> None:
    check("TopK", [data((3, 5))], 9, outputs=2, k=2)


def test_top_k_from_a_graph_input() -> None:
    check("TopK", [data((3, 5)), np.array([2], np.int64)], 11, outputs=2, axis=1)


# --------------------------------------------------------------------------------------------
# Softmax, LogSoftmax, Hardmax
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize(("opset", "axis"), [(13, 0), (13, 1), (13, -1), (11, 0), (11, 1), (11, 2), (11, -2)])
def test_softmax_family(op_type: str, opset: int, axis: int) -> None:
    check(op_type, [data((2, 3, 4), low=-5, high=5)], opset, axis=axis)


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("opset", [11, 13])
def test_softmax_family_default_axis(op_type: str, opset: int) -> None:
    check(op_type, [data((2, 3, 4), low=-5, high=5)], opset)


@pytest.mark.parametrize(
    ("op_type", "dtype"),
    [
        *[(op, d) for op in ("Softmax", "LogSoftmax") for d in ("float16", "bfloat16", "float64")],
        *[("Hardmax", d) for d in ("float16", "bfloat16")],  # onnxruntime has no float64 Hardmax
    ],
)
def test_softmax_family_dtypes(op_type: str, dtype: str) -> None:
    x = data((3, 7), low=-5, high=5).astype(BF16 if dtype == "bfloat16" else dtype)
    check(op_type, [x], 13)


def test_hardmax_ties_pick_the_first() -> None:
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2]], np.float32)
    check("Hardmax", [x], 13)


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
def test_softmax_of_large_numbers(op_type: str) -> None:
    check(op_type, [np.array([[0, 1, 2, 3], [10000, 10001, 10002, 10003]], np.float32)], 13)


# --------------------------------------------------------------------------------------------
# Normalizations
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [-1, 1, 0, -2])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_layer_norm(axis: int, bias: bool, dtype: str) -> None:
    x = data((2, 3, 4), dtype)
    normalized = x.shape[axis:] if axis >= 0 else x.shape[axis + 3 :]
    scale = data(normalized, dtype, seed=1)
    b = data(normalized, dtype, seed=2) if bias else None
    check("LayerNormalization", [x, scale, b], 17, outputs=3, axis=axis, epsilon=1e-3)


def test_layer_norm_with_only_its_first_output_and_a_broadcast_scale() -> None:
    check("LayerNormalization", [data((2, 3, 4)), data((1, 4), seed=1)], 17)


@pytest.mark.parametrize("axis", [-1, 1, 0])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_rms_norm(axis: int, dtype: str) -> None:
    x = data((2, 3, 4), dtype)
    check("RMSNormalization", [x, data(x.shape[axis:], dtype, seed=1)], 23, axis=axis, epsilon=1e-4)


@pytest.mark.parametrize("opset", [18, 21])
@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_norm(opset: int, groups: int) -> None:
    x = data((3, 4, 2, 2))
    count = groups if opset < 21 else 4
    scale, bias = Const(data((count,), seed=1)), Const(data((count,), seed=2))
    check("GroupNormalization", [x, scale, bias], opset, num_groups=groups, epsilon=1e-2)


def test_group_norm_opset_18_with_parameters_known_only_at_run_time() -> None:
    check("GroupNormalization", [data((2, 6, 3)), data((3,), seed=1), data((3,), seed=2)], 18, num_groups=3)


@pytest.mark.parametrize("dtype", ["float32", "float16"])  # onnxruntime has no float64 kernel
@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 2)])
def test_instance_norm(dtype: str, shape: tuple[int, ...]) -> None:
    x = data(shape, dtype)
    check(
        "InstanceNormalization", [x, data((3,), dtype, seed=1), data((3,), dtype, seed=2)], 17, epsilon=1e-3
    )


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [0, -1, 1])
def test_lp_norm(p: int, axis: int) -> None:
    x = data((3, 4))
    x[1] = 0
    x[:, 2] = 0
    check("LpNormalization", [x], 17, p=p, axis=axis)


@pytest.mark.parametrize("attrs", [{}, {"axes": [1]}, {"axes": [2, 3]}, {"axes": [0, 1, 2, 3]}])
def test_mean_variance_norm(attrs: dict) -> None:
    check("MeanVarianceNormalization", [data((3, 3, 3, 2))], 13, **attrs)


@pytest.mark.parametrize(
    "attrs",
    [{"size": 3}, {"size": 5, "alpha": 2e-3, "beta": 0.5, "bias": 2.0}, {"size": 1}],
)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_lrn(attrs: dict, dtype: str) -> None:
    check("LRN", [data((2, 6, 3, 3), dtype, low=-3, high=3)], 13, **attrs)


def test_lrn_of_an_even_size() -> None:
    # onnxruntime refuses an even size; ONNX sums channels c - 1 to c + 2 for size 4.
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 4, 1, 1)
    [y] = run_ge("LRN", [x], 1, 13, size=4, alpha=4.0, beta=1.0, bias=0.0)
    np.testing.assert_allclose(y.reshape(-1), [1 / 14, 2 / 30, 3 / 29, 4 / 25], rtol=1e-6)


def test_lrn_wider_than_the_channels() -> None:
    """Every channel's window holds all 5 channels; the zeros past them were allocated, 2^31 planes
    of them for the largest size."""
    x = np.arange(1, 6, dtype=np.float32).reshape(1, 5, 1, 1)
    check("LRN", [x], 13, size=11, alpha=2.0, beta=1.0, bias=1.0)
    size = 2**31 - 1
    [y] = run_ge("LRN", [x], 1, 13, size=size, alpha=2.0**31, beta=1.0, bias=1.0)
    squares = 1 + 4 + 9 + 16 + 25
    np.testing.assert_allclose(y.reshape(-1), np.arange(1, 6) / (1 + 2.0**31 / size * squares), rtol=1e-6)


# --------------------------------------------------------------------------------------------
# Refused forms
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op_type", "inputs", "opset", "attrs"),
    [
        ("LayerNormalization", [data((2, 3)), data((3,))], 17, {"stash_type": 0}),
        ("RMSNormalization", [data((2, 3)), data((3,), "float16")], 23, {}),
        (
            "GroupNormalization",
            [data((2, 4, 3)), data((4,)), data((4,))],
            21,
            {"num_groups": 2, "stash_type": 11},
        ),
        ("LpNormalization", [data((2, 3))], 17, {"p": 3}),
    ],
    ids=["layer_norm_stash_type", "rms_norm_mixed_dtypes", "group_norm_stash_type", "lp_norm_p3"],
)
def test_refused_forms(op_type: str, inputs: list[Input], opset: int, attrs: dict) -> None:
    with pytest.raises(UnsupportedOperatorError) as error:
        run_ge(op_type, inputs, 1, opset, **attrs)
    assert error.value.category == "attribute"
    assert op_type in str(error.value)


NAN_ROWS = np.array([[1, np.nan, 3, 0], [2, 5, np.nan, np.nan], [4, -1, 7, 0]], np.float32)
"""Rows with a NaN first, last and nowhere: onnxruntime's results over them depend on where it sits."""


@pytest.mark.parametrize(
    ("op_type", "want"), [("ReduceMax", [np.nan, np.nan, 7]), ("ReduceMin", [np.nan, np.nan, -1])]
)
def test_max_and_min_of_a_row_holding_nan_are_nan(op_type: str, want: list[float]) -> None:
    # ge's documented choice (docs/architecture.md, "NaN in maxima"): NaN wins, as numpy's.
    (got,) = run_ge(op_type, [NAN_ROWS, axes(1)], 1, 18, keepdims=0)
    np.testing.assert_array_equal(got, np.array(want, np.float32))


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
def test_arg_max_and_min_of_a_row_holding_nan_point_at_its_first_nan(op_type: str) -> None:
    (got,) = run_ge(op_type, [NAN_ROWS], 1, 13, axis=1, keepdims=0)
    np.testing.assert_array_equal(got, np.array([1, 2, 2 if op_type == "ArgMax" else 1], np.int64))
