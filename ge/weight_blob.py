"""Packs the weights of a stream-level model into its one contiguous blob."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType

from ge.dialects.stream import ModelOp, WeightOp
from ge.semantics import constant_array
from ge.weights import WeightStore


def pack_weights(model: ModelOp, weights: WeightStore | None) -> bytes:
    """The blob the model's `ascend.stream.weight` ops describe: each value at its offset."""
    blob = np.zeros(model.weight_size.value.data, np.uint8)
    for op in model.body.block.ops:
        if isinstance(op, WeightOp):
            memref = op.buffer.type
            data = constant_array(op.value, TensorType(memref.element_type, memref.get_shape()), weights)
            raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
            start = op.offset.value.data
            blob[start : start + raw.size] = raw
    return blob.tobytes()
