"""Converter of ONNX Attention (opset 23 on, with opset 25's sliding windows) into
`ascend.graph.attention`.

3-D inputs are split into heads by a reshape and a transpose, and the result merged back; a KV
cache (`past_key`, `past_value`) is a concat in front of the new keys and values and shifts the
causal diagonal by its length. What depends on per-batch lengths (`nonpad_kv_seqlen`) or on a
sliding window becomes a boolean mask, intersected with the given one. Refused: integer masks,
a float mask or V of another dtype than Q, and 3-D inputs, windows or `nonpad_kv_seqlen` without
static shapes.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.dtypes import element_type
from ge.graph import Tensor

from .importer import Converter, Importer, Node

SCORES_BY_MODE = {0: "raw", 1: "softcapped", 2: "biased", 3: "probs"}
"""`qk_matmul_output_mode` -> what the op's `scores` result holds."""

_COMPUTED_IN_F32 = ("float16", "bfloat16", "float32")


def _attention(imp: Importer, node: Node) -> list[Tensor | None]:
    q, k, v = node.input_tensors(3)
    mask, past_key, past_value, nonpad = (node.optional_input(i) for i in range(3, 7))
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise node.fail(f"Q, K and V of dtypes {q.dtype}, {k.dtype} and {v.dtype} (one dtype is supported)")
    if mask is not None and mask.dtype not in ("bool", q.dtype):
        raise node.fail(
            f"an attn_mask of dtype {mask.dtype} (bool or the dtype of Q, {q.dtype}, is supported)"
        )
    rank = len(q.shape)
    if rank not in (3, 4) or len(k.shape) != rank or len(v.shape) != rank:
        raise node.invalid(
            f"Q, K and V must all be 3-D or all 4-D, got ranks {[len(t.shape) for t in (q, k, v)]}"
        )
    if rank == 3:
        q, k, v = _split_heads(imp, node, q, k, v)
    else:
        _check_head_counts(node, q, k)
    if (past_key is None) != (past_value is None):
        raise node.invalid("past_key and past_value must be given together")
    if past_key is not None:
        if past_value is None:
            raise node.invalid("past_key is given without past_value")
        if nonpad is not None:
            raise node.invalid("nonpad_kv_seqlen cannot be combined with past_key and past_value")
        k = imp.g.add_concat([past_key, k], 2, f"{node.name}.present_key")
        v = imp.g.add_concat([past_value, v], 2, f"{node.name}.present_value")
    present_key, present_value = k, v
    q_seq, kv_seq = q.shape[2], k.shape[2]
    offset = past_key.shape[2] if past_key is not None else 0
    if mask is not None:
        mask = _pad_mask(imp, node, mask, kv_seq)

    props = _properties(node, q)
    causal = int(node.attr("is_causal", 0))
    left, right = int(node.attr("left_window_size", -1)), int(node.attr("right_window_size", -1))
    window = left >= 0 or right >= 0
    if nonpad is not None:
        allowed = _allowed_by_lengths(imp, node, nonpad, q_seq, kv_seq, bool(causal), left, right)
        mask = _intersect(imp, node, mask, allowed)
    else:
        if causal:
            props["is_causal"] = bool_attr(True)
            if offset:
                props["causal_offset"] = int_attr(offset)
        if window:
            if min(q_seq, kv_seq, offset) < 0:
                raise node.fail("a sliding window over dynamic sequence lengths")
            allowed = imp.g.add_constant(_window(q_seq, kv_seq, offset, left, right), f"{node.name}.window")
            mask = _intersect(imp, node, mask, allowed)

    wants_scores = len(node.proto.output) > 3 and bool(node.proto.output[3])
    if wants_scores:
        mode = int(node.attr("qk_matmul_output_mode", 0))
        if mode not in SCORES_BY_MODE:
            raise node.invalid(f"qk_matmul_output_mode must be 0 to 3, got {mode}")
        props["scores_output"] = StringAttr(SCORES_BY_MODE[mode])
    operands = [q, k, v] if mask is None else [q, k, v, mask]
    results = imp.g.add_op_results(ops.AttentionOp, operands, props, node.name)
    y, scores = results[0], results[1] if wants_scores else None
    if rank == 3:
        y = _merge_heads(imp, node, y)
    return [y, present_key, present_value, scores]


CONVERTERS: dict[str, Converter] = {"Attention": _attention}


def _properties(node: Node, q: Tensor) -> dict:
    props = {}
    if "scale" in node.attrs:
        props["scale"] = ops.float_attr(node.attr("scale"))
    softcap = float(node.attr("softcap", 0.0))
    if softcap > 0:  # ONNX: 0 (the default) or less means no soft cap
        props["softcap"] = ops.float_attr(softcap)
    if "softmax_precision" in node.attrs:
        precision = node.dtype("softmax_precision")
        if precision not in ("float16", "bfloat16", "float32", "float64"):
            raise node.invalid(f"softmax_precision must be a float type, got {precision}")
        # The op computes 16-bit and float32 inputs in float32 already.
        default = precision == q.dtype or (precision == "float32" and q.dtype in _COMPUTED_IN_F32)
        if not default:
            props["softmax_type"] = element_type(precision)
    return props


