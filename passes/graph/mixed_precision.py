"""`ge-mixed-precision{mode=...}`: runs graph ops in fp16, bf16 or fp32 by GE's precision modes.

An analysis first gives each float op a compute type from the mode, the op lists below and its
producers' compute types (`ComputeTypeAnalysis`). Then patterns rewrite: an op that changes type
is rebuilt on operands cast to that type and followed by casts back to its old result types; then
the cast pairs this pass put back to back cancel, so casts remain only at precision boundaries.
Constants are converted at compile time; graph inputs and outputs keep their declared types.

```
%y = ascend.graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
%r = ascend.graph.relu %y : (tensor<4x2xf32>) -> tensor<4x2xf32>
%z = ascend.graph.softmax %r {axis = -1 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
```
becomes, under `allow_mix_precision` (matmul and relu are white-listed, softmax black-listed),
```
%w16 = ascend.graph.const dense_resource<w.float16> : tensor<8x2xf16>
%x16 = ascend.graph.cast %x : (tensor<4x8xf32>) -> tensor<4x8xf16>
%y16 = ascend.graph.matmul %x16, %w16 : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
%r16 = ascend.graph.relu %y16 : (tensor<4x2xf16>) -> tensor<4x2xf16>
%r = ascend.graph.cast %r16 : (tensor<4x2xf16>) -> tensor<4x2xf32>
%z = ascend.graph.softmax %r {axis = -1 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, auto
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    ModuleOp,
    NameLoc,
    RankedStructure,
    StringAttr,
    TensorType,
    bf16,
    f16,
    f32,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator

from ge.dialects import graph
from ge.dtypes import numpy_dtype
from ge.errors import CompileError, InvalidModelError
from ge.semantics import constant_array
from ge.weights import WeightStore

from ..driver import rewrite
from ..fusion import SOURCES
from ..session import current

MODES: dict[str, tuple[Attribute, tuple[Attribute, ...]] | None] = {
    "must_keep_origin_dtype": None,
    "force_fp16": (f16, (f32, bf16)),
    "force_fp32": (f32, (f16, bf16)),
    "allow_fp32_to_fp16": (f16, (f32,)),
    "allow_mix_precision": (f16, (f32,)),
    "allow_mix_precision_bf16": (bf16, (f32,)),
}
"""Per mode: the compute type ops may move to, and the element types they may move from."""


class PrecisionClass(Enum):
    """What an op is to the precision modes: which of GE's op lists holds it."""

    MATRIX_PRODUCT = auto()
    """A matrix product (`graph.matrix_product`): moved by every mode that narrows,
    `allow_fp32_to_fp16` included."""
    PREFERS_LOW_PRECISION = auto()
    """White-listed: runs in the low-precision type whenever it is fp32."""
    KEEPS_PRECISION = auto()
    """Black-listed: keeps its type under `allow_mix_precision`."""
    GRAY = auto()
    """Follows its producers under `allow_mix_precision`."""
    NEEDS_AI_CPU = auto()
    """Gray, and left alone by `force_fp16` (an AI CPU op has no cube or vector time to save)."""
    COMPUTES_NOTHING = auto()
    """Never retyped (constants, casts, shapes)."""


