"""`ge-mixed-precision{mode=...}`: runs graph ops in fp16, bf16 or fp32 by GE's precision modes.

Each float op gets a compute type from the mode and the op lists below. An op that changes type is
rebuilt on operands cast to that type and followed by casts back to its old result types; then the
cast pairs this pass put back to back cancel, so casts remain only at precision boundaries.
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

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    ModuleOp,
    NameLoc,
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

CUBE_OPS: tuple[type[Operation], ...] = (
    graph.Conv2DOp,
    graph.Conv3DOp,
    graph.ConvTranspose2DOp,
    graph.ConvTranspose3DOp,
    graph.MatMulOp,
    graph.GemmOp,
    graph.EinsumOp,
    graph.AttentionOp,
    graph.FusedOp,
)
"""Matrix products (with fused epilogues, and whole attention): the cube multiplies fp16 (or bf16)
fastest and accumulates in fp32."""

WHITE_LIST: tuple[type[Operation], ...] = (
    *CUBE_OPS,
    graph.AddOp,
    graph.SubOp,
    graph.MulOp,
    graph.ReluOp,
    graph.LeakyReluOp,
    graph.MaxPoolOp,
    graph.AvgPoolOp,
    graph.MaxPool3DOp,
    graph.AvgPool3DOp,
)
"""`allow_mix_precision`: ops that run in the low-precision type whenever they are fp32."""

BLACK_LIST: tuple[type[Operation], ...] = (
    graph.SoftmaxFamilyOp,
    graph.LayerNormOp,
    graph.RMSNormOp,
    graph.GroupNormOp,
    graph.MeanVarianceNormOp,
    graph.LpNormOp,
    graph.LRNOp,
    graph.ExpOp,
    graph.LogOp,
    graph.PowOp,
    graph.SoftplusOp,
    graph.ReduceOp,
    graph.ScanOp,
    graph.GlobalAvgPoolOp,
    graph.GlobalLpPoolOp,
    graph.LpPoolOp,
    graph.LpPool3DOp,
)
"""`allow_mix_precision`: sums of many terms, norms, exp and log, which fp16 would round away or
overflow; they keep their type. Every other op is gray: it runs in the low-precision type when
every operand it computes on comes from an op that does (data movement, batch_norm at inference,
activations, division, ...)."""

KEPT_BY_FORCE_FP16: tuple[type[Operation], ...] = (graph.NonZeroOp, graph.UniqueOp, graph.NonMaxSuppressionOp)
"""AI CPU ops: no cube or vector time to save, so `force_fp16` leaves them alone."""

NOT_COMPUTING: tuple[type[Operation], ...] = (graph.ConstOp, graph.CastOp, graph.ShapeOp)
"""Ops that compute nothing in a float type: this pass never retypes them."""


@dataclass
class AssignComputeType(RewritePattern):
    """Rebuilds an op in its compute type, between casts in and casts back out.

    Walked once in program order, so a gray op sees the types its producers were given: a producer
    moved to the compute type shows as a cast this pass inserted out of that type.
    """

    mode: str
    target: Attribute
    sources: tuple[Attribute, ...]
    keep_op_types: frozenset[str]
    keep_nodes: frozenset[str]
    weights: WeightStore
    inserted: set[Operation]
    """The casts this pass created (CancelInsertedCastPair removes back-to-back ones)."""
    converted: dict[tuple[SSAValue, Attribute], SSAValue] = field(default_factory=dict)
    """Each value already available in another type: casts and constants are made once."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.GraphOp | graph.ReshapeOp | graph.FusedOp):
            return
        if isinstance(op, NOT_COMPUTING) or not isinstance(op.parent_op(), FuncOp):
            return  # epilogue ops change with their fused op
        moving = [i for i, v in enumerate(op.operands) if _element(v) in self.sources]
        if not moving or not self.moves(op, [op.operands[i] for i in moving]) or not self.accepts(op):
            return
        operands = list(op.operands)
        for i in moving:
            operands[i] = self.as_target(operands[i], op, rewriter)
        new = _rebuild(op, operands)
        results: list[SSAValue] = []
        casts_out = []
        for old, result in zip(op.results, new.results, strict=True):
            result.name_hint = old.name_hint
            if old.type != result.type and old.uses:
                cast = graph.CastOp(result, old.type.element_type)
                self.inserted.add(cast)
                casts_out.append(cast)
                result = cast.result
            results.append(result)
        rewriter.replace(op, [new, *casts_out], results)

    def moves(self, op: Operation, floats: list[SSAValue]) -> bool:
        """Whether the mode moves `op`, whose `floats` operands have a source type."""
        if self.kept(op):
            return False
        if self.mode == "force_fp16":
            return not isinstance(op, KEPT_BY_FORCE_FP16)
        if self.mode == "force_fp32":
            return True
        if self.mode == "allow_fp32_to_fp16":
            return isinstance(op, CUBE_OPS)
        if isinstance(op, WHITE_LIST):
            return True
        if isinstance(op, BLACK_LIST):
            return False
        computed = [v for v in floats if not isinstance(v.owner, graph.ConstOp)]
        return bool(computed) and all(self.runs_in_target(v) for v in computed)

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

    def runs_in_target(self, value: SSAValue) -> bool:
        owner = value.owner
        return owner in self.inserted and _element(owner.operands[0]) == self.target

    def accepts(self, op: Operation) -> bool:
        """Whether the op's own shape inference takes the compute type (else it keeps its type)."""
        types = [
            TensorType(self.target, v.type.get_shape()) if _element(v) in self.sources else v.type
            for v in op.operands
        ]
        try:
            _result_types(op, types)
        except ValueError:
            return False
        return True

    def as_target(self, value: SSAValue, user: Operation, rewriter: PatternRewriter) -> SSAValue:
        """`value` in the compute type: a converted constant, or a cast placed before `user`."""
        key = (value, self.target)
        if key not in self.converted:
            owner = value.owner
            const = (
                _converted_constant(owner, self.target, self.weights)
                if isinstance(owner, graph.ConstOp)
                else None
            )
            if const is not None:
                rewriter.insert(const, InsertPoint.after(owner))
                const.result.name_hint = value.name_hint
                self.converted[key] = const.result
            else:
                cast = rewriter.insert(graph.CastOp(value, self.target), InsertPoint.before(user))
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
        if self.mode not in MODES:
            raise CompileError(f"ge-mixed-precision: unknown mode '{self.mode}' (known: {', '.join(MODES)})")
        known = {o.name.removeprefix("ascend.graph.") for o in graph.GRAPH_OPS}
        unknown = sorted(set(self.keep_op_types) - known)
        if unknown:
            raise CompileError(
                f"ge-mixed-precision: keep-op-types names unknown op types: {', '.join(unknown)}"
            )
        if MODES[self.mode] is None:
            return
        target, sources = MODES[self.mode]
        session = current()
        weights = session.weights
        inserted: set[Operation] = set()
        assign = AssignComputeType(
            self.mode,
            target,
            sources,
            frozenset(self.keep_op_types),
            frozenset(self.keep_nodes),
            weights,
            inserted,
        )
        rewrite(op, [assign], session, apply_recursively=False)
        rewrite(op, [CancelInsertedCastPair(inserted)], session)
        for value, _ in assign.converted:
            if isinstance(value.owner, graph.ConstOp) and not value.uses:
                Rewriter.erase_op(value.owner)


