"""Elementwise ops on several tensors: arithmetic, bitwise, logic, comparisons, selection; casts
are in `casts`.

Integer arithmetic wraps as the hardware's does; IEEE special values follow numpy, which agrees
with ONNX (including the sign rules of `mod`).
"""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import describe, get_flag
from ge.errors import GeError

from . import casts
from .base import Compute, Implementation, Prepared, Ufunc


def _div(op: ops.DivOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    if lhs.dtype.kind in "iu":
        if not np.all(rhs):
            raise GeError(f"{describe(op)}: integer division by zero")
        # fmod keeps the dividend's sign, so this truncates toward zero as C and ONNX do.
        with np.errstate(over="ignore"):
            return (lhs - np.fmod(lhs, rhs)) // rhs
    with np.errstate(all="ignore"):
        return lhs / rhs


@Prepared
def _mod(op: ops.ModOp) -> Compute:
    # np.mod takes the divisor's sign (floor division), np.fmod the dividend's (truncation).
    remainder = np.fmod if get_flag(op, "fmod") else np.mod

    def mod(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return remainder(lhs, rhs)

    return mod


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


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.AddOp: Ufunc(np.add),
    ops.SubOp: Ufunc(np.subtract),
    ops.MulOp: Ufunc(np.multiply),
    ops.DivOp: _div,
    ops.ModOp: _mod,
    ops.MaxOp: Ufunc(np.maximum),
    ops.MinOp: Ufunc(np.minimum),
    ops.PowOp: _pow,
    ops.Atan2Op: Ufunc(np.arctan2),
    ops.PReluOp: _prelu,
    ops.BitwiseAndOp: Ufunc(np.bitwise_and),
    ops.BitwiseOrOp: Ufunc(np.bitwise_or),
    ops.BitwiseXorOp: Ufunc(np.bitwise_xor),
    ops.ShiftLeftOp: _shift(left=True),
    ops.ShiftRightOp: _shift(left=False),
    ops.AndOp: Ufunc(np.logical_and),
    ops.OrOp: Ufunc(np.logical_or),
    ops.XorOp: Ufunc(np.logical_xor),
    ops.EqualOp: Ufunc(np.equal),
    ops.LessOp: Ufunc(np.less),
    ops.LessEqualOp: Ufunc(np.less_equal),
    ops.GreaterOp: Ufunc(np.greater),
    ops.GreaterEqualOp: Ufunc(np.greater_equal),
    ops.WhereOp: _where,
    ops.CastOp: casts.cast,
}
