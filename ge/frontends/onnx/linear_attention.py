"""Converter of ONNX LinearAttention (opset 27): the recurrence unrolled over the static sequence.

Each step updates a [batch, kv_heads, d_k, d_v] state with matrix products and reads it with the
step's queries (a group of query heads shares one key/value head and its state):
```
gated:  S = exp(g_t) * S                        (g_t per key dimension, or per head)
delta:  v_t = beta_t * (v_t - k_t^T S)          (what the state already holds for k_t, replaced)
write:  S = S + k_t v_t^T
read:   o_t = (scale * q_t) S
```
Everything is computed in float32 (16-bit inputs are widened) and cast back at the end, as the
operator's definition accumulates in float32.
"""

from __future__ import annotations

import math

from ge.dialects import graph as ops
from ge.graph import Tensor

from .composite import Composer
from .importer import Converter, Importer, Node

MAX_STEPS = 1024
"""Sequences longer than this are refused (the recurrence is unrolled)."""

UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


def _linear_attention(imp: Importer, node: Node) -> list[Tensor]:
    """linear, gated, delta and gated_delta rules, grouped query heads, an optional past state;
    static shapes."""
    c = Composer(imp, node)
    query, key, value = c.input(0, "query"), c.input(1, "key"), c.input(2, "value")
    past, decay, beta = (node.optional_input(i) for i in (3, 4, 5))
    rule = node.attr("update_rule", "gated_delta")
    if rule not in UPDATE_RULES:
        raise node.invalid(f"update_rule must be one of {', '.join(UPDATE_RULES)}, got '{rule}'")
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gated != (decay is not None) or delta != (beta is not None):
        raise node.invalid(f"update_rule '{rule}' takes decay: {gated}, beta: {delta}")
    c.static(*(t for t in (query, key, value, past, decay, beta) if t is not None))
    if any(len(t.shape) != 3 for t in (query, key, value)):
        raise node.invalid("query, key and value must be 3-D [batch, sequence, heads * size]")
    q_heads, kv_heads = int(node.attr("q_num_heads", 0)), int(node.attr("kv_num_heads", 0))
    if kv_heads < 1 or q_heads < 1 or q_heads % kv_heads:
        raise node.invalid(f"q_num_heads {q_heads} must be a positive multiple of kv_num_heads {kv_heads}")
    batch, steps, q_hidden = query.shape
    if q_hidden % q_heads or key.shape[2] % kv_heads or value.shape[2] % kv_heads:
        raise node.invalid("the hidden sizes do not split into the given numbers of heads")
    if not 1 <= steps <= MAX_STEPS:
        raise node.fail(f"a sequence of {steps} steps (1 to {MAX_STEPS} are unrolled)")
    d_k, d_v, group = q_hidden // q_heads, value.shape[2] // kv_heads, q_heads // kv_heads
    scale = float(node.attr("scale", 0.0)) or 1.0 / math.sqrt(d_k)

    # [batch, kv_heads, steps, ...]: one slice of the step axis per step.
    q = _heads(c, query, [kv_heads, group, d_k], "q")
    q = c.op(ops.MulOp, [q, c.scalar(scale, "float32", "scale")], "q_scaled")
    k, v = _heads(c, key, [kv_heads, d_k], "k"), _heads(c, value, [kv_heads, d_v], "v")
    if decay is not None:
        if decay.shape[2] not in (kv_heads, kv_heads * d_k):
            raise node.invalid(f"decay's last dimension must be {kv_heads} or {kv_heads * d_k}")
        decay = c.op(ops.ExpOp, [_heads(c, decay, [kv_heads, decay.shape[2] // kv_heads], "decay")], "gate")
    if beta is not None:
        if beta.shape[2] not in (kv_heads, 1):
            raise node.invalid(f"beta's last dimension must be {kv_heads} or 1")
        beta = _heads(c, beta, [beta.shape[2], 1], "beta")
    state = None
    if past is not None:
        if tuple(past.shape) != (batch, kv_heads, d_k, d_v):
            raise node.invalid(f"past_state must have shape {[batch, kv_heads, d_k, d_v]}")
        state = c.cast(past, "float32", "past_f32")

    outputs = []
    for t in range(steps):
        part = f"step{t}"
        k_t = c.slice(k, 2, t, t + 1, f"{part}.k")
        v_t = c.slice(v, 2, t, t + 1, f"{part}.v")
        if decay is not None and state is not None:
            gate = c.slice(decay, 2, t, t + 1, f"{part}.gate")
            gate = c.reshape(gate, [batch, kv_heads, gate.shape[3], 1], f"{part}.gate_column")
            state = c.op(ops.MulOp, [state, gate], f"{part}.decayed")
        if beta is not None:
            if state is not None:
                held = c.op(ops.MatMulOp, [k_t, state], f"{part}.held")
                v_t = c.op(ops.SubOp, [v_t, held], f"{part}.new")
            v_t = c.op(ops.MulOp, [v_t, c.slice(beta, 2, t, t + 1, f"{part}.beta")], f"{part}.rate")
        k_column = c.reshape(k_t, [batch, kv_heads, d_k, 1], f"{part}.k_column")
        written = c.op(ops.MatMulOp, [k_column, v_t], f"{part}.outer")
        state = written if state is None else c.op(ops.AddOp, [state, written], f"{part}.state")
        q_t = c.reshape(c.slice(q, 2, t, t + 1, f"{part}.q"), [batch, kv_heads, group, d_k], f"{part}.q_rows")
        read = c.op(ops.MatMulOp, [q_t, state], f"{part}.read")
        outputs.append(c.reshape(read, [batch, 1, q_heads * d_v], f"{part}.output"))
    if state is None:
        raise node.invalid("an empty sequence without a past state leaves no state to return")
    output = c.cast(c.concat(outputs, 1, "output_f32"), query.dtype, "")
    present = c.cast(state, past.dtype if past is not None else query.dtype, "present_state")
    return [output, present]


def _heads(c: Composer, x: Tensor, split: list[int], part: str) -> Tensor:
    """[batch, steps, heads * ...] as float32 [batch, heads, steps, ...] (`split` = heads, ...)."""
    batch, steps, hidden = x.shape
    if math.prod(split) != hidden:
        raise c.node.invalid(f"{part} of shape {list(x.shape)} does not split into {split}")
    x = c.reshape(c.cast(x, "float32", f"{part}_f32"), [batch, steps, *split], f"{part}_split")
    return c.transpose(x, [0, 2, 1, *range(3, 2 + len(split))], f"{part}_by_head")


CONVERTERS: dict[str, Converter] = {"LinearAttention": _linear_attention}
