"""Elementwise ops on several tensors: arithmetic, bitwise, logic, comparisons, selection, casts.

Integer arithmetic wraps as the hardware's does; IEEE special values follow numpy, which agrees
with ONNX (including the sign rules of `mod`).
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import describe, get_int
from ge.dtypes import NARROW, SATURABLE, numpy_dtype
from ge.errors import GeError

from . import strings
from .base import Implementation


def _binary(function: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Implementation:
    def implementation(op: ops.GraphOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return function(lhs, rhs)

    return implementation


def _div(op: ops.DivOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    if lhs.dtype.kind in "iu":
        if not np.all(rhs):
            raise GeError(f"{describe(op)}: integer division by zero")
        # fmod keeps the dividend's sign, so this truncates toward zero as C and ONNX do.
        with np.errstate(over="ignore"):
            return (lhs - np.fmod(lhs, rhs)) // rhs
    with np.errstate(all="ignore"):
        return lhs / rhs


def _mod(op: ops.ModOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    # np.mod takes the divisor's sign (floor division), np.fmod the dividend's (truncation).
    remainder = np.fmod if get_int(op, "fmod", 0) else np.mod
    with np.errstate(all="ignore"):
        return remainder(lhs, rhs)


def _pow(op: ops.PowOp, base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if base.dtype.kind == "f":
            wide = np.result_type(base, exponent) if exponent.dtype.kind == "f" else base.dtype
            return np.power(base.astype(wide), exponent.astype(wide)).astype(base.dtype)
        # An integer base: exact (wrapping) powers for whole exponents, otherwise the real power
        # truncated toward zero, as a cast of it would be.
        negative = exponent < 0
        if exponent.dtype.kind != "f" and not negative.any():
            return np.power(base, exponent.astype(base.dtype))
        real = np.power(base.astype(np.float64), exponent.astype(np.float64)).astype(base.dtype)
        if exponent.dtype.kind == "f":
            return real
        return np.where(negative, real, np.power(base, np.maximum(exponent, 0).astype(base.dtype)))


def _prelu(op: ops.PReluOp, x: np.ndarray, slope: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(x < 0, x * slope, x)


def _shift(left: bool) -> Implementation:
    def implementation(op: ops.GraphOp, x: np.ndarray, amount: np.ndarray) -> np.ndarray:
        width = 8 * x.dtype.itemsize
        in_range = (amount >= 0) & (amount < width)
        bits = np.where(in_range, amount, 0).astype(x.dtype)
        if left:
            return np.where(in_range, np.left_shift(x, bits), x.dtype.type(0))
        # Out of range, only the sign fill is left: -1 for a negative signed x, else 0.
        fill = np.right_shift(x, width - 1) if x.dtype.kind == "i" else np.zeros_like(x)
        return np.where(in_range, np.right_shift(x, bits), fill)

    return implementation


def _where(op: ops.WhereOp, condition: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(condition, x, y)


def _cast(op: ops.CastOp, x: np.ndarray) -> np.ndarray:
    target = numpy_dtype(op.result.type.element_type)
    if "U" in (x.dtype.kind, target.kind):
        return strings.cast(op, x, target)
    saturate = bool(get_int(op, "saturate", 0))
    if x.dtype.name in NARROW and target.name in NARROW:
        # ml_dtypes converts between some narrow types only through a wide one. Every narrow
        # value is exact in int64 (integers) or float64, so the only rounding is the last cast's.
        integers = all(d.name.startswith(("int", "uint")) for d in (x.dtype, target))
        x = x.astype(np.int64 if integers else np.float64)
    if target == _E8M0:
        return _to_e8m0(x, saturate, op.round_mode.data if op.round_mode is not None else "up")
    # numpy and ml_dtypes round to nearest even between floats, truncate floats toward zero into
    # integers, wrap integers (4-bit and 2-bit ones too) and map non-zero to true, as ONNX
    # specifies (out-of-range floats into integers are undefined there).
    with np.errstate(all="ignore"):
        if saturate and target.name in SATURABLE:
            # Clamping before rounding gives what rounding then clamping would. float64 holds every
            # source value exactly (an int64 past 2**53 rounds, but saturates anyway); NaN stays.
            limit = float(ml_dtypes.finfo(target).max)
            x = np.clip(x.astype(np.float64), -limit, limit)
        return x.astype(target, copy=False)


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


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.AddOp: _binary(np.add),
    ops.SubOp: _binary(np.subtract),
    ops.MulOp: _binary(np.multiply),
    ops.DivOp: _div,
    ops.ModOp: _mod,
    ops.MaxOp: _binary(np.maximum),
    ops.MinOp: _binary(np.minimum),
    ops.PowOp: _pow,
    ops.PReluOp: _prelu,
    ops.BitwiseAndOp: _binary(np.bitwise_and),
    ops.BitwiseOrOp: _binary(np.bitwise_or),
    ops.BitwiseXorOp: _binary(np.bitwise_xor),
    ops.ShiftLeftOp: _shift(left=True),
    ops.ShiftRightOp: _shift(left=False),
    ops.AndOp: _binary(np.logical_and),
    ops.OrOp: _binary(np.logical_or),
    ops.XorOp: _binary(np.logical_xor),
    ops.EqualOp: _binary(np.equal),
    ops.LessOp: _binary(np.less),
    ops.LessEqualOp: _binary(np.less_equal),
    ops.GreaterOp: _binary(np.greater),
    ops.GreaterEqualOp: _binary(np.greater_equal),
    ops.WhereOp: _where,
    ops.CastOp: _cast,
}

# Selections and comparisons are exact in any float type: widening 16-bit floats would only cost.
IN_STORED_DTYPE: tuple[type, ...] = (
    ops.CastOp,
    ops.WhereOp,
    ops.MaxOp,
    ops.MinOp,
    ops.EqualOp,
    ops.LessOp,
    ops.LessEqualOp,
    ops.GreaterOp,
    ops.GreaterEqualOp,
)
