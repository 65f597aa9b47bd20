"""The narrow dtypes of ONNX (float8, float4, int4/uint4, int2/uint2, float8e8m0) and the
quantization operators, through `ge.backend`.

onnxruntime's Python API cannot hand these dtypes in or out, so its models keep them inside: a
cast into a narrow type is followed by a cast to float32 (exact: every narrow value is a float32
one), and a narrow input arrives as a float32 input cast to it. `ge` runs the one-node model and
its answer is compared exactly. Where onnxruntime has no kernel (float4e2m1) or differs from
ONNX's own reference (fractional floats into int4 are truncated there, as every float-to-integer
cast; onnxruntime rounds), the oracle is a numpy formula written here.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from oracle import run_onnxruntime
from xdsl.dialects.builtin import IntegerType, TensorType, f8E4M3FN, f32
from xdsl.utils.exceptions import VerifyException

import ge.backend
from ge.dialects import graph as ops
from ge.dialects.formats import c0_of
from ge.dtypes import NARROW, ONNX_NAMES, element_type, numpy_dtype
from ge.errors import UnsupportedOperatorError, VerificationError
from ge.graph import Graph
from ge.passes.conversion.lower_graph_to_kernel import unit_of

FLOAT8 = ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"]
LARGEST = {
    "float8_e4m3fn": 448.0,
    "float8_e4m3fnuz": 240.0,
    "float8_e5m2": 57344.0,
    "float8_e5m2fnuz": 57344.0,
}
ORT_DEPARTS = {"float8_e4m3fn": (480.0, 496.0), "float8_e5m2": (61440.0, 65536.0)}
"""Magnitudes onnxruntime casts without saturation otherwise than ONNX's table says (448 and
NaN for float8e4m3fn, NaN and infinity for float8e5m2): they are checked against the table."""

SPECIALS = [0.0, -0.0, 0.47892547, 0.7229038, 1e-7, -1e-7, 1e-3, 448.0, 449.0, 464.0, 465.0, 480.0, 240.0]
SPECIALS += [247.0, 248.0, 57344.0, 61439.0, 61440.0, 1e6, -1e6, np.nan, np.inf, -np.inf, 3.0, -17.5]


def proto_type(dtype: str | np.dtype) -> int:
    name = np.dtype(dtype).name
    if name in ONNX_NAMES:
        return getattr(TensorProto, ONNX_NAMES[name])
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def model(nodes, inputs, outputs, opset: int, initializers=()):
    """A model of `nodes`; `inputs` and `outputs` map names to (dtype, shape)."""
    graph = helper.make_graph(
        nodes,
        "narrow",
        [helper.make_tensor_value_info(n, proto_type(d), s) for n, (d, s) in inputs.items()],
        [helper.make_tensor_value_info(n, proto_type(d), s) for n, (d, s) in outputs.items()],
        initializer=list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=11)


def cast_node(source: str, target: str, **attrs):
    return helper.make_node("Cast", [source], [target], to=proto_type(attrs.pop("dtype")), **attrs)


def run_ge(onnx_model, feeds) -> list[np.ndarray]:
    return ge.backend.prepare(onnx_model).run(feeds)


def ge_cast(x: np.ndarray, target: str, opset: int = 25, **attrs) -> np.ndarray:
    """`ge`'s answer for one Cast node."""
    node = cast_node("x", "y", dtype=target, **attrs)
    onnx_model = model([node], {"x": (x.dtype, x.shape)}, {"y": (target, x.shape)}, opset)
    [y] = run_ge(onnx_model, {"x": x})
    assert y.dtype == np.dtype(getattr(ml_dtypes, target, target))
    return y


def ort_cast_through(x: np.ndarray, narrow: str, after: str, opset: int = 25, **attrs) -> np.ndarray:
    """onnxruntime's cast of `x` into `narrow`, read back as `after` by a second cast."""
    nodes = [cast_node("x", "m", dtype=narrow, **attrs), cast_node("m", "y", dtype=after)]
    onnx_model = model(nodes, {"x": (x.dtype, x.shape)}, {"y": (after, x.shape)}, opset)
    return run_onnxruntime(onnx_model, {"x": x})[0]


def same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values (NaN equals NaN) and equal signs of zero."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got[got == 0]), np.signbit(want[want == 0]))


