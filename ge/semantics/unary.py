"""Unary elementwise ops: math functions, activations, predicates and negations.

Activations compute in the operand's dtype (float32 for 16-bit floats, which `evaluate` widens);
constants are Python floats so that numpy keeps that dtype. `erf` and `erfc`, which numpy lacks,
are fdlibm's rational approximations (within an ulp in float64).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import get_flag

from .base import Compute, Implementation, Prepared, Ufunc


def _math(function: Callable[[np.ndarray], np.ndarray]) -> Implementation:
    if isinstance(function, np.ufunc):
        return Ufunc(function)

    def implementation(op: ops.GraphOp, x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return function(x)

    return implementation


def _log10(op: ops.GraphOp, x: np.ndarray) -> np.ndarray:
    """np.log10 in float64, rounded to `x`'s dtype: numpy's float32 loop is an ulp off on 100 and
    1000 (2.0000002), where the rounded float64 logarithm is exact on every power of ten."""
    with np.errstate(all="ignore"):
        return np.log10(np.asarray(x, np.float64)).astype(x.dtype)


def _activation(function: Callable[..., np.ndarray]) -> Prepared:
    """An activation `function(x, **params)` with the op's float properties as keywords."""

    def prepare(op: ops.ActivationOp) -> Compute:
        params = {name: op.param(name) for name in op.DEFAULTS}

        def activation(x: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):
                return function(x, **params)

        return activation

    return Prepared(prepare)


@Prepared
def _is_inf(op: ops.IsInfOp) -> Compute:
    positive, negative = get_flag(op, "detect_positive"), get_flag(op, "detect_negative")

    def is_inf(x: np.ndarray) -> np.ndarray:
        result = np.zeros(x.shape, np.bool_)
        if positive:
            result |= x == math.inf
        if negative:
            result |= x == -math.inf
        return result

    return is_inf


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0, x)


