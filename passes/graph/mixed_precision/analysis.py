"""The analysis of `ge-mixed-precision`: the type each graph op computes in under a GE precision
mode (`ComputeTypeAnalysis`), from the mode (`MODES`), the op's class under GE's op lists
(`PrecisionClass`, read from its traits) and its producers' compute types.

Whether an op takes the compute type is the op's own type inference (`graph.reinfer`); a fused
op's accumulator type, which the patterns need to rebuild its epilogue, comes from it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, auto

from xdsl.dialects.builtin import (
    ArrayAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    bf16,
    f16,
    f32,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import IsTerminator

from ge.dialects import graph
from ge.errors import CompileError

from ...fusion import SOURCES

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
        floats = [v for v in op.operands if element_type_of(v) in sources]
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
            result_types = graph.reinfer(op, [_tensor(t) for t in operand_types])
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


def element_type_of(value: SSAValue) -> Attribute | None:
    """The element type of a tensor value, None for any other value."""
    return value.type.element_type if isinstance(value.type, TensorType) else None


def _node_name(op: Operation) -> str | None:
    return op.location.desc.data if isinstance(op.location, NameLoc) else None


def fused_op_types(
    op: graph.FusedOp, operand_types: Sequence[Attribute]
) -> tuple[Attribute, list[Attribute]]:
    """The accumulator type and the result types of fused `op` on operands of these types (the
    op's own `reinfer_values`); ValueError if any op rejects them."""
    types = op.reinfer_values([_tensor(t) for t in operand_types])
    return types[op.epilogue.block.args[0]], [types[op.result]]


def _tensor(t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        raise ValueError(f"expected a tensor, got {t}")
    return t
