"""`GraphOptimizer`: the graph-level passes of the compiler, graph in, new graph out.

```python
opt = ge.GraphOptimizer()
g2 = opt.apply_standard_optimizations(graph)   # fold, simplify, pattern fusion, CSE, DCE
g3 = opt.apply_mixed_precision_optimization(graph, target_precision="float16")
```
Every method returns a new `Graph` and leaves its argument unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.passes import ModulePass

from ge.dialects import graph as ops
from ge.passes import get_pass
from ge.passes.pipelines import FUSION, PREPARE, graph_passes

from .context import make_context
from .errors import CompileError
from .graph import Graph

PRECISION_BY_DTYPE = {"float16": "allow_mix_precision", "bfloat16": "allow_mix_precision_bf16"}


class GraphOptimizer:
    """Applies named groups of graph passes to copies of graphs."""

    def apply_standard_optimizations(self, graph: Graph) -> Graph:
        """Constant folding, simplification, pattern fusion, CSE and DCE (the O2 graph passes)."""
        return self._run(graph, graph_passes(2))

    def apply_advanced_optimizations(
        self, graph: Graph, precision_mode: str = "allow_mix_precision"
    ) -> Graph:
        """The standard optimizations, then mixed precision in `precision_mode`."""
        return self._run(graph, graph_passes(3, precision_mode=precision_mode))

    def apply_operator_fusion(self, graph: Graph) -> Graph:
        """Pattern fusion alone (with the folding that computes fused weights)."""
        names = (*PREPARE, *FUSION, "ge-constant-fold", "dce")
        return self._run(graph, [_make(name) for name in names])

    def apply_mixed_precision_optimization(
        self,
        graph: Graph,
        target_precision: str = "float16",
        preserve_precision_layers: Sequence[str] = (),
    ) -> Graph:
        """Moves what is safe to `target_precision` ("float16" or "bfloat16"); the names in
        `preserve_precision_layers` (op types such as "softmax", or node names) keep their dtype;
        graph inputs and outputs always do."""
        mode = PRECISION_BY_DTYPE.get(target_precision)
        if mode is None:
            raise CompileError(
                f"target_precision must be one of {', '.join(PRECISION_BY_DTYPE)}, got '{target_precision}'"
            )
        types = {op.name.removeprefix("ascend.graph.") for op in ops.GRAPH_OPS}
        keep_types = tuple(name for name in preserve_precision_layers if name in types)
        keep_nodes = tuple(name for name in preserve_precision_layers if name not in types)
        precision = get_pass("ge-mixed-precision")(  # type: ignore[call-arg]
            mode=mode, keep_op_types=keep_types, keep_nodes=keep_nodes
        )
        return self._run(graph, [precision, _make("ge-constant-fold"), _make("dce")])

    def _run(self, graph: Graph, passes: Sequence[ModulePass]) -> Graph:
        result = graph.copy()
        module = result.module
        ctx = make_context(result.weights)
        for compiler_pass in passes:
            compiler_pass.apply(ctx, module)
        module.verify()
        return Graph.from_module(module, ctx.weights)


def _make(name: str) -> ModulePass:
    from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    builtin = {"cse": CommonSubexpressionElimination, "dce": DeadCodeElimination}
    return (builtin.get(name) or get_pass(name))()
