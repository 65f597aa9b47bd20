"""Every `ascend.graph` op is described everywhere it must be, and no pass keeps a list of op
classes: what an op is lives on its definition (traits, `MatrixProductInterface`), and the only
per-op tables outside the dialect are dispatch tables, keyed by op class."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest
from xdsl.traits import IsTerminator

from ge.cost import ops as cost_ops
from ge.dialects import graph
from ge.emulator import kernels as emulator_kernels
from ge.semantics import IMPLEMENTATIONS

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPS = [op for op in graph.GRAPH_OPS if not op.has_trait(IsTerminator)]


def test_every_op_has_semantics():
    assert [op.name for op in OPS if op not in IMPLEMENTATIONS] == []


def test_every_op_a_frontend_builds_has_an_onnx_rule():
    """An op is built by an ONNX rule (directly or through the `Graph` builder the importer
    calls) unless fusion alone makes it (`FusionOnly`)."""
    sources = [*(ROOT / "ge/frontends/onnx").glob("*.py"), ROOT / "ge/graph.py"]
    text = "\n".join(path.read_text() for path in sources)
    missing = [
        op.name
        for op in OPS
        if not op.has_trait(graph.FusionOnly) and re.search(rf"\b{op.__name__}\b", text) is None
    ]
    assert missing == []


def test_fusion_only_ops_are_built_by_no_frontend():
    text = "\n".join(path.read_text() for path in (ROOT / "ge/frontends").rglob("*.py"))
    built = [
        op.name for op in OPS if op.has_trait(graph.FusionOnly) and re.search(rf"\b{op.__name__}\b", text)
    ]
    assert built == []


def test_every_matrix_product_family_has_its_cost():
    """The cost model prices each op built on matrix products through its family's entry; a fused
    op is priced as its base op."""
    families = cost_ops._CUBE_FAMILIES  # pyright: ignore[reportPrivateUsage] the table under test
    products = [op for op in OPS if op.has_trait(graph.MatrixProductInterface)]
    assert len(products) >= 12
    unpriced = [
        op.name for op in products if not any(cls in families for cls in getattr(op, "BASE", op).__mro__)
    ]
    assert unpriced == []
    assert [cls.__name__ for cls in families if not cls.has_trait(graph.MatrixProductInterface)] == []


def test_emulated_cube_ops_are_matrix_products():
    table = emulator_kernels._ON_CUBE  # pyright: ignore[reportPrivateUsage] the table under test
    assert set(table) == {graph.Conv2DOp, graph.MatMulOp, graph.GemmOp}
    assert all(op.has_trait(graph.MatrixProductInterface) for op in table)
    # Each fused op whose base the cube emulates runs its base on the cube too.
    assert {base for base in graph.FUSED_BY_BASE if base in table} == {
        graph.Conv2DOp,
        graph.MatMulOp,
        graph.GemmOp,
    }


# --------------------------------------------------------------------------------------------
# No lists of op classes outside the dialects
# --------------------------------------------------------------------------------------------

OP_CLASS = re.compile(r"^[A-Z]\w*Op$")


def class_lists(path: pathlib.Path) -> list[int]:
    """Lines of module- or class-level assignments holding a tuple, list or set of two or more op
    classes (`graph.AddOp`, `MaxPoolOp`, ...). Dispatch tables, keyed by op class, are dicts:
    whatever sits inside a dict is one entry per op, not a list."""
    tree = ast.parse(path.read_text())
    bodies = [tree.body] + [node.body for node in tree.body if isinstance(node, ast.ClassDef)]
    lines = []
    for body in bodies:
        for statement in body:
            if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
                if any(_is_class_list(node) for node in _outside_dicts(statement.value)):
                    lines.append(statement.lineno)
    return lines


def _outside_dicts(node: ast.AST):
    yield node
    if isinstance(node, ast.Dict):
        return
    for child in ast.iter_child_nodes(node):
        yield from _outside_dicts(child)


def _is_class_list(node: ast.AST) -> bool:
    if not isinstance(node, ast.Tuple | ast.List | ast.Set):
        return False
    return sum(_names_op_class(element) for element in node.elts) >= 2


def _names_op_class(node: ast.AST) -> bool:
    if isinstance(node, ast.Starred):
        node = node.value
    if isinstance(node, ast.Attribute):
        return OP_CLASS.match(node.attr) is not None
    return isinstance(node, ast.Name) and OP_CLASS.match(node.id) is not None


def test_no_lists_of_op_classes_outside_the_dialects():
    found = {}
    for package in ("ge", "passes"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if lines := class_lists(path):
                found[name] = lines
    assert found == {}


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("CUBE = (graph.MatMulOp, graph.GemmOp)", True),
        ("X: tuple = [*BASE, ReluOp, AddOp]", True),
        ("class P:\n    OPS = {graph.AddOp, graph.SubOp}", True),
        ("TABLE = {graph.MaxPoolOp: (graph.MaxPoolOp, graph.MaxPool3DOp)}", False),
        ("ONE = (graph.AddOp,)", False),
        ("def f():\n    return (graph.AddOp, graph.SubOp)", False),
    ],
)
def test_the_rule_recognises_lists_by_shape(tmp_path, source, flagged):
    path = tmp_path / "module.py"
    path.write_text(source + "\n")
    assert bool(class_lists(path)) is flagged
