"""`ge-fuse-bias-activation`: a cube op (conv, matmul, gemm) absorbs its single-use elementwise
tail (bias add, residual add, activation, clip) into one fused op whose epilogue region holds
the absorbed ops in the order the graph had them.

ResNet's tail, conv then the residual add then relu:
```
%c = ascend.graph.conv2d %x, %w, %b : (...) -> tensor<1x64x56x56xf32>
%a = ascend.graph.add %c, %skip : (...) -> tensor<1x64x56x56xf32>
%r = ascend.graph.relu %a : (...) -> tensor<1x64x56x56xf32>
```
becomes
```
%r = ascend.graph.fused_conv2d %x, %w, %b, %skip {extras = 1 : i64, sources = [...]} : (...) {
^bb0(%acc: tensor<1x64x56x56xf32>, %s: tensor<1x64x56x56xf32>):
  %0 = ascend.graph.add %acc, %s : (...) -> tensor<1x64x56x56xf32>
  %1 = ascend.graph.relu %0 : (...) -> tensor<1x64x56x56xf32>
  ascend.graph.yield %1 : tensor<1x64x56x56xf32>
}
```
An op is absorbed only when it is the accumulator's one use and keeps its type (an add that
broadcasts the accumulator to a larger shape is not an epilogue).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from ge.dialects import graph

from ..driver import RewritesOnly, rewrite
from ..fusion import source_names
from ..session import CompileSession, current
from .match import is_constant


def _epilogue_step(op: Operation, accumulator: SSAValue) -> SSAValue | None | Literal[False]:
    """False if `op` cannot join the epilogue; else its other operand (None for unary ops)."""
    if op.results[0].type != accumulator.type:
        return False
    epilogue = op.get_trait(graph.Epilogue)
    if epilogue is None:
        return False
    if epilogue.kind is graph.EpilogueKind.UNARY:
        return None
    if epilogue.kind is graph.EpilogueKind.BINARY:
        lhs, rhs = op.operands
        other = rhs if lhs == accumulator else lhs
        if lhs == rhs:
            return False
        if epilogue.constant_operand and not is_constant(other):
            return False
        return other
    return False


@dataclass
class AbsorbElementwiseTail(RewritePattern):
    """Moves the one elementwise consumer of a cube op (or fused op) into its epilogue."""

    session: CompileSession

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, (*graph.FUSED_BY_BASE, graph.FusedOp)):
            return
        result = op.results[0]
        consumer = result.get_user_of_unique_use()
        if consumer is None:
            return
        if consumer.parent is not op.parent or not consumer.has_trait(graph.Epilogue):
            return
        step = _epilogue_step(consumer, result)
        self.session.record("AbsorbElementwiseTail", step is not False, consumer)
        if step is False:
            return
        fused = _with_step(op, consumer, step)
        fused.location = op.location
        fused.attributes["sources"] = source_names([op, consumer])
        rewriter.replace(consumer, fused)
        rewriter.erase(op)


def _with_step(op: Operation, consumer: Operation, other: SSAValue | None) -> graph.FusedOp:
    """A fused op computing `consumer` applied to `op`'s result (and `other`)."""
    if isinstance(op, graph.FusedOp):
        fused_class = type(op)
        base_operands = list(op.base_operands)
        extras = list(op.extra_operands)
        properties = dict(op.properties)
        block = Block(arg_types=[a.type for a in op.epilogue.block.args])
        mapping: dict[SSAValue, SSAValue] = dict(zip(op.epilogue.block.args, block.args, strict=True))
        for inner in op.epilogue.block.ops:
            block.add_op(inner.clone(value_mapper=mapping))
        terminator = block.last_op
        assert terminator is not None  # the verifier ends an epilogue with its yield
        tail = terminator.operands[0]
        block.erase_op(terminator)
    else:
        fused_class = graph.FUSED_BY_BASE[type(op)]
        base_operands = list(op.operands)
        extras = []
        properties = dict(op.properties)
        block = Block(arg_types=[op.results[0].type])
        tail = block.args[0]
    operands = [tail]
    if other is not None:
        extras.append(other)
        argument = block.insert_arg(other.type, len(block.args))
        operands = [tail, argument] if consumer.operands[0] == op.results[0] else [argument, tail]
    step = consumer.clone()
    for index, value in enumerate(operands):
        step.operands[index] = value
    block.add_ops([step, graph.YieldOp(step.results)])
    return fused_class.build_fused(base_operands, properties, extras, Region(block))


@dataclass(frozen=True)
class FuseBiasActivationPass(RewritesOnly, ModulePass):
    """Fuses each cube op with its single-use elementwise tail."""

    name = "ge-fuse-bias-activation"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        session = current()
        rewrite(op, [AbsorbElementwiseTail(session)], session)
