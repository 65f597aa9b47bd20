"""Unary elementwise ops: math functions, activations, predicates and negations.

Each op is a name, the element kinds it accepts and, for parametrized activations, its float
properties with their defaults (`DEFAULTS`), which the semantics read through `param`.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import FloatAttr, StringAttr
from xdsl.irdl import irdl_op_definition, opt_prop_def, traits_def

from ..common import get_float
from .base import flag_def
from .elementwise import (
    BOOL,
    FLOAT,
    INTEGER,
    NUMERIC,
    SIGNED,
    UnaryElementwiseOp,
    UnaryPredicateOp,
)
from .traits import (
    Epilogue,
    EpilogueKind,
    ExactInStoredType,
    Involution,
    KeepsPrecision,
    PrefersLowPrecision,
    Transcendental,
)


class FloatUnaryOp(UnaryElementwiseOp, ABC):
    """A function of floating-point elements."""

    ELEMENTS: ClassVar[frozenset[str]] = FLOAT


class ActivationOp(FloatUnaryOp, ABC):
    """An activation with float properties; `DEFAULTS` holds the value of each absent one."""

    DEFAULTS: ClassVar[dict[str, float]] = {}

    def param(self, name: str) -> float:
        return get_float(self, name, self.DEFAULTS[name])


# --------------------------------------------------------------------------------------------
# Exact on every numeric type
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class AbsOp(UnaryElementwiseOp):
    """`%y = ascend.graph.abs %x : (tensor<4xi32>) -> tensor<4xi32>`"""

    name = "ascend.graph.abs"

    traits = traits_def(ExactInStoredType())


@irdl_op_definition
class NegOp(UnaryElementwiseOp):
    """`%y = ascend.graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.neg"

    traits = traits_def(ExactInStoredType(), Involution())

    ELEMENTS: ClassVar[frozenset[str]] = SIGNED


@irdl_op_definition
class SignOp(UnaryElementwiseOp):
    """-1, 0 or 1 by the sign of each element (NaN stays NaN).

    `%y = ascend.graph.sign %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.sign"

    traits = traits_def(ExactInStoredType())


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    """`%y = ascend.graph.relu %x : (tensor<1x64xf32>) -> tensor<1x64xf32>`"""

    name = "ascend.graph.relu"

    traits = traits_def(Epilogue(EpilogueKind.UNARY), PrefersLowPrecision(), ExactInStoredType())

    ELEMENTS: ClassVar[frozenset[str]] = SIGNED


@irdl_op_definition
class NotOp(UnaryElementwiseOp):
    """`%y = ascend.graph.not %x : (tensor<4xi1>) -> tensor<4xi1>`"""

    name = "ascend.graph.not"

    traits = traits_def(Involution())

    ELEMENTS: ClassVar[frozenset[str]] = BOOL


@irdl_op_definition
class BitwiseNotOp(UnaryElementwiseOp):
    """`%y = ascend.graph.bitwise_not %x : (tensor<4xui16>) -> tensor<4xui16>`"""

    name = "ascend.graph.bitwise_not"

    traits = traits_def(Involution())

    ELEMENTS: ClassVar[frozenset[str]] = INTEGER


@irdl_op_definition
class IsNaNOp(UnaryPredicateOp):
    """`%y = ascend.graph.is_nan %x : (tensor<4xf16>) -> tensor<4xi1>`"""

    name = "ascend.graph.is_nan"

    ELEMENTS: ClassVar[frozenset[str]] = FLOAT


@irdl_op_definition
class IsInfOp(UnaryPredicateOp):
    """Tests for infinities: positive ones unless `detect_positive = false`, negative ones
    unless `detect_negative = false`.

    `%y = ascend.graph.is_inf %x {detect_negative = false} : (tensor<4xf32>) -> tensor<4xi1>`
    """

    name = "ascend.graph.is_inf"

    ELEMENTS: ClassVar[frozenset[str]] = FLOAT

    detect_positive = flag_def(True)
    detect_negative = flag_def(True)


# --------------------------------------------------------------------------------------------
# Math functions
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    """`%y = ascend.graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.exp"

    traits = traits_def(Transcendental(), KeepsPrecision())


@irdl_op_definition
class Expm1Op(FloatUnaryOp):
    """`exp(x) - 1`, accurate where `x` is tiny (where `exp(x)` would round to 1).

    `%y = ascend.graph.expm1 %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.expm1"

    traits = traits_def(Transcendental(), KeepsPrecision())


@irdl_op_definition
class LogOp(FloatUnaryOp):
    """The natural logarithm. `%y = ascend.graph.log %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.log"

    traits = traits_def(Transcendental(), KeepsPrecision())