# --------------------------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NARROW))
def test_narrow_types_map_to_ml_dtypes(name):
    element = element_type(name)
    assert numpy_dtype(element) == np.dtype(getattr(ml_dtypes, name))
    assert element_type(np.dtype(getattr(ml_dtypes, name))) == element
    assert ops.elementwise.element_kind(element) == "narrow"


def test_narrow_types_take_a_byte_each():
    assert c0_of(4) == c0_of(2) == c0_of(8) == 32
    assert c0_of(16) == c0_of(32) == c0_of(1) == 16


def test_only_casts_compute_on_narrow_types():
    graph = Graph()
    x = graph.add_input("x", [4], "float8_e4m3fn")
    with pytest.raises(VerificationError, match="must be numeric"):
        graph.add_op(ops.AddOp, [x, x])
    cast = graph.add_cast(x, "float32").value.owner
    assert unit_of(cast) == "aicpu"  # the AI Core has no float8 conversions
    reshape = graph.add_reshape(x, [2, 2])
    assert unit_of(reshape.value.owner) == "vector"  # moving bytes it can


def test_cast_properties_are_verified():
    x = Graph().add_input("x", [4], "float32").value
    saturating = ops.CastOp(x, f8E4M3FN, saturate=True)
    saturating.verify()
    assert "{saturate = true}" in str(saturating)
    with pytest.raises(VerifyException, match="round_mode"):
        ops.CastOp(x, f32, round_mode="sideways").verify()
    with pytest.raises(VerifyException, match="cannot cast"):
        ops.CastOp(x, TensorType(f32, [1])).verify()
    assert ops.elementwise.element_kind(IntegerType(4)) == "narrow"


# --------------------------------------------------------------------------------------------
# float8
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("source", ["float32", "float16"])
@pytest.mark.parametrize("target", FLOAT8)
def test_cast_into_float8(target, source, saturate, rng):
    with np.errstate(over="ignore"):  # 1e6 is infinity in float16
        x = np.concatenate([SPECIALS, rng.normal(0, 300, 40)]).astype(source)
    got = ge_cast(x, target, saturate=saturate).astype(np.float32)
    want = ort_cast_through(x, target, "float32", saturate=saturate)
    kept = ort_agrees(x, target, saturate)
    same(got[kept], want[kept])


def ort_agrees(x: np.ndarray, target: str, saturate: int) -> np.ndarray:
    """Where onnxruntime's cast follows ONNX's table (see ORT_DEPARTS)."""
    if saturate or target not in ORT_DEPARTS:
        return np.ones(x.shape, bool)
    low, high = ORT_DEPARTS[target]
    magnitude = np.abs(x.astype(np.float64))
    return (magnitude < low) | (magnitude >= high) | np.isnan(magnitude)


@pytest.mark.parametrize("target", FLOAT8)
def test_saturation_follows_the_specification(target):
    """The rows of the ONNX Cast tables: with saturation, infinities and values past the largest
    finite one become it; without, infinity where the type has one (float8e5m2), else NaN."""
    largest = LARGEST[target]
    x = np.array([np.inf, -np.inf, 1e6, -1e6, np.nan], np.float32)
    same(ge_cast(x, target).astype(np.float32), [largest, -largest, largest, -largest, np.nan])
    unsaturated = ge_cast(x, target, saturate=0).astype(np.float32)
    if target == "float8_e5m2":
        same(unsaturated, [np.inf, -np.inf, np.inf, -np.inf, np.nan])
    else:
        assert np.isnan(unsaturated).all()


def test_rounding_past_the_largest_value():
    """`[x] > FLT_MAX` is decided after rounding to nearest even: 464 is the tie between 448
    and 480 (float8e4m3fn's NaN pattern) and goes to 448; 61440 is the tie between 57344 and
    65536 in float8e5m2 and goes to 65536, which is infinity."""
    x = np.array([464.0, 465.0, 480.0, -490.0], np.float32)
    same(ge_cast(x, "float8_e4m3fn", saturate=0).astype(np.float32), [448.0, np.nan, np.nan, np.nan])
    same(ge_cast(x, "float8_e4m3fn").astype(np.float32), [448.0, 448.0, 448.0, -448.0])
    x = np.array([61408.0, 61440.0, -65000.0])  # float16 holds 61408 and 61440
    for source in (np.float32, np.float16):
        same(
            ge_cast(x.astype(source), "float8_e5m2", saturate=0).astype(np.float32), [57344, np.inf, -np.inf]
        )


