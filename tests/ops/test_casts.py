"""Cast's arithmetic, through `ge.backend`: what ONNX defines against formulas written here; what
it leaves undefined (out-of-range floats into integers) against onnxruntime on x86-64, whose rule
`ge` documents (`ge.semantics.casts`), and against that rule written out again per element.

None of the expected values comes from numpy's or ml_dtypes' own conversions at the edges, which
differ between releases (ml_dtypes 0.7 turned out-of-range floats into int4 to zero).
"""

from __future__ import annotations

import math
import platform

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper
from oracle import run_onnxruntime

import ge.backend

INTEGERS = {
    **{f"int{w}": (w, True) for w in (2, 4, 8, 16, 32, 64)},
    **{f"uint{w}": (w, False) for w in (2, 4, 8, 16, 32, 64)},
}
PROTO = {
    "float16": TensorProto.FLOAT16,
    "bfloat16": TensorProto.BFLOAT16,
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "bool": TensorProto.BOOL,
    **{name: getattr(TensorProto, name.upper()) for name in INTEGERS},
    "float8_e4m3fn": TensorProto.FLOAT8E4M3FN,
    "float8_e4m3fnuz": TensorProto.FLOAT8E4M3FNUZ,
    "float8_e5m2": TensorProto.FLOAT8E5M2,
    "float8_e5m2fnuz": TensorProto.FLOAT8E5M2FNUZ,
    "float4_e2m1fn": TensorProto.FLOAT4E2M1,
}
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name, None) or name)


def cast_model(source: str, steps: list[str]):
    """x (source) cast into each of `steps` in turn."""
    names = ["x"] + [f"y{i}" for i in range(len(steps))]
    nodes = [
        helper.make_node("Cast", [a], [b], to=PROTO[t])
        for a, b, t in zip(names, names[1:], steps, strict=False)
    ]
    graph = helper.make_graph(
        nodes,
        "cast",
        [helper.make_tensor_value_info("x", PROTO[source], None)],
        [helper.make_tensor_value_info(names[-1], PROTO[steps[-1]], None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)], ir_version=11)


def ge_cast(x: np.ndarray, target: str) -> np.ndarray:
    [y] = ge.backend.prepare(cast_model(x.dtype.name, [target])).run([x])
    assert y.dtype == dtype(target)
    return y


def whole(values: np.ndarray) -> list[int]:
    """Integers of any width (int4 too) as Python ints."""
    return [int(v) for v in values.astype(np.int64 if values.dtype != np.uint64 else np.uint64)]


def wrapped(n: int, bits: int, signed: bool) -> int:
    n %= 1 << bits
    return n - (1 << bits) if signed and n >= 1 << (bits - 1) else n


def x86_rule(value: float, bits: int, signed: bool) -> int:
    """The documented rule for an out-of-range float, one element at a time: x86-64's truncating
    conversion to a 32-bit integer (64-bit for 64-bit targets) gives its most negative value for
    NaN, infinities and overflow; unsigned 32/64-bit targets subtract 2**31 (2**63) from values
    at or above it first; the target keeps the low bits."""
    width = 64 if bits == 64 else 32

    def convert(v: float) -> int:
        if math.isnan(v) or math.isinf(v) or not -(2 ** (width - 1)) <= math.trunc(v) < 2 ** (width - 1):
            return -(2 ** (width - 1))
        return math.trunc(v)

    if not signed and bits >= 32 and value >= 2 ** (width - 1):
        return wrapped(convert(value - 2 ** (width - 1)) + 2 ** (width - 1), bits, signed)
    return wrapped(convert(value), bits, signed)


OUT_OF_RANGE = [-20.7, -20.0, -9.0, -8.5, -1.5, -0.5, 7.5, 8.0, 15.5, 16.0, 17.0, 100.0, 255.0, 256.0]
OUT_OF_RANGE += [300.5, 65535.0, 65536.0, 70000.0, 70000.5, 2.0**31 + 5e3, 2.0**31 - 128, 5e9, -5e9]
OUT_OF_RANGE += [2.0**32 + 4096, 2.0**63 * 1.5, -(2.0**63), 1e20, -1e20, math.inf, -math.inf, math.nan]