@irdl_op_definition
class Log1pOp(FloatUnaryOp):
    """`log(1 + x)`, accurate where `x` is tiny (where `1 + x` would round to 1).

    `%y = ascend.graph.log1p %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.log1p"

    traits = traits_def(Transcendental(), KeepsPrecision())


@irdl_op_definition
class Log2Op(FloatUnaryOp):
    """The base-2 logarithm, exact on powers of two (where `log(x) / log(2)` is off by an ulp).

    `%y = ascend.graph.log2 %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.log2"

    traits = traits_def(Transcendental(), KeepsPrecision())


@irdl_op_definition
class Log10Op(FloatUnaryOp):
    """The base-10 logarithm, exact on powers of ten (where `log(x) / log(10)` is off by an ulp).

    `%y = ascend.graph.log10 %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.log10"

    traits = traits_def(Transcendental(), KeepsPrecision())


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    """`%y = ascend.graph.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.sqrt"

    traits = traits_def(Transcendental())


@irdl_op_definition
class ReciprocalOp(FloatUnaryOp):
    """`1 / x`. `%y = ascend.graph.reciprocal %x : (tensor<4xf16>) -> tensor<4xf16>`"""

    name = "ascend.graph.reciprocal"

    traits = traits_def(Transcendental())


@irdl_op_definition
class FloorOp(FloatUnaryOp):
    """`%y = ascend.graph.floor %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.floor"


@irdl_op_definition
class CeilOp(FloatUnaryOp):
    """`%y = ascend.graph.ceil %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.ceil"


@irdl_op_definition
class RoundOp(FloatUnaryOp):
    """To the nearest integer, halves to even.

    `%y = ascend.graph.round %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.round"


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """The error function. `%y = ascend.graph.erf %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.erf"

    traits = traits_def(Transcendental())


@irdl_op_definition
class ErfcOp(FloatUnaryOp):
    """`1 - erf(x)`, accurate where erf(x) is close to 1 (where the subtraction would cancel).

    `%y = ascend.graph.erfc %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.erfc"

    traits = traits_def(Transcendental(), KeepsPrecision())


@irdl_op_definition
class SinOp(FloatUnaryOp):
    """`%y = ascend.graph.sin %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.sin"

    traits = traits_def(Transcendental())


@irdl_op_definition
class CosOp(FloatUnaryOp):
    """`%y = ascend.graph.cos %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.cos"

    traits = traits_def(Transcendental())


@irdl_op_definition
class TanOp(FloatUnaryOp):
    """`%y = ascend.graph.tan %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.tan"

    traits = traits_def(Transcendental())


@irdl_op_definition
class AsinOp(FloatUnaryOp):
    """`%y = ascend.graph.asin %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.asin"

    traits = traits_def(Transcendental())


@irdl_op_definition
class AcosOp(FloatUnaryOp):
    """`%y = ascend.graph.acos %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.acos"

    traits = traits_def(Transcendental())


@irdl_op_definition
class AtanOp(FloatUnaryOp):
    """`%y = ascend.graph.atan %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.atan"

    traits = traits_def(Transcendental())


@irdl_op_definition
class SinhOp(FloatUnaryOp):
    """`%y = ascend.graph.sinh %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.sinh"

    traits = traits_def(Transcendental())


@irdl_op_definition
class CoshOp(FloatUnaryOp):
    """`%y = ascend.graph.cosh %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.cosh"

    traits = traits_def(Transcendental())


@irdl_op_definition
class AsinhOp(FloatUnaryOp):
    """`%y = ascend.graph.asinh %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.asinh"

    traits = traits_def(Transcendental())


@irdl_op_definition
class AcoshOp(FloatUnaryOp):
    """`%y = ascend.graph.acosh %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.acosh"

    traits = traits_def(Transcendental())


@irdl_op_definition
class AtanhOp(FloatUnaryOp):
    """`%y = ascend.graph.atanh %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.atanh"

    traits = traits_def(Transcendental())


# --------------------------------------------------------------------------------------------
# Activations
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """`1 / (1 + exp(-x))`. `%y = ascend.graph.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.sigmoid"

    traits = traits_def(Transcendental(), Epilogue(EpilogueKind.UNARY))


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """`%y = ascend.graph.tanh %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.tanh"

    traits = traits_def(Transcendental(), Epilogue(EpilogueKind.UNARY))


@irdl_op_definition
class SoftplusOp(FloatUnaryOp):
    """`log(1 + exp(x))`. `%y = ascend.graph.softplus %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.softplus"

    traits = traits_def(Transcendental(), KeepsPrecision())


@irdl_op_definition
class SoftsignOp(FloatUnaryOp):
    """`x / (1 + |x|)`. `%y = ascend.graph.softsign %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.softsign"

    traits = traits_def(Transcendental())


@irdl_op_definition
class MishOp(FloatUnaryOp):
    """`x * tanh(softplus(x))`. `%y = ascend.graph.mish %x : (tensor<4xf32>) -> tensor<4xf32>`"""

    name = "ascend.graph.mish"

    traits = traits_def(Transcendental())