def _element(value: SSAValue) -> Attribute | None:
    return value.type.element_type if isinstance(value.type, TensorType) else None


def _node_name(op: Operation) -> str | None:
    return op.location.desc.data if isinstance(op.location, NameLoc) else None


def _result_types(op: Operation, operand_types: list[TensorType]) -> list[Attribute]:
    """The result types `op` would have on operands of these types; ValueError if it rejects them."""
    if isinstance(op, graph.ReshapeOp):
        return [TensorType(operand_types[0].element_type, op.result.type.get_shape())]
    if isinstance(op, graph.FusedOp):
        count = len(op.base_operands)
        props = {k: v for k, v in op.properties.items() if k != "extras"}
        block = op.epilogue.block
        types = {block.args[0]: op.BASE.infer(operand_types[:count], props, op.name)}
        types.update(zip(block.args[1:], operand_types[count:], strict=True))
        for inner in block.ops:
            if isinstance(inner, graph.YieldOp):
                return [types[v] for v in inner.operands]
            types.update(
                zip(inner.results, _result_types(inner, [types[v] for v in inner.operands]), strict=True)
            )
    inferred = op.infer(operand_types, op.properties, op.name)
    return inferred if isinstance(inferred, list) else [inferred]


def _rebuild(op: Operation, operands: list[SSAValue]) -> Operation:
    """`op` on new operands, its result types inferred again (an epilogue's ops too)."""
    if isinstance(op, graph.ReshapeOp):
        new = graph.ReshapeOp(operands[0], op.result.type.get_shape())
    elif isinstance(op, graph.FusedOp):
        count = len(op.base_operands)
        block = op.epilogue.block
        props = {k: v for k, v in op.properties.items() if k != "extras"}
        accumulator = op.BASE.infer([v.type for v in operands[:count]], props, op.name)
        epilogue = Block(arg_types=[accumulator, *(v.type for v in operands[count:])])
        values = dict(zip(block.args, epilogue.args, strict=True))
        for inner in block.ops:
            args = [values[v] for v in inner.operands]
            copy = graph.YieldOp(args) if isinstance(inner, graph.YieldOp) else _rebuild(inner, args)
            epilogue.add_op(copy)
            values.update(zip(inner.results, copy.results, strict=True))
        new = type(op).build_fused(operands[:count], op.properties, operands[count:], Region(epilogue))
    else:
        new = type(op).build_inferred(operands, dict(op.properties))
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
            value: Attribute = FloatAttr(float(np.asarray(const.value.value.data).astype(dtype)), element)
        elif isinstance(const.value, DenseIntOrFPElementsAttr):  # small: it stays inline
            stored = numpy_dtype(const.result.type.element_type)
            array = np.frombuffer(const.value.data.data, stored).astype(dtype)
            value = DenseIntOrFPElementsAttr(t, BytesAttr(array.tobytes()))
        else:
            try:
                array = constant_array(const.value, const.result.type, weights).astype(dtype)
            except InvalidModelError:
                return None
            key = weights.add(array, f"{const.value.resource_handle.data}.{dtype.name}")
            value = DenseResourceAttr.from_params(key, t)
    new = graph.ConstOp(value, t)
    new.location = const.location
    return new