@pytest.mark.parametrize("after", ["float32", "float16"])
@pytest.mark.parametrize("source", FLOAT8)
def test_cast_from_float8_every_value(source, after):
    x = np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, source))
    got = ge_cast(x, after)
    # onnxruntime gets the same values as float32, which its first cast turns back exactly.
    nodes = [cast_node("x", "m", dtype=source, saturate=0), cast_node("m", "y", dtype=after)]
    onnx_model = model(nodes, {"x": ("float32", [256])}, {"y": (after, [256])}, 25)
    same(got, run_onnxruntime(onnx_model, {"x": x.astype(np.float32)})[0])


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize(("source", "target"), list(itertools.permutations(FLOAT8, 2)))
def test_cast_between_float8_types(source, target, saturate):
    x = np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, source))
    got = ge_cast(x, target, saturate=saturate).astype(np.float32)
    nodes = [
        cast_node("x", "a", dtype=source, saturate=0),
        cast_node("a", "b", dtype=target, saturate=saturate),
        cast_node("b", "y", dtype="float32"),
    ]
    onnx_model = model(nodes, {"x": ("float32", [256])}, {"y": ("float32", [256])}, 25)
    want = run_onnxruntime(onnx_model, {"x": x.astype(np.float32)})[0]
    kept = ort_agrees(x.astype(np.float32), target, saturate)
    same(got[kept], want[kept])


def test_integers_saturate_into_float8():
    x = np.array([1000, -1000, 17, 0, 250, -70000], np.int32)
    for target in FLOAT8:
        same(ge_cast(x, target).astype(np.float32), ort_cast_through(x, target, "float32"))


def test_castlike_takes_the_type_of_its_second_input(rng):
    x = np.concatenate([SPECIALS, rng.normal(0, 100, 8)]).astype(np.float32)
    like = numpy_helper.from_array(np.zeros(0, ml_dtypes.float8_e5m2), "like")
    node = helper.make_node("CastLike", ["x", "like"], ["y"], saturate=0)
    onnx_model = model([node], {"x": ("float32", x.shape)}, {"y": ("float8_e5m2", x.shape)}, 25, [like])
    [got] = run_ge(onnx_model, {"x": x})
    kept = ort_agrees(x, "float8_e5m2", 0)
    same(got.astype(np.float32)[kept], ort_cast_through(x, "float8_e5m2", "float32", saturate=0)[kept])


def test_casts_between_strings_and_narrow_types_are_refused():
    node = cast_node("x", "y", dtype="float8_e4m3fn")
    onnx_model = model([node], {"x": (np.dtype(object), [2])}, {"y": ("float8_e4m3fn", [2])}, 25)
    with pytest.raises(UnsupportedOperatorError, match="casts from str") as error:
        run_ge(onnx_model, {"x": np.array(["1.5", "2"], dtype=object)})
    assert error.value.category == "dtype"


# --------------------------------------------------------------------------------------------
# 4-bit and 2-bit integers
# --------------------------------------------------------------------------------------------

BITS = {"int4": (4, True), "uint4": (4, False), "int2": (2, True), "uint2": (2, False)}


def wrapped(values: np.ndarray, target: str) -> np.ndarray:
    """Whole numbers wrapped into `target` (two's complement for the signed ones)."""
    bits, signed = BITS[target]
    low = -(1 << (bits - 1)) if signed else 0
    return (values.astype(np.int64) - low) % (1 << bits) + low


@pytest.mark.parametrize("source", ["float32", "float16", "int32", "uint8"])
@pytest.mark.parametrize("target", list(BITS))
def test_whole_numbers_wrap_into_narrow_integers(target, source):
    x = np.arange(-20, 21) if source != "uint8" else np.arange(0, 41)
    x = x.astype(source)
    got = ge_cast(x, target)
    want = ort_cast_through(x, target, "float32")
    np.testing.assert_array_equal(got.astype(np.int64), want)
    np.testing.assert_array_equal(got.astype(np.int64), wrapped(x, target))


@pytest.mark.parametrize("target", list(BITS))
def test_fractions_truncate_into_narrow_integers(target, rng):
    x = rng.uniform(-20, 20, 50).astype(np.float32)
    np.testing.assert_array_equal(ge_cast(x, target).astype(np.int64), wrapped(np.trunc(x), target))