@Prepared
def _gelu(op: ops.GeluOp) -> Compute:
    tanh = op.approximate is not None and op.approximate.data == "tanh"

    def gelu(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            if tanh:
                return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
            return 0.5 * x * (1 + erf(x * (1 / math.sqrt(2))))

    return gelu


def _shrink(x: np.ndarray, bias: float, lambd: float) -> np.ndarray:
    values = x.astype(np.float64) if x.dtype.kind in "iu" else x
    shrunk = np.where(values < -lambd, values + bias, np.where(values > lambd, values - bias, 0))
    return shrunk.astype(x.dtype)


# --------------------------------------------------------------------------------------------
# erf
# --------------------------------------------------------------------------------------------

# fdlibm's s_erf.c: erf on [0, 0.84375), [0.84375, 1.25); erfc on [1.25, 1/0.35), [1/0.35, 6).
_ERX = 8.45062911510467529297e-01
_PP = (
    1.28379167095512558561e-01,
    -3.25042107247001499370e-01,
    -2.84817495755985104766e-02,
    -5.77027029648944159157e-03,
    -2.37630166566501626084e-05,
)
_QQ = (
    1.0,
    3.97917223959155352819e-01,
    6.50222499887672944485e-02,
    5.08130628187576562776e-03,
    1.32494738004321644526e-04,
    -3.96022827877536812320e-06,
)
_PA = (
    -2.36211856075265944077e-03,
    4.14856118683748331666e-01,
    -3.72207876035701323847e-01,
    3.18346619901161753674e-01,
    -1.10894694282396677476e-01,
    3.54783043256182359371e-02,
    -2.16637559486879084300e-03,
)
_QA = (
    1.0,
    1.06420880400844228286e-01,
    5.40397917702171048937e-01,
    7.18286544141962662868e-02,
    1.26171219808761642112e-01,
    1.36370839120290507362e-02,
    1.19844998467991074170e-02,
)
_RA = (
    -9.86494403484714822705e-03,
    -6.93858572707181764372e-01,
    -1.05586262253232909814e01,
    -6.23753324503260060396e01,
    -1.62396669462573470355e02,
    -1.84605092906711035994e02,
    -8.12874355063065934246e01,
    -9.81432934416914548592e00,
)
_SA = (
    1.0,
    1.96512716674392571292e01,
    1.37657754143519042600e02,
    4.34565877475229228821e02,
    6.45387271733267880336e02,
    4.29008140027567833386e02,
    1.08635005541779435134e02,
    6.57024977031928170135e00,
    -6.04244152148580987438e-02,
)
_RB = (
    -9.86494292470009928597e-03,
    -7.99283237680523006574e-01,
    -1.77579549177547519889e01,
    -1.60636384855821916062e02,
    -6.37566443368389627722e02,
    -1.02509513161107724954e03,
    -4.83519191608651397019e02,
)
_SB = (
    1.0,
    3.03380607434824582924e01,
    3.25792512996573918826e02,
    1.53672958608443695994e03,
    3.19985821950859553908e03,
    2.55305040643316442583e03,
    4.74528541206955367215e02,
    -2.24409524465858183362e01,
)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, computed in float64 and returned in `x`'s dtype. Each element takes
    the one rational approximation of its range (fdlibm's), so each is evaluated on its elements only."""
    wide = np.asarray(x, np.float64)
    a = np.abs(wide)
    result = np.sign(wide, out=np.empty_like(wide))  # |x| >= 6, and NaN
    with np.errstate(all="ignore"):
        near_zero = a < 0.84375
        w = wide[near_zero]
        z = w * w
        result[near_zero] = w + w * (_poly(z, _PP) / _poly(z, _QQ))
        near_one = (a >= 0.84375) & (a < 1.25)
        s = a[near_one] - 1.0
        result[near_one] = np.copysign(_ERX + _poly(s, _PA) / _poly(s, _QA), wide[near_one])
        for low, high, numerator, denominator in ((1.25, 1 / 0.35, _RA, _SA), (1 / 0.35, 6.0, _RB, _SB)):
            inside = (a >= low) & (a < high)
            v = a[inside]
            t = 1.0 / (v * v)
            ratio = _poly(t, numerator) / _poly(t, denominator)
            result[inside] = np.copysign(1.0 - _erfc_tail(v, ratio), wide[inside])
    return result.astype(np.asarray(x).dtype)


def erfc(x: np.ndarray) -> np.ndarray:
    """`1 - erf(x)` without its cancellation: fdlibm's erfc, in float64 and returned in `x`'s
    dtype, so it keeps its relative precision where erf(x) rounds to 1 (erfc(10) is 2e-45, a float32
    subnormal) and underflows to 0 only past 27.3."""
    wide = np.asarray(x, np.float64)
    a = np.abs(wide)
    result = np.where(wide > 0, 0.0, 2.0)  # |x| >= 28 (and -28 < x <= -6, where erfc is 2 - tiny)
    result[np.isnan(wide)] = np.nan
    with np.errstate(all="ignore"):
        small = a < 0.84375
        w = wide[small]
        z = w * w
        y = _poly(z, _PP) / _poly(z, _QQ)
        # Below 1/4, 1 - erf loses nothing; above, 0.5 - (x - 0.5 + x y) keeps the low bits.
        result[small] = np.where(w < 0.25, 1.0 - (w + w * y), 0.5 - (w * y + (w - 0.5)))
        near_one = (a >= 0.84375) & (a < 1.25)
        s = a[near_one] - 1.0
        ratio = _poly(s, _PA) / _poly(s, _QA)
        result[near_one] = np.where(wide[near_one] >= 0, (1.0 - _ERX) - ratio, 1.0 + (_ERX + ratio))
        for low, high, numerator, denominator in ((1.25, 1 / 0.35, _RA, _SA), (1 / 0.35, 28.0, _RB, _SB)):
            inside = (a >= low) & (a < high) & ((wide > 0) | (a < 6.0))
            v = a[inside]
            t = 1.0 / (v * v)
            tail = _erfc_tail(v, _poly(t, numerator) / _poly(t, denominator))
            result[inside] = np.where(wide[inside] > 0, tail, 2.0 - tail)
    return result.astype(np.asarray(x).dtype)


def _erfc_tail(v: np.ndarray, ratio: np.ndarray) -> np.ndarray:
    """erfc(v) for v >= 1.25 from the rational approximation `ratio` of its range."""
    # v^2 as a high part with a short mantissa plus an exact remainder keeps exp(-v^2) accurate.
    top = (v.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
    return np.exp(-top * top - 0.5625) * np.exp((top - v) * (top + v) + ratio) / v


def _poly(x: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    """`sum(c[i] * x**i)` by Horner's rule."""
    result = np.full_like(x, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        result *= x
        result += c
    return result


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.AbsOp: _math(np.abs),
    ops.NegOp: _math(np.negative),
    ops.SignOp: _math(np.sign),
    ops.ReluOp: Ufunc(np.maximum, with_zero=True),
    ops.NotOp: _math(np.logical_not),
    ops.BitwiseNotOp: _math(np.invert),
    ops.IsNaNOp: _math(np.isnan),
    ops.IsInfOp: _is_inf,
    ops.ExpOp: _math(np.exp),
    ops.Expm1Op: _math(np.expm1),
    ops.LogOp: _math(np.log),
    ops.Log1pOp: _math(np.log1p),
    ops.Log2Op: _math(np.log2),
    ops.Log10Op: _log10,
    ops.SqrtOp: _math(np.sqrt),
    ops.ReciprocalOp: _math(np.reciprocal),
    ops.FloorOp: _math(np.floor),
    ops.CeilOp: _math(np.ceil),
    ops.RoundOp: _math(np.round),  # halves to even, as ONNX rounds
    ops.ErfOp: _math(erf),
    ops.ErfcOp: _math(erfc),
    ops.SinOp: _math(np.sin),
    ops.CosOp: _math(np.cos),
    ops.TanOp: _math(np.tan),
    ops.AsinOp: _math(np.arcsin),
    ops.AcosOp: _math(np.arccos),
    ops.AtanOp: _math(np.arctan),
    ops.SinhOp: _math(np.sinh),
    ops.CoshOp: _math(np.cosh),
    ops.AsinhOp: _math(np.arcsinh),
    ops.AcoshOp: _math(np.arccosh),
    ops.AtanhOp: _math(np.arctanh),
    ops.SigmoidOp: _math(_sigmoid),
    ops.TanhOp: _math(np.tanh),
    ops.SoftplusOp: _math(_softplus),
    ops.SoftsignOp: _math(lambda x: x / (1 + np.abs(x))),
    ops.MishOp: _math(lambda x: x * np.tanh(_softplus(x))),
    ops.HardSwishOp: _math(lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
    ops.GeluOp: _gelu,
    ops.LeakyReluOp: _activation(lambda x, alpha: np.where(x < 0, alpha * x, x)),
    ops.EluOp: _activation(lambda x, alpha: np.where(x < 0, alpha * np.expm1(x), x)),
    ops.SeluOp: _activation(lambda x, alpha, gamma: gamma * np.where(x <= 0, alpha * np.expm1(x), x)),
    ops.CeluOp: _activation(lambda x, alpha: np.maximum(0, x) + np.minimum(0, alpha * np.expm1(x / alpha))),
    ops.ThresholdedReluOp: _activation(lambda x, alpha: np.where(x > alpha, x, x.dtype.type(0))),
    ops.HardSigmoidOp: _activation(lambda x, alpha, beta: np.clip(alpha * x + beta, 0, 1)),
    ops.SwishOp: _activation(lambda x, alpha: x * _sigmoid(alpha * x)),
    ops.ShrinkOp: _activation(_shrink),
}
