"""Pictures of a model at each level, drawn with Graphviz (`Graph.visualize`, `CompiledModel.visualize`).

`graph`: the ascend.graph function as a DAG of ops labelled with their results' shapes, constants
folded into the labels of the ops that read them. `kernel`: the same after the kernel-level passes,
each kernel a cluster coloured by unit with its formats. `stream`: the compiled model's task list,
one lane per stream, launches in task order, dashed edges from each event's record to its waits.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import graphviz
from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from ge.dialects import graph as graph_ops
from ge.dialects.common import get_strs, value_names
from ge.dialects.kernel import KernelOp, TransDataOp, ViewOp, YieldOp
from ge.dialects.stream import EventRecordOp, EventWaitOp, LaunchOp, byte_size, model_of
from ge.passes.manager import PassManager
from ge.passes.pipelines import STREAM_LOWERING_PASS, passes_before

from .arguments import shown
from .compile_plan import compile_plan, start_compilation
from .errors import GeError
from .options import check_optimization_level, check_options
from .palette import UNIT_COLOURS
from .soc import load_profile
from .weights import WeightStore

LEVELS = ("graph", "kernel", "stream")
OUTPUT_FORMATS: dict[str, str | None] = {
    ".dot": None,
    ".gv": None,
    ".svg": "svg",
    ".png": "png",
    ".pdf": "pdf",
}
"""What each file extension holds: the DOT source (None), or a picture Graphviz's `dot` renders."""
INSTALL_DOT = "install Graphviz (apt-get install graphviz, brew install graphviz) or write a .dot file"


def visualize_graph(
    module: ModuleOp,
    weights: WeightStore,
    path: str | os.PathLike[str],
    level: str = "graph",
    target: str = "npu",
    optimization_level: int = 3,
    **options: object,
) -> Path:
    """Draws a graph's `module` (with its `weights`) at `level` into `path` (see `Graph.visualize`);
    returns the path written. The kernel and stream levels compile it as `GraphCompiler.compile`
    would with these arguments, up to the level drawn."""
    path, level = check_path(path), check_level(level, LEVELS)
    level_passes = check_optimization_level(optimization_level)
    switch = options.pop("fusion_switch_file", None)
    plan = compile_plan(level_passes, check_options(options), switch)
    load_profile(target)
    if level == "graph":
        return write(graph_dot(module), path)
    compiled, session = start_compilation(module, weights, target)
    passes = plan.passes if level == "stream" else passes_before(STREAM_LOWERING_PASS, plan.passes)
    PassManager(passes).run(compiled, session)
    return write(graph_dot(compiled) if level == "kernel" else stream_dot(compiled), path)


def check_path(path: object) -> Path:
    """`path` as a Path whose extension names a format Graphviz writes (OUTPUT_FORMATS)."""
    if not isinstance(path, str | os.PathLike):
        raise GeError(f"visualize takes a file path such as 'model.svg', got {shown(path)}")
    path = Path(path)
    if path.suffix.lower() not in OUTPUT_FORMATS:
        raise GeError(
            f"visualize cannot write '{path}': unknown extension '{path.suffix}' "
            f"(known: {', '.join(OUTPUT_FORMATS)})"
        )
    return path


def check_level(level: object, levels: tuple[str, ...]) -> str:
    """`level` when it is one of `levels`; anything else is refused with the choices."""
    if not isinstance(level, str) or level not in levels:
        raise GeError(f"visualize: unknown level {shown(level)} (known: {', '.join(levels)})")
    return level


def write(dot: graphviz.Digraph, path: Path) -> Path:
    """Writes the DOT source, or the picture `dot` renders from it, to `path` (nothing else)."""
    fmt = OUTPUT_FORMATS[path.suffix.lower()]
    if fmt is None:
        data = dot.source.encode()
    else:
        try:  # pipe() renders in memory: render() would leave the source file beside the picture
            data = dot.pipe(format=fmt)
        except graphviz.ExecutableNotFound:
            raise GeError(
                f"cannot render '{path}': Graphviz's `dot` program is missing; {INSTALL_DOT}"
            ) from None
        except graphviz.CalledProcessError as error:
            stderr = (error.stderr or b"").decode(errors="replace").strip()
            raise GeError(f"cannot render '{path}': Graphviz's dot failed: {stderr}") from None
    try:
        path.write_bytes(data)
    except OSError as error:
        raise GeError(f"cannot write '{path}': {error.strerror or error}") from None
    return path


