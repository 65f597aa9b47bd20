"""`GraphOptimizer`: the graph-level passes of the compiler, graph in, new graph out.

```python
opt = ge.GraphOptimizer()
g2 = opt.apply_standard_optimizations(graph)   # fold, simplify, pattern fusion, CSE, DCE
g3 = opt.apply_mixed_precision_optimization(graph, target_precision="float16")
print(opt.estimate_speedup(graph, g2), opt.report(graph))
```
Every `GraphOptimizer` method returns a new `Graph` and leaves its argument unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.passes import ModulePass

from ge.dialects import graph as ops
from ge.passes.manager import PassManager
from ge.passes.pipelines import FUSION, PREPARE, graph_passes, make_pass, with_registered
from ge.passes.session import CompileSession

from . import arguments
from .collection import without_collection
from .compiler import GraphCompiler, require_graph
from .errors import CompileError, GeError
from .graph import Graph
from .techniques import TechniqueReport, technique_report

PRECISION_BY_DTYPE = {"float16": "allow_mix_precision", "bfloat16": "allow_mix_precision_bf16"}


class GraphOptimizer:
    """Applies named groups of graph passes to copies of graphs."""

    def apply_standard_optimizations(self, graph: Graph) -> Graph:
        """Constant folding, simplification, pattern fusion, CSE and DCE (the O2 graph passes)."""
        return self._run(graph, graph_passes(2), "apply_standard_optimizations")

    def apply_advanced_optimizations(
        self, graph: Graph, precision_mode: str = "allow_mix_precision"
    ) -> Graph:
        """The standard optimizations, then mixed precision in `precision_mode`."""
        return self._run(
            graph, graph_passes(3, precision_mode=precision_mode), "apply_advanced_optimizations"
        )

    def apply_operator_fusion(self, graph: Graph) -> Graph:
        """Pattern fusion alone (with the folding that computes fused weights)."""
        names = with_registered((*PREPARE, *FUSION, "ge-constant-fold", "dce"))
        return self._run(graph, [make_pass(name) for name in names], "apply_operator_fusion")

    def apply_memory_optimization(self, graph: Graph) -> Graph:
        """The graph passes that cut device memory, the O2 graph passes: folding (constants computed
        once, no activation for them), pattern fusion (an epilogue's intermediate tensors never
        reach memory) and cleanup (CSE and DCE drop duplicate and dead tensors)."""
        return self._run(graph, graph_passes(2), "apply_memory_optimization")

    def apply_mixed_precision_optimization(
        self,
        graph: Graph,
        target_precision: str = "float16",
        preserve_precision_layers: Sequence[str] = (),
    ) -> Graph:
        """Moves what is safe to `target_precision` ("float16" or "bfloat16"); the names in
        `preserve_precision_layers` (op types such as "softmax", or node names) keep their dtype;
        graph inputs and outputs always do (so "input" and "output" may be named too)."""
        where = "GraphOptimizer.apply_mixed_precision_optimization"
        graph = require_graph(graph, where)
        mode = PRECISION_BY_DTYPE.get(target_precision)
        if mode is None:
            raise CompileError(
                f"target_precision must be one of {', '.join(PRECISION_BY_DTYPE)}, got '{target_precision}'"
            )
        types = {op.name.removeprefix("ascend.graph.") for op in ops.GRAPH_OPS}
        layers = _layer_names(graph, preserve_precision_layers, types, f"{where}: preserve_precision_layers")
        keep_types = tuple(name for name in layers if name in types)
        keep_nodes = tuple(name for name in layers if name not in types)
        from ge.passes.graph.mixed_precision import MixedPrecisionPass  # its options, typed

        precision = MixedPrecisionPass(mode=mode, keep_op_types=keep_types, keep_nodes=keep_nodes)
        cleanup = [make_pass("ge-constant-fold"), make_pass("dce")]
        return self._run(graph, [precision, *cleanup], "apply_mixed_precision_optimization")

    def estimate_speedup(self, before: Graph, after: Graph, target: str = "npu") -> float:
        """How many times faster `after` runs than `before` on `target`, by the modelled latency of
        both compiled the same way: at O0 (one kernel per graph op, framework formats, one stream,
        no memory reuse) and both launched from the host (O0 does not sink), so the ratio is what
        the graph transformation itself bought, like for like."""
        require_graph(before, "GraphOptimizer.estimate_speedup: before")
        require_graph(after, "GraphOptimizer.estimate_speedup: after")
        compiler = GraphCompiler()
        slow = compiler.compile(before, target=target, optimization_level=0, sink=False).modelled_latency_us()
        fast = compiler.compile(after, target=target, optimization_level=0, sink=False).modelled_latency_us()
        return slow / fast

    def report(self, graph: Graph, target: str = "npu") -> TechniqueReport:
        """What each optimization technique gives `graph` on `target`: O0 and O3, each technique
        switched off alone from O3 and on alone from O0, and mixed precision (`ge.techniques`)."""
        return technique_report(graph, target)

    @without_collection
    def _run(self, graph: Graph, passes: Sequence[ModulePass], method: str) -> Graph:
        result = require_graph(graph, f"GraphOptimizer.{method}").copy()
        module = result.module
        session = PassManager(passes).run(module, CompileSession(result.weights))
        return Graph.from_module(module, session.weights)


def _layer_names(graph: Graph, names: object, types: set[str], where: str) -> list[str]:
    """`names` when each is an op type, a node, or a graph input or output of `graph`."""
    if isinstance(names, str) or not isinstance(names, Sequence | set | frozenset):
        raise GeError(f"{where} must be a list of names, got {arguments.shown(names)}")
    names = [arguments.text(name, f"{where}[{index}]") for index, name in enumerate(names)]
    known = types | {n.name for n in graph.nodes} | {*graph.inputs, *graph.outputs, "input", "output"}
    unknown = [name for name in names if name not in known]
    if unknown:
        nodes = [n.name for n in graph.nodes]
        shown = ", ".join(nodes[:12]) + (", ..." if len(nodes) > 12 else "")
        raise GeError(f"{where}: {unknown} name no op type, node, graph input or output (nodes: {shown})")
    return names
