"""Packs the weights of a stream-level model into its one contiguous blob."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import FixedBitwidthType

from ge.dialects.formats import c0_of
from ge.dialects.stream import ModelOp, WeightOp
from ge.layout import to_device
from ge.semantics import constant_array
from ge.weights import WeightStore


def pack_weights(model: ModelOp, weights: WeightStore | None) -> bytes:
    """The blob the model's `ascend.stream.weight` ops describe: each value at its offset."""
    blob = np.zeros(model.weight_size.value.data, np.uint8)
    for op in model.body.block.ops:
        if isinstance(op, WeightOp):
            data = constant_array(op.value, op.logical_type, weights)
            if op.stored_format not in ("ND", "NCHW"):
                element = op.logical_type.element_type
                assert isinstance(element, FixedBitwidthType)  # a device format holds no other
                data = to_device(data, op.stored_format, c0_of(element.bitwidth), op.group_count)
            raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
            start = op.offset.value.data
            blob[start : start + raw.size] = raw
    return blob.tobytes()
