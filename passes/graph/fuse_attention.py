"""`ge-fuse-attention`: scaled dot-product attention written out as matmul, scale, mask, softmax
and matmul becomes one `ascend.graph.attention`.

The scores are `matmul(Q, K^T)` over [batch, heads, seq, dim] tensors (K^T may come from a
transpose, which the fused op absorbs, or arrive transposed), scaled by a constant: divided or
multiplied after the product, or multiplied into Q (or K^T) before it. The mask is an additive
float tensor, or a boolean one applied as `where(keep, scores, -inf)` (or `where(drop, -inf,
scores)`, with -inf or the dtype's lowest value). A constant mask that is causal (0 on and below a
diagonal, -inf or a value <= -1e9 above it, as Trilu and Where build it) becomes `is_causal`.
Every intermediate must be used by the pattern alone. A query row that the mask blocks entirely
gives zeros in the fused op where the written-out softmax gives NaN.

```
%kt = ascend.graph.transpose %k {perm = array<i64: 0, 1, 3, 2>}
    : (tensor<2x4x8x16xf32>) -> tensor<2x4x16x8xf32>
%s = ascend.graph.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
%d = ascend.graph.div %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
%m = ascend.graph.add %d, %mask : (tensor<2x4x8x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8x8xf32>
%p = ascend.graph.softmax %m {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
%y = ascend.graph.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
```
becomes
```
%y = ascend.graph.attention %q, %k, %v, %mask {scale = 2.500000e-01 : f32, sources = [...]}
    : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xf32>)
    -> tensor<2x4x8x16xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from ge.dialects import graph
from ge.dialects.common import bool_attr, get_int, get_ints, int_attr, ints_attr
from ge.dtypes import numpy_dtype
from ge.weights import WeightStore

from ..driver import RewritesOnly, rewrite
from ..session import CompileSession, current
from .match import (
    constant_values,
    drops_rounding,
    intermediates_private,
    is_tensor,
    replace_pattern,
    scalar,
)

BLOCKING = -1e9
"""A mask value at or below this (or the dtype's lowest) blocks a key as -inf does."""


@dataclass
class _Scores:
    """`matmul(query * a, key_t * b) * c`: the operands, the product of the scales, the ops."""

    query: SSAValue[TensorType]
    key_t: SSAValue[TensorType]
    scale: float
    ops: list[Operation] = field(default_factory=list)


@dataclass
class _Mask:
    """How the scores are masked: `add` a float mask, or select by a boolean one that is true
    where keys are kept (`keep`) or dropped (`drop`)."""

    value: SSAValue[TensorType]
    kind: str
    op: Operation


@dataclass
class FuseScaledDotProductAttention(RewritePattern):
    """`matmul(softmax(mask(scale * matmul(Q, K^T))), V)` is `attention(Q, K, V, mask)`."""

    session: CompileSession
    weights: WeightStore | None
    keep_rounding: bool = True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.MatMulOp) or not isinstance(softmax := op.lhs.owner, graph.SoftmaxOp):
            return
        value, masked = op.rhs, softmax.input
        if not is_tensor(value) or not is_tensor(masked):
            return
        matched = _match_masked_scores(masked, self.weights)
        if matched is None:
            return
        scores, mask = matched
        pattern: list[Operation] = [*scores.ops, *([mask.op] if mask else []), softmax, op]
        key_t_owner = scores.key_t.owner
        transpose = (
            key_t_owner if isinstance(key_t_owner, graph.TransposeOp) and scores.key_t.has_one_use() else None
        )
        if transpose is not None:
            pattern.insert(0, transpose)
        rank = len(masked.type.get_shape())
        props = _properties(scores, mask, masked, self.weights)
        applied = (
            get_int(softmax, "axis", -1) in (-1, rank - 1)
            and _shapes_fit(scores.query, scores.key_t, value)
            and (mask is None or _mask_fits(mask, masked))
            and intermediates_private(pattern, op)
            and not drops_rounding(masked.type.element_type, self.keep_rounding)
            and _inferred(scores, value, mask if "is_causal" not in props else None, props)
            == op.results[0].type
        )
        self.session.record(type(self).__name__, applied, op)
        if not applied:
            return
        new_ops: list[Operation] = []
        operands: list[SSAValue] = [scores.query, _untransposed(scores.key_t, transpose, new_ops), value]
        if mask is not None and "is_causal" not in props:
            if mask.kind == "drop":
                kept = graph.NotOp.build_inferred([mask.value])
                new_ops.append(kept)
                operands.append(kept.results[0])
            else:
                operands.append(mask.value)
        attention = graph.AttentionOp.build_inferred(operands, props)
        new_ops.append(attention)
        replace_pattern(rewriter, pattern, op, new_ops, attention.results[0])