def graph_dot(module: ModuleOp) -> graphviz.Digraph:
    """The function of `module` (graph or kernel level) as a DAG; kernels become clusters."""
    func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
    dot = _digraph(func.sym_name.data, "TB")
    drawer = _DagDrawer()
    block = func.body.block
    names = value_names(func.arg_attrs, len(block.args), "input")
    for index, (arg, name) in enumerate(zip(block.args, names, strict=True)):
        node = f"input{index}"
        dot.node(node, f"{name}\\n{type_text(arg.type)}", shape="ellipse", fillcolor="#e5f5e0")
        drawer.sources[arg] = (node, None)
    drawer.draw_block(dot, block)
    returned = block.last_op
    if isinstance(returned, ReturnOp):
        names = value_names(func.res_attrs, len(returned.arguments), "output")
        for index, (value, name) in enumerate(zip(returned.arguments, names, strict=True)):
            node = f"output{index}"
            dot.node(node, f"{name}\\n{type_text(value.type)}", shape="ellipse", fillcolor="#fee0d2")
            drawer.edge(value, node)
    # Edges go to the top graph: a node an edge names inside a cluster would join that cluster.
    for source, target, attributes in drawer.edges:
        dot.edge(source, target, **attributes)
    if drawer.units:
        _legend(dot, drawer.units)
    return dot


def stream_dot(module: ModuleOp) -> graphviz.Digraph:
    """The model's task list: a lane per stream, its tasks in order, event record -> wait edges."""
    model = model_of(module)
    kernels = model.kernels()
    dot = _digraph(model.sym_name.data, "LR")
    kinds: set[str] = set()
    lanes: dict[int, list[tuple[str, str, dict[str, str]]]] = {}
    recorded: dict[int, str] = {}
    waits: list[tuple[int, str]] = []
    for index, op in enumerate(model.body.block.ops):
        if isinstance(op, LaunchOp):
            kernel = kernels[op.kernel.root_reference.data]
            kind = kernel.kernel_kind
            kinds.add(kind)
            written = sum(
                byte_size(t) for v in op.outputs if isinstance(t := v.type, MemRefType | TensorType)
            )
            label = f"{kernel.sym_name.data}\\n{kind}\\nwrites {_size_text(written)}"
            node = (f"task{index}", label, {"fillcolor": UNIT_COLOURS.get(kind, "white")})
        elif isinstance(op, EventRecordOp | EventWaitOp):
            event = op.event.value.data
            verb = "record" if isinstance(op, EventRecordOp) else "wait"
            node = (f"{verb}{index}", f"{verb} {event}", {"shape": "circle", "fontsize": "8"})
            if verb == "record":
                recorded[event] = node[0]  # a wait pairs with the latest record of its event
            else:
                waits.append((event, node[0]))
        else:
            continue
        lanes.setdefault(op.stream.value.data, []).append(node)
    for stream, tasks in sorted(lanes.items()):
        with _cluster(dot, f"cluster_stream_{stream}") as lane:
            lane.attr("graph", label=f"stream {stream}", style="rounded", color="#999999")
            for name, label, attributes in tasks:
                lane.node(name, label, **attributes)
            for (before, _, _), (after, _, _) in itertools.pairwise(tasks):
                lane.edge(before, after, color="#999999")
    for event, wait in waits:
        dot.edge(recorded[event], wait, label=f"event {event}", style="dashed", color="#cb181d")
    if kinds:
        _legend(dot, kinds)
    return dot


def type_text(t: Attribute) -> str:
    """`1x64x112x112 f32` for a tensor type; a scalar tensor is `scalar f32`."""
    if not isinstance(t, TensorType):
        return str(t)
    shape = t.get_shape()
    dims = "x".join("?" if d < 0 else str(d) for d in shape) if shape else "scalar"
    return f"{dims} {t.element_type}"


