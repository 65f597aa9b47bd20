"""`ge-lower-kernel-to-stream`: outline kernels and place every tensor in one arena.

Each kernel op becomes an `ascend.stream.kernel` symbol and a launch on stream 0; every tensor
(graph inputs included) gets a buffer at its own aligned offset in the arena (no reuse yet), and
every constant a slot at an aligned offset in the one weight blob (identical constants share
one slot). The function is replaced by one `ascend.stream.model`.

```
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = ascend.kernel.vector(%x) {...} : (tensor<4xf32>) -> tensor<4xf32> { ... }
  func.return %y : tensor<4xf32>
}
```
becomes
```
ascend.stream.kernel @relu_0 {...} : (tensor<4xf32>) -> tensor<4xf32> { ... }
ascend.stream.model @main {arena_size = 1024 : i64, weight_size = 0 : i64, ...} {
  %0 = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
  %1 = ascend.stream.buffer offset 512 size 16 : memref<4xf32>
  ascend.stream.launch @relu_0 (%0) -> (%1) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
  ascend.stream.outputs %1 : memref<4xf32>
}
```

As MLIR's gpu-kernel-outlining turns `gpu.launch` into `gpu.func` + `gpu.launch_func`, in steps:
1. `StreamLowering.function_to_model`, the one whole-function rewrite: the function's body moves
   into an `ascend.stream.model` and each argument gets an input buffer (the caller's memory).
2. The patterns of `.patterns` over the model's body, in one forward sweep of xDSL's
   `PatternRewriteWalker`; each replaces a kernel-level op by stream ops inserted where it
   stood, so the model's tasks keep the function's order. A replaced op's tensor results become
   `builtin.unrealized_conversion_cast`s of their buffers until their readers are lowered
   (MLIR's materializations), then go. A constant gets its weight slot where a kernel first
   reads it, in the format that kernel reads (one read by none gets none), so the constant op
   itself is no pattern's: it goes with the casts.
3. `StreamLowering.finish`: outputs a kernel writes go straight to the caller's memory, the
   remaining buffers are packed into the arena and the model gets its sizes.

`.lowering` holds `StreamLowering`, the state over the whole function the patterns share (offsets,
the value -> buffer map, weight slots, concat slices, symbol names taken).

No `TypeConversionPattern`: it retypes ops in place by a map from type to type, but a tensor's
buffer is a new op at a planned offset whose type follows the format its writer or reader stores
it in (and for FRACTAL_Z weights the convolution groups), and kernel bodies keep their tensor types.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker, RewritePattern

from ge.dialects import stream
from ge.layout import check_alignment

from ...session import current
from .lowering import StreamLowering
from .patterns import ConvertWeight, LowerConcatView, LowerReturn, LowerView, OutlineKernel

__all__ = ["LowerKernelToStreamPass", "StreamLowering", "lower_function"]


@dataclass(frozen=True)
class LowerKernelToStreamPass(ModulePass):
    """Turns each graph function of kernels into an `ascend.stream.model`."""

    name = "ge-lower-kernel-to-stream"

    alignment: int = 512
    """Byte alignment of every buffer and weight offset."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_alignment(self.alignment, self.name)
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            lower_function(func, StreamLowering(self.alignment, current().weights))


def lower_function(func: FuncOp, lowering: StreamLowering) -> stream.ModelOp:
    """Replaces `func` by its model: the function becomes the model, then one forward sweep of
    the patterns lowers its body. The sweep is not counted in bisection actions: half a model is
    no valid IR to stop at."""
    model = lowering.function_to_model(func)
    patterns: list[RewritePattern] = [
        ConvertWeight(lowering),
        OutlineKernel(lowering),
        LowerView(lowering),
        LowerConcatView(lowering),
        LowerReturn(lowering),
    ]
    walker = PatternRewriteWalker(GreedyRewritePatternApplier(patterns), apply_recursively=False)
    walker.rewrite_region(model.body)
    lowering.finish()
    return model
