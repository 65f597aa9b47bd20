"""Cast: the conversions between element types, by our own arithmetic wherever ONNX defines them.

What a library does at the edges (an out-of-range float into int4, a float past float8's largest
value) changes between releases, so the rules are computed here and numpy or ml_dtypes is only
asked for conversions that are exact or rounded to nearest even within range:
- float to integer truncates toward zero (ONNX). Out of range, where ONNX leaves the result
  undefined, `ge` does what onnxruntime does on x86-64, whose truncating conversion writes a
  32-bit integer (64-bit for int64 and uint64): NaN, infinities and values beyond that integer
  give its most negative value, and the target keeps the low bits. Unsigned 32- and 64-bit
  targets convert values from 2**31 (2**63) on after subtracting it, and add it back, so their
  whole range is exact. (onnxruntime rounds fractions into int4 and int2 to nearest, where `ge`
  truncates them as ONNX says; what its NaN and -inf become in uint32 depends on where they fall
  in its vector loop, 0 or 2**31: `ge` always gives 2**31.)
- integer to integer wraps: the low bits, two's complement for signed targets (ONNX).
- into float8 with `saturate` (the default), infinities and values past the largest finite one
  become it; without, they become infinity where the type has one, else NaN, keeping the sign
  (ONNX's tables).
- into float4e2m1, which has neither infinities nor NaN: round to nearest even, values past 6
  (infinities too) saturate to 6 with their sign, and NaN, which ONNX leaves undefined, becomes
  the sign-only pattern (-0), as ONNX's reference gives.
- into float8e8m0, `round_mode` decides the power of two.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import get_flag
from ge.dtypes import NARROW, SATURABLE, numpy_dtype

from . import strings
from .base import Compute, Prepared

_INTEGER_BITS: dict[str, tuple[int, bool]] = {
    **{f"int{w}": (w, True) for w in (2, 4, 8, 16, 32, 64)},
    **{f"uint{w}": (w, False) for w in (2, 4, 8, 16, 32, 64)},
}
"""Width and signedness of every integer element type, by numpy name."""


@Prepared
def cast(op: ops.CastOp) -> Compute:
    """`x` converted to the element type of the cast's result, by the rules above."""
    target = numpy_dtype(op.result.type.element_type)
    saturate = get_flag(op, "saturate")
    round_mode = op.round_mode.data if op.round_mode else "up"

    def converted(x: np.ndarray) -> np.ndarray:
        if "U" in (x.dtype.kind, target.kind):
            return strings.cast(op, x, target)
        if target == _E8M0:
            return _to_e8m0(x, saturate, round_mode)
        if target.name in _INTEGER_BITS:
            if x.dtype.kind == "b":
                return x.astype(target)
            if x.dtype.name in _INTEGER_BITS:
                return _wrap_integers(x.astype(np.int64) if x.dtype != np.uint64 else x, target)
            return _float_to_integer(x, target)
        if x.dtype.name in NARROW:
            # Every narrow value is exact in float64: the only rounding is the conversion below.
            x = x.astype(np.float64)
        if target.name in SATURABLE:
            return _to_float8(x, target, saturate)
        if target == _E2M1:
            return _to_float4(x)
        # Between floats numpy and ml_dtypes round to nearest even; non-zero is true.
        with np.errstate(all="ignore"):
            return x.astype(target)

    return converted