# --------------------------------------------------------------------------------------------
# Defined by ONNX: truncation in range, wrapping between integers, float8 rounding and saturation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", FLOATS)
@pytest.mark.parametrize("target", sorted(INTEGERS))
def test_fractions_truncate_toward_zero(target, source, rng):
    bits, signed = INTEGERS[target]
    # Within +-128 every source type holds fractions (bfloat16 has 8 significant bits).
    low = max(-(2 ** (bits - 1)) if signed else 0, -128)
    high = min(2 ** (bits - 1) if signed else 2**bits, 128)
    x = rng.uniform(low, high, 64).astype(dtype(source))
    x = x[(x.astype(np.float64) > low - 1) & (x.astype(np.float64) < high)]
    got = whole(ge_cast(x, target))
    assert got == [math.trunc(float(v)) for v in x]


@pytest.mark.parametrize("source", ["int64", "int32", "uint64", "int8", "uint8"])
@pytest.mark.parametrize("target", sorted(INTEGERS))
def test_integers_keep_their_low_bits(target, source):
    info = np.iinfo(source)
    values = [info.min, info.min + 1, -300, -129, -17, -9, -8, -3, -1, 0, 1, 2, 3, 7, 8, 15, 16, 127]
    values += [128, 200, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32 + 5, info.max - 1, info.max]
    values = sorted({v for v in values if info.min <= v <= info.max})
    x = np.array(values, dtype=source)
    bits, signed = INTEGERS[target]
    assert whole(ge_cast(x, target)) == [wrapped(v, bits, signed) for v in values]


def float8_table(name: str) -> tuple[np.ndarray, float]:
    """Every finite value of a float8 (or float4) type, decoded from its bits by the format's
    formula, and its largest value."""
    exponent_bits, mantissa_bits, bias = {
        "float8_e4m3fn": (4, 3, 7),
        "float8_e4m3fnuz": (4, 3, 8),
        "float8_e5m2": (5, 2, 15),
        "float8_e5m2fnuz": (5, 2, 16),
        "float4_e2m1fn": (2, 1, 1),
    }[name]
    values = []
    for bits in range(1 << (exponent_bits + mantissa_bits)):  # the positive half; the sign is symmetric
        exponent, mantissa = bits >> mantissa_bits, bits & ((1 << mantissa_bits) - 1)
        if name == "float8_e4m3fn" and bits == 0x7F:
            continue  # NaN
        if name == "float8_e5m2" and exponent == 31:
            continue  # infinity and NaN
        if exponent == 0:
            values.append(mantissa * 2.0 ** (1 - bias - mantissa_bits))
        else:
            values.append((1 + mantissa / 2**mantissa_bits) * 2.0 ** (exponent - bias))
    table = np.array(sorted(set(values)))
    return table, float(table[-1])


