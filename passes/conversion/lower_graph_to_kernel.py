"""`ge-lower-graph-to-kernel`: one kernel per graph op, placed on the unit that runs it.

Cube ops (conv2d, matmul, gemm) become `ascend.kernel.cube`, ops the AI Core cannot run
(float64 or int64 arithmetic, value-dependent shapes) `ascend.kernel.aicpu`, the rest
`ascend.kernel.vector`;
constants stay graph constants (they become weights at the stream level). Kernel formation
(fusing several ops into one kernel) builds on this later.

```
%y = ascend.graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
```
becomes
```
%y = ascend.kernel.vector(%x) {in_formats = ["ND"], kernel_name = "relu_0", out_formats = ["ND"]}
    : (tensor<4xf32>) -> tensor<4xf32> {
^bb0(%0 : tensor<4xf32>):
  %1 = ascend.graph.relu %0 : (tensor<4xf32>) -> tensor<4xf32>
  ascend.kernel.yield %1 : tensor<4xf32>
}
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, NameLoc, Signedness, TensorType, f64, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from ge.dialects import graph
from ge.dialects.kernel import KERNEL_BY_UNIT, YieldOp

CUBE_OPS: tuple[type[Operation], ...] = (
    graph.Conv2DOp,
    graph.MatMulOp,
    graph.GemmOp,
    graph.Conv3DOp,
    graph.ConvTranspose2DOp,
    graph.ConvTranspose3DOp,
    graph.MatMulIntegerOp,
    graph.AttentionOp,
    graph.FusedOp,
)


AICPU_TYPES = (f64, i64, IntegerType(64, Signedness.UNSIGNED))
"""Element types the AI Core has no arithmetic for."""


def unit_of(op: Operation) -> str:
    """Where an op runs: the AI CPU for what the AI Core cannot do, else cube or vector."""
    if op.has_trait(graph.NeedsAiCpu):
        return "aicpu"
    # 64-bit arithmetic is what the AI Core lacks: 64-bit operands, or a float64 result. An int64
    # result alone (the indices of arg_max or top_k) is produced as int32 and widened on store.
    operands = [v.type.element_type for v in op.operands if isinstance(v.type, TensorType)]
    results = [v.type.element_type for v in op.results if isinstance(v.type, TensorType)]
    if not op.has_trait(graph.MovesData) and (
        any(t in AICPU_TYPES for t in operands) or any(t == f64 for t in results)
    ):
        return "aicpu"
    return "cube" if isinstance(op, CUBE_OPS) else "vector"


def format_of(t: TensorType) -> str:
    """Framework formats at this stage: 4-D tensors are NCHW, everything else ND."""
    return "NCHW" if len(t.get_shape()) == 4 else "ND"


def source_name(op: Operation) -> str | None:
    return op.location.desc.data if isinstance(op.location, NameLoc) else None


@dataclass
class WrapOpInKernel(RewritePattern):
    """Moves a graph op that sits in a function body into a kernel of its own."""

    counts: dict[str, int] = field(default_factory=dict)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.name.startswith("ascend.graph.") or isinstance(op, graph.ConstOp):
            return
        if not isinstance(op.parent_op(), FuncOp):
            return
        input_types = [v.type for v in op.operands]
        block = Block(arg_types=input_types)
        inner = op.clone()
        for index, arg in enumerate(block.args):
            inner.operands[index] = arg
        block.add_ops([inner, YieldOp(inner.results)])
        short = op.name.removeprefix("ascend.graph.")
        number = self.counts.get(short, 0)
        self.counts[short] = number + 1
        kernel = KERNEL_BY_UNIT[unit_of(op)](
            inputs=op.operands,
            body=Region(block),
            result_types=[r.type for r in op.results],
            in_formats=[format_of(t) for t in input_types],
            out_formats=[format_of(r.type) for r in op.results],
            kernel_name=source_name(op) or f"{short}_{number}",
        )
        kernel.location = op.location
        rewriter.replace(op, kernel)


@dataclass(frozen=True)
class LowerGraphToKernelPass(ModulePass):
    """Wraps every non-constant `ascend.graph` op in an `ascend.kernel` op."""

    name = "ge-lower-graph-to-kernel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(WrapOpInKernel(), apply_recursively=False).rewrite_module(op)
