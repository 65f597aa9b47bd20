"""`ge-lower-graph-to-kernel`: kernel formation, graph ops grouped into kernels on AI Core units.

Groups form in place, as IREE forms dispatch regions, then each group becomes one kernel op
whose body holds the group's graph ops:

- a cube op (conv, matmul, gemm, attention, a fused cube op) absorbs its elementwise epilogue:
  the ops that consume its result and nothing else;
- elementwise and broadcast ops join the group of the ops they consume when those results feed
  nothing else, so a tree of elementwise ops becomes one vector kernel; a reduction (softmax,
  layer norm, global pooling, reduce_*) absorbs its elementwise producers and consumers, one
  reduction per kernel;
- reshape and flatten become views (`ascend.kernel.view`), no kernel, except right around a
  transpose, whose kernel they join (a channel shuffle is one data-movement kernel);
- a concat whose inputs are each produced by a kernel for it alone becomes a concat view: the
  producers write into their slices of its result;
- ops the AI Core cannot run (float64 or int64 arithmetic, value-dependent shapes, anything on
  strings, conversions of float8, float4, int4 and int2) become `ascend.kernel.aicpu` kernels of
  their own.

Every merge is the cost model's decision (`ge.cost`): it happens when the fused kernel's modelled
latency is below the parts' and its tiles fit the target's Unified Buffer. With
`form-kernels=false` (optimization levels 0 to 2) every graph op gets a kernel of its own.
Constants stay graph constants (they become weights at the stream level).

```
%a = ascend.graph.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
%r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
```
becomes
```
%r = ascend.kernel.vector(%x, %y) {kernel_name = "add_relu_0"}
    : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
^bb0(%0 : tensor<4xf32>, %1 : tensor<4xf32>):
  %2 = ascend.graph.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = ascend.graph.relu %2 : (tensor<4xf32>) -> tensor<4xf32>
  ascend.kernel.yield %3 : tensor<4xf32>
}
```
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, NameLoc, Signedness, TensorType, f64, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from ge.dialects import graph
from ge.dialects.common import TARGET_ATTR_NAME, TargetAttr
from ge.dialects.formats import bitwidth_of
from ge.dialects.kernel import KERNEL_BY_UNIT, ConcatViewOp, KernelOp, ViewOp, YieldOp
from ge.dtypes import tensor_type

AICPU_TYPES = (f64, i64, IntegerType(64, Signedness.UNSIGNED))
"""Element types the AI Core has no arithmetic for."""


def unit_of(op: Operation) -> str:
    """Where an op runs: the AI CPU for what the AI Core cannot do, else cube or vector."""
    if op.has_trait(graph.NeedsAiCpu):
        return "aicpu"
    operands = [v.type.element_type for v in op.operands if isinstance(v.type, TensorType)]
    results = [v.type.element_type for v in op.results if isinstance(v.type, TensorType)]
    if any(isinstance(t, graph.StringType) for t in (*operands, *results)):
        return "aicpu"  # as GE does: the AI Core kernels take no string tensors, not even to move them
    # Nor can it convert float8, float4, int4 or int2 elements; moving their bytes it can.
    narrow = any(graph.elementwise.element_kind(t) == "narrow" for t in (*operands, *results))
    if narrow and (isinstance(op, graph.CastOp) or not op.has_trait(graph.MovesData)):
        return "aicpu"
    # 64-bit arithmetic is what the AI Core lacks: 64-bit operands, or a float64 result. An int64
    # result alone (the indices of arg_max or top_k) is produced as int32 and widened on store.
    if not op.has_trait(graph.MovesData) and (
        any(t in AICPU_TYPES for t in operands) or any(t == f64 for t in results)
    ):
        return "aicpu"
    return "cube" if graph.matrix_product(op) is not None else "vector"


def source_name(op: Operation) -> str | None:
    return op.location.desc.data if isinstance(op.location, NameLoc) else None


def _static(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and value.type.has_static_shape()


@dataclass
class _Group:
    """Ops that will form one kernel, in program order; the last is the root (its result leaves)."""

    ops: list[Operation]
    unit: str
    reductions: int = -1
    """How many of the ops are reductions (counted once, then summed as groups merge)."""
    latency: float | None = None
    """The modelled latency of the group as a kernel of its own, once asked for."""
    summary: Any = None
    """A vector group's `ge.cost.decisions.VectorSummary` (None: cost it from its ops)."""

    def __post_init__(self) -> None:
        if self.reductions < 0:
            self.reductions = sum(op.has_trait(graph.Reduction) for op in self.ops)

    @property
    def root(self) -> Operation:
        return self.ops[-1]