@pytest.mark.parametrize("after", ["float32", "float16", "int8", "int32"])
@pytest.mark.parametrize("source", list(BITS))
def test_cast_from_narrow_integers(source, after):
    bits, signed = BITS[source]
    whole = np.arange(-(1 << (bits - 1)), 1 << (bits - 1)) if signed else np.arange(1 << bits)
    x = whole.astype(getattr(ml_dtypes, source))
    got = ge_cast(x, after)
    nodes = [cast_node("x", "m", dtype=source), cast_node("m", "y", dtype=after)]
    onnx_model = model(nodes, {"x": ("int32", whole.shape)}, {"y": (after, whole.shape)}, 25)
    np.testing.assert_array_equal(got, run_onnxruntime(onnx_model, {"x": whole.astype(np.int32)})[0])
    np.testing.assert_array_equal(got, whole.astype(after))


@pytest.mark.parametrize("target", list(BITS))
@pytest.mark.parametrize("source", list(BITS))
def test_cast_between_narrow_integers(source, target):
    bits, signed = BITS[source]
    whole = np.arange(-(1 << (bits - 1)), 1 << (bits - 1)) if signed else np.arange(1 << bits)
    got = ge_cast(whole.astype(getattr(ml_dtypes, source)), target)
    np.testing.assert_array_equal(got.astype(np.int64), wrapped(whole, target))


# --------------------------------------------------------------------------------------------
# float4e2m1 (onnxruntime has no kernel)
# --------------------------------------------------------------------------------------------

FLOAT4_MAGNITUDES = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6])


def float4_rounded(x: np.ndarray) -> np.ndarray:
    """The nearest float4e2m1 value (ties to the even code, which has an even mantissa),
    clamped to +-6 (the type has no infinity)."""
    magnitude = np.minimum(np.abs(x.astype(np.float64)), 6.0)[:, None]
    distance = np.abs(magnitude - FLOAT4_MAGNITUDES[None, :])
    nearest = distance == distance.min(axis=1, keepdims=True)
    # Among equally near codes, the even one; past 6, code 7.
    even = nearest & (np.arange(8) % 2 == 0)
    code = np.where(even.any(axis=1), even.argmax(axis=1), nearest.argmax(axis=1))
    return np.copysign(FLOAT4_MAGNITUDES[code], x)


@pytest.mark.parametrize("source", ["float32", "float16"])
def test_cast_into_float4(source, rng):
    x = np.array([0.48, 0.25, 0.75, 1.05, 1.25, 1.75, 2.5, 3.5, 5, 5.5, -3.5, -8, 9, 1e6, -0.0, 0.01, -4])
    with np.errstate(over="ignore"):  # 1e6 is infinity in float16
        x = np.concatenate([x, rng.uniform(-7, 7, 40)]).astype(source)
    same(ge_cast(x, "float4_e2m1fn").astype(np.float32), float4_rounded(x))


def test_cast_from_float4_every_value():
    codes = np.arange(16, dtype=np.uint8)
    x = codes.view(ml_dtypes.float4_e2m1fn)
    want = np.where(codes >= 8, -1.0, 1.0) * FLOAT4_MAGNITUDES[codes % 8]
    same(ge_cast(x, "float32"), want)
    same(ge_cast(x, "float16"), want)


# --------------------------------------------------------------------------------------------
# float8e8m0
# --------------------------------------------------------------------------------------------


