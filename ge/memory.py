"""`MemoryOptimizer`: the device memory a graph needs once compiled, at a chosen batch size and
number of positions per sample, as the memory planner lays it out.

```python
before = ge.MemoryOptimizer.calculate_memory_usage(graph, batch_size=32, seq_len=224 * 224)
after = ge.MemoryOptimizer.calculate_memory_usage(opt.apply_memory_optimization(graph), batch_size=32)
print(before.breakdown)   # arena, weights, inputs, outputs
```
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr

from ge.passes.stream.plan_memory import MEMORY_ATTR

from .compiler import GraphCompiler, TensorSpec
from .dtypes import element_type, numpy_dtype
from .graph import Graph
from .resize import with_batch_size


class MemoryUsage(int):
    """Bytes of device memory a compiled graph needs (the `int` value): its planned activation
    arena, its weight blob, and its inputs and outputs (which live in the caller's buffers, outside
    the arena). Beside them: the arena with no reuse, the arena's lower bound (most bytes live at
    once), the batch size it was computed for, and the memory plan's strategy and in-place count."""

    arena_bytes: int
    weight_bytes: int
    input_bytes: int
    output_bytes: int
    no_reuse_bytes: int
    lower_bound_bytes: int
    batch_size: int
    strategy: str | None
    inplace: int

    def __new__(
        cls,
        arena_bytes: int,
        weight_bytes: int,
        input_bytes: int,
        output_bytes: int,
        no_reuse_bytes: int,
        lower_bound_bytes: int,
        batch_size: int,
        strategy: str | None = None,
        inplace: int = 0,
    ) -> MemoryUsage:
        usage = super().__new__(cls, arena_bytes + weight_bytes + input_bytes + output_bytes)
        usage.arena_bytes = arena_bytes
        usage.weight_bytes = weight_bytes
        usage.input_bytes = input_bytes
        usage.output_bytes = output_bytes
        usage.no_reuse_bytes = no_reuse_bytes
        usage.lower_bound_bytes = lower_bound_bytes
        usage.batch_size = batch_size
        usage.strategy = strategy
        usage.inplace = inplace
        return usage

    @property
    def breakdown(self) -> dict[str, int]:
        """The total's parts, in bytes."""
        return {
            "arena": self.arena_bytes,
            "weights": self.weight_bytes,
            "inputs": self.input_bytes,
            "outputs": self.output_bytes,
        }

    def __repr__(self) -> str:
        return (
            f"MemoryUsage({int(self)} bytes: arena_bytes={self.arena_bytes}, "
            f"weight_bytes={self.weight_bytes}, input_bytes={self.input_bytes}, "
            f"output_bytes={self.output_bytes}, lower_bound_bytes={self.lower_bound_bytes}, "
            f"no_reuse_bytes={self.no_reuse_bytes}, batch_size={self.batch_size}, "
            f"strategy={self.strategy!r}, inplace={self.inplace})"
        )


MEMORY_AS_IT_STANDS = ("memory-reuse",)
"""The techniques `calculate_memory_usage` compiles a graph with by default: none that rewrites
it, and the memory planner's reuse, which every compiled model's arena has from O3 on."""


class MemoryOptimizer:
    """The device memory a graph needs once compiled, as the memory planner lays it out."""

    @staticmethod
    def calculate_memory_usage(
        graph: Graph,
        batch_size: int = 1,
        seq_len: int | None = None,
        optimization_level: int | None = None,
        target: str = "npu",
    ) -> MemoryUsage:
        """Compiles `graph` with its inputs re-batched to `batch_size` on their first dimension
        (and holding `seq_len` positions per sample, when given: see `with_batch_size`) and
        returns the bytes of device memory it needs: the planned arena, the weights, the inputs
        and the outputs (`MemoryUsage.breakdown`). Raises GeError when the graph's fixed shapes
        cannot take the sizes.

        By default the graph is measured as it stands: one kernel per op in framework formats, no
        graph rewrites, and the memory planner's reuse (`MEMORY_AS_IT_STANDS`), so the memory an
        optimized graph saves shows; `optimization_level` (0 to 3) measures it as that level
        compiles it instead."""
        sized = with_batch_size(graph, batch_size, seq_len, "MemoryOptimizer.calculate_memory_usage")
        compiler = GraphCompiler()
        if optimization_level is None:
            compiled = compiler.compile(sized, target=target, techniques=list(MEMORY_AS_IT_STANDS))
        else:
            compiled = compiler.compile(sized, target=target, optimization_level=optimization_level)
        memory = compiled.memory
        recorded = compiled.model.attributes.get(MEMORY_ATTR)
        figures = recorded.data if isinstance(recorded, DictionaryAttr) else {}
        strategy = figures.get("strategy")
        inplace = figures.get("inplace")
        return MemoryUsage(
            arena_bytes=memory.arena_bytes,
            weight_bytes=memory.weight_bytes,
            input_bytes=sum(_tensor_bytes(spec) for spec in compiled.inputs),
            output_bytes=sum(_tensor_bytes(spec) for spec in compiled.outputs),
            no_reuse_bytes=memory.no_reuse_bytes,
            lower_bound_bytes=memory.lower_bound_bytes,
            batch_size=batch_size,
            strategy=strategy.data if isinstance(strategy, StringAttr) else None,
            inplace=inplace.value.data if isinstance(inplace, IntegerAttr) else 0,
        )


def _tensor_bytes(spec: TensorSpec) -> int:
    return math.prod(spec.shape) * numpy_dtype(element_type(spec.dtype)).itemsize