def fusible(op: Operation) -> bool:
    """Whether `op` may share a kernel with others: one result, and elementwise or a reduction."""
    return (
        len(op.results) == 1
        and (op.has_trait(graph.Elementwise) or op.has_trait(graph.Reduction))
        and unit_of(op) == "vector"
        and all(_static(v) for v in (*op.operands, *op.results))
    )


MIN_TILE = 256
"""Elements of the smallest tile worth streaming through the Unified Buffer (8 blocks of 32 bytes)."""


def _width(value: SSAValue) -> int:
    return max(1, bitwidth_of(tensor_type(value).element_type) // 8)


def fits_unified_buffer(
    merged: Sequence[Operation],
    unit: str,
    target: TargetAttr | None,
    external: Collection[SSAValue] | None = None,
) -> bool:
    """Whether a kernel of `merged` ops on `unit` holds its operands in the Unified Buffer at the
    smallest double-buffered tile (without a target: assumed to). `external`, when known, are the
    values the ops read from outside."""
    if target is None:
        return True
    if external is None:
        members = set(merged)
        external = {v for op in merged for v in op.operands if v.owner not in members}
    leaving = list(merged[-1].results)
    if unit == "cube":  # the fp32 accumulator tile and one tile of each epilogue operand
        need = 16 * 16 * 4 * 2 * (1 + len(external))
    else:
        need = MIN_TILE * 2 * sum(_width(v) for v in (*external, *leaving))
    return need <= int(target.figure("ub_bytes"))


@dataclass
class KernelFormer:
    """Forms the kernels of one function body."""

    target: TargetAttr | None
    fuse: bool = True
    counts: dict[str, int] = field(default_factory=dict)

    def run(self, block: Block) -> None:
        """Forms the block's kernels: grouping is a whole-function analysis (which ops share a
        kernel depends on every use of their results and on the cost of each candidate group);
        the ops left over are rewritten one at a time by the patterns `ReshapeToView`,
        `ConcatToConcatView` and `OpToKernel`, in that order."""
        groups = self._groups(block) if self.fuse else []
        for group in groups:
            self._build(group)
        region = block.parent
        assert region is not None
        if self.fuse:
            for group in self._movement_groups(block):
                self._build(group)
            # Each phase sees the block as the one before left it: a concat's inputs are views
            # or kernel producers by then, as the concat view's legality expects.
            _walk(region, ReshapeToView())
            _walk(region, ConcatToConcatView())
        _walk(region, OpToKernel(self))

    def _groups(self, block: Block) -> list[_Group]:
        from ge.cost.ops import op_work  # the cost model sits above the dialects

        group_of: dict[Operation, _Group] = {}
        groups: dict[int, _Group] = {}  # by id, in the order they formed
        # Grouping moves no op: one index for ordering merged groups, and each op's work costed
        # once however many candidate groups it is in.
        self._order = {op: index for index, op in enumerate(block.ops)}
        works: dict[Operation, Any] = {}
        self._work = lambda op: works[op] if op in works else works.setdefault(op, op_work(op))
        for op in block.ops:
            if isinstance(op, graph.ConstOp) or not op.name.startswith("ascend.graph."):
                continue
            unit = unit_of(op)
            if (
                unit == "cube"
                and len(op.results) == 1
                and all(_static(v) for v in (*op.operands, *op.results))
            ):
                group = _Group([op], "cube")
            elif fusible(op):
                group = _Group([op], "vector", summary=self._summary(op))
            else:
                continue
            for operand in op.operands:
                producer = operand.owner
                if not isinstance(producer, Operation):
                    continue
                other = group_of.get(producer)
                if other is None or other is group or other.root is not producer:
                    continue
                if not operand.has_one_use() or len(producer.results) != 1:
                    continue
                merged = self._merge(other, group, op)
                if merged is not None:
                    # Only a group's root is looked up again: its other ops' results are used
                    # once, inside it.
                    del groups[id(other)]
                    group = merged
            group_of[op] = group
            groups[id(group)] = group
        return [g for g in groups.values() if len(g.ops) > 1]

    def _summary(self, op: Operation) -> Any:
        from ge.cost.decisions import VectorSummary  # the cost model sits above the dialects

        return VectorSummary.of(op, self._work(op)) if self.target is not None else None

    @staticmethod
    def _movement_groups(block: Block) -> list[_Group]:
        """A transpose with the reshapes right around it (a channel shuffle) is one data-movement
        kernel: the reshapes alone would be views, but around a transpose they are its indexing.
        A reshape between two transposes joins the first one's kernel only."""
        groups = []
        claimed: set[Operation] = set()
        for op in list(block.ops):
            if not isinstance(op, graph.TransposeOp) or unit_of(op) != "vector":
                continue
            if not all(_static(v) for v in (*op.operands, *op.results)):
                continue
            members: list[Operation] = [op]
            producer = op.operands[0].owner
            if (
                isinstance(producer, Operation)
                and producer.has_trait(graph.IsView)
                and producer not in claimed
                and op.operands[0].has_one_use()
                and _static(producer.operands[0])
            ):
                members.insert(0, producer)
            use = op.results[0].first_use
            if use is not None and op.results[0].has_one_use():
                consumer = use.operation
                if consumer.has_trait(graph.IsView) and _static(consumer.results[0]):
                    members.append(consumer)
            if len(members) > 1:
                groups.append(_Group(members, "vector"))
                claimed.update(members)
        return groups

    def _merge(self, producer: _Group, consumer: _Group, op: Operation) -> _Group | None:
        """The group of `producer`'s ops and `consumer`'s (rooted at `op`), if worth forming."""
        if op.has_trait(graph.MovesData) and not isinstance(op, graph.CastOp):
            return None
        cube = [g for g in (producer, consumer) if g.unit == "cube"]
        if len(cube) == 2:
            return None
        reductions = producer.reductions + consumer.reductions
        if cube and reductions or reductions > 1:
            return None
        if cube and consumer.unit == "cube" and consumer.ops[0] is op:
            return None  # a cube op never takes on producers; it starts its own kernel
        if self._order[producer.ops[-1]] < self._order[consumer.ops[0]]:
            ops = producer.ops + consumer.ops  # a chain: already in program order
        else:
            ops = sorted({*producer.ops, *consumer.ops}, key=self._order.__getitem__)
        merged = _Group(ops, "cube" if cube else "vector", reductions)
        if merged.root is not op:
            return None
        if producer.summary is not None and consumer.summary is not None and not cube:
            merged.summary = producer.summary.merge(consumer.summary, producer.root)
        external = merged.summary.inputs if merged.summary is not None else None
        if not fits_unified_buffer(merged.ops, merged.unit, self.target, external):
            return None
        # The cost model's verdict: one kernel must not be slower than the two (each group's
        # latency is computed once, when it forms).
        if self.target is not None:
            gain = self._latency(producer) + self._latency(consumer) - self._latency(merged)
            if gain < 0.0:
                return None
        return merged

    def _latency(self, group: _Group) -> float:
        from ge.cost.decisions import group_latency  # the cost model sits above the dialects

        assert self.target is not None, "latencies are asked only with a target"
        latency = group.latency
        if latency is None:
            if group.summary is not None:
                latency = group.summary.latency(self.target)
            else:
                latency = group_latency(group.ops, group.unit, self.target, self._work)
            group.latency = latency
        return latency

    def kernel_of(self, group: _Group) -> KernelOp:
        """The kernel op of `group`, not yet in the IR (its ops stay where they are)."""
        members = set(group.ops)
        inputs: list[SSAValue] = []
        for op in group.ops:
            for operand in op.operands:
                if operand.owner not in members and operand not in inputs:
                    inputs.append(operand)
        block = Block(arg_types=[v.type for v in inputs])
        mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args, strict=True))
        for op in group.ops:
            inner = op.clone(value_mapper=dict(mapping))
            block.add_op(inner)
            for old, new in zip(op.results, inner.results, strict=True):
                mapping[old] = new
        root = group.root
        block.add_op(YieldOp([mapping[r] for r in root.results]))
        kernel = KERNEL_BY_UNIT[group.unit](
            inputs=inputs,
            body=Region(block),
            result_types=[r.type for r in root.results],
            kernel_name=self._name(group.ops),
        )
        kernel.location = root.location
        return kernel

    def _build(self, group: _Group) -> None:
        kernel = self.kernel_of(group)
        Rewriter.replace_op(group.root, kernel)
        for op in reversed(group.ops[:-1]):
            Rewriter.erase_op(op)

    def _name(self, ops: Sequence[Operation]) -> str:
        if len(ops) == 1 and (name := source_name(ops[0])):
            return name
        short = "_".join(dict.fromkeys(op.name.removeprefix("ascend.graph.") for op in ops))
        if len(short) > 40:
            short = f"{ops[0].name.removeprefix('ascend.graph.')}_fused"
        number = self.counts.get(short, 0)
        self.counts[short] = number + 1
        return f"{short}_{number}"