def _float_to_integer(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """Floats into an integer type: truncation toward zero, and onnxruntime's x86-64 rule out of
    range (see the module's docstring)."""
    bits, signed = _INTEGER_BITS[target.name]
    with np.errstate(all="ignore"):
        whole = np.trunc(x.astype(np.float64))  # exact for every float type
    width = 64 if bits == 64 else 32
    if signed or bits < 32:
        return _wrap_integers(_truncating_conversion(whole, width), target)
    # Unsigned: the upper half of the range converts after subtracting 2**(width - 1).
    half = 2.0 ** (width - 1)
    upper = whole >= half
    lower_part = _truncating_conversion(np.where(upper, 0.0, whole), width).astype(np.uint64)
    upper_part = _truncating_conversion(np.where(upper, whole - half, 0.0), width).astype(np.uint64)
    converted = np.where(upper, upper_part + np.uint64(half), lower_part)  # wraps modulo 2**64
    return _wrap_integers(converted, target)


def _wrap_integers(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """Integers (int64 or uint64) reduced to the low bits of `target`, two's complement if signed."""
    bits, signed = _INTEGER_BITS[target.name]
    if bits < 64:
        low = -(1 << (bits - 1)) if signed else 0
        x = (x.astype(np.int64) - low) % (1 << bits) + low  # in range of target: exact below
        return x.astype(target)
    return x.view(target) if x.dtype.itemsize == 8 else x.astype(target)


def _truncating_conversion(whole: np.ndarray, width: int) -> np.ndarray:
    """x86-64's conversion of whole floats to a signed `width`-bit integer (as int64): NaN and
    values outside the integer's range give its most negative value."""
    low, high = -(2.0 ** (width - 1)), 2.0 ** (width - 1)
    fits = (whole >= low) & (whole < high)  # False for NaN
    return np.where(fits, whole, low).astype(np.int64)


def _to_float8(x: np.ndarray, target: np.dtype, saturate: bool) -> np.ndarray:
    """Round to nearest even within range; past it, ONNX's saturation table."""
    largest = float(ml_dtypes.finfo(target).max)
    with np.errstate(invalid="ignore"):
        x = x.astype(np.float64)
    magnitude = np.abs(x)
    # A value rounds past the largest one from half an ulp above it, or at exactly half an ulp
    # when the largest value's last mantissa bit is odd (ties go to even).
    bits = int(np.array(largest, target).view(np.uint8))
    half_ulp = (largest - float(np.array(bits - 1, np.uint8).view(target))) / 2
    overflows = (magnitude > largest + half_ulp) | ((magnitude == largest + half_ulp) & bool(bits & 1))
    with np.errstate(invalid="ignore"):
        rounded = np.clip(x, -largest, largest).astype(target)  # NaN stays NaN
    if saturate:
        return rounded
    # Of these types only float8e5m2 has infinities; the others take NaN (with x's sign, where
    # the type has a negative NaN).
    past = np.copysign(np.inf if target.name == "float8_e5m2" else np.nan, x)
    return np.where(overflows, past.astype(target), rounded)


_E2M1 = np.dtype(ml_dtypes.float4_e2m1fn)
_E2M1_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
"""The magnitudes of float4e2m1, by code (the sign is the fourth bit): even codes end in a 0 bit."""


def _to_float4(x: np.ndarray) -> np.ndarray:
    """Round to nearest even, saturating at 6; NaN becomes -0 (see the module's docstring)."""
    with np.errstate(invalid="ignore"):
        x = x.astype(np.float64)
    magnitude = np.minimum(np.abs(x), _E2M1_VALUES[-1])  # infinities saturate; NaN stays NaN
    upper = np.clip(np.searchsorted(_E2M1_VALUES, magnitude), 1, len(_E2M1_VALUES) - 1)
    lower = upper - 1
    below, above = magnitude - _E2M1_VALUES[lower], _E2M1_VALUES[upper] - magnitude
    code = np.where(
        below < above, lower, np.where(above < below, upper, np.where(lower % 2 == 0, lower, upper))
    )
    bits = code.astype(np.uint8) | (np.signbit(x).astype(np.uint8) << 3)
    return np.where(np.isnan(x), np.uint8(0x8), bits).astype(np.uint8).view(_E2M1)


_E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
_E8M0_BIAS = 127
"""float8e8m0 stores 2**e as the byte e + 127, for e from -127 to 127; 0xFF is NaN."""


def _to_e8m0(x: np.ndarray, saturate: bool, round_mode: str) -> np.ndarray:
    """float8e8m0 holds the powers of two 2**-127 to 2**127 (and NaN): the magnitude is rounded
    to one of them, up (away from zero), down, or to the nearest (ties up); out of range gives
    the nearest end when saturating, else NaN. The sign is ignored (ONNX leaves it unspecified)."""
    magnitude = np.abs(x.astype(np.float64))
    with np.errstate(all="ignore"):
        fraction, exponent = np.frexp(magnitude)  # magnitude = fraction * 2**exponent, 0.5 <= fraction < 1
    lower = exponent.astype(np.int64) - 1  # 2**lower <= magnitude < 2**(lower + 1)
    rounds_up = {"up": fraction > 0.5, "down": np.zeros_like(lower, bool), "nearest": fraction >= 0.75}
    power = lower + rounds_up[round_mode]
    nan = np.isnan(magnitude)
    infinite = np.isinf(magnitude)
    too_large = infinite | (power > _E8M0_BIAS)
    too_small = (magnitude == 0) | (power < -_E8M0_BIAS)
    # frexp gives infinity and zero no exponent: they take the ends.
    power = np.where(infinite, _E8M0_BIAS, np.where(magnitude == 0, -_E8M0_BIAS, power))
    bits = (np.clip(power, -_E8M0_BIAS, _E8M0_BIAS) + _E8M0_BIAS).astype(np.uint8)
    invalid = nan if saturate else nan | too_large | too_small
    return np.where(invalid, np.uint8(0xFF), bits).view(_E8M0)
