"""Linear algebra the AI CPU runs: det, computed in float64 whatever the stored dtype."""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops

from .base import Implementation


def _det(op: ops.DetOp, x: np.ndarray) -> np.ndarray:
    return np.asarray(np.linalg.det(x.astype(np.float64))).astype(x.dtype)


IMPLEMENTATIONS: dict[type, Implementation] = {ops.DetOp: _det}