@dataclass(frozen=True)
class LowerGraphToKernelPass(ModulePass):
    """Forms kernels of `ascend.graph` ops (or, with `form-kernels=false`, one per op)."""

    name = "ge-lower-graph-to-kernel"

    form_kernels: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = op.attributes.get(TARGET_ATTR_NAME)
        former = KernelFormer(target if isinstance(target, TargetAttr) else None, self.form_kernels)
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            if not func.is_declaration:
                former.run(func.body.block)


class ReshapeToView(RewritePattern):
    """A reshape or flatten of static shapes becomes an `ascend.kernel.view`: no kernel."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.has_trait(graph.IsView) or not _in_function(op):
            return
        source, result = op.operands[0], op.results[0]
        if not (_static(source) and _static(result)):
            return
        source_type, result_type = source.type, result.type
        assert isinstance(source_type, TensorType) and isinstance(result_type, TensorType)
        view = ViewOp(source, result_type)
        view.location = op.location
        rewriter.replace(op, view)


class ConcatToConcatView(RewritePattern):
    """A concat whose inputs each come from a kernel for it alone becomes a concat view."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConcatOp, rewriter: PatternRewriter) -> None:
        if not _in_function(op) or not concat_in_place(op):
            return
        shape = op.result.type.get_shape()
        view = ConcatViewOp(op.operands, op.result.type, op.axis.value.data % len(shape))
        view.location = op.location
        rewriter.replace(op, view)


