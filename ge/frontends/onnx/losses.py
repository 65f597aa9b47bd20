"""Converters of the loss operators, NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

Both decompose into graph ops that fuse and run like any graph: log_softmax (for the cross
entropy), gather_elements of each position's target class, gather of the class weights, where
for `ignore_index`, and reduce_sum / reduce_mean / div for the reduction. With weights or an
ignored index, the mean divides by the sum of the weights applied, as ONNX defines it.

```
loss[n, d...] = -input[n, target[n, d...], d...] * weight[target[n, d...]]   (0 where ignored)
```
"""

from __future__ import annotations

from ge.dialects import graph as ops
from ge.dialects.common import int_attr
from ge.graph import Tensor

from .composite import Composer
from .importer import Converter, Importer, Node

REDUCTIONS = ("none", "sum", "mean")


def _negative_log_likelihood_loss(imp: Importer, node: Node) -> list[Tensor]:
    """The input holds log-probabilities (N, C, d1, ...); the target class indices (N, d1, ...)."""
    c = Composer(imp, node)
    weight = node.optional_input(2)
    return [weighted_loss(c, c.input(0, "input"), c.input(1, "target"), weight)]


def _softmax_cross_entropy_loss(imp: Importer, node: Node) -> list[Tensor]:
    """The negative log-likelihood of log_softmax over the classes (axis 1), which is the
    second, optional output."""
    c = Composer(imp, node)
    scores = c.input(0, "scores")
    log_prob = c.op(ops.LogSoftmaxOp, [scores], "log_prob", {"axis": int_attr(1)})
    weights = node.optional_input(2)
    return [weighted_loss(c, log_prob, c.input(1, "labels"), weights), log_prob]


def weighted_loss(c: Composer, log_prob: Tensor, target: Tensor, weight: Tensor | None) -> Tensor:
    """The negative log-likelihood of `target` under `log_prob`, weighted, ignoring the node's
    `ignore_index`, reduced as its `reduction` says."""
    node = c.node
    reduction = str(node.attr("reduction", "mean"))
    if reduction not in REDUCTIONS:
        raise node.invalid(f"unknown reduction '{reduction}' (known: {', '.join(REDUCTIONS)})")
    rank = len(log_prob.shape)
    if rank < 2 or len(target.shape) != rank - 1:
        raise node.invalid(
            f"an input of shape {list(log_prob.shape)} needs a target of rank {rank - 1}, "
            f"got {list(target.shape)}"
        )
    expected = [log_prob.shape[0], *log_prob.shape[2:]]
    if not all(a == b or -1 in (a, b) for a, b in zip(target.shape, expected, strict=True)):
        given = list(target.shape)
        raise node.invalid(
            f"an input of shape {list(log_prob.shape)} needs a target of shape {expected}, got {given}"
        )
    if target.dtype not in ("int32", "int64"):
        raise node.invalid(f"the target must hold int32 or int64 class indices, got {target.dtype}")
    dtype = log_prob.dtype
    ignore_index = node.attr("ignore_index")
    ignored = None
    if ignore_index is not None:
        mark = c.scalar(int(ignore_index), target.dtype, "ignore_index")
        ignored = c.op(ops.EqualOp, [target, mark], "ignored")
        # An ignored position may hold any index, even one outside [0, C): read class 0 there.
        target = c.op(ops.WhereOp, [ignored, c.scalar(0, target.dtype, "zero_index"), target], "target")
    shape = list(target.shape)
    indices = c.reshape(target, [shape[0], 1, *shape[1:]], "indices")
    picked = c.op(ops.GatherElementsOp, [log_prob, indices], "picked", {"axis": int_attr(1)})
    loss = c.op(ops.NegOp, [c.reshape(picked, shape, "picked_flat")], "negated")
    applied = None
    if weight is not None:
        if weight.dtype != dtype or len(weight.shape) != 1:
            raise node.invalid(
                f"the weights must be a 1-D {dtype} tensor, got {weight.dtype} {list(weight.shape)}"
            )
        applied = c.op(ops.GatherOp, [weight, target], "class_weight", {"axis": int_attr(0)})
        loss = c.op(ops.MulOp, [loss, applied], "weighted")
    if ignored is not None:
        zero = c.scalar(0, dtype, "zero")
        kept = applied if applied is not None else c.scalar(1, dtype, "one")
        applied = c.op(ops.WhereOp, [ignored, zero, kept], "applied_weight")
        loss = c.op(ops.WhereOp, [ignored, zero, loss], "kept")
    axes = list(range(len(shape)))
    if reduction == "none":
        return loss
    if reduction == "sum":
        return c.reduce(ops.ReduceSumOp, loss, axes, "")
    if applied is None:
        return c.reduce(ops.ReduceMeanOp, loss, axes, "")
    total = c.reduce(ops.ReduceSumOp, loss, axes, "sum")
    weight_sum = c.reduce(ops.ReduceSumOp, applied, axes, "weight_sum")
    return c.op(ops.DivOp, [total, weight_sum], "")


CONVERTERS: dict[str, Converter] = {
    "NegativeLogLikelihoodLoss": _negative_log_likelihood_loss,
    "SoftmaxCrossEntropyLoss": _softmax_cross_entropy_loss,
}
