"""The vector unit's own forms of the functions the reference semantics compute in float64.

The AI Core's vector unit computes in fp32 at most, so such a function is a short fp32 polynomial
there, not the float64 evaluation `ge.semantics` uses for its correctly rounded answers. The
emulator models it in fp32 when the op's operands are floats of at most 32 bits (fp16 and bf16
widened to fp32 first, as every vector op is), and uses the reference semantics otherwise:

- Erf, and GELU in its erf form: erf(x) = x P(x^2) / Q(x^2) on x clamped to [-4, 4] (P of degree
  6 and Q of degree 4, the rational approximation Eigen, XLA and TVM use for fp32), 7 fp32 ulp at
  most from the correctly rounded value (measured on 400,001 points of [-6, 6]).

`vector_implementation` says which implementation computes an op, `vector_compute` what a kernel
calls to compute it.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
from xdsl.ir import Operation

from ge.dialects import graph
from ge.dtypes import bfloat16, numpy_dtype, tensor_type
from ge.semantics import IMPLEMENTATIONS
from ge.semantics.base import Compute, Implementation, Prepared, Ufunc, prepare

FP32_OPERANDS = (np.dtype(np.float32), np.dtype(np.float16), bfloat16)

_ERF_NUMERATOR = np.array(
    [
        -2.72614225801306e-10,
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    ],
    np.float32,
)
"""P's coefficients, highest power of x^2 first."""
_ERF_DENOMINATOR = np.array(
    [
        -1.45660718464996e-05,
        -2.13374055278905e-04,
        -1.68282697438203e-03,
        -7.37332916720468e-03,
        -1.42647390514189e-02,
    ],
    np.float32,
)
"""Q's coefficients, highest power of x^2 first."""


def vector_implementation(op: Operation) -> Implementation | None:
    """The implementation the emulated vector unit computes `op` with: its own fp32 form (this
    module's table) when it has one for `op` and every operand is a float of at most 32 bits, else
    the reference semantics' (None for an op without semantics)."""
    own = _OWN.get(type(op))
    dtypes = [numpy_dtype(tensor_type(v).element_type) for v in op.operands]
    if own is not None and all(dtype in FP32_OPERANDS for dtype in dtypes):
        return own
    return IMPLEMENTATIONS.get(type(op))


def vector_compute(implementation: Implementation, op: Operation) -> Compute:
    """`implementation` (`vector_implementation`'s) prepared for `op`; a `Ufunc` as its `apply`,
    which leaves numpy's error state to the run (`ge.emulator.plan.RunPlan.run` ignores every
    floating-point error once, as the device raises none), so the op does not set it again."""
    if isinstance(implementation, Ufunc):
        return implementation.apply
    return prepare(implementation, op)


def erf_fp32(x: np.ndarray) -> np.ndarray:
    """erf of fp32 `x` in fp32, modelling the vector unit's evaluation with the module docstring's
    rational approximation (not CANN's own polynomial); NaN stays NaN."""
    clamped = np.clip(np.asarray(x, np.float32), np.float32(-4), np.float32(4))
    square = clamped * clamped
    numerator = _horner(square, _ERF_NUMERATOR)
    numerator *= clamped
    numerator /= _horner(square, _ERF_DENOMINATOR)
    return numerator


def _horner(x: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    result = x * coefficients[0]
    result += coefficients[1]
    for c in coefficients[2:]:
        result *= x
        result += c
    return result


def _erf(op: Operation, x: np.ndarray) -> np.ndarray:
    return erf_fp32(x)


@Prepared
def _gelu(op: Operation) -> Compute:
    """GELU with the vector unit's erf; its tanh approximation is the semantics'."""
    gelu = cast(graph.GeluOp, op)
    if gelu.approximate is not None and gelu.approximate.data != "none":
        return prepare(IMPLEMENTATIONS[graph.GeluOp], op)
    return _exact_gelu


def _exact_gelu(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        half = np.float32(0.5) * x.astype(np.float32, copy=False)
        gelu = erf_fp32(x * np.float32(1 / math.sqrt(2)))
        gelu *= half
        gelu += half
        return gelu


_OWN: dict[type[Operation], Implementation] = {graph.ErfOp: _erf, graph.GeluOp: _gelu}
"""The ops the vector unit computes its own way, by op class."""
