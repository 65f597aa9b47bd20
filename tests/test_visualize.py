"""`Graph.visualize` and `CompiledModel.visualize`: the DOT each level draws, read back statement by
statement, and the files each extension writes (rendered by Graphviz's `dot`, or the error without it)."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from xdsl.parser import Parser

import ge
from ge.context import make_context
from ge.dialects.stream import EventRecordOp, EventWaitOp, LaunchOp
from ge.errors import GeError

MAGIC = {"svg": b"<?xml", "png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-"}
UNIT_FILLS = {"cube": "#f4a582", "vector": "#92c5de", "aicpu": "#c2a5cf", "trans_data": "#d9d9d9"}


# --------------------------------------------------------------------------------------------
# A reader of the DOT the graphviz package writes: one statement a line
# --------------------------------------------------------------------------------------------

EDGE = re.compile(r"(\w+) -> (\w+)(?: \[|$)")
ATTRIBUTE = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')


@dataclass
class Dot:
    nodes: dict[str, dict[str, str]] = field(default_factory=dict)
    edges: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    clusters: dict[str, dict[str, str]] = field(default_factory=dict)
    """Attributes of each subgraph, by name."""
    members: dict[str, list[str]] = field(default_factory=dict)
    """Nodes declared in each subgraph, in order."""

    def cluster_of(self, node: str) -> str | None:
        return next((name for name, nodes in self.members.items() if node in nodes), None)

    def label(self, node: str) -> str:
        return self.nodes[node].get("label", node)


def parse(source: str) -> Dot:
    dot, stack = Dot(), []
    lines = source.splitlines()
    assert lines[0].startswith("digraph ") and lines[-1] == "}"
    for line in (line.strip() for line in lines[1:-1]):
        if line.startswith("subgraph "):
            name = line.removeprefix("subgraph ").removesuffix(" {")
            stack.append(name)
            dot.clusters[name], dot.members[name] = {}, []
        elif line == "}":
            stack.pop()
        elif line.startswith("graph ["):
            if stack:
                dot.clusters[stack[-1]].update(_attributes(line))
        elif line.startswith(("node [", "edge [")):
            continue
        elif edge := EDGE.match(line):
            dot.edges.append((edge[1], edge[2], _attributes(line)))
        else:
            name = line.split(" [", 1)[0]
            dot.nodes[name] = _attributes(line)
            if stack:
                dot.members[stack[-1]].append(name)
    return dot


def _attributes(line: str) -> dict[str, str]:
    found = {}
    for key, value in ATTRIBUTE.findall(line.split(" [", 1)[1] if " [" in line else ""):
        if value.startswith('"'):
            value = value[1:-1].replace('\\"', '"')
        found[key] = value.replace("\\n", "\n")
    return found


# --------------------------------------------------------------------------------------------
# Graphs
# --------------------------------------------------------------------------------------------


def small_cnn() -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("input", shape=[1, 3, 32, 32])
    y = g.add_conv2d(x, out_channels=16, kernel_size=3, padding=1)
    y = g.add_relu(g.add_batchnorm(y))
    y = g.add_maxpool(y, kernel_size=2, stride=2)
    y = g.add_linear(g.add_flatten(g.add_global_avgpool(y)), out_features=10)
    g.add_output(g.add_softmax(y))
    return g


def two_branches() -> ge.Graph:
    """Two convolutions of one input, added: independent work for a second stream."""
    g = ge.Graph()
    x = g.add_input("input", shape=[1, 16, 32, 32])
    a = g.add_relu(g.add_conv2d(x, out_channels=16, kernel_size=3, padding=1))
    b = g.add_relu(g.add_conv2d(x, out_channels=16, kernel_size=1))
    g.add_output(g.add_add(a, b))
    return g


def drawn(tmp_path: Path, draw, name: str = "g.dot") -> Dot:
    path = draw(tmp_path / name)
    assert path == tmp_path / name
    return parse(path.read_text())


# --------------------------------------------------------------------------------------------
# graph level
# --------------------------------------------------------------------------------------------


def test_graph_level_draws_each_op_once_with_its_result_shape(tmp_path: Path) -> None:
    dot = drawn(tmp_path, lambda p: small_cnn().visualize(p))
    ops = {n: a["label"] for n, a in dot.nodes.items() if a.get("shape") != "ellipse"}
    assert Counter(label.split("\n")[0] for label in ops.values()) == {
        "conv2d": 1,
        "batch_norm": 1,
        "relu": 1,
        "max_pool": 1,
        "global_avg_pool": 1,
        "flatten": 1,
        "gemm": 1,
        "softmax": 1,
    }
    by_type = {label.split("\n")[0]: label for label in ops.values()}
    # 3x3 with padding 1 keeps 32x32; the 2x2 pool of stride 2 halves it; weights fold into labels.
    assert by_type["conv2d"] == "conv2d\n1x16x32x32 f32\nconst 16x3x3x3, 16"
    assert by_type["batch_norm"] == "batch_norm\n1x16x32x32 f32\nconst 16, 16, 16, 16"
    assert by_type["max_pool"] == "max_pool\n1x16x16x16 f32"
    assert by_type["gemm"] == "gemm\n1x10 f32\nconst 10x16, 10"
    ends = {a["label"] for a in dot.nodes.values() if a.get("shape") == "ellipse"}
    assert ends == {"input\n1x3x32x32 f32", "softmax\n1x10 f32"}
    chain = ["input", "conv2d", "batch_norm", "relu", "max_pool", "global_avg_pool", "flatten"]
    chain += ["gemm", "softmax", "softmax"]
    edges = [(dot.label(s).split("\n")[0], dot.label(t).split("\n")[0]) for s, t, _ in dot.edges]
    assert sorted(edges) == sorted(zip(chain, chain[1:], strict=False))
    assert dot.clusters == {}


def test_graph_level_labels_the_edges_of_an_op_with_several_results(tmp_path: Path) -> None:
    module = Parser(
        make_context(),
        """
        func.func @main(%x: tensor<6xf32>) -> (tensor<2xf32>, tensor<4xf32>, tensor<3xf32>) {
          %a, %b = ascend.graph.split %x {axis = 0 : i64, sizes = array<i64: 2, 4>}
              : (tensor<6xf32>) -> (tensor<2xf32>, tensor<4xf32>)
          %r = ascend.graph.relu %b : (tensor<4xf32>) -> tensor<4xf32>
          %c = ascend.graph.const dense<1.0> : tensor<3xf32>
          func.return %a, %r, %c : tensor<2xf32>, tensor<4xf32>, tensor<3xf32>
        }
        """,
    ).parse_module()
    dot = drawn(tmp_path, ge.Graph.from_module(module).visualize)
    labelled = sorted(
        (dot.label(s).split("\n")[0], dot.label(t).split("\n")[0], a.get("label")) for s, t, a in dot.edges
    )
    # Which result an edge carries is not in the split's label: the edge says it. A constant the
    # graph returns is a node of its own.
    assert labelled == [
        ("const", "output_2", None),
        ("input_0", "split", None),
        ("relu", "output_1", None),
        ("split", "output_0", "2 f32"),
        ("split", "relu", "4 f32"),
    ]
    assert dot.label(next(n for n in dot.nodes if dot.label(n).startswith("split"))) == "split\n2 f32\n4 f32"


# --------------------------------------------------------------------------------------------
# kernel level
# --------------------------------------------------------------------------------------------


def test_kernel_level_draws_each_kernel_as_a_cluster_coloured_by_unit(tmp_path: Path) -> None:
    graph = small_cnn()
    dot = drawn(tmp_path, lambda p: graph.visualize(p, level="kernel"))
    kernels = {name: a for name, a in dot.clusters.items() if name.startswith("cluster_kernel_")}
    units = Counter(a["label"].split("\n")[0].rsplit(" (", 1)[1].rstrip(")") for a in kernels.values())
    # O3: the input to NC1HWC0, conv + bn + relu fused on the cube, pools and softmax on the
    # vector unit, the linear layer on the cube: the launches the compiled model counts too.
    assert units == {"trans_data": 1, "cube": 2, "vector": 3}
    assert units == ge.GraphCompiler().compile(graph).kernel_histogram()
    for attributes in kernels.values():
        unit = attributes["label"].split("\n")[0].rsplit(" (", 1)[1].rstrip(")")
        assert attributes["fillcolor"] == UNIT_FILLS[unit]
    legend = {dot.label(n): dot.nodes[n]["fillcolor"] for n in dot.members["cluster_legend"]}
    assert legend == {u: UNIT_FILLS[u] for u in ("cube", "vector", "trans_data")}
    labels = sorted(a["label"] for a in kernels.values())
    assert "conv (cube)\nin NC1HWC0, FRACTAL_Z, ND\nout NC1HWC0" in labels
    assert "linear (cube)\nin ND, FRACTAL_NZ, ND\nout ND" in labels
    assert "trans_data_0 (trans_data)\nin NCHW\nout NC1HWC0" in labels
    conv = dot.members[next(n for n, a in kernels.items() if a["label"].startswith("conv "))]
    assert [dot.label(n) for n in conv] == [
        "fused_conv2d\n(conv + bn + relu)\n1x16x32x32 f32\nconst 16x3x3x3, 16"
    ]


def test_kernel_level_edges_carry_data_from_kernel_to_kernel(tmp_path: Path) -> None:
    dot = drawn(tmp_path, lambda p: small_cnn().visualize(p, level="kernel"))

    def kernel(node: str) -> str:
        cluster = dot.cluster_of(node)
        return dot.clusters[cluster]["label"].split(" (")[0] if cluster else dot.label(node).split("\n")[0]

    flow = [(kernel(s), kernel(t)) for s, t, _ in dot.edges]
    order = ["input", "trans_data_0", "conv", "max_pool", "global_avg_pool", "view", "linear"]
    order += ["softmax", "softmax"]
    assert flow == list(zip(order, order[1:], strict=False))
    # The view moves no data: a node of its own between kernels, in no cluster.
    view = next(n for n in dot.nodes if dot.label(n).startswith("view"))
    assert dot.cluster_of(view) is None and dot.label(view) == "view\nNC1HWC0 -> ND\n1x16 f32"


def test_kernel_level_at_o0_draws_one_kernel_per_op_in_framework_formats(tmp_path: Path) -> None:
    dot = drawn(tmp_path, lambda p: small_cnn().visualize(p, level="kernel", optimization_level=0))
    names = [n for n in dot.clusters if n.startswith("cluster_kernel_")]
    kernels = [dot.clusters[n]["label"] for n in names]
    # Without kernel formation every op, flatten too, is a kernel of its own; nothing leaves NCHW / ND.
    assert [[dot.label(op).split("\n")[0] for op in dot.members[n]] for n in names] == [
        ["conv2d"],
        ["batch_norm"],
        ["relu"],
        ["max_pool"],
        ["global_avg_pool"],
        ["flatten"],
        ["gemm"],
        ["softmax"],
    ]
    assert not any(f in label for label in kernels for f in ("NC1HWC0", "FRACTAL"))


def test_kernel_level_compiles_with_the_techniques_given(tmp_path: Path) -> None:
    """With only operator fusion (and the folding it needs), the conv, bn and relu are one fused
    op, but every op is a kernel of its own in framework formats, as compile would make them."""
    graph = small_cnn()
    dot = drawn(
        tmp_path,
        lambda p: graph.visualize(p, level="kernel", techniques=["constant-folding", "operator-fusion"]),
    )
    names = [n for n in dot.clusters if n.startswith("cluster_kernel_")]
    assert [dot.label(dot.members[n][0]).split("\n")[0] for n in names] == [
        "fused_conv2d",
        "max_pool",
        "global_avg_pool",
        "flatten",
        "gemm",
        "softmax",
    ]
    labels = [dot.clusters[n]["label"] for n in names]
    assert not any(f in label for label in labels for f in ("NC1HWC0", "FRACTAL"))


# --------------------------------------------------------------------------------------------
# stream level
# --------------------------------------------------------------------------------------------


def test_stream_level_draws_a_lane_per_stream_and_an_edge_per_event_wait(tmp_path: Path) -> None:
    compiled = ge.GraphCompiler().compile(two_branches(), optimization_level=1, max_streams=2)
    dot = drawn(tmp_path, compiled.visualize)
    tasks: dict[int, list[str]] = {}
    waits, records = [], {}
    for op in compiled.model.body.block.ops:
        if isinstance(op, LaunchOp):
            tasks.setdefault(op.stream.value.data, []).append(op.kernel.root_reference.data)
        elif isinstance(op, EventRecordOp | EventWaitOp):
            verb = "record" if isinstance(op, EventRecordOp) else "wait"
            tasks.setdefault(op.stream.value.data, []).append(f"{verb} {op.event.value.data}")
            if verb == "record":
                records[op.event.value.data] = op.stream.value.data
            else:
                waits.append((op.event.value.data, records[op.event.value.data], op.stream.value.data))
    assert sorted(tasks) == [0, 1] and waits, "the two branches run on two streams, joined by an event"
    lanes = {int(n.removeprefix("cluster_stream_")): m for n, m in dot.members.items() if "stream" in n}
    assert {s: [dot.label(n).split("\n")[0] for n in m] for s, m in lanes.items()} == tasks
    for stream, members in lanes.items():
        assert dot.clusters[f"cluster_stream_{stream}"]["label"] == f"stream {stream}"
        in_lane = [(s, t) for s, t, a in dot.edges if s in members and "style" not in a]
        assert in_lane == list(zip(members, members[1:], strict=False))
    dashed = [(s, t, a) for s, t, a in dot.edges if a.get("style") == "dashed"]
    expected = sorted((f"event {e}", f"record {e}", r, f"wait {e}", w) for e, r, w in waits)
    found = [(a["label"], dot.label(s), _lane(dot, s), dot.label(t), _lane(dot, t)) for s, t, a in dashed]
    assert sorted(found) == expected
    assert dot.label(lanes[0][0]) == "conv\ncube\nwrites 64 KiB"  # 1x16x32x32 f32: 65536 bytes


def test_graph_visualize_at_stream_level_compiles_as_asked(tmp_path: Path) -> None:
    graph = two_branches()
    compiled = ge.GraphCompiler().compile(graph, optimization_level=1, max_streams=2)
    from_graph = graph.visualize(tmp_path / "a.gv", level="stream", optimization_level=1, max_streams=2)
    assert from_graph.read_text() == compiled.visualize(tmp_path / "b.gv").read_text()
    one_stream = parse(graph.visualize(tmp_path / "c.gv", level="stream", optimization_level=1).read_text())
    assert [n for n in one_stream.clusters if n.startswith("cluster_stream_")] == ["cluster_stream_0"]


def _lane(dot: Dot, node: str) -> int:
    return int(str(dot.cluster_of(node)).removeprefix("cluster_stream_"))


# --------------------------------------------------------------------------------------------
# Files and errors
# --------------------------------------------------------------------------------------------


def test_dot_and_gv_write_the_source_and_only_that(tmp_path: Path) -> None:
    graph = small_cnn()
    for name in ("g.dot", "g.gv", "G.DOT"):
        path = graph.visualize(str(tmp_path / name))
        assert isinstance(path, Path) and path.read_text().startswith("digraph main {")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["G.DOT", "g.dot", "g.gv"]


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda g, p: g.visualize(p / "g.jpg"), ["'.jpg'", ".dot", ".gv", ".svg", ".png", ".pdf"]),
        (lambda g, p: g.visualize(p / "g"), ["''", ".svg"]),
        (lambda g, p: g.visualize(p / "g.svg", level="kernels"), ["'kernels'", "graph, kernel, stream"]),
        (lambda g, p: g.visualize(p / "g.svg", level=None), ["None", "graph, kernel, stream"]),
        (lambda g, p: g.visualize(3), ["file path", "3"]),
        (lambda g, p: g.visualize(p / "g.dot", level="kernel", optimization_level=7), ["7"]),
        (lambda g, p: g.visualize(p / "g.dot", level="kernel", streams=2), ["streams", "max_streams"]),
        (lambda g, p: g.visualize(p / "g.dot", streams=2), ["streams", "max_streams"]),
        (lambda g, p: g.visualize(p / "g.dot", target="Ascend999"), ["Ascend999"]),
        (lambda g, p: g.visualize(p / "missing" / "g.dot"), ["cannot write", "missing"]),
    ],
)
def test_bad_arguments_are_named_with_the_choices(tmp_path: Path, call, named: list[str]) -> None:
    with pytest.raises(GeError) as error:
        call(small_cnn(), tmp_path)
    for text in named:
        assert text in str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_a_compiled_model_draws_its_stream_level_only(tmp_path: Path) -> None:
    compiled = ge.GraphCompiler().compile(small_cnn(), optimization_level=0)
    with pytest.raises(GeError, match="stream level only.*Graph.visualize"):
        compiled.visualize(tmp_path / "g.dot", level="kernel")
    with pytest.raises(GeError, match="'nothing'.*graph, kernel, stream"):
        compiled.visualize(tmp_path / "g.dot", level="nothing")


def test_pictures_render_with_dot_or_say_how_to_install_it(tmp_path: Path) -> None:
    graph = small_cnn()
    if shutil.which("dot"):
        for fmt in ("svg", "png", "pdf"):
            path = graph.visualize(tmp_path / f"g.{fmt}", level="kernel")
            assert path.read_bytes().startswith(MAGIC[fmt])
        assert b"<svg" in (tmp_path / "g.svg").read_bytes()
        # pipe() renders in memory: no DOT source left beside the pictures.
        assert sorted(p.name for p in tmp_path.iterdir()) == ["g.pdf", "g.png", "g.svg"]
    else:
        _assert_dot_missing(lambda: graph.visualize(tmp_path / "g.svg"))


def test_without_dot_a_picture_is_refused_with_the_install_command(tmp_path: Path, monkeypatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no `dot` on this PATH, whatever the machine has
    graph = small_cnn()
    for name in ("g.svg", "g.png", "g.pdf"):
        _assert_dot_missing(lambda name=name: graph.visualize(tmp_path / name))
    assert graph.visualize(tmp_path / "g.dot").read_text().startswith("digraph")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "g.dot"]


def _assert_dot_missing(call) -> None:
    with pytest.raises(GeError) as error:
        call()
    message = str(error.value)
    assert "`dot`" in message and "missing" in message
    assert "apt-get install graphviz" in message and "brew install graphviz" in message


def test_api_snippets_run_as_written(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    graph = small_cnn()
    if shutil.which("dot"):
        graph.visualize("resnet50.svg")  # graphviz; .png or .svg
        graph.visualize("g.svg", level="graph")
        for name in ("resnet50.svg", "g.svg"):
            assert (tmp_path / name).read_bytes().startswith(MAGIC["svg"])
    else:
        _assert_dot_missing(lambda: graph.visualize("resnet50.svg"))
        _assert_dot_missing(lambda: graph.visualize("g.svg", level="graph"))