def e8m0_rounded(x: np.ndarray, mode: str, saturate: bool) -> np.ndarray:
    """|x| rounded to a power of two: the one above (up), below (down) or the nearer (ties up);
    a result outside 2**-127 .. 2**127 (zero and infinity included) becomes the nearer end
    when saturating, else NaN."""
    magnitude = np.abs(x.astype(np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        down = 2.0 ** np.floor(np.log2(magnitude))
        down = np.where(down > magnitude, down / 2, np.where(2 * down <= magnitude, 2 * down, down))
        up = np.where(down == magnitude, down, 2 * down)
        rounded = {"up": up, "down": down, "nearest": np.where(magnitude - down >= up - magnitude, up, down)}
    result = rounded[mode]
    low, high = 2.0**-127, 2.0**127
    outside = (result < low) | (result > high)
    result = np.clip(result, low, high) if saturate else np.where(outside, np.nan, result)
    return np.where(np.isnan(magnitude), np.nan, result)


def test_cast_into_e8m0_matches_onnxruntime(rng):
    edges = [0.0, 0.124, 0.25, 0.5, 1.1, 2.0, 3.0, 1e-40, 1e38, 3e38, np.inf]
    x = np.concatenate([edges, rng.uniform(0, 100, 30)]).astype(np.float32)
    got = ge_cast(x, "float8_e8m0fnu")
    same(got.astype(np.float32), ort_cast_through(x, "float8_e8m0fnu", "float32"))
    same(got.astype(np.float64), e8m0_rounded(x, "up", saturate=True))


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
def test_cast_into_e8m0_rounding_modes(mode, saturate, rng):
    edges = [0.0, 1.5, 3.0, 0.75, 6.0, 2.0**-127, 2.0**-130, 2.0**127, 1.5 * 2.0**127, np.inf, np.nan]
    x = np.concatenate([edges, np.exp(rng.uniform(-20, 20, 40))])
    got = ge_cast(x.astype(np.float64), "float8_e8m0fnu", round_mode=mode, saturate=saturate)
    same(got.astype(np.float64), e8m0_rounded(x, mode, bool(saturate)))


def test_cast_from_e8m0_every_value():
    x = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    want = np.where(np.arange(256) == 255, np.nan, 2.0 ** (np.arange(256) - 127.0))
    same(ge_cast(x, "float32"), want.astype(np.float32))


# --------------------------------------------------------------------------------------------
# Quantization operators
# --------------------------------------------------------------------------------------------


def quantize_model(inputs, target: str, opset: int, readback: str | None, **attrs):
    """QuantizeLinear of graph inputs `inputs` (name -> array); with `readback`, onnxruntime's
    model casts the result to it (a type it can hand out)."""
    names = list(inputs)
    nodes = [helper.make_node("QuantizeLinear", names, ["q" if readback else "y"], **attrs)]
    if readback:
        nodes.append(cast_node("q", "y", dtype=readback))
    shape = inputs[names[0]].shape
    declared = {n: (a.dtype, a.shape) for n, a in inputs.items()}
    return model(nodes, declared, {"y": (readback or target, shape)}, opset)


def check_quantize(inputs, target: str, opset: int = 21, **attrs) -> None:
    narrow = target in NARROW
    readback = "float32" if narrow else None
    [got] = run_ge(quantize_model(inputs, target, opset, None, **attrs), inputs)
    assert got.dtype == np.dtype(getattr(ml_dtypes, target, target))
    [want] = run_onnxruntime(quantize_model(inputs, target, opset, readback, **attrs), inputs)
    same(got.astype(np.float32) if narrow else got, want)


@pytest.mark.parametrize("target", ["uint8", "int8", "uint16", "int16"])
def test_quantize_per_tensor(target, rng):
    x = np.concatenate([rng.normal(0, 200, 60), [2.5, 3.5, -2.5, 1e6, -1e6, 0.0]]).astype(np.float32)
    zero = np.array(7 if target != "uint16" else 30000, target)
    check_quantize({"x": x, "scale": np.array(1.0, np.float32), "zero": zero}, target)
    check_quantize({"x": x, "scale": np.array(0.37, np.float32), "zero": zero}, target)


def test_quantize_without_zero_point_gives_uint8(rng):
    x = rng.normal(0, 50, (3, 4)).astype(np.float32)
    check_quantize({"x": x, "scale": np.array(0.5, np.float32)}, "uint8", opset=13)


def test_quantize_per_axis(rng):
    x = rng.normal(0, 100, (2, 3, 4)).astype(np.float32)
    scale = np.array([0.5, 2.0, 3.3], np.float32)
    zero = np.array([-5, 0, 9], np.int8)
    check_quantize({"x": x, "scale": scale, "zero": zero}, "int8", axis=1)
    scale = np.array([0.5, 2.0, 3.3, 0.1], np.float32)
    zero = np.array([1, 200, 9, 128], np.uint8)
    check_quantize({"x": x, "scale": scale, "zero": zero}, "uint8", axis=-1)


def test_quantize_blocked(rng):
    x = rng.normal(0, 100, (3, 7)).astype(np.float32)
    scale = rng.uniform(0.5, 3, (3, 3)).astype(np.float32)
    zero = rng.integers(0, 20, (3, 3)).astype(np.uint8)
    check_quantize({"x": x, "scale": scale, "zero": zero}, "uint8", axis=1, block_size=3)
    scale = rng.uniform(0.5, 3, (2, 7)).astype(np.float32)
    check_quantize({"x": x, "scale": scale}, "int16", axis=0, block_size=2, output_dtype=TensorProto.INT16)


def test_quantize_in_float16(rng):
    """The scale's type is the division's (onnxruntime divides in float32, so the oracle is
    ONNX's formula in numpy)."""
    x = rng.normal(0, 30, (4, 5)).astype(np.float16)
    scale = np.float16(0.3)
    inputs = {"x": x, "scale": np.array(scale), "zero": np.array(3, np.int8)}
    [got] = run_ge(quantize_model(inputs, "int8", 21, None), inputs)
    want = np.clip(np.rint(x / scale).astype(np.int32) + 3, -128, 127).astype(np.int8)
    np.testing.assert_array_equal(got, want)
    # `precision` (opset 23) names the division's type instead.
    [got] = run_ge(quantize_model(inputs, "int8", 23, None, precision=TensorProto.FLOAT), inputs)
    quotient = x.astype(np.float32) / np.float32(scale)
    np.testing.assert_array_equal(got, np.clip(np.rint(quotient).astype(np.int32) + 3, -128, 127))


@pytest.mark.parametrize("target", ["int4", "uint4"])
def test_quantize_to_four_bits(target, rng):
    x = rng.normal(0, 20, (3, 4)).astype(np.float32)
    scale = np.array([2.0, 3.0, 4.0], np.float32)
    zero = np.array([1, -2, 0] if target == "int4" else [1, 8, 0], getattr(ml_dtypes, target))
    inputs = {"x": x, "scale": scale}
    narrow_zero = numpy_helper.from_array(zero, "zero")
    ge_model = _with_initializer(quantize_model(inputs, target, 21, None, axis=0), narrow_zero)
    ort_model = _with_initializer(quantize_model(inputs, target, 21, "int32", axis=0), narrow_zero)
    [got] = run_ge(ge_model, inputs)
    np.testing.assert_array_equal(got.astype(np.int32), run_onnxruntime(ort_model, inputs)[0])


def _with_initializer(onnx_model, tensor):
    """The model with `tensor` as a third input of its first node (an initializer)."""
    onnx_model.graph.initializer.append(tensor)
    onnx_model.graph.node[0].input.append(tensor.name)
    return onnx_model


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("target", ["float8_e4m3fn", "float8_e5m2"])
def test_quantize_to_float8(target, saturate, rng):
    x = np.concatenate([rng.normal(0, 300, 30), [1e6, -1e6, 0.0, 100000.0]]).astype(np.float32)
    zero = numpy_helper.from_array(np.zeros((), getattr(ml_dtypes, target)), "zero")
    inputs = {"x": x, "scale": np.array(2.0, np.float32)}
    ge_model = _with_initializer(quantize_model(inputs, target, 21, None, saturate=saturate), zero)
    ort_model = _with_initializer(quantize_model(inputs, target, 21, "float32", saturate=saturate), zero)
    [got] = run_ge(ge_model, inputs)
    same(got.astype(np.float32), run_onnxruntime(ort_model, inputs)[0])


def check_dequantize(x: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, opset: int = 21, **attrs):
    """ge's one-node model against onnxruntime's, which takes a narrow `x` as float32 cast to it;
    the zero point is an initializer."""
    narrow = x.dtype.name in NARROW
    output = (
        helper.tensor_dtype_to_np_dtype(attrs["output_dtype"]) if "output_dtype" in attrs else scale.dtype
    )
    initializers = [numpy_helper.from_array(zero, "zero")] if zero is not None else []
    others = ["scale"] + (["zero"] if zero is not None else [])

    def build(cast_input: bool):
        nodes = [helper.make_node("DequantizeLinear", ["xq" if cast_input else "x", *others], ["y"], **attrs)]
        if cast_input:
            nodes.insert(0, cast_node("x", "xq", dtype=x.dtype.name))
        declared = {"x": ("float32" if cast_input else x.dtype, x.shape), "scale": (scale.dtype, scale.shape)}
        return model(nodes, declared, {"y": (output, x.shape)}, opset, initializers)

    [got] = run_ge(build(False), {"x": x, "scale": scale})
    [want] = run_onnxruntime(build(narrow), {"x": x.astype(np.float32) if narrow else x, "scale": scale})
    assert got.dtype == want.dtype
    same(got, want)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16", "int16", "int32"])
def test_dequantize_per_tensor(dtype, rng):
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -30000), min(info.max, 60000), 40).astype(dtype)
    zero = None if dtype == "int32" else np.array(info.min // 2 + info.max // 3, dtype)
    check_dequantize(x, np.array(0.0123, np.float32), zero)


def test_dequantize_per_axis_and_blocked(rng):
    x = rng.integers(0, 256, (2, 4, 6)).astype(np.uint8)
    check_dequantize(x, np.array([0.5, 2, 3, 0.1], np.float32), np.array([0, 128, 3, 255], np.uint8), axis=1)
    scale = rng.uniform(0.1, 2, (2, 2, 6)).astype(np.float32)
    zero = rng.integers(0, 256, (2, 2, 6)).astype(np.uint8)
    check_dequantize(x, scale, zero, axis=1, block_size=2)


def test_dequantize_to_float16(rng):
    x = rng.integers(-128, 128, (3, 5)).astype(np.int8)
    check_dequantize(x, np.array(0.07, np.float16), np.array(-3, np.int8))
    scale, zero = np.array(0.07, np.float32), np.array(-3, np.int8)
    check_dequantize(x, scale, zero, 23, output_dtype=TensorProto.FLOAT16)


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "int4", "uint4"])
def test_dequantize_narrow_inputs(dtype, rng):
    narrow = np.dtype(getattr(ml_dtypes, dtype))
    values = rng.normal(0, 50, 30) if dtype.startswith("float") else rng.integers(-8, 16, 30)
    x = values.astype(narrow)
    zero = np.array([3], narrow) if dtype in ("int4", "uint4") else None
    check_dequantize(x, np.array(0.25, np.float32), zero, opset=21, axis=0)


