"""String tensors and the text operators against onnxruntime, through `ge.backend`.

Each case is a one-node ONNX model that `ge` compiles through its whole pipeline (every op on
strings is an AI CPU kernel) and runs on the emulator. Strings go in and come out as numpy object
arrays of `str`, as onnxruntime has them. Where onnxruntime is no oracle (it formats numbers
otherwise than ONNX's reference, has no locale installed here for case changes beyond ASCII, or
lacks a string kernel), the expected values are written out with Python's own string functions.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from oracle import run_onnxruntime
from single_node import feeds, one_node
from xdsl.parser import Parser

import ge
import ge.backend
from ge.context import make_context
from ge.errors import RuntimeInputError, UnsupportedOperatorError
from ge.frontends.onnx import import_onnx

WORDS = ["abc.com", "", "héllo wörld", "中文.字", "a..b", "  lead and trail  ", "x"]


def strings(*values: str) -> np.ndarray:
    return np.array(values, dtype=object)


def ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def run_ge(model: onnx.ModelProto, inputs: dict[str, np.ndarray], **options) -> list[np.ndarray]:
    return ge.backend.prepare(model, **options).run(inputs)


def assert_same(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape, (g.shape, w.shape)
        if g.dtype == object:
            assert all(isinstance(s, str) for s in g.reshape(-1))
        np.testing.assert_array_equal(g, w)


def check(op_type: str, inputs, opset: int, outputs: int = 1, known=(), **attrs) -> list[np.ndarray]:
    """`ge` gives what onnxruntime gives."""
    model = one_node(op_type, inputs, opset, outputs, known, **attrs)
    got = run_ge(model, feeds(inputs, known))
    assert_same(got, run_onnxruntime(model, feeds(inputs, known)))
    return got


def expect(op_type: str, inputs, opset: int, want: list[np.ndarray], outputs: int = 1, known=(), **attrs):
    """`ge` gives `want`."""
    model = one_node(op_type, inputs, opset, outputs, known, **attrs)
    assert_same(run_ge(model, feeds(inputs, known)), want)


# --------------------------------------------------------------------------------------------
# The text operators
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x, y",
    [
        (strings("abc", "dé"), strings(".com", "中")),
        (strings("cat", "", "snake"), strings("s")),
        (np.array("cat", dtype=object), np.array("s", dtype=object)),
        (strings("", ""), strings("", "x")),
        (strings(*WORDS[:6]).reshape(2, 3), strings("1", "22", "333")),
        (strings("x").reshape(1, 1), strings("aaaa", "b")),
    ],
)
def test_string_concat(x, y) -> None:
    check("StringConcat", [x, y], opset=20)


def test_string_concat_of_constants_folds() -> None:
    check("StringConcat", [strings("a", "bb", "a"), strings("é")], opset=20, known=(0, 1))


@pytest.mark.parametrize(
    "attrs",
    [
        {"delimiter": "."},
        {"delimiter": ".", "maxsplit": 1},
        {"delimiter": "..", "maxsplit": 2},
        {"delimiter": " "},
        {"delimiter": "and"},
        {},
        {"delimiter": ""},
        {"maxsplit": 1},
        {"maxsplit": 0},
    ],
)
@pytest.mark.parametrize("known", [(), (0,)])
def test_string_split(attrs, known) -> None:
    check("StringSplit", [strings(*WORDS)], opset=20, outputs=2, known=known, **attrs)


def test_string_split_matrix_and_empty() -> None:
    check("StringSplit", [strings(*WORDS[:6]).reshape(3, 2)], opset=20, outputs=2, delimiter=".")
    check("StringSplit", [strings("", "")], opset=20, outputs=2, delimiter=".")
    expect(
        "StringSplit",
        [np.array([], dtype=object)],
        opset=20,
        outputs=2,
        want=[np.zeros((0, 0), dtype=object), np.zeros(0, np.int64)],
    )


def test_string_split_specializes_on_each_input() -> None:
    model = one_node("StringSplit", [strings("a b")], opset=20, outputs=2)
    rep = ge.backend.prepare(model)
    for words in (["a b"], ["a b c d"], ["é"]):
        x = strings(*words)
        assert_same(rep.run({"in0": x}), run_onnxruntime(model, {"in0": x}))


NORMALIZE_INPUTS = [
    strings("Monday", "tuesday", "MONDAY", "x", "monday"),
    strings("Monday", "tuesday", "MONDAY", "x").reshape(1, 4),
    strings("monday", "Monday"),
]


@pytest.mark.parametrize("x", NORMALIZE_INPUTS)
@pytest.mark.parametrize("action", ["NONE", "LOWER", "UPPER"])
@pytest.mark.parametrize("case_sensitive", [0, 1])
@pytest.mark.parametrize("stopwords", [[], ["monday"], ["MONDAY", "x"]])
def test_string_normalizer(x, action, case_sensitive, stopwords) -> None:
    # onnxruntime builds the C locale only here, so its case changes are ASCII's.
    attrs = {"case_change_action": action, "is_case_sensitive": case_sensitive, "locale": "C"}
    if stopwords:
        attrs["stopwords"] = stopwords
    check("StringNormalizer", [x], opset=10, **attrs)


@pytest.mark.parametrize("action", ["LOWER", "UPPER"])
def test_string_normalizer_changes_unicode_case(action) -> None:
    words = ["Straße", "ÉCOLE", "İstanbul", "ǅ", "ﬃ", "Ωmega"]
    change = str.upper if action == "UPPER" else str.lower
    drop = change("ÉCOLE")  # a stop word in another case, ignoring case
    want = strings(*[change(w) for w in words if change(w) != drop])
    expect("StringNormalizer", [strings(*words)], 10, [want], case_change_action=action, stopwords=["école"])


@pytest.mark.parametrize(
    "pattern",
    [
        r"www\.[\w.-]+\.\bcom\b",
        r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)",
        r"a*b?",
        r"[a-c]+|\d{2,3}",
        r"(?i)H.LLO.*",
        r"\w+",
        r"\s*\S+\s*",
        r".*\.com",
        r"",
    ],
)
def test_regex_full_match(pattern) -> None:
    words = [*WORDS, "www.google.com", "x@gmail.com", "aab", "123", "hello", "٣٤", "b"]
    check("RegexFullMatch", [strings(*words).reshape(2, 7)], opset=20, pattern=pattern)


def test_regex_full_match_empty() -> None:
    check("RegexFullMatch", [np.zeros((2, 0), dtype=object)], opset=20, pattern="a")


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a)\1",
        r"(?=a)a",
        r"(?<!b)a",
        r"(?>a)",
        r"a++",
        r"a{,2}",
        r"[[:alpha:]]",
        r"(?i)é",
        r"a\Z",
        r"\pL",
        r"\Qa\E",
    ],
)
def test_regex_python_would_misread_is_refused(pattern) -> None:
    model = one_node("RegexFullMatch", [strings("a")], opset=20, pattern=pattern)
    with pytest.raises(UnsupportedOperatorError) as error:
        run_ge(model, {"in0": strings("a")})
    assert error.value.category == "attribute"


@pytest.mark.parametrize(
    "x, attrs",
    [
        (strings("a", "b", "d", "c", "é"), {"keys_strings": ["a", "b", "c"], "values_int64s": [0, 1, 2]}),
        (strings("a", "zz"), {"keys_strings": ["a", "zz"], "values_floats": [1.5, 2.5]}),
        (ints(3, 1, 7), {"keys_int64s": [1, 3], "values_strings": ["one", "three"], "default_string": "?"}),
        (np.array([1.0, 0.5, 2.5], np.float32), {"keys_floats": [2.5, 1.0], "values_int64s": [7, 8]}),
        (
            strings("a", "q"),
            {
                "keys_tensor": helper.make_tensor("k", TensorProto.STRING, (2,), ["a", "b"]),
                "values_tensor": helper.make_tensor("v", TensorProto.INT16, (2,), [4, 5]),
                "default_tensor": helper.make_tensor("d", TensorProto.INT16, (1,), [9]),
            },
        ),
        (strings("a", "b", "c").reshape(3, 1), {"keys_strings": ["b"], "values_strings": ["longer value"]}),
    ],
)
def test_label_encoder(x, attrs) -> None:
    opset = 4 if any(k.endswith("_tensor") for k in attrs) else 2
    check_label_encoder(x, opset, **attrs)


def test_label_encoder_repeated_and_nan_keys() -> None:
    # ONNX says the last of repeated keys wins and a NaN key matches NaN; onnxruntime keeps the
    # first and matches no NaN, so the expected values are written out.
    x = strings("a", "b", "zz")
    node = dict(keys_strings=["a", "zz", "a"], values_floats=[1.5, 2.5, 3.5], default_float=-1.0)
    assert_same(run_ge(label_encoder(x, 2, **node), {"x": x}), [np.array([3.5, -1, 2.5], np.float32)])
    x = np.array([1.0, np.nan, 2.5, -np.nan], np.float32)
    node = dict(keys_floats=[np.nan, 1.0], values_int64s=[7, 8])
    assert_same(run_ge(label_encoder(x, 2, **node), {"x": x}), [ints(8, 7, -1, 7)])


def test_label_encoder_classes_strings() -> None:
    check_label_encoder(strings("b", "z", "a"), 1, classes_strings=["a", "b"], default_int64=-5)
    check_label_encoder(ints(1, 4, 0), 1, classes_strings=["a", "b"], default_string="none")


def check_label_encoder(x: np.ndarray, ml_opset: int, **attrs) -> None:
    model = label_encoder(x, ml_opset, **attrs)
    assert_same(run_ge(model, {"x": x}), run_onnxruntime(model, {"x": x}))


def label_encoder(x: np.ndarray, ml_opset: int, **attrs) -> onnx.ModelProto:
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    element = helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", element, x.shape)],
        [helper.make_empty_tensor_value_info("y")],
    )
    opsets = [helper.make_opsetid("", 19), helper.make_opsetid("ai.onnx.ml", ml_opset)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=9)


# --------------------------------------------------------------------------------------------
# Comparisons and casts
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x, y",
    [
        (strings("a", "é", "", "abc"), strings("a", "e", "", "abcd")),
        (strings(*WORDS[:6]).reshape(2, 3), strings("abc.com")),
        (np.array("x", dtype=object), strings("x", "xx")),
    ],
)
def test_equal(x, y) -> None:
    check("Equal", [x, y], opset=19)


@pytest.mark.parametrize("to", [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32])
def test_cast_from_strings(to) -> None:
    check("Cast", [strings("1", "-20", " 3", "0", "42")], opset=21, to=to)
    if to in (TensorProto.FLOAT, TensorProto.DOUBLE):
        check("Cast", [strings("1.5", "-2.25e3", "NaN", "-INF", "1e-7")], opset=21, to=to)


def test_cast_strings_to_bool_and_bfloat16() -> None:
    expect(
        "Cast",
        [strings("True", "False", "", "0")],
        21,
        [np.array([True, True, False, True])],
        to=TensorProto.BOOL,
    )
    model = one_node("Cast", [strings("1.5", "-3")], opset=21, to=TensorProto.BFLOAT16)
    np.testing.assert_array_equal(
        run_ge(model, {"in0": strings("1.5", "-3")})[0].astype(np.float32), [1.5, -3]
    )


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint64])
def test_cast_integers_to_strings(dtype) -> None:
    x = np.array([0, 7, np.iinfo(dtype).min, np.iinfo(dtype).max], dtype=dtype)
    check("Cast", [x], opset=21, to=TensorProto.STRING)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.bool_])
def test_cast_numbers_to_strings_as_numpy_formats_them(dtype) -> None:
    # ONNX's reference casts with numpy; onnxruntime prints "1" for 1.0 and "NaN" for nan.
    values = [True, False] if dtype == np.bool_ else [0.1, 1.0, -2.5e-8, 3e4, np.nan, -np.inf, 65504]
    x = np.array(values, dtype=dtype)
    want = np.array([str(v) for v in x], dtype=object)
    expect("Cast", [x], 21, [want], to=TensorProto.STRING)


def test_cast_like_both_ways() -> None:
    check("CastLike", [np.array([3, -7], np.int16), strings("x")], opset=21)
    check("CastLike", [strings("1.5", "2.25"), np.array([0], np.float64)], opset=21)
    check("CastLike", [strings("a", "bcd"), strings("é")], opset=21)


def test_cast_of_a_string_that_is_no_number_fails_at_run_time() -> None:
    model = one_node("Cast", [strings("1")], opset=21, to=TensorProto.INT64)
    with pytest.raises(RuntimeInputError, match="cannot cast"):
        run_ge(model, {"in0": strings("1.5")})


# --------------------------------------------------------------------------------------------
# Data movement on strings
# --------------------------------------------------------------------------------------------

GRID = strings("a", "bb", "ccc", "", "é", "中文").reshape(2, 3)


@pytest.mark.parametrize(
    "op_type, inputs, known, attrs",
    [
        ("Identity", [GRID], (), {}),
        ("Reshape", [GRID, ints(3, 2)], (1,), {}),
        ("Concat", [GRID, strings("longer", "x", "y").reshape(1, 3)], (), {"axis": 0}),
        ("Slice", [GRID, ints(1), ints(3), ints(1)], (1, 2, 3), {}),
        ("Transpose", [GRID], (), {"perm": [1, 0]}),
        ("Squeeze", [GRID[None], ints(0)], (1,), {}),
        ("Unsqueeze", [GRID, ints(1)], (1,), {}),
        ("Expand", [strings("p", "qq"), ints(3, 2)], (1,), {}),
        ("Tile", [GRID, ints(2, 1)], (1,), {}),
        ("Flatten", [GRID[None]], (), {"axis": 2}),
        ("GatherElements", [GRID, ints(0, 1, 0, 1, 1, 0).reshape(2, 3)], (), {"axis": 0}),
        ("GatherND", [GRID, ints(1, 2, 0, 0).reshape(2, 2)], (), {}),
        ("Compress", [GRID, np.array([False, True, True])], (1,), {"axis": 1}),
        (
            "ScatterND",
            [GRID, ints(0, 1).reshape(2, 1), strings("x", "y", "z", "u", "v", "w").reshape(2, 3)],
            (),
            {},
        ),
        (
            "ScatterElements",
            [GRID, ints(1, 0).reshape(1, 2), strings("uu", "v").reshape(1, 2)],
            (),
            {"axis": 0},
        ),
        ("Where", [np.array([[True, False, True]]), GRID, strings("wider one")], (), {}),
        ("ReverseSequence", [GRID, ints(2, 1)], (), {"batch_axis": 0, "time_axis": 1}),
        ("Shape", [GRID], (), {}),
        ("Size", [GRID], (), {}),
    ],
)
def test_data_movement(op_type, inputs, known, attrs) -> None:
    check(op_type, inputs, opset=17, known=known, **attrs)


def test_split_and_unique() -> None:
    check("Split", [GRID, ints(1, 2)], opset=17, outputs=2, known=(1,), axis=1)
    check("Unique", [strings("b", "a", "b", "é", "a")], opset=17, outputs=4)


def test_gather_and_pad() -> None:
    # onnxruntime gathers strings wrongly here and has no string Pad: numpy is the oracle.
    indices = ints(1, 0, -1)
    expect("Gather", [GRID, indices], 17, [np.take(GRID, indices, axis=0)], known=(1,))
    expect("Gather", [GRID, indices], 17, [np.take(GRID, indices, axis=1)], axis=1)
    padded = np.pad(GRID.astype(str), ((0, 0), (1, 2)), constant_values="pad").astype(object)
    expect("Pad", [GRID, ints(0, 1, 0, 2), strings("pad")], 18, [padded], known=(1, 2))


def test_string_constants() -> None:
    node = helper.make_node("Constant", [], ["c"], value_strings=["a", "bcd", "é"])
    concat = helper.make_node("StringConcat", ["c", "x"], ["y"])
    split = helper.make_node("StringSplit", ["k"], ["pieces", "lengths"], delimiter=",")
    graph = helper.make_graph(
        [node, concat, split],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.STRING, [3])],
        [helper.make_empty_tensor_value_info(n) for n in ("y", "pieces", "lengths")],
        initializer=[numpy_helper.from_array(strings("p,q", "", "r" * 40), "k")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
    x = strings("1", "22", "")
    assert_same(run_ge(model, {"x": x}), run_onnxruntime(model, {"x": x}))


# --------------------------------------------------------------------------------------------
# Types, placement, interfaces
# --------------------------------------------------------------------------------------------


def test_string_type_round_trips_through_text() -> None:
    text = (
        "func.func @f(%x: tensor<2x!ascend.string<3>>) -> tensor<2x!ascend.string<6>> {\n"
        "  %y = ascend.graph.string_concat %x, %x : (tensor<2x!ascend.string<3>>, "
        "tensor<2x!ascend.string<3>>) -> tensor<2x!ascend.string<6>>\n"
        "  func.return %y : tensor<2x!ascend.string<6>>\n}"
    )
    module = Parser(make_context(), text).parse_module()
    module.verify()
    assert "tensor<2x!ascend.string<6>>" in str(module)


@pytest.mark.parametrize("level", [0, 3])
def test_string_ops_run_on_the_ai_cpu(level) -> None:
    model = one_node("StringSplit", [strings("a b", "c")], opset=20, outputs=2)
    graph = import_onnx(model, feeds={"in0": strings("a b", "c")})
    compiled = ge.GraphCompiler().compile(graph, optimization_level=level)
    assert compiled.kernel_histogram() == {"aicpu": 1}
    assert compiled.inputs[0].dtype == "str96"  # three UTF-32 code points
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    pieces, lengths = executor.run(strings("a b", "c"))
    np.testing.assert_array_equal(pieces, np.array([["a", "b"], ["c", ""]]))
    np.testing.assert_array_equal(lengths, [2, 1])


def test_string_inputs_need_their_data() -> None:
    model = one_node("StringConcat", [strings("a"), strings("b")], opset=20)
    with pytest.raises(UnsupportedOperatorError) as error:
        ge.GraphParser().parse_onnx(model)
    assert error.value.category == "input"


def test_a_wider_input_compiles_again() -> None:
    model = one_node("StringConcat", [strings("a"), strings("b")], opset=20)
    rep = ge.backend.prepare(model)
    for x, y in [("a", "b"), ("a long word", "é"), ("", "")]:
        inputs = {"in0": strings(x), "in1": strings(y)}
        assert_same(rep.run(inputs), [strings(x + y)])
