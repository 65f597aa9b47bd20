"""`ge-fuse-layer-norm`: layer norm and RMS norm written out as reductions and elementwise ops
become one `ascend.graph.layer_norm` or `ascend.graph.rms_norm`.

Torch and TF export `LayerNorm` over the last axes as `mean = reduce_mean(x)`, `d = x - mean`,
`var = reduce_mean(d * d)` (or `pow(d, 2)`), `y = d / sqrt(var + eps)` (or `d * reciprocal(sqrt(
var + eps))`), then `y * gamma + beta`; RMSNorm is `x / sqrt(reduce_mean(x * x) + eps) * gamma`
(or with a reciprocal). The reductions must keep their axes, cover the same trailing axes, and
every intermediate must be used by the pattern alone; `gamma` and `beta` must vary along the
normalized axes only. A missing `gamma` becomes a constant of ones.

```
%mean = ascend.graph.reduce_mean %x {axes = array<i64: 2>} : (tensor<2x8x32xf32>) -> tensor<2x8x1xf32>
%d = ascend.graph.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
%sq = ascend.graph.mul %d, %d : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
%var = ascend.graph.reduce_mean %sq {axes = array<i64: 2>} : (tensor<2x8x32xf32>) -> tensor<2x8x1xf32>
%ve = ascend.graph.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
%s = ascend.graph.sqrt %ve : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
%n = ascend.graph.div %d, %s : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
%g = ascend.graph.mul %n, %gamma : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
%y = ascend.graph.add %g, %beta : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
```
becomes
```
%y, %m, %r = ascend.graph.layer_norm %x, %gamma, %beta {axis = 2 : i64, epsilon = 1.0e-05 : f32,
    sources = [...]} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>)
    -> (tensor<2x8x32xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, FloatAttr, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from ge.dialects import graph
from ge.dialects.common import get_flag, get_ints, int_attr
from ge.weights import WeightStore

from ..driver import RewritesOnly, rewrite
from ..session import CompileSession, current
from .match import drops_rounding, intermediates_private, is_tensor, other_operand, replace_pattern, scalar


@dataclass
class _Norm:
    """A matched normalization: `numerator / sqrt(mean(square) + epsilon)` over `axes`."""

    x: SSAValue[TensorType]
    centered: bool
    """Whether the numerator is `x - mean(x)` (layer norm) rather than `x` (RMS norm)."""
    axes: tuple[int, ...]
    epsilon: float
    ops: list[Operation]
    reductions: list[Operation]


@dataclass
class FuseNormalization(RewritePattern):
    """Anchored at the division (or the product with a reciprocal) that normalizes: follows it
    to its scale and shift, and rewrites the pattern into `layer_norm` (`FuseLayerNorm`) or
    `rms_norm` (`FuseRMSNorm`)."""

    session: CompileSession
    weights: WeightStore | None
    keep_rounding: bool = True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        norm = _match_norm(op, self.weights)
        if norm is None:
            return
        element = norm.x.type.element_type
        if not isinstance(element, AnyFloat):  # unreachable: the square root takes floats only
            return
        name = "FuseLayerNorm" if norm.centered else "FuseRMSNorm"
        rank = len(norm.x.type.get_shape())
        trailing = tuple(range(rank - len(norm.axes), rank))
        keeps = all(get_flag(r, "keepdims") for r in norm.reductions)
        tail, gamma, beta = _affine_tail(op, norm, trailing)
        pattern = norm.ops + tail
        root = tail[-1] if tail else op
        applied = (
            norm.axes == trailing
            and bool(norm.axes)
            and keeps
            and norm.epsilon >= 0
            and intermediates_private(pattern, root)
            and root.results[0].type == norm.x.type
            and (gamma is not None or norm.x.type.has_static_shape())
            and not drops_rounding(element, self.keep_rounding)
        )
        self.session.record(name, applied, op)
        if not applied:
            return
        new_ops: list[Operation] = []
        if gamma is None:
            shape = norm.x.type.get_shape()[trailing[0] :]
            ones = graph.ConstOp(FloatAttr(1.0, element), TensorType(element, shape))
            new_ops.append(ones)
            gamma = ones.result
        props = {"axis": int_attr(trailing[0]), "epsilon": graph.float_attr(norm.epsilon)}
        if norm.centered:
            operands = [norm.x, gamma] + ([beta] if beta is not None else [])
            fused = graph.LayerNormOp.build_inferred(operands, props)
        else:
            fused = graph.RMSNormOp.build_inferred([norm.x, gamma], props)
        new_ops.append(fused)
        replace_pattern(rewriter, pattern, root, new_ops, fused.results[0])


@dataclass(frozen=True)
class FuseLayerNormPass(RewritesOnly, ModulePass):
    """Replaces decomposed layer norm and RMS norm by `layer_norm` and `rms_norm`."""

    name = "ge-fuse-layer-norm"

    keep_rounding: bool = True
    """Leave float16 and bfloat16 formulas alone (see `match.drops_rounding`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        session = current()
        pattern = FuseNormalization(session, session.weights, self.keep_rounding)
        rewrite(op, [pattern], session)


# --------------------------------------------------------------------------------------------
# Matching helpers
# --------------------------------------------------------------------------------------------


def _match_norm(op: Operation, weights: WeightStore | None) -> _Norm | None:
    """`numerator / sqrt(reduce_mean(numerator^2) + eps)`, or `numerator * reciprocal(...)`."""
    ops: list[Operation]
    if isinstance(op, graph.DivOp):
        numerator, root = op.operands
        ops = [op]
    elif isinstance(op, graph.MulOp):
        numerator, reciprocal = op.operands
        if not isinstance(reciprocal.owner, graph.ReciprocalOp):
            numerator, reciprocal = reciprocal, numerator
        if not isinstance(reciprocal.owner, graph.ReciprocalOp):
            return None
        root = reciprocal.owner.operands[0]
        ops = [op, reciprocal.owner]
    else:
        return None
    sqrt = root.owner
    if not isinstance(sqrt, graph.SqrtOp) or not isinstance(sqrt.operands[0].owner, graph.AddOp):
        return None
    add = sqrt.operands[0].owner
    for variance, other in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        if isinstance(variance.owner, graph.ReduceMeanOp):
            epsilon = scalar(other, weights)
            break
    else:
        return None
    square = variance.owner.input.owner
    if epsilon is None or not isinstance(square, Operation) or _squared(square, weights) is not numerator:
        return None
    ops += [sqrt, add, variance.owner, square]
    axes = _axes(variance.owner)
    reductions: list[Operation] = [variance.owner]
    centered = numerator.owner
    x = numerator
    if isinstance(centered, graph.SubOp) and isinstance(centered.operands[1].owner, graph.ReduceMeanOp):
        mean = centered.operands[1].owner
        if mean.operands[0] is centered.operands[0] and _axes(mean) == axes:
            x = centered.operands[0]
            ops += [centered, mean]
            reductions.append(mean)
    if not is_tensor(x):
        return None
    return _Norm(x, x is not numerator, axes, epsilon, ops, reductions)


def _squared(op: Operation | None, weights: WeightStore | None) -> SSAValue | None:
    """`b` if `op` is `b * b` or `pow(b, 2)`."""
    if isinstance(op, graph.MulOp) and op.operands[0] is op.operands[1]:
        return op.operands[0]
    if isinstance(op, graph.PowOp) and scalar(op.operands[1], weights) == 2:
        return op.operands[0]
    return None


def _axes(reduction: graph.ReduceMeanOp) -> tuple[int, ...]:
    input_type = reduction.input.type
    assert isinstance(input_type, TensorType)  # the verifier holds a reduction's input to a tensor
    rank = len(input_type.get_shape())
    return tuple(sorted(a + rank if a < 0 else a for a in get_ints(reduction, "axes")))


def _affine_tail(
    op: Operation, norm: _Norm, trailing: tuple[int, ...]
) -> tuple[list[Operation], SSAValue | None, SSAValue | None]:
    """The ops of `* gamma + beta` after the normalizing `op` (each optional; beta for layer
    norm only) and the parameters, which must vary along the normalized axes alone."""
    tail: list[Operation] = []
    parameters: list[SSAValue | None] = []
    last = op
    for kind, wanted in ((graph.MulOp, True), (graph.AddOp, norm.centered)):
        user = _single_user(last.results[0])
        other = other_operand(user, last.results[0]) if isinstance(user, kind) and wanted else None
        if user is not None and other is not None and _is_parameter(other, norm, trailing):
            tail.append(user)
            last = user
        else:
            other = None
        parameters.append(other)
    return tail, parameters[0], parameters[1]


def _single_user(value: SSAValue) -> Operation | None:
    return value.get_user_of_unique_use() if value.has_one_use() else None


def _is_parameter(value: SSAValue, norm: _Norm, trailing: tuple[int, ...]) -> bool:
    if not isinstance(value.type, TensorType) or value.type.element_type != norm.x.type.element_type:
        return False
    shape = value.type.get_shape()
    rank = len(norm.x.type.get_shape())
    return len(shape) <= rank and all(d == 1 for d in shape[: len(shape) - len(trailing)])
