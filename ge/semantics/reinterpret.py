"""bitcast: the stored bytes read as another element type (a numpy view; the AI Core and every
host numpy runs on are little endian, as ONNX's BitCast asks)."""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dtypes import numpy_dtype

from .base import Compute, Implementation, Prepared


@Prepared
def _bitcast(op: ops.BitCastOp) -> Compute:
    target = numpy_dtype(op.result.type.element_type)

    def bitcast(x: np.ndarray) -> np.ndarray:
        data = np.ascontiguousarray(x)  # 0-d arrays come back 1-d: the reshapes restore them
        if target == np.bool_:
            return (data.view(np.uint8) != 0).reshape(x.shape)  # a byte other than 0 or 1 is still true
        return data.view(target).reshape(x.shape)

    return bitcast


IMPLEMENTATIONS: dict[type, Implementation] = {ops.BitCastOp: _bitcast}
