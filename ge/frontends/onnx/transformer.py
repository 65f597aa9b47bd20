"""Converters of the operators of decoder language models: RotaryEmbedding, SwiGLU,
CausalConvWithState (the short convolution of state-space blocks) and TensorScatter (a KV-cache
update). Each decomposes into graph ops: slices, multiplies and concats for the rotation, a
depthwise convolution over a unit height, and a scatter_elements whose indices are the write
positions plus the update's offsets.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import int_attr, ints_attr
from ge.graph import Tensor

from .composite import Composer
from .importer import Converter, Importer, Node


def _rotary_embedding(imp: Importer, node: Node) -> list[Tensor]:
    """X is (batch, heads, sequence, head_size), or (batch, sequence, hidden) with `num_heads`.
    Without position_ids the caches are (batch, sequence, rotary/2), with them (positions,
    rotary/2) and gathered at the ids; the first `rotary_embedding_dim` channels of each head
    rotate (in halves, or in even/odd pairs when `interleaved`), the rest pass through."""
    c = Composer(imp, node)
    x, cos, sin = c.input(0, "X"), c.input(1, "cos_cache"), c.input(2, "sin_cache")
    c.static(x)
    if node.has_input(3):
        ids = node.input(3)
        cos = c.op(ops.GatherOp, [cos, ids], "cos", {"axis": int_attr(0)})
        sin = c.op(ops.GatherOp, [sin, ids], "sin", {"axis": int_attr(0)})
    c.static(cos, sin)
    shape = list(x.shape)
    if len(shape) == 4:
        batch, _, sequence, head_size = shape
        heads_x, cache_shape = x, [batch, 1, sequence, cos.shape[-1]]
    elif len(shape) == 3:
        heads = int(node.attr("num_heads", 0))
        if heads < 1 or shape[2] % heads:
            raise node.invalid(f"a 3-D input of hidden size {shape[2]} needs num_heads dividing it")
        batch, sequence, head_size = shape[0], shape[1], shape[2] // heads
        heads_x = c.reshape(x, [batch, sequence, heads, head_size], "heads")
        cache_shape = [batch, sequence, 1, cos.shape[-1]]
    else:
        raise node.invalid(f"X must be 3-D or 4-D, got shape {shape}")
    rotary = int(node.attr("rotary_embedding_dim", 0)) or head_size
    if rotary % 2 or rotary > head_size or cos.shape[-1] != rotary // 2:
        raise node.invalid(
            f"a rotary dimension of {rotary} needs caches of last dimension {rotary // 2} "
            f"(got {cos.shape[-1]}) within a head of {head_size}"
        )
    if len(cos.shape) != 3:
        raise node.invalid(f"the caches must be (batch, sequence, rotary/2), got {list(cos.shape)}")
    cos = c.reshape(cos, cache_shape, "cos_heads")
    sin = c.reshape(sin, cache_shape, "sin_heads")
    last = len(heads_x.shape) - 1
    if node.attr("interleaved", 0):
        first = c.slice(heads_x, last, 0, rotary, "even", step=2)
        second = c.slice(heads_x, last, 1, rotary, "odd", step=2)
    else:
        first = c.slice(heads_x, last, 0, rotary // 2, "first_half")
        second = c.slice(heads_x, last, rotary // 2, rotary, "second_half")
    real = c.op(
        ops.SubOp,
        [c.op(ops.MulOp, [cos, first], "cos_first"), c.op(ops.MulOp, [sin, second], "sin_second")],
        "real",
    )
    imaginary = c.op(
        ops.AddOp,
        [c.op(ops.MulOp, [sin, first], "sin_first"), c.op(ops.MulOp, [cos, second], "cos_second")],
        "imaginary",
    )
    if node.attr("interleaved", 0):
        pairs = [*real.shape, 1]
        stacked = c.concat(
            [c.reshape(real, pairs, "real_pairs"), c.reshape(imaginary, pairs, "imaginary_pairs")],
            last + 1,
            "pairs",
        )
        rotated = c.reshape(stacked, [*real.shape[:-1], rotary], "rotated")
    else:
        rotated = c.concat([real, imaginary], last, "rotated")
    if rotary < head_size:
        rotated = c.concat([rotated, c.slice(heads_x, last, rotary, head_size, "kept")], last, "joined")
    return [c.reshape(rotated, shape, "")]


def _swiglu(imp: Importer, node: Node) -> list[Tensor]:
    """`swish(A, alpha) * B`, A and B of one shape."""
    c = Composer(imp, node)
    a, b = c.input(0, "A"), c.input(1, "B")
    if a.shape != b.shape:
        raise node.invalid(f"A {list(a.shape)} and B {list(b.shape)} must have one shape")
    gate = c.op(ops.SwishOp, [a], "gate", {"alpha": ops.float_attr(node.attr("alpha", 1.0))})
    return [c.op(ops.MulOp, [gate, b], "")]


def _causal_conv_with_state(imp: Importer, node: Node) -> list[Tensor]:
    """A depthwise convolution (channels, 1, k) over the input preceded by `past_state` (or k - 1
    zeros), optionally followed by SiLU; the last k - 1 positions of that padded input are the
    present state."""
    c = Composer(imp, node)
    x, w = c.input(0, "input"), c.input(1, "weight")
    c.static(x, w)
    activation = str(node.attr("activation", "none"))
    if activation not in ("none", "silu", "swish"):
        raise node.invalid(f"unknown activation '{activation}' (known: none, silu, swish)")
    if len(x.shape) != 3 or len(w.shape) != 3 or w.shape[:2] != (x.shape[1], 1):
        raise node.invalid(f"input {list(x.shape)} needs a weight (channels, 1, k), got {list(w.shape)}")
    batch, channels, length = x.shape
    k = w.shape[2]
    if node.has_input(3):
        past = node.input(3)
        if list(past.shape) != [batch, channels, k - 1]:
            raise node.invalid(f"past_state must be {[batch, channels, k - 1]}, got {list(past.shape)}")
    else:
        past = c.zeros([batch, channels, k - 1], x.dtype, "zero_state") if k > 1 else None
    padded = x if past is None else c.concat([past, x], 2, "padded")
    operands = [
        c.reshape(padded, [batch, channels, 1, length + k - 1], "as_2d"),
        c.reshape(w, [channels, 1, 1, k], "weight_2d"),
    ]
    if node.has_input(2):
        operands.append(node.input(2))
    props = {
        "strides": ints_attr((1, 1)),
        "pads": ints_attr((0, 0, 0, 0)),
        "dilations": ints_attr((1, 1)),
        "groups": int_attr(channels),
    }
    y = c.op(ops.Conv2DOp, operands, "conv", props)
    if activation != "none":
        y = c.op(ops.SwishOp, [y], "silu")
    output = c.reshape(y, [batch, channels, length], "")
    present = c.slice(padded, 2, length, length + k - 1, "present_state")
    return [output, present]


def _tensor_scatter(imp: Importer, node: Node) -> list[Tensor]:
    """Writes `update` into `past_cache` along `axis`, each batch entry from its own
    `write_indices` position (0 without them), wrapping around in `circular` mode."""
    c = Composer(imp, node)
    cache, update = c.input(0, "past_cache"), c.input(1, "update")
    c.static(cache, update)
    rank = len(cache.shape)
    axis = int(node.attr("axis", -2))
    if not -rank <= axis < rank or axis % rank == 0:
        raise node.invalid(f"axis {axis} must name a non-batch axis of a rank-{rank} cache")
    axis %= rank
    mode = str(node.attr("mode", "linear"))
    if mode not in ("linear", "circular"):
        raise node.invalid(f"unknown mode '{mode}' (known: linear, circular)")
    if len(update.shape) != rank or any(
        u != p for i, (u, p) in enumerate(zip(update.shape, cache.shape, strict=True)) if i != axis
    ):
        raise node.invalid(
            f"update {list(update.shape)} does not fit cache {list(cache.shape)} off axis {axis}"
        )
    steps = np.arange(update.shape[axis], dtype=np.int64).reshape(
        [-1 if i == axis else 1 for i in range(rank)]
    )
    positions = c.constant(steps, "steps")
    if node.has_input(2):
        starts = c.cast(node.input(2), "int64", "write_indices")
        starts = c.reshape(starts, [cache.shape[0], *[1] * (rank - 1)], "starts")
        positions = c.op(ops.AddOp, [starts, positions], "positions")
    if mode == "circular":
        length = c.scalar(cache.shape[axis], "int64", "length")
        positions = c.op(ops.ModOp, [positions, length], "wrapped")
    positions = c.op(ops.ExpandOp, [positions], "indices", {"shape": ints_attr(update.shape)})
    props = {"axis": int_attr(axis), "reduction": StringAttr("none")}
    return [c.op(ops.ScatterElementsOp, [cache, positions, update], "", props)]


CONVERTERS: dict[str, Converter] = {
    "RotaryEmbedding": _rotary_embedding,
    "SwiGLU": _swiglu,
    "CausalConvWithState": _causal_conv_with_state,
    "TensorScatter": _tensor_scatter,
}
