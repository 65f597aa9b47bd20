"""Deliberately wrong passes and patterns, for the tests of the numeric checks and of bisection,
and the small graphs they break."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseResourceAttr, IntegerAttr, ModuleOp, NameLoc, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import Rewriter

import ge
from ge.dialects.graph import AddOp, ConstOp, ReluOp, SubOp
from ge.dialects.stream import BufferOp, LaunchOp, WeightOp
from ge.passes.driver import rewrite
from ge.passes.session import current
from ge.semantics import constant_array


class AddIntoSub(RewritePattern):
    """Wrong: `a + b` becomes `a - b` (right only where b is zero)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        sub = SubOp.build_inferred([op.lhs, op.rhs])
        sub.location = op.location
        rewriter.replace(op, sub)


class DropRelu(RewritePattern):
    """Wrong: `relu(x)` becomes `x` (right only where x is not negative)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReluOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, [], [op.operands[0]])


@dataclass(frozen=True)
class AddIntoSubPass(ModulePass):
    name = "test-add-into-sub"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite(op, [AddIntoSub()], current())


@dataclass(frozen=True)
class DropReluPass(ModulePass):
    """At any level: the walker reaches the relus in kernel bodies too."""

    name = "test-drop-relu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite(op, [DropRelu()], current())


@dataclass(frozen=True)
class ScaleConstantPass(ModulePass):
    """Wrong, with no pattern: the constant at loc(`node`) is replaced by twice its value."""

    name = "test-scale-constant"
    node: str = "c2"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        weights = current().weights
        for const in list(op.walk()):
            loc = const.location
            if isinstance(const, ConstOp) and isinstance(loc, NameLoc) and loc.desc.data == self.node:
                t = const.result.type
                key = weights.add(2 * constant_array(const.value, t, weights), self.node)
                scaled = ConstOp(DenseResourceAttr.from_params(key, t), t)
                scaled.location = const.location
                Rewriter.replace_op(const, scaled)


@dataclass(frozen=True)
class ScaleWeightPass(ModulePass):
    """Wrong, and invisible in the IR: the weight behind `dense_resource<key>` is doubled."""

    name = "test-scale-weight"
    key: str = "fc1.weight"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        weights = current().weights
        weights.put(self.key, 2 * weights.get(self.key))


@dataclass(frozen=True)
class OverlapBuffersPass(ModulePass):
    """Wrong, at the stream level: every arena buffer is placed at offset 0 (which the model's
    verifier refuses: buffers live at once share bytes)."""

    name = "test-overlap-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for buffer in op.walk():
            if isinstance(buffer, BufferOp) and not buffer.bound:
                buffer.offset = IntegerAttr(0, i64)


@dataclass(frozen=True)
class SwapWeightsPass(ModulePass):
    """Wrong, at the stream level, in a model that still verifies: the first two launches that
    read weights of one type read each other's."""

    name = "test-swap-weights"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        seen: dict[Attribute, tuple[LaunchOp, int]] = {}
        for launch in op.walk():
            if not isinstance(launch, LaunchOp):
                continue
            for index, value in enumerate(launch.inputs):
                if not isinstance(value.owner, WeightOp):
                    continue
                if value.type not in seen:
                    seen[value.type] = (launch, index)
                    continue
                other, other_index = seen[value.type]
                swapped = other.inputs[other_index]
                _set_operand(other, other_index, value)
                _set_operand(launch, index, swapped)
                return


def _set_operand(op: Operation, index: int, value: SSAValue) -> None:
    operands = list(op.operands)
    operands[index] = value
    op.operands = operands


def adds(count: int = 5, nonzero: int = 2) -> ge.Graph:
    """`y = x + c0 + c1 + ...` where only `c<nonzero>` is not zero, each add at loc("add_<i>")."""
    g = ge.Graph()
    y = g.add_input("x", [4])
    for i in range(count):
        c = g.add_constant(np.full(4, 0.5 if i == nonzero else 0.0, np.float32), name=f"c{i}")
        y = g.add_add(y, c, name=f"add_{i}")
    g.add_output(y, "y")
    return g
