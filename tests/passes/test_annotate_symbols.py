"""`ge-annotate-symbols` on random graphs over a symbolic batch: every annotation predicts the
shape the graph has once specialized at a batch, and annotating changes nothing it computes."""

from __future__ import annotations

import math
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr
from xdsl.dialects.func import FuncOp

import ge
from ge.interpreter import run_function
from ge.passes.graph.annotate_symbols import AnnotateSymbolsPass
from ge.symbolic import DIMS_ATTR

STEPS = ("relu", "flatten", "concat_rows", "concat_columns", "transpose", "reduce", "scale", "project")


def _applicable(steps: list[str]) -> list[str]:
    """The steps a chain over x [batch, 4, 6] can take in turn: flatten and reduce need rank 3,
    scale and project a static last dimension (the batch may have moved there)."""
    shape: list[int | None] = [None, 4, 6]
    taken = []
    for step in steps:
        if (
            step in ("flatten", "reduce")
            and len(shape) < 3
            or step in ("scale", "project")
            and shape[-1] is None
        ):
            continue
        taken.append(step)
        if step == "flatten":
            rest = [d for d in shape[1:] if d is not None]
            shape = [shape[0], math.prod(rest) if len(rest) == len(shape) - 1 else None]
        elif step == "transpose":
            shape = shape[::-1]
        elif step == "reduce":
            shape = shape[:-1]
        elif step == "project":
            shape = [*shape[:-1], 3]
        elif step == "concat_columns":
            shape = [*shape[:-1], None if shape[-1] is None else 2 * shape[-1]]
    return taken


def _build(steps: list[str], batch: int | str) -> ge.Graph:
    """A chain over x [batch, 4, 6], each of `steps` applied to the previous value."""
    g = ge.Graph(seed=1)
    value = g.add_input("x", [batch, 4, 6])
    for step in steps:
        rank = len(value.shape)
        if step == "relu":
            value = g.add_relu(value)
        elif step == "flatten":
            value = g.add_flatten(value)
        elif step == "concat_rows":
            value = g.add_concat([value, g.add_relu(value)], axis=0)
        elif step == "concat_columns":
            value = g.add_concat([value, value], axis=rank - 1)
        elif step == "transpose":
            value = g.add_transpose(value, list(reversed(range(rank))))
        elif step == "reduce":
            value = g.add_op(
                ge.dialects.graph.ReduceSumOp, [value], {"axes": _axes(rank - 1), "keepdims": False}
            )
        elif step == "scale":
            value = g.add_mul(value, g.add_constant(np.full(value.shape[-1:], 0.5, np.float32)))
        elif step == "project":
            weight = np.random.default_rng(2).standard_normal((value.shape[-1], 3)).astype(np.float32)
            value = g.add_matmul(value, g.add_constant(weight))
    g.add_output(value, "y")
    return g


def _axes(axis: int):
    from xdsl.dialects.builtin import DenseArrayBase, i64

    return DenseArrayBase.from_list(i64, [axis])


def _size(dim: object, batch: int) -> int | None:
    """A recorded dimension at `batch`: a number, `batch` or a combination of it (`2*batch+4`);
    None for a fresh symbol, which names a size the analysis could not express."""
    if isinstance(dim, IntegerAttr):
        return dim.value.data
    assert isinstance(dim, StringAttr)
    text = dim.data
    if not re.fullmatch(r"[0-9batch*+]+", text):
        return None
    return int(eval(text, {"__builtins__": {}}, {"batch": batch}))  # noqa: S307 (digits, batch, * and +)


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=6), batch=st.integers(1, 5))
def test_annotations_predict_the_specialized_shapes(steps: list[str], batch: int) -> None:
    steps = _applicable(steps)
    symbolic = _build(steps, "batch")
    module = symbolic.module.clone()
    AnnotateSymbolsPass().apply(Context(), module)
    static = _build(steps, batch)  # the same chain built at one batch, independently
    annotated = [op for op in next(o for o in module.walk() if isinstance(o, FuncOp)).body.block.ops]
    plain = [op for op in next(o for o in static.module.walk() if isinstance(o, FuncOp)).body.block.ops]
    assert len(annotated) == len(plain)
    for op, same in zip(annotated, plain, strict=True):
        recorded = op.attributes.get(DIMS_ATTR)
        if recorded is None:
            assert all(
                -1 not in r.type.get_shape() and min(r.type.get_shape(), default=0) >= 0 for r in op.results
            )
            continue
        assert isinstance(recorded, ArrayAttr) and len(op.results) == 1
        sizes = [_size(d, batch) for d in recorded.data]
        expected = list(same.results[0].type.get_shape())
        assert [s if s is not None else e for s, e in zip(sizes, expected, strict=True)] == expected, op.name


def test_annotating_changes_nothing_the_graph_computes() -> None:
    steps = ["concat_rows", "project", "transpose", "relu", "transpose", "scale"]
    graph = _build(steps, "batch")
    annotated = graph.module.clone()
    AnnotateSymbolsPass().apply(Context(), annotated)
    x = np.random.default_rng(3).standard_normal((3, 4, 6)).astype(np.float32)
    specialized = graph.specialize({"batch": 3})
    before = run_function(specialized.module, [x], specialized.weights)
    after_graph = ge.Graph.from_module(annotated, graph.weights).specialize({"batch": 3})
    after = run_function(after_graph.module, [x], after_graph.weights)
    np.testing.assert_array_equal(after[0], before[0])