class _DagDrawer:
    """Draws ops of nested blocks as nodes, kernels as clusters; remembers where each value is drawn."""

    def __init__(self) -> None:
        self.sources: dict[SSAValue, tuple[str, str | None]] = {}
        """Per value: the node that produces it and the edge label it needs (which result)."""
        self.constants: dict[SSAValue, str] = {}
        """Constants drawn into the label of each op that reads them, not as nodes of their own."""
        self.edges: list[tuple[str, str, dict[str, str]]] = []
        self.units: set[str] = set()
        self.nodes = 0
        self.kernels = 0

    def draw_block(self, dot: graphviz.Digraph, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, ReturnOp | YieldOp):
                continue
            if isinstance(op, graph_ops.ConstOp) and not _returned(op.result):
                self.constants[op.result] = type_text(op.result.type).rsplit(" ", 1)[0]
            elif isinstance(op, KernelOp):
                self._kernel(dot, op)
            elif isinstance(op, TransDataOp) and op.input in self.constants:
                self.constants[op.output] = self.constants[op.input]  # converted at compile time
            elif isinstance(op, TransDataOp):
                self._trans_data(dot, op)
            elif isinstance(op, ViewOp):
                self._op(dot, op, f"{op.src_format} -> {op.dst_format}")
            else:
                self._op(dot, op)

    def edge(self, value: SSAValue, node: str) -> None:
        source, label = self.sources[value]
        self.edges.append((source, node, {"label": label} if label else {}))

    def _op(self, dot: graphviz.Digraph, op: Operation, extra: str = "") -> None:
        node = f"op{self.nodes}"
        self.nodes += 1
        lines = [_op_type(op)]
        sources = get_strs(op, "sources")
        if sources:
            lines.append("(" + " + ".join(sources) + ")")
        lines += [extra] if extra else []
        lines += [type_text(r.type) for r in op.results]
        folded = [self.constants[v] for v in op.operands if v in self.constants]
        if folded:
            lines.append("const " + ", ".join(folded))
        dot.node(node, "\\n".join(lines))
        for value in op.operands:
            if value not in self.constants:
                self.edge(value, node)
        for result in op.results:
            self.sources[result] = (node, type_text(result.type) if len(op.results) > 1 else None)

    def _kernel(self, dot: graphviz.Digraph, op: KernelOp) -> None:
        name = op.kernel_name.data if op.kernel_name is not None else f"kernel {self.kernels}"
        body = op.body.block
        for arg, value in zip(body.args, op.inputs, strict=True):
            if value in self.constants:
                self.constants[arg] = self.constants[value]
            else:
                self.sources[arg] = self.sources[value]
        with _cluster(dot, f"cluster_kernel_{self.kernels}") as cluster:
            self.kernels += 1
            cluster.attr("graph", **_cluster_style(name, op.UNIT, op.in_formats, op.out_formats))
            self.units.add(op.UNIT)
            self.draw_block(cluster, body)
        yielded = body.last_op
        assert isinstance(yielded, YieldOp)
        for result, value in zip(op.outputs, yielded.values, strict=True):
            self.sources[result] = self.sources[value]

    def _trans_data(self, dot: graphviz.Digraph, op: TransDataOp) -> None:
        name = op.kernel_name.data if op.kernel_name is not None else f"trans_data {self.kernels}"
        with _cluster(dot, f"cluster_kernel_{self.kernels}") as cluster:
            self.kernels += 1
            cluster.attr("graph", **_cluster_style(name, "trans_data", op.in_formats, op.out_formats))
            self.units.add("trans_data")
            self._op(cluster, op, f"{op.src_format} -> {op.dst_format}")


def _cluster_style(
    name: str, unit: str, in_formats: Sequence[str], out_formats: Sequence[str]
) -> dict[str, str]:
    ins, outs = ", ".join(in_formats), ", ".join(out_formats)
    return {
        "label": f"{name} ({unit})\\nin {ins}\\nout {outs}",
        "style": "rounded,filled",
        "fillcolor": UNIT_COLOURS[unit],
        "color": "#666666",
    }


def _legend(dot: graphviz.Digraph, units: set[str]) -> None:
    with _cluster(dot, "cluster_legend") as legend:
        legend.attr("graph", label="units", style="rounded", color="#999999")
        for unit in (u for u in UNIT_COLOURS if u in units):
            legend.node(f"legend_{unit}", unit, fillcolor=UNIT_COLOURS[unit], shape="box")


def _digraph(name: str, rankdir: str) -> graphviz.Digraph:
    dot = graphviz.Digraph(name)
    dot.attr("graph", rankdir=rankdir, fontname="Helvetica", fontsize="10", newrank="true")
    dot.attr("node", shape="box", style="rounded,filled", fillcolor="white", fontname="Helvetica")
    dot.attr("node", fontsize="10")
    dot.attr("edge", fontname="Helvetica", fontsize="9", arrowsize="0.6")
    return dot


def _returned(value: SSAValue) -> bool:
    return any(isinstance(use.operation, ReturnOp) for use in value.uses)


def _op_type(op: Operation) -> str:
    return op.name.removeprefix("ascend.graph.").removeprefix("ascend.kernel.")


def _size_text(size: int) -> str:
    """Bytes as `512 B`, `64 KiB`, `1.5 MiB`."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.3g} KiB"
    return f"{size / (1024 * 1024):.3g} MiB"


@contextmanager
def _cluster(dot: graphviz.Digraph, name: str) -> Iterator[graphviz.Digraph]:
    """A subgraph of `dot` named `name` (a `cluster_` name draws a box around it)."""
    context = dot.subgraph(name=name)
    assert context is not None  # subgraph returns a context manager when given no graph
    with context as subgraph:
        yield subgraph