def test_dynamic_quantize_linear(rng):
    for x in (
        rng.normal(0, 3, (3, 8)).astype(np.float32),
        np.abs(rng.normal(0, 3, 10)).astype(np.float32) + 1,
        -np.abs(rng.normal(0, 3, 10)).astype(np.float32) - 1,
        np.zeros(5, np.float32),
    ):
        node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zero"])
        outputs = {"y": ("uint8", x.shape), "scale": ("float32", []), "zero": ("uint8", [])}
        onnx_model = model([node], {"x": ("float32", x.shape)}, outputs, 11)
        got = run_ge(onnx_model, {"x": x})
        want = run_onnxruntime(onnx_model, {"x": x})
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("scale_dtype", ["float32", "float16"])
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_qlinear_matmul(dtype, scale_dtype, rng):
    info = np.iinfo(dtype)
    names = ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"]
    for a_shape, b_shape in (((3, 5), (5, 4)), ((2, 3, 5), (2, 5, 4))):
        inputs = {
            "a": rng.integers(info.min, info.max + 1, a_shape).astype(dtype),
            "a_scale": np.array([0.0066], scale_dtype),
            "a_zero": np.array([info.min + 113], dtype),
            "b": rng.integers(info.min, info.max + 1, b_shape).astype(dtype),
            "b_scale": np.array([0.00705], scale_dtype),
            "b_zero": np.array([info.min + 114], dtype),
            "y_scale": np.array([0.0107], scale_dtype),
            "y_zero": np.array([info.min + 118], dtype),
        }
        node = helper.make_node("QLinearMatMul", names, ["y"])
        out_shape = [*a_shape[:-1], b_shape[-1]]
        declared = {n: (a.dtype, a.shape) for n, a in inputs.items()}
        onnx_model = model([node], declared, {"y": (dtype, out_shape)}, 21)
        [got] = run_ge(onnx_model, inputs)
        [want] = run_onnxruntime(onnx_model, inputs)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_float8_qlinear_matmul_is_refused():
    node = helper.make_node("QLinearMatMul", ["a", "s", "z", "a", "s", "z", "s", "z"], ["y"])
    zero = numpy_helper.from_array(np.zeros((), ml_dtypes.float8_e4m3fn), "z")
    declared = {"a": ("float8_e4m3fn", [2, 2]), "s": ("float32", [])}
    onnx_model = model([node], declared, {"y": ("float8_e4m3fn", [2, 2])}, 21, [zero])
    with pytest.raises(UnsupportedOperatorError, match="float8_e4m3fn operands") as error:
        ge.backend.prepare(onnx_model)
    assert error.value.category == "dtype"
