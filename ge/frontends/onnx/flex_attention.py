"""Converter of FlexAttention (domain `ai.onnx.preview`): attention with user subgraphs that
modify the scores before the softmax (`score_mod`) and the probabilities after it (`prob_mod`).

```
scores = (Q * sqrt(scale)) @ (K * sqrt(scale))^T      in the inputs' dtype
scores = score_mod(cast(scores, softmax type))          inlined subgraph
probs  = prob_mod(softmax(scores))                      inlined subgraph
Y      = cast(probs @ cast(V, softmax type), V's dtype)
```
The softmax type is `softmax_precision`, else float32 (float64 for float64 inputs). A group of
consecutive query heads shares one key/value head: the group's rows are stacked into one matrix
product per key/value head.
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from ge.dialects import graph as ops
from ge.dialects.common import int_attr
from ge.graph import Tensor

from .composite import Composer
from .importer import Converter, Importer, Node, dtype_name

DOMAIN = "ai.onnx.preview"


def _flex_attention(imp: Importer, node: Node) -> list[Tensor]:
    """Rank-4 inputs with static shapes; the modifier subgraphs are inlined."""
    c = Composer(imp, node)
    q, k, v = c.input(0, "Q"), c.input(1, "K"), c.input(2, "V")
    if any(len(t.shape) != 4 for t in (q, k, v)):
        raise node.invalid("Q, K and V must be rank-4 [batch, heads, sequence, size]")
    c.static(q, k, v)
    batch, q_heads, length, size = q.shape
    kv_heads, keys = k.shape[1], k.shape[2]
    if kv_heads < 1 or q_heads % kv_heads or v.shape[1] != kv_heads or v.shape[2] != keys:
        raise node.invalid(f"{q_heads} query heads do not group over K and V of shapes {k.shape}, {v.shape}")
    group = q_heads // kv_heads
    precision = int(node.attr("softmax_precision", 0))
    if precision:
        softmax_type = dtype_name(precision, "softmax_precision")
    else:
        softmax_type = "float64" if q.dtype == "float64" else "float32"
    if softmax_type not in ("float16", "bfloat16", "float32", "float64"):
        raise node.invalid(f"softmax_precision must be a float type, got {softmax_type}")
    scale = node.attr("scale")
    root = math.sqrt(np.float32(1.0 / math.sqrt(size) if scale is None else scale))

    factor = c.scalar(root, q.dtype, "sqrt_scale")
    q_rows = c.reshape(
        c.op(ops.MulOp, [q, factor], "q_scaled"), [batch, kv_heads, group * length, size], "q_rows"
    )
    k_scaled = c.op(ops.MulOp, [k, factor], "k_scaled")
    scores = c.op(ops.MatMulOp, [q_rows, c.transpose(k_scaled, [0, 1, 3, 2], "k_t")], "scores")
    scores = c.cast(
        c.reshape(scores, [batch, q_heads, length, keys], "scores_by_head"), softmax_type, "scores_f"
    )
    scores = _modify(imp, node, "score_mod", scores)
    probs = c.op(ops.SoftmaxOp, [scores], "probs", {"axis": int_attr(-1)})
    probs = _modify(imp, node, "prob_mod", probs)
    probs = c.reshape(probs, [batch, kv_heads, group * length, keys], "probs_rows")
    y = c.op(ops.MatMulOp, [probs, c.cast(v, softmax_type, "v_f")], "y_rows")
    y = c.reshape(y, [batch, q_heads, length, v.shape[3]], "y_by_head")
    return [c.cast(y, v.dtype, "")]


def _modify(imp: Importer, node: Node, attribute: str, x: Tensor) -> Tensor:
    """`x` through the node's subgraph `attribute` (inlined), or `x` itself when there is none."""
    graph = node.attr(attribute)
    if graph is None:
        return x
    if not isinstance(graph, onnx.GraphProto) or len(graph.input) != 1 or len(graph.output) != 1:
        raise node.invalid(f"{attribute} must be a graph of one input and one output")
    (name,) = imp.import_subgraph(graph, {graph.input[0].name: x}, f"{node.name}/{attribute}/")
    result = imp.values[name]
    if not isinstance(result, Tensor) or result.shape != x.shape or result.dtype != x.dtype:
        raise node.invalid(
            f"{attribute} must keep the shape and dtype of its input ({list(x.shape)} {x.dtype})"
        )
    return result


CONVERTERS: dict[str, Converter] = {f"{DOMAIN}::FlexAttention": _flex_attention}
