"""`ge-mixed-precision{mode=...}`: runs graph ops in fp16, bf16 or fp32 by GE's precision modes.

An analysis first gives each float op a compute type from the mode, GE's op lists and its
producers' compute types (`ComputeTypeAnalysis`, in `.analysis`). Then the patterns of `.patterns`
rewrite: an op that changes type is rebuilt on operands cast to that type and followed by casts
back to its old result types; then the cast pairs this pass put back to back cancel, so casts
remain only at precision boundaries. Constants are converted at compile time; graph inputs and
outputs keep their declared types.

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

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ge.dialects import graph
from ge.errors import CompileError

from ...driver import rewrite
from ...session import current
from .analysis import MODES, ComputeTypeAnalysis, PrecisionClass
from .patterns import AssignComputeType, CancelInsertedCastPair


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


__all__ = [
    "MODES",
    "AssignComputeType",
    "CancelInsertedCastPair",
    "ComputeTypeAnalysis",
    "MixedPrecisionPass",
    "PrecisionClass",
]