@dataclass(frozen=True)
class FuseAttentionPass(RewritesOnly, ModulePass):
    """Replaces written-out scaled dot-product attention by `ascend.graph.attention`."""

    name = "ge-fuse-attention"

    keep_rounding: bool = True
    """Leave float16 and bfloat16 formulas alone (see `match.drops_rounding`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        session = current()
        pattern = FuseScaledDotProductAttention(session, session.weights, self.keep_rounding)
        rewrite(op, [pattern], session)


# --------------------------------------------------------------------------------------------
# Matching helpers
# --------------------------------------------------------------------------------------------


def _match_masked_scores(
    value: SSAValue[TensorType], weights: WeightStore | None
) -> tuple[_Scores, _Mask | None] | None:
    owner = value.owner
    if isinstance(owner, graph.AddOp):
        for candidate, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            scores = _match_scores(candidate, weights)
            if scores is not None and is_tensor(other):
                return scores, _Mask(other, "add", owner)
    if isinstance(owner, graph.WhereOp):
        condition, if_true, if_false = owner.condition, owner.x, owner.y
        element = value.type.element_type
        for scores_value, fill, kind in ((if_true, if_false, "keep"), (if_false, if_true, "drop")):
            scores = _match_scores(scores_value, weights)
            if scores is not None and is_tensor(condition) and _blocks(scalar(fill, weights), element):
                return scores, _Mask(condition, kind, owner)
        return None
    scores = _match_scores(value, weights)
    return None if scores is None else (scores, None)


def _match_scores(value: SSAValue, weights: WeightStore | None) -> _Scores | None:
    """`matmul(q, k_t)`, optionally times or divided by a constant, with constant factors of its
    operands (used by the product alone) folded into the scale."""
    scale, ops = 1.0, []
    owner = value.owner
    scaling = owner.get_trait(graph.Scales) if isinstance(owner, Operation) else None
    if isinstance(owner, Operation) and scaling is not None:
        lhs, rhs = owner.operands[0], owner.operands[1]
        pairs = [(lhs, rhs)] if scaling.reciprocal else [(lhs, rhs), (rhs, lhs)]
        for product, factor_value in pairs:
            factor = scalar(factor_value, weights)
            if isinstance(product.owner, graph.MatMulOp) and factor:
                scale = 1 / factor if scaling.reciprocal else factor
                ops.append(owner)
                value, owner = product, product.owner
                break
    if not isinstance(owner, graph.MatMulOp):
        return None
    ops.insert(0, owner)
    operands: list[SSAValue[TensorType]] = []
    for operand in (owner.lhs, owner.rhs):
        factor_op = operand.owner
        scaling = factor_op.get_trait(graph.Scales) if isinstance(factor_op, Operation) else None
        if isinstance(factor_op, Operation) and scaling is not None and operand.has_one_use():
            base = factor_op.operands[0]
            factor = scalar(factor_op.operands[1], weights)
            if not scaling.reciprocal and factor is None:
                base, factor = factor_op.operands[1], scalar(factor_op.operands[0], weights)
            if factor and base.type == operand.type:
                scale *= 1 / factor if scaling.reciprocal else factor
                ops.insert(0, factor_op)
                operand = base
        if not is_tensor(operand):
            return None
        operands.append(operand)
    return _Scores(operands[0], operands[1], scale, ops)


def _properties(
    scores: _Scores, mask: _Mask | None, masked: SSAValue[TensorType], weights: WeightStore | None
) -> dict[str, Attribute]:
    """The scale, and `is_causal` when the mask is a constant causal one."""
    props: dict[str, Attribute] = {"scale": graph.float_attr(scores.scale)}
    offset = _causal_offset(mask, masked, weights) if mask is not None else None
    if offset is not None:
        props["is_causal"] = bool_attr(True)
        if offset:
            props["causal_offset"] = int_attr(offset)
    return props


def _inferred(
    scores: _Scores, value: SSAValue[TensorType], mask: _Mask | None, props: dict[str, Attribute]
) -> TensorType | None:
    """The result type of the fused op, or None if its operands do not fit."""
    key_t = scores.key_t.type
    shape = key_t.get_shape()
    key = TensorType(key_t.element_type, (*shape[:-2], shape[-1], shape[-2]))
    types = [scores.query.type, key, value.type]
    if mask is not None:
        types.append(mask.value.type)
    try:
        inferred = graph.AttentionOp.infer(types, props, "'ascend.graph.attention'")
    except ValueError:
        return None
    return inferred if isinstance(inferred, TensorType) else None


def _blocks(number: float | None, element: Attribute) -> bool:
    """Whether adding (or selecting) `number` blocks a key as -inf does."""
    if number is None:
        return False
    return number <= _blocking(element)


def _blocking(element: Attribute) -> float:
    return max(BLOCKING, float(ml_dtypes.finfo(numpy_dtype(element)).min))


def _shapes_fit(query: SSAValue, key_t: SSAValue, value: SSAValue) -> bool:
    """[batch, heads, seq, dim] operands, with one key/value head or one per query head."""
    shapes: list[tuple[int, ...]] = [
        v.type.get_shape() if isinstance(v.type, TensorType) else () for v in (query, key_t, value)
    ]
    if any(len(s) != 4 for s in shapes):
        return False
    (batch, heads, _, _), (k_batch, k_heads, _, _), (v_batch, v_heads, _, _) = shapes
    return batch == k_batch == v_batch and k_heads == v_heads and k_heads in (heads, 1)


def _mask_fits(mask: _Mask, scores: SSAValue[TensorType]) -> bool:
    """The masked scores keep the scores' type (the mask does not broadcast them further)."""
    if mask.op.results[0].type != scores.type:
        return False
    element = mask.value.type.element_type
    return element == i1 if mask.kind != "add" else element == scores.type.element_type


