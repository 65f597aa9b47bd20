"""`ge-simplify`: removes ops that compute nothing and collapses chains of data movement.

Each rewrite keeps every bit of every result:
- a reshape, transpose, flatten, expand or cast whose result type is its operand's type, and a
  transpose by the identity permutation, is its operand; so is a double negation;
- reshape (or flatten) of a reshape (or flatten) is one reshape; transpose of a transpose is one
  transpose by the composed permutation (nothing, when they cancel);
- a cast of a cast is one cast when the first one loses nothing (a widening);
- `x * 1`, `x / 1`, `x + 0` and `x - 0` are `x` when the constant does not broadcast `x` to a
  larger shape or another type (for floats, `x + 0` keeps `x` only for `-0.0`, and `x - 0` only
  for `+0.0`, since `-0.0 + 0.0` is `+0.0`).

```
%1 = ascend.graph.transpose %0 {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
%2 = ascend.graph.transpose %1 {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
```
becomes `%0`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ge.dialects import graph
from ge.dialects.common import get_ints, ints_attr
from ge.dtypes import tensor_type

from ..driver import RewritesOnly, rewrite
from ..session import current


class RemoveNoOpDataMovement(RewritePattern):
    """A reshape, flatten, transpose, expand or cast that changes nothing is its operand."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.has_trait(graph.NoOpWhenTypeKept):
            return
        source = op.operands[0]
        if source.type != op.results[0].type:
            return
        if isinstance(op, graph.TransposeOp) and list(get_ints(op, "perm")) != sorted(get_ints(op, "perm")):
            return
        rewriter.replace(op, [], [source])


class CollapseReshapeChain(RewritePattern):
    """reshape(reshape(x)) is reshape(x); flatten is a reshape here too."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.has_trait(graph.IsView):
            return
        inner = op.operands[0].owner
        if not isinstance(inner, Operation) or not inner.has_trait(graph.IsView):
            return
        shape = tensor_type(op.results[0]).get_shape()
        if any(d < 0 for d in shape):
            return
        new = graph.ReshapeOp(inner.operands[0], shape)
        new.location = op.location
        rewriter.replace(op, new)


@dataclass
class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) is transpose(x, p[q]); nothing when that is the identity."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, graph.TransposeOp):
            return
        first, second = get_ints(inner, "perm"), get_ints(op, "perm")
        composed = [first[i] for i in second]
        if composed == list(range(len(composed))):
            rewriter.replace(op, [], [inner.input])
            return
        new = graph.TransposeOp.build_inferred([inner.input], {"perm": ints_attr(composed)})
        new.location = op.location
        rewriter.replace(op, new)


class CollapseWideningCast(RewritePattern):
    """cast(cast(x)) is one cast when the inner cast widens (loses nothing)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.CastOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, graph.CastOp) or not isinstance(source := inner.input.type, TensorType):
            return
        if not _widens(source.element_type, inner.result.type.element_type):
            return
        if inner.input.type == op.result.type:
            rewriter.replace(op, [], [inner.input])
            return
        new = graph.CastOp(inner.input, op.result.type.element_type)
        new.properties.update(op.properties)  # the outer cast's saturate and round_mode
        new.location = op.location
        rewriter.replace(op, new)


class RemoveDoubleNegation(RewritePattern):
    """`-(-x)` is `x`, and so is `not(not x)`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.has_trait(graph.Involution):
            return
        inner = op.operands[0].owner
        if not isinstance(inner, Operation) or type(inner) is not type(op):
            return
        if inner.operands[0].type == op.results[0].type:
            rewriter.replace(op, [], [inner.operands[0]])


class RemoveNeutralOperand(RewritePattern):
    """`x * 1`, `x / 1`, `x + 0`, `x - 0` are `x` (see the module docstring for float zeros)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        scales, shifts = op.get_trait(graph.Scales), op.get_trait(graph.Shifts)
        if scales is None and shifts is None:
            return
        candidates = [(op.operands[0], op.operands[1])]
        if (scales is not None and not scales.reciprocal) or (shifts is not None and not shifts.negated):
            candidates.append((op.operands[1], op.operands[0]))
        for x, other in candidates:
            if x.type != op.results[0].type:
                continue
            value = _splat(other)
            if value is not None and _is_neutral(op, value):
                rewriter.replace(op, [], [x])
                return


def _splat(value: SSAValue) -> FloatAttr | IntegerAttr | None:
    owner = value.owner
    if isinstance(owner, graph.ConstOp) and isinstance(owner.value, FloatAttr | IntegerAttr):
        return owner.value
    return None


def _is_neutral(op: Operation, value: FloatAttr | IntegerAttr) -> bool:
    number = value.value.data
    if op.has_trait(graph.Scales):
        return number == 1
    if number != 0:
        return False
    if isinstance(value, IntegerAttr):
        return True
    # x + (-0) and x - (+0) keep x's sign of zero; x + (+0) and x - (-0) turn -0 into +0.
    negative_zero = math.copysign(1.0, number) < 0
    shifts = op.get_trait(graph.Shifts)
    return negative_zero if shifts is not None and not shifts.negated else not negative_zero


def _widens(source: Attribute, target: Attribute) -> bool:
    """Whether every value of `source` converts to `target` and back unchanged."""
    if source == target:
        return True
    floats = ("bf16", "f16", "f32", "f64")
    s, t = str(source), str(target)
    if s in floats and t in floats:
        return (s, t) in {("f16", "f32"), ("f16", "f64"), ("bf16", "f32"), ("bf16", "f64"), ("f32", "f64")}
    if isinstance(source, IntegerType) and isinstance(target, IntegerType):
        sw, tw = source.width.data, target.width.data
        s_unsigned = source.signedness.data.name == "UNSIGNED" or sw == 1
        t_unsigned = target.signedness.data.name == "UNSIGNED"
        if s_unsigned == t_unsigned:
            return tw >= sw
        return s_unsigned and not t_unsigned and tw > sw
    if isinstance(source, IntegerType) and t in floats:
        mantissa = {"bf16": 8, "f16": 11, "f32": 24, "f64": 53}[t]
        return source.width.data <= mantissa
    return False


@dataclass(frozen=True)
class SimplifyPass(RewritesOnly, ModulePass):
    """Removes no-op ops and collapses reshape, transpose and cast chains."""

    name = "ge-simplify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [
            RemoveNoOpDataMovement(),
            CollapseReshapeChain(),
            ComposeTransposes(),
            CollapseWideningCast(),
            RemoveNeutralOperand(),
            RemoveDoubleNegation(),
        ]
        rewrite(op, patterns, current())
