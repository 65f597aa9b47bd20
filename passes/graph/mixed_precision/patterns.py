"""The patterns of `ge-mixed-precision`: `AssignComputeType` rebuilds an op in the compute type
the analysis gave it, on operands cast in (constants converted at compile time) and followed by
casts back to its old result types; `CancelInsertedCastPair` then removes the cast pairs this
pass put back to back, so casts remain only at precision boundaries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    RankedStructure,
    TensorType,
    bf16,
    f16,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ge.dialects import graph
from ge.dtypes import numpy_dtype
from ge.errors import InvalidModelError
from ge.semantics import constant_array
from ge.weights import WeightStore

from .analysis import element_type_of, fused_op_types


@dataclass
class AssignComputeType(RewritePattern):
    """Rebuilds an op in the compute type `ComputeTypeAnalysis` gave it, on its operands of a
    source type cast in (constants converted) and followed by casts back to its old result types."""

    compute_types: Mapping[Operation, Attribute | None]
    sources: tuple[Attribute, ...]
    weights: WeightStore
    inserted: set[Operation]
    """The casts this pass created (CancelInsertedCastPair removes back-to-back ones)."""
    converted: dict[tuple[SSAValue, Attribute], SSAValue] = field(default_factory=dict)
    """Each value already available in another type: casts and constants are made once."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        target = self.compute_types.get(op)
        if target is None:
            return
        operands = [
            self.as_target(v, target, op, rewriter) if element_type_of(v) in self.sources else v
            for v in op.operands
        ]
        new = _rebuild(op, operands)
        results: list[SSAValue] = []
        casts_out: list[Operation] = []
        for old, result in zip(op.results, new.results, strict=True):
            result.name_hint = old.name_hint
            if old.type != result.type and old.uses and isinstance(old.type, TensorType):
                cast = graph.CastOp(result, old.type.element_type)
                self.inserted.add(cast)
                casts_out.append(cast)
                result = cast.result
            results.append(result)
        rewriter.replace(op, [new, *casts_out], results)

    def as_target(
        self, value: SSAValue, target: Attribute, user: Operation, rewriter: PatternRewriter
    ) -> SSAValue:
        """`value` in `target`: a converted constant, or a cast placed before its first user (the
        walker visits ops in block order)."""
        key = (value, target)
        if key not in self.converted:
            owner = value.owner
            const = None
            if isinstance(owner, graph.ConstOp):
                const = _converted_constant(owner, target, self.weights)
            if const is not None and isinstance(owner, graph.ConstOp):
                rewriter.insert(const, InsertPoint.after(owner))
                const.result.name_hint = value.name_hint
                self.converted[key] = const.result
            else:
                cast = rewriter.insert(graph.CastOp(value, target), InsertPoint.before(user))
                self.inserted.add(cast)
                self.converted[key] = cast.result
        return self.converted[key]


@dataclass
class CancelInsertedCastPair(RewritePattern):
    """`cast(cast(x))` is `x` when the outer cast returns to `x`'s type and this pass inserted
    both casts (or the inner one only widens, which loses nothing)."""

    inserted: set[Operation]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.CastOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if op not in self.inserted or not isinstance(inner, graph.CastOp):
            return
        if inner.input.type != op.result.type:
            return
        widens = element_type_of(inner.input) in (f16, bf16) and element_type_of(inner.result) == f32
        if inner not in self.inserted and not widens:
            return
        rewriter.replace(op, [], [inner.input])
        if not inner.result.uses:
            rewriter.erase(inner)


def _rebuild(op: Operation, operands: list[SSAValue]) -> Operation:
    """`op` on new operands, its result types inferred again (an epilogue's ops too)."""
    if isinstance(op, graph.ReshapeOp):
        new = graph.ReshapeOp(operands[0], op.result.type.get_shape())
    elif isinstance(op, graph.FusedOp):
        count = len(op.base_operands)
        block = op.epilogue.block
        accumulator, _ = fused_op_types(op, [v.type for v in operands])
        epilogue = Block(arg_types=[accumulator, *(v.type for v in operands[count:])])
        values: dict[SSAValue, SSAValue] = dict(zip(block.args, epilogue.args, strict=True))
        for inner in block.ops:
            args = [values[v] for v in inner.operands]
            copy = graph.YieldOp(args) if isinstance(inner, graph.YieldOp) else _rebuild(inner, args)
            epilogue.add_op(copy)
            values.update(zip(inner.results, copy.results, strict=True))
        new = type(op).build_fused(operands[:count], op.properties, operands[count:], Region(epilogue))
    elif isinstance(op, graph.GraphOp):
        new = type(op).build_inferred(operands, dict(op.properties))
    else:
        raise ValueError(f"'{op.name}' is not a graph op")
    new.attributes.update(op.attributes)
    new.location = op.location
    return new


def _converted_constant(
    const: graph.ConstOp, element: Attribute, weights: WeightStore
) -> graph.ConstOp | None:
    """`const` converted to `element` now, or None when its weights are not at hand."""
    t = TensorType(element, const.result.type.get_shape())
    dtype = numpy_dtype(element)
    with np.errstate(over="ignore"):  # values beyond fp16's range become inf, as a cast makes them
        if isinstance(const.value, FloatAttr):
            number = float(np.asarray(const.value.value.data).astype(dtype))
            value: Attribute = FloatAttr(number, cast(AnyFloat, element))
        elif isinstance(const.value, DenseIntOrFPElementsAttr):  # small: it stays inline
            stored = numpy_dtype(const.result.type.element_type)
            array = np.frombuffer(const.value.data.data, stored).astype(dtype)
            value = DenseIntOrFPElementsAttr(cast(RankedStructure[AnyFloat], t), BytesAttr(array.tobytes()))
        elif isinstance(const.value, DenseResourceAttr):
            try:
                array = constant_array(const.value, const.result.type, weights).astype(dtype)
            except InvalidModelError:
                return None
            key = weights.add(array, f"{const.value.resource_handle.data}.{dtype.name}")
            value = DenseResourceAttr.from_params(key, t)
        else:
            return None
    new = graph.ConstOp(value, t)
    new.location = const.location
    return new
