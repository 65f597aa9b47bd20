"""Attention: scaled dot-product attention as one op, so that one cube kernel can run it whole.

Frontends lower the framework variants (ONNX's 3-D inputs, KV caches, padding lengths, sliding
windows) to this op plus ordinary graph ops; `ge-fuse-attention` forms it from the decomposed
matmul / softmax / matmul chain that exporters write.
```
query: [batch, heads, q_seq, head_dim]   key: [batch, kv_heads, kv_seq, head_dim]
value: [batch, kv_heads, kv_seq, v_dim]  mask: broadcasts to [batch, heads, q_seq, kv_seq]
result: [batch, heads, q_seq, v_dim]     scores: [batch, heads, q_seq, kv_seq]
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, StringAttr, TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    result_def,
    traits_def,
)

from ..common import bool_attr
from .base import (
    DYN,
    GraphOp,
    broadcast_shapes,
    flag_def,
    prop_flag,
    same_dims,
    same_elements,
    tensor_type,
)
from .products import AttentionProduct

SCORES_OUTPUTS = ("raw", "softcapped", "biased", "probs")
"""What the optional `scores` result holds: `query @ key^T * scale`, that after the soft cap,
that plus the mask, or the softmax probabilities (zero on fully masked rows)."""


@irdl_op_definition
class AttentionOp(GraphOp):
    """`softmax(softcap(Q K^T * scale) + bias) V`, where `bias` is the float `mask` (a boolean
    mask gives 0 where true, -inf where false) plus -inf where `is_causal` forbids: query `i` sees
    key `j` iff `j <= i + causal_offset`. `scale` defaults to `1 / sqrt(head_dim)` and is applied
    as `sqrt(scale)` to both Q and K; `softcap` (0: none) maps `s` to `softcap * tanh(s / softcap)`.
    Each key/value head serves `heads / kv_heads` consecutive query heads (grouped-query
    attention). A query row whose bias is -inf everywhere yields zeros, not NaN. `softmax_type`
    runs the softmax in another float type; `scores_output` adds the `scores` result (one of
    `SCORES_OUTPUTS`).

    ```
    %y = ascend.graph.attention %q, %k, %v, %mask {is_causal = true}
        : (tensor<2x8x16x64xf16>, tensor<2x2x16x64xf16>, tensor<2x2x16x64xf16>, tensor<16x16xi1>)
        -> tensor<2x8x16x64xf16>
    ```
    """

    name = "ascend.graph.attention"

    traits = traits_def(AttentionProduct())

    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    result = result_def(TensorType)
    scores = opt_result_def(TensorType)

    scale = opt_prop_def(FloatAttr)
    is_causal = flag_def(False)
    causal_offset = opt_prop_def(IntegerAttr)
    softcap = opt_prop_def(FloatAttr)
    softmax_type = opt_prop_def(AnyFloat)
    scores_output = opt_prop_def(StringAttr)

    @classmethod
    def infer(
        cls, operand_types: Sequence[TensorType], props: Mapping[str, Attribute], where: str
    ) -> TensorType | list[TensorType]:
        if len(operand_types) not in (3, 4):
            count = len(operand_types)
            raise ValueError(f"attention takes query, key, value and an optional mask, got {count} operands")
        q, k, v = operand_types[:3]
        element = same_elements([q, k, v], "query, key and value")
        if not isinstance(element, AnyFloat):
            raise ValueError(f"attention computes on floats, got {element}")
        shapes = [t.get_shape() for t in (q, k, v)]
        if any(len(s) != 4 for s in shapes):
            ranks = [len(s) for s in shapes]
            raise ValueError(f"query, key and value must be [batch, heads, seq, dim], got ranks {ranks}")
        (batch, heads, q_seq, dim), (_, kv_heads, kv_seq, _), v_shape = shapes
        if not same_dims(k.get_shape(), (batch, kv_heads, kv_seq, dim)):
            raise ValueError(f"key {_show(k.get_shape())} does not fit query {_show(q.get_shape())}")
        if not same_dims(v_shape[:3], (batch, kv_heads, kv_seq)):
            raise ValueError(f"value {_show(v_shape)} does not fit key {_show(k.get_shape())}")
        if DYN not in (heads, kv_heads) and (kv_heads == 0 or heads % kv_heads):
            raise ValueError(f"{kv_heads} key/value heads do not divide {heads} query heads")
        if kv_seq == 0:  # onnxruntime refuses it too
            raise ValueError("the key sequence is empty: there is nothing to attend to")
        scale = props.get("scale")
        if isinstance(scale, FloatAttr) and not scale.value.data > 0:
            raise ValueError(f"'scale' must be positive, got {scale.value.data}")
        scores = (batch, heads, q_seq, kv_seq)
        if len(operand_types) == 4:
            mask = operand_types[3]
            if mask.element_type not in (i1, element):
                raise ValueError(f"the mask must be i1 or {element}, got {mask.element_type}")
            if not _broadcasts_to(mask.get_shape(), scores):
                given = _show(mask.get_shape())
                raise ValueError(f"a mask of shape {given} does not broadcast to {_show(scores)}")
        prop_flag(cls, props, "is_causal")
        softcap = props.get("softcap")
        if isinstance(softcap, FloatAttr) and not softcap.value.data >= 0:
            raise ValueError(f"'softcap' must be non-negative, got {softcap.value.data}")
        result = TensorType(element, (batch, heads, q_seq, v_shape[3]))
        output = props.get("scores_output")
        if output is None:
            return result
        if not isinstance(output, StringAttr) or output.data not in SCORES_OUTPUTS:
            raise ValueError(f"'scores_output' must be one of {', '.join(SCORES_OUTPUTS)}, got {output}")
        return [result, TensorType(element, scores)]

    @classmethod
    def build_inferred(
        cls, operands: Sequence[SSAValue], properties: Mapping[str, Attribute | bool] | None = None
    ) -> Operation:
        props = {k: bool_attr(v) if isinstance(v, bool) else v for k, v in (properties or {}).items()}
        inferred = cls.infer([tensor_type(v.type) for v in operands], props, f"'{cls.name}'")
        result, *scores = inferred if isinstance(inferred, list) else [inferred]
        return cls.build(
            operands=[*operands[:3], list(operands[3:])], properties=props, result_types=[result, scores]
        )


OPS = (AttentionOp,)


def _broadcasts_to(shape, target) -> bool:
    try:
        return len(shape) <= len(target) and same_dims(broadcast_shapes(shape, target), target)
    except ValueError:
        return False


def _show(shape) -> str:
    return "[" + ", ".join("?" if d == DYN else str(d) for d in shape) + "]"