@dataclass
class OpToKernel(RewritePattern):
    """A graph op left outside every kernel becomes a kernel of its own on its unit."""

    former: KernelFormer

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.name.startswith("ascend.graph.") or isinstance(op, graph.ConstOp) or not _in_function(op):
            return
        rewriter.replace(op, self.former.kernel_of(_Group([op], unit_of(op))))


def concat_in_place(op: graph.ConcatOp) -> bool:
    """Each input must come from a kernel (or another concat) that feeds this concat alone."""
    if not _static(op.result):
        return False
    seen: set[SSAValue] = set()
    for value in op.operands:
        owner = value.owner
        if value in seen or not value.has_one_use() or not _static(value):
            return False
        if (
            not isinstance(owner, Operation)
            or isinstance(owner, graph.ConstOp | ViewOp)
            or owner.has_trait(graph.IsView)
        ):
            return False
        seen.add(value)
    return True


def _in_function(op: Operation) -> bool:
    """Whether `op` stands in the function body, not in a kernel's."""
    return isinstance(op.parent_op(), FuncOp)


def _walk(region: Region, pattern: RewritePattern) -> None:
    """One forward sweep of `pattern` over the function body (in program order, so kernels are
    numbered as their ops come)."""
    PatternRewriteWalker(pattern, apply_recursively=False).rewrite_region(region)