def nearest_even(value: float, table: np.ndarray, mantissa_bits: int) -> float:
    """`value` rounded to the nearest entry of `table` (>= 0), ties to the even mantissa."""
    # Past the largest entry the next one would be a step further, with the next mantissa.
    table = np.append(table, 2 * table[-1] - table[-2])
    above = int(np.searchsorted(table, value))
    if above == len(table):
        return math.inf
    if table[above] == value or above == 0:
        return float(table[above])
    lower, upper = float(table[above - 1]), float(table[above])
    if value - lower != upper - value:
        return lower if value - lower < upper - value else upper
    # A tie: the entry whose last mantissa bit is 0 (entries alternate, from 0 at index 0).
    return lower if (above - 1) % 2 == 0 else upper


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("target", ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"])
def test_float8_rounds_to_nearest_even_and_saturates_as_the_tables_say(target, saturate, rng):
    table, largest = float8_table(target)
    mantissa_bits = 3 if "e4m3" in target else 2
    step = table[-1] - table[-2]
    x = [0.0, 1e-9, table[1] / 2, table[1] * 1.5, largest, largest + step / 2, largest + step / 4]
    x += [largest + step, 1e6, math.inf, math.nan]
    x += [*(table[1:] + table[:-1]) / 2]  # every tie
    x += list(rng.uniform(0, largest * 1.2, 200))
    x = np.array([*x, *(-v for v in x)], np.float32)
    node = helper.make_node("Cast", ["x"], ["y"], to=PROTO[target], saturate=saturate)
    graph = helper.make_graph(
        [node],
        "cast",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", PROTO[target], x.shape)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)], ir_version=11)
    [y] = ge.backend.prepare(model).run([x])
    got = y.astype(np.float64)
    for value, result in zip(x.astype(np.float64), got, strict=True):
        if math.isnan(value):
            assert math.isnan(result)
            continue
        nan_sign = math.copysign(1, value)
        rounded = nearest_even(abs(value), table, mantissa_bits)
        if rounded > largest:  # [x] > FLT_MAX, infinity included
            if saturate:
                want = largest
            else:
                want = math.inf if target == "float8_e5m2" else math.nan
        else:
            want = rounded
        want = math.copysign(want, value)
        if "fnuz" in target and want == 0:
            want = 0.0  # no negative zero
        if math.isnan(want):
            assert math.isnan(result), (value, result)
            # The fnuz types have one NaN (the bit pattern of -0); the others keep the sign.
            assert "fnuz" in target or math.copysign(1, result) == nan_sign, (value, result)
            continue
        assert result == want and math.copysign(1, result) == math.copysign(1, want), (value, result, want)


def test_float4_rounds_to_nearest_even_and_saturates(rng):
    """float4e2m1 has no infinity or NaN: values past 6 (infinities too) become +-6; NaN, which
    ONNX leaves undefined, becomes the sign-only pattern -0, as ONNX's reference gives."""
    table, largest = float8_table("float4_e2m1fn")
    assert table.tolist() == [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    x = [0.0, 0.1, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.5, 6.0, 6.5, 100.0, math.inf]
    x += list(rng.uniform(0, 8, 100))
    x = np.array([*x, *(-v for v in x)], np.float32)
    got = ge_cast(x, "float4_e2m1fn").astype(np.float64)
    for value, result in zip(x.astype(np.float64), got, strict=True):
        want = math.copysign(min(nearest_even(abs(value), table, 1), largest), value)
        assert result == want and math.copysign(1, result) == math.copysign(1, want), (value, result)
    nan = ge_cast(np.array([math.nan], np.float32), "float4_e2m1fn")
    assert nan.view(np.uint8).tolist() == [0x8]


# --------------------------------------------------------------------------------------------
# Undefined by ONNX: out-of-range floats into integers follow onnxruntime on x86-64
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", FLOATS)
@pytest.mark.parametrize("target", sorted(INTEGERS))
def test_out_of_range_floats_follow_the_documented_rule(target, source):
    x = np.array(OUT_OF_RANGE, np.float64)
    with np.errstate(over="ignore"):
        x = x.astype(dtype(source))
    bits, signed = INTEGERS[target]
    assert whole(ge_cast(x, target)) == [x86_rule(float(v), bits, signed) for v in x.astype(np.float64)]


@pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"), reason="the rule is onnxruntime's on x86-64"
)
@pytest.mark.parametrize("source", ["float32", "float64", "float16"])
@pytest.mark.parametrize("target", sorted(INTEGERS))
def test_out_of_range_floats_match_onnxruntime(target, source):
    with np.errstate(over="ignore"):
        x = np.array(OUT_OF_RANGE, np.float64).astype(source)
    bits, signed = INTEGERS[target]
    values = x.astype(np.float64)
    # onnxruntime rounds fractions into int4 and int2 where ONNX truncates; what its NaN and
    # infinities become in uint32 and uint64 depends on where they fall in its vector loop.
    compared = np.ones(len(x), bool)
    if bits < 8:
        compared &= values == np.trunc(values)
    if not signed and bits == 32:
        compared &= np.isfinite(values)
    # onnxruntime cannot return 4-bit and 2-bit tensors: they come back through int8.
    steps = [target, "int8"] if bits < 8 else [target]
    want = whole(run_onnxruntime(cast_model(source, steps), {"x": x})[0])
    got = whole(ge_cast(x, target))
    assert [g for g, c in zip(got, compared, strict=True) if c] == [
        w for w, c in zip(want, compared, strict=True) if c
    ]


@pytest.mark.parametrize("target", sorted(INTEGERS))
def test_booleans_are_one_and_zero(target):
    assert whole(ge_cast(np.array([True, False, True]), target)) == [1, 0, 1]


@pytest.mark.parametrize("source", FLOATS)
def test_floats_are_true_unless_zero(source):
    x = np.array([1.5, -2.5, 0.0, -0.0, 1e-3, math.inf, math.nan], np.float32).astype(dtype(source))
    assert ge_cast(x, "bool").tolist() == [True, True, False, False, True, True, True]
