"""Every `ascend.graph` op is described everywhere it must be, and no pass keeps a list of op
classes: what an op is lives on its definition (traits, `MatrixProductInterface`), and the only
per-op tables outside the dialect are dispatch tables, keyed by op class."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest
from xdsl.ir import Operation
from xdsl.traits import IsTerminator

from ge.cost import ops as cost_ops
from ge.dialects import graph
from ge.emulator import cube_steps
from ge.semantics import IMPLEMENTATIONS

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPS = [op for op in graph.GRAPH_OPS if not op.has_trait(IsTerminator)]


def test_every_op_has_semantics():
    assert [op.name for op in OPS if op not in IMPLEMENTATIONS] == []


WITHOUT_ONNX_OPERATOR = frozenset(
    {
        graph.Log1pOp,
        graph.Log2Op,
        graph.Log10Op,
        graph.Expm1Op,
        graph.ErfcOp,
        graph.Atan2Op,
        graph.CumMaxOp,
        graph.CumMinOp,
        graph.LogCumSumExpOp,
    }
)
"""Ops no ONNX operator computes: ONNX spells log1p as Log(Add(x, 1)), expm1 as Sub(Exp(x), 1) and
erfc as Sub(1, Erf(x)), which lose what the ops keep for tiny x (large x for erfc), has no log2
or log10 (Div(Log(x), log(b)) is off by an ulp on exact powers), and has no atan2 and no running
max, min or log-sum-exp. The framework frontends build them."""


def test_every_op_a_frontend_builds_has_an_onnx_rule():
    """An op is built by an ONNX rule (directly or through the `Graph` builder the importer
    calls) unless fusion alone makes it (`FusionOnly`) or ONNX has no operator for it."""
    sources = [*(ROOT / "ge/frontends/onnx").glob("*.py"), ROOT / "ge/graph.py"]
    text = "\n".join(path.read_text() for path in sources)
    missing = [
        op.name
        for op in OPS
        if not op.has_trait(graph.FusionOnly)
        and op not in WITHOUT_ONNX_OPERATOR
        and re.search(rf"\b{op.__name__}\b", text) is None
    ]
    assert missing == []


def test_ops_without_an_onnx_operator_are_built_by_another_frontend():
    text = "\n".join(path.read_text() for path in (ROOT / "ge/frontends").rglob("*.py"))
    assert [op.name for op in WITHOUT_ONNX_OPERATOR if re.search(rf"\b{op.__name__}\b", text) is None] == []


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
    table = cube_steps.ON_CUBE
    assert set(table) == {
        graph.Conv2DOp,
        graph.MatMulOp,
        graph.GemmOp,
        graph.AttentionOp,
        graph.RNNOp,
        graph.GRUOp,
        graph.LSTMOp,
        graph.ConvTranspose2DOp,
        graph.ConvTranspose3DOp,
        graph.Conv3DOp,
    }
    assert all(op.has_trait(graph.MatrixProductInterface) for op in table)
    # Each fused op whose base the cube emulates runs its base on the cube too.
    assert {base for base in graph.FUSED_BY_BASE if base in table} == {
        graph.Conv2DOp,
        graph.MatMulOp,
        graph.GemmOp,
        graph.Conv3DOp,
    }


# --------------------------------------------------------------------------------------------
# No lists of op classes outside the dialects
# --------------------------------------------------------------------------------------------

GRAPH_OP_CLASSES = frozenset(
    cls.__name__
    for cls in vars(graph).values()
    if isinstance(cls, type) and issubclass(cls, Operation) and cls.__module__.startswith("ge.dialects.graph")
)
"""The `ascend.graph` op classes by name, families' base classes (`ReduceOp`, `FusedOp`) included."""


def class_lists(path: pathlib.Path) -> list[int]:
    """Lines that classify ops by a list of two or more `ascend.graph` op classes (`graph.AddOp`,
    `MaxPoolOp` imported from the dialect, ...), at any level: a tuple, list or set of them
    (`CUBE = (...)`, `base in (...)`), a union (`isinstance(op, A | B)`), alternatives joined by
    `or` (`base is A or base is B`), or a call given two or more (`view.is_a(A, B)`). Dispatch
    tables, keyed by op class, are dicts: whatever sits inside a dict is one entry per op, not a
    list. An annotation types a value rather than classifying it, unless xDSL matches ops by it
    (`@op_type_rewrite_pattern`)."""
    tree = ast.parse(path.read_text())
    names = _graph_names(tree)
    skipped = _plain_annotations(tree)
    return sorted(
        {
            node.lineno
            for node in _outside(tree, skipped)
            if _lists_op_classes(node, lambda n: _names_op_class(n, names))
        }
    )


