"""`ge-constant-fold`: graphs compute the same before and after, and constants really fold."""

from __future__ import annotations

import numpy as np
import pytest

import ge
from ge.dialects import graph as ops
from ge.interpreter import run_function
from ge.passes import get_pass
from ge.passes.manager import PassManager
from ge.passes.session import CompileSession


def _fold(g: ge.Graph, **options) -> tuple[object, object]:
    module = g.module.clone()
    session = PassManager([get_pass("ge-constant-fold")(**options)]).run(
        module, CompileSession(g.weights.copy())
    )
    return module, session.weights


def _ops(module) -> list[str]:
    return [
        op.name.removeprefix("ascend.graph.") for op in module.walk() if op.name.startswith("ascend.graph.")
    ]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "bfloat16"])
def test_folding_keeps_results(dtype: str, rng: np.random.Generator) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[4, 8], dtype=dtype)
    a = g.add_constant((rng.standard_normal((4, 8)) * 4).astype(np.float32), dtype=dtype, name="a")
    b = g.add_constant((rng.standard_normal((8,)) * 4).astype(np.float32), dtype=dtype, name="b")
    folded = g.add_mul(g.add_add(a, b), g.add_sub(a, b))  # constants only
    g.add_output(g.add_add(x, folded))
    module, weights = _fold(g)
    assert _ops(module) == ["const", "add"]
    data = (
        (rng.standard_normal((4, 8)) * 4)
        .astype(np.float32)
        .astype(ge.dtypes.numpy_dtype(ge.dtypes.element_type(dtype)))
    )
    before = run_function(g.module, [data], g.weights)[0]
    after = run_function(module, [data], weights)[0]
    np.testing.assert_array_equal(after, before)


def test_large_results_go_to_the_weight_store_and_the_cap_holds(rng: np.random.Generator) -> None:
    g = ge.Graph()
    w = g.add_constant(rng.standard_normal((64, 32)).astype(np.float32), name="w")
    g.add_output(g.add_transpose(g.add_relu(w), [1, 0]))
    module, weights = _fold(g)
    (const,) = [op for op in module.walk() if isinstance(op, ops.ConstOp)]
    assert const.value.name == "dense_resource"
    np.testing.assert_array_equal(run_function(module, [], weights)[0], np.maximum(g.weights.get("w"), 0).T)
    capped, _ = _fold(g, max_elements=1000)
    assert _ops(capped) == ["const", "relu", "transpose"]


def test_the_graphs_own_weights_are_untouched() -> None:
    g = ge.Graph()
    w = g.add_constant(np.arange(64, dtype=np.float32).reshape(8, 8), name="w")
    g.add_output(g.add_relu(w))
    keys = list(g.weights)
    _fold(g)
    assert list(g.weights) == keys