@dataclass(frozen=True)
class ComputeTypeAnalysis:
    """A forward dataflow analysis: the type each op of a module computes in under a precision mode.

    One pass over each function's body in block order, which is topological in a graph region,
    so an op's producers are decided before it. An op moves to the mode's compute type when it has
    an operand of a type the mode moves from, the mode moves its class (`PrecisionClass`), no
    keep-list names it and its shape inference takes the compute type. A gray op moves when every
    such operand it computes on (constants aside) is a result its producer yields in the compute
    type. Ops in nested regions (a fused op's epilogue) get no decision: they move with the op
    that holds them. Linear in the number of ops.
    """

    mode: str
    keep_op_types: frozenset[str] = frozenset()
    keep_nodes: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise CompileError(f"ge-mixed-precision: unknown mode '{self.mode}' (known: {', '.join(MODES)})")

    def run(self, module: ModuleOp) -> dict[Operation, Attribute | None]:
        """Each op of each function's body: the type it computes in, or None if it keeps its own."""
        decided: dict[Operation, Attribute | None] = {}
        types = MODES[self.mode]
        lowered: set[SSAValue] = set()
        """Results whose producer moved and yields them in the compute type."""
        for function in module.walk():
            if not isinstance(function, FuncOp):
                continue
            for block in function.body.blocks:
                for op in block.ops:
                    decided[op] = None if types is None else self.decide(op, *types, lowered)
        return decided

    def decide(
        self, op: Operation, target: Attribute, sources: tuple[Attribute, ...], lowered: set[SSAValue]
    ) -> Attribute | None:
        """`target` if `op` moves to it, else None; records the results it then yields in `target`."""
        # Constants and casts compute nothing (below); a terminator is no graph computation.
        if not op.name.startswith("ascend.graph.") or op.has_trait(IsTerminator):
            return None
        precision = _precision_class(op)
        floats = [v for v in op.operands if _element(v) in sources]
        if precision is PrecisionClass.COMPUTES_NOTHING or not floats or self.kept(op):
            return None
        if not self.moves(precision, floats, lowered):
            return None
        operand_types = [
            TensorType(target, v.type.get_shape())
            if isinstance(v.type, TensorType) and v.type.element_type in sources
            else v.type
            for v in op.operands
        ]
        try:
            result_types = _result_types(op, operand_types)
        except ValueError:
            return None  # the op's shape inference rejects the compute type: it keeps its type
        for result, new in zip(op.results, result_types, strict=True):
            if result.type != new and isinstance(new, TensorType) and new.element_type == target:
                lowered.add(result)
        return target

    def moves(self, precision: PrecisionClass, floats: list[SSAValue], lowered: set[SSAValue]) -> bool:
        """Whether the mode moves an op of this class whose `floats` operands have a source type."""
        if self.mode == "force_fp16":
            return precision is not PrecisionClass.NEEDS_AI_CPU
        if self.mode == "force_fp32":
            return True
        if self.mode == "allow_fp32_to_fp16":
            return precision is PrecisionClass.MATRIX_PRODUCT
        if precision in (PrecisionClass.MATRIX_PRODUCT, PrecisionClass.PREFERS_LOW_PRECISION):
            return True
        if precision is PrecisionClass.KEEPS_PRECISION:
            return False
        computed = [v for v in floats if not isinstance(v.owner, graph.ConstOp)]
        return bool(computed) and all(v in lowered for v in computed)

    def kept(self, op: Operation) -> bool:
        """Whether a keep-list names the op; a fused op by any op or node it was fused from."""
        types = {op.name}
        names = {_node_name(op)}
        sources = op.attributes.get(SOURCES)
        if isinstance(sources, ArrayAttr):
            names.update(s.data for s in sources.data if isinstance(s, StringAttr))
        if isinstance(op, graph.FusedOp):
            types.update([op.BASE.name, *(inner.name for inner in op.epilogue.block.ops)])
        types = {t.removeprefix("ascend.graph.") for t in types}
        return bool(types & self.keep_op_types or names & self.keep_nodes)


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
            self.as_target(v, target, op, rewriter) if _element(v) in self.sources else v for v in op.operands
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
        widens = _element(inner.input) in (f16, bf16) and _element(inner.result) == f32
        if inner not in self.inserted and not widens:
            return
        rewriter.replace(op, [], [inner.input])
        if not inner.result.uses:
            rewriter.erase(inner)


