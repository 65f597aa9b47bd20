"""Scaled dot-product attention, as `ascend.graph.attention` defines it.

Computed in the compute dtype (float32 for 16-bit floats): the scores, the additive bias built
from the mask and the causal rule, a softmax that maps a row of -inf to zeros, and the product
with the values. Query rows whose bias forbids every key give zeros.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from xdsl.dialects.builtin import FloatAttr, StringAttr

from ge.dialects.common import get_flag, get_float, get_int
from ge.dialects.graph import AttentionOp
from ge.dtypes import numpy_dtype

from .base import Compute, Implementation, Prepared, Product, property_of


@Prepared
def attention(op: AttentionOp) -> Compute:
    given = property_of(op, "scale", FloatAttr)
    scale = None if given is None else given.value.data  # None: 1 / sqrt(the query's head size)
    softcap = get_float(op, "softcap", 0.0)
    causal = get_int(op, "causal_offset", 0) if get_flag(op, "is_causal") else None
    softmax_type = op.properties.get("softmax_type")
    stored = None if softmax_type is None else numpy_dtype(softmax_type)
    output = property_of(op, "scores_output", StringAttr)

    def attend(
        q: np.ndarray,
        k: np.ndarray,
        v: np.ndarray,
        mask: np.ndarray | None = None,
        *,
        product: Product = np.matmul,
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        dtype = q.dtype.type
        groups = q.shape[1] // k.shape[1]
        if groups > 1:
            k, v = np.repeat(k, groups, axis=1), np.repeat(v, groups, axis=1)
        # sqrt(scale) on both sides keeps the products of 16-bit inputs in range.
        root = dtype(math.sqrt(1 / math.sqrt(q.shape[-1]) if scale is None else scale))
        raw = product(q * root, np.swapaxes(k * root, -1, -2))
        capped = dtype(softcap) * np.tanh(raw / dtype(softcap)) if softcap > 0 else raw
        bias, masked_rows = _bias(causal, mask, raw.shape[-2:], np.dtype(dtype))
        biased = capped if bias is None else capped + bias
        probs = _softmax(biased, stored)
        if masked_rows is not None:
            probs = np.where(masked_rows, dtype(0), probs)
        y = product(probs, v)
        if output is None:
            return y
        scores = {"raw": raw, "softcapped": capped, "biased": biased, "probs": probs}[output.data]
        return y, np.broadcast_to(scores, raw.shape).astype(q.dtype)

    return attend


IMPLEMENTATIONS: dict[type, Implementation] = {AttentionOp: attention}


def _bias(
    offset: int | None, mask: np.ndarray | None, shape: tuple[int, int], dtype: np.dtype
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The additive bias of the mask and the causal rule of `offset` (None: not causal), 0 where
    allowed, -inf where not, and the query rows it forbids every key (None when it forbids none)."""
    causal = None
    if offset is not None:
        # Kept for shapes up to 2**20 scores (4 MiB in fp32): at most 16 of them stay cached.
        build = _causal_bias if shape[0] * shape[1] <= 2**20 else _causal_bias.__wrapped__
        causal = build(shape, offset, dtype)
    if mask is None:
        return (None, None) if causal is None else causal
    bias = np.where(mask, dtype.type(0), dtype.type(-np.inf)) if mask.dtype == np.bool_ else mask
    if causal is not None:
        bias = bias + causal[0]
    return bias, np.isneginf(np.max(bias, axis=-1, keepdims=True))


@functools.lru_cache(maxsize=16)
def _causal_bias(
    shape: tuple[int, int], offset: int, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray | None]:
    """The causal rule's bias for `shape` (query rows, keys), read-only: it depends on nothing a
    run gives, so it is built once per shape. With the rows it forbids every key (None if none)."""
    rows, cols = np.arange(shape[0])[:, None], np.arange(shape[1])[None, :]
    bias = np.where(cols <= rows + offset, dtype.type(0), dtype.type(-np.inf))
    masked = np.isneginf(np.max(bias, axis=-1, keepdims=True))
    bias.flags.writeable = masked.flags.writeable = False
    return bias, masked if masked.any() else None


def _softmax(x: np.ndarray, stored: np.dtype | None) -> np.ndarray:
    """Softmax over the last axis, in dtype `stored` if given; a row of -inf gives zeros."""
    compute = x.dtype
    if stored is not None:
        x = x.astype(stored)
        if stored.itemsize < 4:
            x = x.astype(np.float32)
    top = np.maximum.reduce(x, axis=-1, keepdims=True)
    probs = x - np.where(top == -np.inf, x.dtype.type(0), top)  # np.isneginf, without its wrapper
    np.exp(probs, out=probs)
    total = np.add.reduce(probs, axis=-1, keepdims=True)
    probs /= np.where(total == 0, x.dtype.type(1), total)
    if stored is not None:
        probs = probs.astype(stored)
    return probs.astype(compute, copy=False)
