"""`GraphOptimizer`: the graph-level passes of the compiler, graph in, new graph out; and
`MemoryOptimizer`: the device memory a graph needs once compiled, at a chosen batch size.

```python
opt = ge.GraphOptimizer()
g2 = opt.apply_standard_optimizations(graph)   # fold, simplify, pattern fusion, CSE, DCE
g3 = opt.apply_mixed_precision_optimization(graph, target_precision="float16")
before = ge.MemoryOptimizer.calculate_memory_usage(graph, batch_size=32, seq_len=224 * 224)
after = ge.MemoryOptimizer.calculate_memory_usage(opt.apply_memory_optimization(graph), batch_size=32)
```
Every `GraphOptimizer` method returns a new `Graph` and leaves its argument unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ge.dialects import graph as ops
from ge.dialects.common import describe
from ge.dialects.graph.base import tensor_type
from ge.passes import get_pass
from ge.passes.manager import PassManager
from ge.passes.pipelines import FUSION, PREPARE, graph_passes, make_pass, with_registered
from ge.passes.session import CompileSession
from ge.passes.stream.plan_memory import MEMORY_ATTR

from . import arguments
from .collection import without_collection
from .compiler import GraphCompiler, TensorSpec, require_graph
from .dtypes import element_type, numpy_dtype
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
        precision = get_pass("ge-mixed-precision")(  # type: ignore[call-arg]
            mode=mode, keep_op_types=keep_types, keep_nodes=keep_nodes
        )
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


def with_batch_size(
    graph: Graph, batch_size: int, seq_len: int | None = None, where: str = "with_batch_size"
) -> Graph:
    """A copy of `graph` whose inputs have `batch_size` as their first dimension and, when
    `seq_len` is given, `seq_len` positions per sample: on axis 1 of an input [N, L] or [N, L, D],
    over H x W of an image [N, C, H, W] keeping its aspect ratio; inputs of other ranks keep theirs.
    Every result type is inferred again by its op's `infer`.

    A reshape states its result shape, so it is followed by dimension groups (input and result
    dimensions of equal products): a group whose input changed takes the batch factor on its first
    result dimension and the sequence factor on its next, as batch-major layouts have them. A
    reshape that cannot follow, or an op whose fixed operand (a weight, a stated shape) does not
    fit the new sizes, raises GeError naming the op."""
    graph = require_graph(graph, where)
    batch_size = arguments.integer(batch_size, f"{where}: batch_size", 1)
    if seq_len is not None:
        seq_len = arguments.integer(seq_len, f"{where}: seq_len", 1)
    copy = graph.copy()
    module = copy.module
    func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
    resizer = _Resizer()
    for arg, name in zip(list(func.body.block.args), copy.inputs, strict=True):
        t = arg.type
        if not isinstance(t, TensorType) or not t.get_shape():
            continue
        shape = list(t.get_shape())
        resized = _resized(shape, batch_size, seq_len, f"{where}: seq_len {seq_len} for input '{name}'")
        resizer.note_factors(shape, resized)
        resizer.retype(arg, TensorType(t.element_type, resized))
    resizer.infer_block(func.body.block)
    resized_graph = Graph.from_module(module, copy.weights)
    resized_graph.verify()
    return resized_graph


def _resized(shape: list[int], batch_size: int, seq_len: int | None, where: str) -> list[int]:
    """`shape` with `batch_size` samples of `seq_len` positions (see `with_batch_size`)."""
    resized = [batch_size, *shape[1:]]
    if seq_len is None or len(shape) not in (2, 3, 4):
        return resized
    if len(shape) < 4:
        resized[1] = seq_len
        return resized
    height, width = shape[2], shape[3]
    if height < 1 or width < 1:
        return resized
    step = math.gcd(height, width)
    tall, wide = height // step, width // step
    scale = math.isqrt(seq_len // (tall * wide))
    if tall * wide * scale * scale != seq_len:
        raise GeError(
            f"{where}: an image of {height} x {width} keeps its aspect ratio only at H x W = "
            f"{tall * wide} x k^2 positions ({tall * wide}, {4 * tall * wide}, {9 * tall * wide}, ...)"
        )
    resized[2], resized[3] = tall * scale, wide * scale
    return resized


class _Resizer:
    """Infers result types again after some values changed type; remembers the old types."""

    def __init__(self) -> None:
        self.previous: dict[SSAValue, TensorType] = {}
        self.batch = self.seq = Fraction(1)

    def note_factors(self, before: list[int], after: list[int]) -> None:
        """The batch and sequence factors of the first input that changes them."""
        if self.batch == 1 and before[0] > 0:
            self.batch = Fraction(after[0], before[0])
        positions = math.prod(before[1:])
        if self.seq == 1 and positions > 0:
            self.seq = Fraction(math.prod(after[1:]), positions)

    def retype(self, value: SSAValue, t: Attribute) -> None:
        if value.type != t:
            old = value.type
            assert isinstance(old, TensorType)
            self.previous[Rewriter.replace_value_with_new_type(value, t)] = old

    def infer_block(self, block: Block) -> None:
        """Infers again the result types of the ops of `block` that read a retyped value."""
        for op in block.ops:
            if isinstance(op, ops.ConstOp | ReturnOp | ops.YieldOp) or not any(
                v in self.previous for v in op.operands
            ):
                continue
            try:
                types = self.inferred(op)
            except ValueError as error:
                raise GeError(
                    f"{describe(op)} cannot take the new input sizes: {error}; the graph's fixed "
                    "shapes do not allow this batch size or sequence length"
                ) from None
            for result, t in zip(list(op.results), types, strict=True):
                self.retype(result, t)

    def inferred(self, op: Operation) -> list[Attribute]:
        types = [tensor_type(v.type) for v in op.operands]
        where = describe(op)
        if isinstance(op, ops.FusedOp):
            base = len(op.base_operands)
            props = {k: v for k, v in op.properties.items() if k != "extras"}
            accumulator = op.BASE.infer(types[:base], props, where)
            epilogue = op.epilogue.block
            for arg, t in zip(list(epilogue.args), [accumulator, *types[base:]], strict=True):
                self.retype(arg, t)
            self.infer_block(epilogue)
            last = epilogue.last_op
            assert last is not None
            return [last.operands[0].type]
        if isinstance(op, ops.CastOp):
            return [TensorType(op.result.type.element_type, types[0].get_shape())]
        if isinstance(op, ops.ReshapeOp):
            old = self.previous[op.input]
            shape = self.reshaped(old.get_shape(), types[0].get_shape(), op.result.type.get_shape())
            return [TensorType(op.result.type.element_type, shape)]
        if isinstance(op, ops.GraphOp):
            inferred = op.infer(types, op.properties, where)
            return list(inferred) if isinstance(inferred, list) else [inferred]
        raise GeError(f"{describe(op)} has no shape inference, so the graph cannot be re-batched")

    def reshaped(self, before: Sequence[int], after: Sequence[int], stated: Sequence[int]) -> list[int]:
        """The result shape of a reshape of `before` into `stated` whose input is now `after`."""
        cannot = ValueError(f"a reshape of {list(before)} into {list(stated)} cannot follow {list(after)}")
        shape = list(stated)
        for group_in, group_out in _groups(before, stated):
            old = math.prod(before[k] for k in group_in)
            new = math.prod(after[k] for k in group_in)
            if new == old:
                continue
            ratio = Fraction(new, old)
            if len(group_out) == 1 or ratio in (self.batch, self.seq):
                factors = [ratio]
            elif ratio == self.batch * self.seq:
                factors = [self.batch, self.seq]
            else:
                raise cannot
            for index, factor in zip(group_out, factors, strict=False):
                scaled = shape[index] * factor
                if scaled.denominator != 1:
                    raise cannot
                shape[index] = int(scaled)
        if math.prod(shape) != math.prod(after):
            raise cannot
        return shape


def _groups(before: Sequence[int], stated: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Input and result dimension indices in runs of equal products: (2, 8, 32) into (16, 32)
    gives ([0, 1], [0]) and ([2], [1])."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(before) and j < len(stated):
        group_in, group_out = [i], [j]
        left, right = before[i], stated[j]
        i, j = i + 1, j + 1
        while left != right:
            if left < right and i < len(before):
                left *= before[i]
                group_in.append(i)
                i += 1
            elif right < left and j < len(stated):
                right *= stated[j]
                group_out.append(j)
                j += 1
            else:
                raise ValueError(f"{list(before)} and {list(stated)} do not hold the same elements")
        groups.append((group_in, group_out))
    if groups:
        groups[-1][0].extend(range(i, len(before)))
        groups[-1][1].extend(range(j, len(stated)))
    return groups