def _untransposed(key_t: SSAValue, absorbed: graph.TransposeOp | None, new_ops: list[Operation]) -> SSAValue:
    """K from K^T (produced by `absorbed` when the fused op absorbs that transpose): its input when
    it swaps the last two axes, else a transpose by the composed permutation."""
    swap = (0, 1, 3, 2)
    source, perm = key_t, swap
    if absorbed is not None:
        source = absorbed.input
        first = get_ints(absorbed, "perm")
        perm = tuple(first[i] for i in swap)
    if perm == (0, 1, 2, 3):
        return source
    transpose = graph.TransposeOp.build_inferred([source], {"perm": ints_attr(perm)})
    new_ops.append(transpose)
    return transpose.results[0]


def _causal_offset(mask: _Mask, scores: SSAValue[TensorType], weights: WeightStore | None) -> int | None:
    """`k` if the mask is a constant that lets query `i` see exactly the keys `j <= i + k`
    (`k >= 0`) and blocks the others, else None."""
    values = constant_values(mask.value, weights)
    q_seq, kv_seq = scores.type.get_shape()[-2:]
    if values is None or values.ndim < 2 or any(d != 1 for d in values.shape[:-2]):
        return None
    if values.shape[-2:] != (q_seq, kv_seq):
        return None
    matrix = values.reshape(q_seq, kv_seq)
    if mask.kind == "add":
        element = mask.value.type.element_type
        allowed = matrix == 0
        if not (allowed | (matrix.astype(np.float64) <= _blocking(element))).all():
            return None
    else:
        allowed = matrix if mask.kind == "keep" else ~matrix
    offset = int(allowed[0].sum()) - 1
    if offset < 0:
        return None
    expected = np.arange(kv_seq)[None, :] <= np.arange(q_seq)[:, None] + offset
    return offset if (allowed == expected).all() else None
