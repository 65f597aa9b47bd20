"""Reductions and the ops built on them: softmax and its relatives, normalizations."""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import get_int

from .base import Implementation


def _softmax(op: ops.SoftmaxOp, x: np.ndarray) -> np.ndarray:
    axis = get_int(op, "axis", -1)
    exponentials = np.exp(x - x.max(axis=axis, keepdims=True))
    return exponentials / exponentials.sum(axis=axis, keepdims=True)


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.SoftmaxOp: _softmax,
}

IN_STORED_DTYPE: tuple[type, ...] = ()
