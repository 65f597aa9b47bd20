"""`ge-simplify`: graphs compute the same bits before and after, and the no-ops are gone."""

from __future__ import annotations

import numpy as np

import ge
from ge.interpreter import run_function
from ge.passes import get_pass
from ge.passes.manager import PassManager
from ge.passes.pipelines import make_pass
from ge.passes.session import CompileSession


def _simplify(g: ge.Graph):
    module = g.module.clone()
    PassManager([get_pass("ge-simplify")(), make_pass("dce")]).run(module, CompileSession(g.weights.copy()))
    return module


def test_chains_and_neutral_constants(rng: np.random.Generator) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[2, 3, 4])
    t = g.add_transpose(g.add_transpose(x, [1, 0, 2]), [1, 0, 2])
    r = g.add_reshape(g.add_flatten(g.add_reshape(t, [24]), axis=1), [6, 4])
    one = g.add_splat(1.0, [6, 4])
    z = g.add_splat(-0.0, [6, 4])
    y = g.add_add(g.add_mul(r, one), z)
    g.add_output(g.add_relu(y))
    module = _simplify(g)
    kinds = [
        op.name.removeprefix("ascend.graph.") for op in module.walk() if op.name.startswith("ascend.graph.")
    ]
    assert kinds == ["reshape", "relu"]
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)
    data[0, 0, 0] = -0.0
    before = run_function(g.module, [data], g.weights)[0]
    after = run_function(module, [data], g.weights)[0]
    assert before.tobytes() == after.tobytes()


def test_signed_zero_is_respected() -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[2])
    g.add_output(g.add_add(x, g.add_splat(0.0, [2])))
    module = _simplify(g)
    data = np.array([-0.0, 1.0], np.float32)
    after = run_function(module, [data], g.weights)[0]
    assert np.signbit(after[0]) == np.signbit(np.float32(-0.0) + np.float32(0.0))