@dataclass(frozen=True)
class MixedPrecisionPass(ModulePass):
    """Moves graph ops to fp16, bf16 or fp32 as a GE precision mode says."""

    name = "ge-mixed-precision"

    mode: str = "must_keep_origin_dtype"
    """One of GE's precision modes (see `MODES`)."""

    keep_op_types: tuple[str, ...] = ()
    """Op types (`softmax`, `layer_norm`, ...) that keep their dtype whatever the mode."""

    keep_nodes: tuple[str, ...] = ()
    """Node names (op locations, as `ge.Graph` and the frontends set them) that keep their dtype."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        analysis = ComputeTypeAnalysis(self.mode, frozenset(self.keep_op_types), frozenset(self.keep_nodes))
        known = {o.name.removeprefix("ascend.graph.") for o in graph.GRAPH_OPS}
        unknown = sorted(set(self.keep_op_types) - known)
        if unknown:
            raise CompileError(
                f"ge-mixed-precision: keep-op-types names unknown op types: {', '.join(unknown)}"
            )
        types = MODES[self.mode]
        if types is None:
            return
        compute_types = analysis.run(op)
        session = current()
        inserted: set[Operation] = set()
        assign = AssignComputeType(compute_types, types[1], session.weights, inserted)
        rewrite(op, [assign], session, apply_recursively=False)
        rewrite(op, [CancelInsertedCastPair(inserted)], session)
        for value, _ in assign.converted:
            if isinstance(value.owner, graph.ConstOp) and not value.uses:
                Rewriter.erase_op(value.owner)


def _precision_class(op: Operation) -> PrecisionClass:
    """The op's class under GE's precision lists, from its traits (the order decides an op that
    carries two: cube ops also prefer low precision)."""
    if op.has_trait(graph.ComputesNothing):
        return PrecisionClass.COMPUTES_NOTHING
    if graph.matrix_product(op) is not None:
        return PrecisionClass.MATRIX_PRODUCT
    if op.has_trait(graph.PrefersLowPrecision):
        return PrecisionClass.PREFERS_LOW_PRECISION
    if op.has_trait(graph.KeepsPrecision):
        return PrecisionClass.KEEPS_PRECISION
    if op.has_trait(graph.NeedsAiCpu):
        return PrecisionClass.NEEDS_AI_CPU
    return PrecisionClass.GRAY


def _element(value: SSAValue) -> Attribute | None:
    return value.type.element_type if isinstance(value.type, TensorType) else None


def _node_name(op: Operation) -> str | None:
    return op.location.desc.data if isinstance(op.location, NameLoc) else None


def _result_types(op: Operation, operand_types: Sequence[Attribute]) -> list[Attribute]:
    """The result types `op` would have on operands of these types; ValueError if it rejects them."""
    if isinstance(op, graph.ReshapeOp):
        return [TensorType(_tensor(operand_types[0]).element_type, op.result.type.get_shape())]
    if isinstance(op, graph.FusedOp):
        return _fused_op_types(op, operand_types)[1]
    if not isinstance(op, graph.GraphOp):
        raise ValueError(f"'{op.name}' is not a graph op")
    inferred = op.infer([_tensor(t) for t in operand_types], op.properties, op.name)
    return list(inferred) if isinstance(inferred, list) else [inferred]


def _fused_op_types(
    op: graph.FusedOp, operand_types: Sequence[Attribute]
) -> tuple[Attribute, list[Attribute]]:
    """The accumulator type and the result types of fused `op` on operands of these types (the
    dialect's one fused-op inference, each epilogue op inferred as `_result_types` does);
    ValueError if any op rejects them."""
    tensors = [_tensor(t) for t in operand_types]
    types = graph.infer_fused_types(op, tensors, _result_types)
    terminator = op.epilogue.block.last_op
    if not isinstance(terminator, graph.YieldOp):
        raise ValueError(f"'{op.name}': its epilogue ends without 'ascend.graph.yield'")
    return types[op.epilogue.block.args[0]], [types[v] for v in terminator.operands]


def _rebuild(op: Operation, operands: list[SSAValue]) -> Operation:
    """`op` on new operands, its result types inferred again (an epilogue's ops too)."""
    if isinstance(op, graph.ReshapeOp):
        new = graph.ReshapeOp(operands[0], op.result.type.get_shape())
    elif isinstance(op, graph.FusedOp):
        count = len(op.base_operands)
        block = op.epilogue.block
        accumulator, _ = _fused_op_types(op, [v.type for v in operands])
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


def _tensor(t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        raise ValueError(f"expected a tensor, got {t}")
    return t


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