@irdl_op_definition
class HardSwishOp(FloatUnaryOp):
    """`x * max(0, min(1, x / 6 + 1 / 2))`.

    `%y = ascend.graph.hard_swish %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.hard_swish"

    traits = traits_def(Epilogue(EpilogueKind.UNARY))


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """`x * Phi(x)` with the normal distribution's `Phi` computed exactly (`approximate = "none"`,
    the default) or by the tanh formula (`approximate = "tanh"`).

    `%y = ascend.graph.gelu %x {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.gelu"

    traits = traits_def(Transcendental(), Epilogue(EpilogueKind.UNARY))

    approximate = opt_prop_def(StringAttr)

    @classmethod
    def check_props(cls, props):
        value = props.get("approximate")
        if isinstance(value, StringAttr) and value.data not in ("none", "tanh"):
            raise ValueError(f'\'approximate\' must be "none" or "tanh", got "{value.data}"')


@irdl_op_definition
class LeakyReluOp(ActivationOp):
    """`x` if `x >= 0` else `alpha * x` (alpha defaults to 0.01).

    `%y = ascend.graph.leaky_relu %x {alpha = 1.000000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.leaky_relu"

    traits = traits_def(Epilogue(EpilogueKind.UNARY), PrefersLowPrecision())

    alpha = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[dict[str, float]] = {"alpha": 0.01}


@irdl_op_definition
class EluOp(ActivationOp):
    """`x` if `x >= 0` else `alpha * (exp(x) - 1)` (alpha defaults to 1).

    `%y = ascend.graph.elu %x {alpha = 2.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.elu"

    traits = traits_def(Transcendental())

    alpha = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[dict[str, float]] = {"alpha": 1.0}


@irdl_op_definition
class SeluOp(ActivationOp):
    """`gamma * x` if `x > 0` else `gamma * alpha * (exp(x) - 1)`, with the self-normalizing
    constants as defaults.

    `%y = ascend.graph.selu %x : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.selu"

    traits = traits_def(Transcendental())

    alpha = opt_prop_def(FloatAttr)
    gamma = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[dict[str, float]] = {
        "alpha": 1.67326319217681884765625,
        "gamma": 1.05070102214813232421875,
    }


@irdl_op_definition
class CeluOp(ActivationOp):
    """`max(0, x) + min(0, alpha * (exp(x / alpha) - 1))` (alpha defaults to 1).

    `%y = ascend.graph.celu %x {alpha = 2.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.celu"

    traits = traits_def(Transcendental())

    alpha = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[dict[str, float]] = {"alpha": 1.0}


@irdl_op_definition
class ThresholdedReluOp(ActivationOp):
    """`x` if `x > alpha` else 0 (alpha defaults to 1).

    `%y = ascend.graph.thresholded_relu %x {alpha = 2.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.thresholded_relu"

    alpha = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[dict[str, float]] = {"alpha": 1.0}


@irdl_op_definition
class HardSigmoidOp(ActivationOp):
    """`max(0, min(1, alpha * x + beta))` (alpha defaults to 0.2, beta to 0.5).

    `%y = ascend.graph.hard_sigmoid %x {alpha = 5.000000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.hard_sigmoid"

    alpha = opt_prop_def(FloatAttr)
    beta = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[dict[str, float]] = {"alpha": 0.2, "beta": 0.5}


@irdl_op_definition
class SwishOp(ActivationOp):
    """`x * sigmoid(alpha * x)` (alpha defaults to 1).

    `%y = ascend.graph.swish %x {alpha = 1.500000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "ascend.graph.swish"

    traits = traits_def(Transcendental())

    alpha = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[dict[str, float]] = {"alpha": 1.0}


@irdl_op_definition
class ShrinkOp(ActivationOp):
    """`x + bias` if `x < -lambd`, `x - bias` if `x > lambd`, else 0 (bias defaults to 0, lambd
    to 0.5); integer results are truncated toward zero.

    `%y = ascend.graph.shrink %x {lambd = 1.500000e+00 : f32} : (tensor<4xi32>) -> tensor<4xi32>`
    """

    name = "ascend.graph.shrink"

    ELEMENTS: ClassVar[frozenset[str]] = NUMERIC

    bias = opt_prop_def(FloatAttr)
    lambd = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[dict[str, float]] = {"bias": 0.0, "lambd": 0.5}


OPS = (
    AbsOp,
    NegOp,
    SignOp,
    ReluOp,
    NotOp,
    BitwiseNotOp,
    IsNaNOp,
    IsInfOp,
    ExpOp,
    Expm1Op,
    LogOp,
    Log1pOp,
    Log2Op,
    Log10Op,
    SqrtOp,
    ReciprocalOp,
    FloorOp,
    CeilOp,
    RoundOp,
    ErfOp,
    ErfcOp,
    SinOp,
    CosOp,
    TanOp,
    AsinOp,
    AcosOp,
    AtanOp,
    SinhOp,
    CoshOp,
    AsinhOp,
    AcoshOp,
    AtanhOp,
    SigmoidOp,
    TanhOp,
    SoftplusOp,
    SoftsignOp,
    MishOp,
    HardSwishOp,
    GeluOp,
    LeakyReluOp,
    EluOp,
    SeluOp,
    CeluOp,
    ThresholdedReluOp,
    HardSigmoidOp,
    SwishOp,
    ShrinkOp,
)