def _graph_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(the names bound to the `ascend.graph` dialect module, the op classes imported from it)."""
    modules, classes = {"graph"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                if node.module.endswith("dialects") and alias.name == "graph":
                    modules.add(alias.asname or alias.name)
                elif "graph" in node.module.split("."):
                    if alias.name in GRAPH_OP_CLASSES:
                        classes.add(alias.asname or alias.name)
    return modules, classes


def _plain_annotations(tree: ast.Module) -> set[int]:
    """The ids of annotation nodes that only type a value."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            matched_by = any("op_type_rewrite_pattern" in ast.unparse(d) for d in node.decorator_list)
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            annotations = [a.annotation for a in arguments] + [node.returns]
            skipped.update(id(a) for a in annotations if a is not None and not matched_by)
        elif isinstance(node, ast.AnnAssign):
            skipped.add(id(node.annotation))
    return skipped


def _outside(node: ast.AST, skipped: set[int]):
    """Every node but those inside a dict or a skipped annotation."""
    if id(node) in skipped:
        return
    yield node
    if isinstance(node, ast.Dict):
        return
    for child in ast.iter_child_nodes(node):
        yield from _outside(child, skipped)


def _lists_op_classes(node: ast.AST, is_op_class) -> bool:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return sum(is_op_class(element) for element in node.elts) >= 2
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return len(_union_members(node, is_op_class)) >= 2
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return sum(len(_tested_classes(value, is_op_class)) for value in node.values) >= 2
    if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id == "isinstance"):
        return sum(is_op_class(argument) for argument in node.args) >= 2  # view.is_a(A, B)
    return False


def _union_members(node: ast.AST, is_op_class) -> list[ast.AST]:
    """The op classes of an `A | B | ...` union."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left, is_op_class) + _union_members(node.right, is_op_class)
    return [node] if is_op_class(node) else []


def _tested_classes(node: ast.AST, is_op_class) -> list[ast.AST]:
    """The op classes one alternative of an `or` names: `x is A`, `x == A`, `isinstance(x, A)`."""
    if isinstance(node, ast.Compare):
        return [c for c in node.comparators if is_op_class(c)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
        return [a for a in node.args[1:] if is_op_class(a)]
    return []


def _names_op_class(node: ast.AST, names: tuple[set[str], set[str]]) -> bool:
    modules, classes = names
    if isinstance(node, ast.Starred):
        node = node.value
    if isinstance(node, ast.Attribute):
        return isinstance(node.value, ast.Name) and node.value.id in modules and node.attr in GRAPH_OP_CLASSES
    return isinstance(node, ast.Name) and node.id in classes


def test_no_lists_of_op_classes_outside_the_dialects():
    found = {}
    for package in ("ge", "passes", "bench", "tools"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if lines := class_lists(path):
                found[name] = lines
    assert found == {}


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("CUBE = (graph.MatMulOp, graph.GemmOp)", True),
        ("from ge.dialects.graph import AddOp, ReluOp\nX: tuple = [*BASE, ReluOp, AddOp]", True),
        ("from ..graph.nn import MatMulOp, GemmOp\nX = (MatMulOp, GemmOp)", True),
        ("from ge.dialects import graph as g\nX = (g.MatMulOp, g.GemmOp)", True),
        ("class P:\n    OPS = {graph.AddOp, graph.SubOp}", True),
        ("TABLE = {graph.MaxPoolOp: (graph.MaxPoolOp, graph.MaxPool3DOp)}", False),
        ("ONE = (graph.AddOp,)", False),
        ("def f():\n    return (graph.AddOp, graph.SubOp)", True),
        ("def f(op):\n    return isinstance(op, graph.ReshapeOp | graph.FlattenOp)", True),
        ("def f(op):\n    return isinstance(op, (graph.ReshapeOp, graph.FlattenOp))", True),
        ("def f(op):\n    return type(op) in (graph.MatMulOp, graph.GemmOp)", True),
        ("def f(base):\n    return base is graph.Conv2DOp or base is graph.Conv3DOp", True),
        ("def f(op):\n    return isinstance(op, graph.AddOp) or isinstance(op, graph.SubOp)", True),
        ("def f(view):\n    return view.is_a(graph.NonZeroOp, graph.UniqueOp)", True),
        ("def f(view):\n    return view.is_a(graph.PoolOp)", False),
        ("def f(op: graph.AddOp | graph.SubOp):\n    pass", False),
        ("@op_type_rewrite_pattern\ndef f(self, op: graph.AddOp | graph.SubOp, r):\n    pass", True),
        ("def f(op):\n    return isinstance(op, graph.ReduceOp) and op.keepdims", False),
        ("def f(op):\n    return isinstance(op, graph.FusedOp) and op.BASE is graph.Conv2DOp", False),
        # Same-named classes of other dialects are not graph ops.
        ("from ge.dialects.kernel import YieldOp\nX = (YieldOp, ReturnOp, graph.ConstOp)", False),
        # Kernel- and stream-level ops are the IR's structure, not a classification of graph ops.
        ("def f(op):\n    return isinstance(op, CubeKernelOp | VectorKernelOp)", False),
        ("def f(op):\n    return isinstance(op, graph.AddOp | int)", False),
        ("def f(op):\n    return {graph.AddOp: 1, graph.SubOp: 2}[type(op)]", False),
    ],
)
def test_the_rule_recognises_lists_by_shape(tmp_path, source, flagged):
    path = tmp_path / "module.py"
    path.write_text(source + "\n")
    assert bool(class_lists(path)) is flagged
