"""Elementwise ops: arithmetic, activations, comparisons and casts."""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import describe
from ge.dtypes import numpy_dtype
from ge.errors import GeError

from .base import Implementation


def _binary(ufunc: np.ufunc) -> Implementation:
    def implementation(op: ops.GraphOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        return ufunc(lhs, rhs)

    return implementation


def _div(op: ops.DivOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    if lhs.dtype.kind in "iu":
        if not np.all(rhs):
            raise GeError(f"{describe(op)}: integer division by zero")
        # fmod keeps the dividend's sign, so this truncates toward zero as C and ONNX do.
        return (lhs - np.fmod(lhs, rhs)) // rhs
    with np.errstate(divide="ignore", invalid="ignore"):
        return lhs / rhs


def _relu(op: ops.ReluOp, x: np.ndarray) -> np.ndarray:
    return np.maximum(x, x.dtype.type(0))


def _cast(op: ops.CastOp, x: np.ndarray) -> np.ndarray:
    # numpy rounds to nearest even between floats and truncates floats toward zero into integers.
    return x.astype(numpy_dtype(op.result.type.element_type), copy=False)


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.AddOp: _binary(np.add),
    ops.SubOp: _binary(np.subtract),
    ops.MulOp: _binary(np.multiply),
    ops.DivOp: _div,
    ops.ReluOp: _relu,
    ops.CastOp: _cast,
}

IN_STORED_DTYPE: tuple[type, ...] = (ops.CastOp,)
