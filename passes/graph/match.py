"""What the pattern-fusion passes share to match decomposed formulas: constants read as numbers
(within a tolerance suited to their dtype), the uses a fusion may remove, and its rewrite.

A fusion replaces the last op of a pattern by the fused op and erases the rest, so every
intermediate value must be used inside the pattern only (`used_only_by`). A fused op computes in
float32 and rounds once, where a float16 or bfloat16 pattern rounded every intermediate it stored:
such a fusion changes the numbers, so it applies only when the precision mode allows it
(`keep-rounding=false`, which the pipelines set for any mode but `must_keep_origin_dtype`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeGuard

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from ge.dialects import graph
from ge.dtypes import numpy_dtype
from ge.errors import GeError
from ge.semantics import constant_array
from ge.weights import WeightStore

from ..fusion import SOURCES, source_names

READ_LIMIT = 1 << 16
"""Constants with more elements than this are not read while matching."""


def drops_rounding(element: Attribute, keep_rounding: bool) -> bool:
    """Whether fusing a pattern of `element`s would skip roundings the graph does (see above)."""
    return keep_rounding and isinstance(element, Float16Type | BFloat16Type)


def is_tensor(value: SSAValue | None) -> TypeGuard[SSAValue[TensorType]]:
    """Whether `value` is a tensor: graph ops take and give tensors, so a pattern whose value is
    anything else cannot match."""
    return value is not None and isinstance(value.type, TensorType)


def is_constant(value: SSAValue | None) -> bool:
    """Whether `value` is produced by an `ascend.graph.const`."""
    return value is not None and isinstance(value.owner, graph.ConstOp)


def computed_from_constants(value: SSAValue | None, depth: int = 8) -> bool:
    """Whether `value` is a constant or computed from constants only (what ge-constant-fold
    will fold), looking `depth` producers deep."""
    if is_constant(value):
        return True
    owner = value.owner if value is not None else None
    if depth == 0 or not isinstance(owner, Operation) or not owner.name.startswith("ascend.graph."):
        return False
    return bool(owner.operands) and all(computed_from_constants(v, depth - 1) for v in owner.operands)


def constant_values(value: SSAValue, weights: WeightStore | None) -> np.ndarray | None:
    """The array of a constant operand (None if it is computed or too large to read)."""
    owner = value.owner
    if not isinstance(owner, graph.ConstOp):
        return None
    shape = owner.result.type.get_shape()
    if any(d < 0 for d in shape) or int(np.prod(shape)) > READ_LIMIT:
        return None
    try:
        return constant_array(owner.value, owner.result.type, weights)
    except (GeError, KeyError):  # a resource missing from the store: not a constant to match
        return None


def scalar(value: SSAValue, weights: WeightStore | None) -> float | None:
    """The number held by a constant whose elements are all equal, else None."""
    array = constant_values(value, weights)
    if array is None or array.size == 0 or array.dtype == np.bool_:
        return None
    flat = array.reshape(-1).astype(np.float64)
    if not (flat == flat[0]).all():
        return None
    return float(flat[0])


def tolerance(element: Attribute) -> float:
    """Relative tolerance for a constant of this element type: a few ulps, at least 1e-6."""
    try:
        eps = float(ml_dtypes.finfo(numpy_dtype(element)).eps)
    except (ValueError, KeyError, TypeError):
        eps = 0.0
    return max(4 * eps, 1e-6)


def close(number: float | None, expected: float, element: Attribute) -> bool:
    return number is not None and abs(number - expected) <= tolerance(element) * abs(expected)


def used_only_by(value: SSAValue, ops: Iterable[Operation]) -> bool:
    """Whether every use of `value` is an operand of one of `ops`."""
    inside = set(ops)
    return all(use.operation in inside for use in value.uses)


def intermediates_private(pattern: Sequence[Operation], root: Operation) -> bool:
    """Whether every result of the pattern's ops but `root` is used by the pattern alone."""
    return all(used_only_by(r, pattern) for op in pattern if op is not root for r in op.results)


def other_operand(op: Operation, value: SSAValue) -> SSAValue | None:
    """The operand of a binary op that is not `value` (None if `value` is not an operand)."""
    a, b = op.operands
    if a is value:
        return b
    if b is value:
        return a
    return None


def replace_pattern(
    rewriter: PatternRewriter,
    pattern: Sequence[Operation],
    root: Operation,
    new_ops: Sequence[Operation],
    result: SSAValue,
) -> None:
    """Inserts `new_ops` before `root`, gives the last one the pattern's provenance, replaces
    `root`'s result by `result` and erases the rest of the pattern, last op first."""
    ordered = _in_block_order(pattern, root)
    fused = new_ops[-1]
    fused.location = root.location
    fused.attributes[SOURCES] = source_names(ordered)
    for op in new_ops:
        rewriter.insert(op, InsertPoint.before(root))
    rewriter.replace(root, [], [result])
    for op in reversed(ordered):
        if op is not root and op.parent is not None and not any(r.uses for r in op.results):
            rewriter.erase(op)


def _in_block_order(pattern: Sequence[Operation], root: Operation) -> list[Operation]:
    """The pattern's ops in program order. They all feed `root`, so they precede it: walking back
    from it costs the pattern's span, not the block's length."""
    wanted = set(pattern)
    found: list[Operation] = []
    op: Operation | None = root
    while op is not None and len(found) < len(wanted):
        if op in wanted:
            found.append(op)
        op = op.prev_op
    seen = set(found)
    return [*reversed(found), *(o for o in pattern if o not in seen)]
