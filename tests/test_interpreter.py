"""The kernel-level runner (`run_kernels`) computes what the reference interpreter computes on the
graph before lowering: kernels run their bodies, format conversions and views move no values."""

from __future__ import annotations

import numpy as np
import pytest
from models import cnn, mlp
from xdsl.dialects.builtin import ModuleOp

import ge
from ge.dialects.common import TARGET_ATTR_NAME
from ge.interpreter import run_function, run_kernels
from ge.passes.manager import PassManager
from ge.passes.pipelines import make_pass
from ge.passes.session import CompileSession
from ge.soc import load_profile

LOWERINGS = {
    "one kernel per op": ["ge-lower-graph-to-kernel{form-kernels=false}"],
    "kernel formation": ["ge-lower-graph-to-kernel"],
    "device formats": ["ge-lower-graph-to-kernel", "ge-assign-formats", "ge-tile-kernels"],
}


def branches() -> ge.Graph:
    """Two convs concatenated (a concat view), a flatten (a view), float64 arithmetic (an AI CPU
    kernel) and a softmax."""
    g = ge.Graph()
    x = g.add_input("x", [1, 16, 8, 8])
    a = g.add_conv2d(x, 16, 3, padding=1, name="a")
    b = g.add_conv2d(x, 16, 1, name="b")
    joined = g.add_relu(g.add_concat([a, b], 1, name="cat"), name="relu")
    flat = g.add_flatten(g.add_global_avgpool(joined, name="gap"), name="flat")
    y = g.add_cast(g.add_linear(flat, 10, name="fc"), "float64")
    g.add_output(g.add_softmax(g.add_cast(g.add_mul(y, y, name="square"), "float32")), "y")
    return g


def lowered(graph: ge.Graph, flags: list[str]) -> tuple[ModuleOp, CompileSession]:
    module = graph.module.clone()
    module.attributes[TARGET_ATTR_NAME] = load_profile("npu").target_attr()
    session = PassManager([make_pass(flag) for flag in flags]).run(
        module, CompileSession(graph.weights.copy())
    )
    return module, session


@pytest.mark.parametrize("lowering", LOWERINGS)
@pytest.mark.parametrize("build", [branches, lambda: cnn().graph, lambda: mlp().graph])
def test_kernel_level_runs_as_the_graph(build, lowering: str, rng) -> None:
    graph = build()
    module, session = lowered(graph, LOWERINGS[lowering])
    args = module.body.block.first_op.body.block.args
    inputs = [rng.standard_normal(a.type.get_shape()).astype(np.float32) for a in args]
    expected = run_function(graph.module, inputs, graph.weights)
    got = run_kernels(module, inputs, session.weights)
    assert len(got) == len(expected)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_array_equal(g, e)


def test_every_kernel_level_op_runs(rng) -> None:
    """The branches graph with device formats holds each kind of kernel-level op."""
    graph = branches()
    module, session = lowered(graph, LOWERINGS["device formats"])
    kinds = {op.name for op in module.body.block.first_op.body.block.ops}
    assert {
        "ascend.kernel.cube",
        "ascend.kernel.vector",
        "ascend.kernel.aicpu",
        "ascend.kernel.trans_data",
        "ascend.kernel.view",
        "ascend.kernel.concat_view",
    } <= kinds
    x = rng.standard_normal((1, 16, 8, 8)).astype(np.float32)
    np.testing.assert_array_equal(
        run_kernels(module, [x], session.weights)[0], run_function(graph.module, [x], graph.weights)[0]
    )


def test_kernel_level_takes_its_inputs() -> None:
    module, session = lowered(branches(), LOWERINGS["kernel formation"])
    with pytest.raises(ge.GeError, match="takes 1 inputs, 0 given"):
        run_kernels(module, [], session.weights)
