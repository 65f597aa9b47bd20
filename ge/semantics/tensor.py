"""Data movement: reshape, flatten, transpose, concat."""

from __future__ import annotations

import math

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import describe, get_int, get_ints
from ge.errors import GeError

from .base import Implementation


def _reshape(op: ops.ReshapeOp, x: np.ndarray) -> np.ndarray:
    shape = op.result.type.get_shape()  # a dynamic dimension is -1, which numpy infers
    if shape.count(-1) > 1:
        raise GeError(f"{describe(op)}: cannot infer two dynamic dimensions of {op.result.type}")
    return x.reshape(shape)


def _flatten(op: ops.FlattenOp, x: np.ndarray) -> np.ndarray:
    axis = get_int(op, "axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


def _transpose(op: ops.TransposeOp, x: np.ndarray) -> np.ndarray:
    return np.transpose(x, get_ints(op, "perm"))


def _concat(op: ops.ConcatOp, *inputs: np.ndarray) -> np.ndarray:
    return np.concatenate(inputs, axis=get_int(op, "axis"))


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.ReshapeOp: _reshape,
    ops.FlattenOp: _flatten,
    ops.TransposeOp: _transpose,
    ops.ConcatOp: _concat,
}

IN_STORED_DTYPE: tuple[type, ...] = (ops.ReshapeOp, ops.FlattenOp, ops.TransposeOp, ops.ConcatOp)