def _split_heads(imp: Importer, node: Node, q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """[batch, seq, heads * dim] -> [batch, heads, seq, dim] for Q (q_num_heads) and K, V (kv_num_heads)."""
    if "q_num_heads" not in node.attrs or "kv_num_heads" not in node.attrs:
        raise node.invalid("3-D inputs need the q_num_heads and kv_num_heads attributes")
    q_heads, kv_heads = int(node.attr("q_num_heads")), int(node.attr("kv_num_heads"))
    split = []
    for what, t, heads in (("Q", q, q_heads), ("K", k, kv_heads), ("V", v, kv_heads)):
        if any(d < 0 for d in t.shape):
            raise node.fail(f"3-D {what} of shape {list(t.shape)} with dynamic dimensions")
        batch, seq, hidden = t.shape
        if heads < 1 or hidden % heads:
            raise node.invalid(f"{what}'s hidden size {hidden} does not split into {heads} heads")
        heads_last = imp.g.add_reshape(t, [batch, seq, heads, hidden // heads], f"{node.name}.{what}_heads")
        split.append(imp.g.add_transpose(heads_last, [0, 2, 1, 3], f"{node.name}.{what}_bhsd"))
    return split[0], split[1], split[2]


def _merge_heads(imp: Importer, node: Node, y: Tensor) -> Tensor:
    """[batch, heads, seq, dim] -> [batch, seq, heads * dim]."""
    batch, heads, seq, dim = y.shape
    seq_first = imp.g.add_transpose(y, [0, 2, 1, 3], f"{node.name}.bshd")
    return imp.g.add_reshape(seq_first, [batch, seq, heads * dim], f"{node.name}.merged")


def _check_head_counts(node: Node, q: Tensor, k: Tensor) -> None:
    """4-D inputs carry their head counts; attributes, if given, must agree with them."""
    for name, t in (("q_num_heads", q), ("kv_num_heads", k)):
        given = node.attr(name)
        if given is not None and t.shape[1] >= 0 and int(given) != t.shape[1]:
            raise node.invalid(f"{name} = {given} but the 4-D input has {t.shape[1]} heads")


def _pad_mask(imp: Importer, node: Node, mask: Tensor, kv_seq: int) -> Tensor:
    """A mask shorter than the keys is padded with -inf (False) to their length."""
    length = mask.shape[-1] if mask.shape else -1
    if min(length, kv_seq) < 0 or length == kv_seq:
        return mask
    if length > kv_seq:
        raise node.invalid(f"attn_mask covers {length} keys, more than the {kv_seq} there are")
    rank = len(mask.shape)
    fill = 0 if mask.dtype == "bool" else -np.inf
    value = imp.g.add_splat(fill, [], mask.dtype, f"{node.name}.mask_fill")
    pads = [0] * (2 * rank - 1) + [kv_seq - length]
    return imp.g.add_op(ops.PadOp, [mask, value], {"pads": ints_attr(pads)}, f"{node.name}.mask_padded")


def _window(q_seq: int, kv_seq: int, offset: int, left: int, right: int) -> np.ndarray:
    """Where query `i` (at position `i + offset`) may see key `j` in a sliding window."""
    distance = (np.arange(q_seq)[:, None] + offset) - np.arange(kv_seq)[None, :]
    allowed = np.ones((q_seq, kv_seq), np.bool_)
    if left >= 0:
        allowed &= distance <= left
    if right >= 0:
        allowed &= -distance <= right
    return allowed


def _allowed_by_lengths(
    imp: Importer, node: Node, nonpad: Tensor, q_seq: int, kv_seq: int, causal: bool, left: int, right: int
) -> Tensor:
    """[batch, 1, q_seq, kv_seq] booleans: key `j` is one of the batch entry's `nonpad` valid keys
    and, when asked, within the causal frontier and the window, which the queries' position
    `i + nonpad - q_seq` (the last query meets the last valid key) decides."""
    if len(nonpad.shape) != 1 or nonpad.shape[0] < 0 or min(q_seq, kv_seq) < 0:
        raise node.fail("nonpad_kv_seqlen with dynamic batch or sequence lengths")
    g, name = imp.g, node.name
    lengths = g.add_reshape(nonpad, [nonpad.shape[0], 1, 1, 1], f"{name}.lengths")
    keys = g.add_constant(np.arange(kv_seq, dtype=np.int64).reshape(1, 1, 1, kv_seq), f"{name}.keys")
    allowed = g.add_op(ops.LessOp, [keys, lengths], None, f"{name}.valid")
    if not (causal or left >= 0 or right >= 0):
        return allowed
    queries = g.add_constant(
        np.arange(q_seq, dtype=np.int64).reshape(1, 1, q_seq, 1) - q_seq, f"{name}.queries"
    )
    position = g.add_op(ops.AddOp, [queries, lengths], None, f"{name}.positions")
    distance = g.add_op(ops.SubOp, [position, keys], None, f"{name}.distance")
    # Causal: distance >= 0; left window: distance <= left; right window: -distance <= right.
    bounds = []
    if causal:
        bounds.append((ops.GreaterEqualOp, 0, "causal"))
    if left >= 0:
        bounds.append((ops.LessEqualOp, left, "left"))
    if right >= 0:
        bounds.append((ops.GreaterEqualOp, -right, "right"))
    for compare, limit, what in bounds:
        bound = g.add_constant(np.array(limit, np.int64), f"{name}.{what}_bound")
        inside = g.add_op(compare, [distance, bound], None, f"{name}.{what}")
        allowed = g.add_op(ops.AndOp, [allowed, inside], None, f"{name}.allowed")
    return allowed


def _intersect(imp: Importer, node: Node, mask: Tensor | None, allowed: Tensor) -> Tensor:
    """The mask restricted to where `allowed` holds (-inf, or False, elsewhere)."""
    if mask is None:
        return allowed
    if mask.dtype == "bool":
        return imp.g.add_op(ops.AndOp, [mask, allowed], None, f"{node.name}.mask_and")
    blocked = imp.g.add_splat(-np.inf, [], mask.dtype, f"{node.name}.blocked")
    return imp.g.add_op(ops.WhereOp, [allowed, mask, blocked], None, f"{node.name}.mask_where")
