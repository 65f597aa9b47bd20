"""Random valid ONNX graphs (`graphs.py`) through `ge`: compiled at every optimization level
and run on the emulator against onnxruntime, and each graph pass checked with the reference
interpreter before and after it, so that a wrong result names the pass that made it.

Examples per test, by hypothesis profile (tests/conftest.py): `EXAMPLES["ci"]` under `make test`
(the same 7,200 graphs over the file's six tests on every run; with the mutation fuzzers, about
two minutes of tests/fuzz on two cores) and `EXAMPLES["fuzz"]` under `make fuzz` (5,000 fresh
ones); another profile's `max_examples` otherwise.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from graphs import RandomModel, random_models
from hypothesis import HealthCheck, given, settings
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

import ge
import ge.backend
from ge.interpreter import run_function
from ge.passes.manager import PassManager
from ge.passes.pipelines import graph_passes
from ge.passes.session import CompileSession

EXAMPLES = {"ci": 1200, "fuzz": 834}
TESTS = settings(
    max_examples=EXAMPLES.get(settings.get_current_profile_name(), settings().max_examples),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

FLOAT32, FLOAT16 = 1e-4, 1e-2
"""Tolerances, relative and to the output's largest magnitude (at least 1): float32 sums of a few
dozen terms (matmul, conv, reductions), and float16 roundings of the intermediates, which one
implementation may make in float32 and round once (an output computed through float16 has its
precision, whatever its dtype)."""


def assert_close(actual: list[np.ndarray], expected: list[np.ndarray], half: list[bool], what: str) -> None:
    assert len(actual) == len(expected), what
    for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
        a, e = np.asarray(a), np.asarray(e)
        where = f"{what}: output {index}"
        assert a.dtype == e.dtype, f"{where}: {a.dtype} != {e.dtype}"
        assert a.shape == e.shape, f"{where}: {a.shape} != {e.shape}"
        if e.dtype.kind != "f":
            np.testing.assert_array_equal(a, e, err_msg=where)
            continue
        rtol = FLOAT16 if half[index] or e.dtype == np.float16 else FLOAT32
        atol = rtol * max(1.0, float(np.max(np.abs(e), initial=0)))
        np.testing.assert_allclose(
            a.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol, err_msg=where
        )


def run_reference(random: RandomModel) -> list[np.ndarray]:
    """The model passes onnx's full check; onnxruntime's outputs, node by node: its graph
    optimizations would drop the roundings of float16 casts that the model asks for."""
    onnx.checker.check_model(random.model, full_check=True)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(
        random.model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, random.feeds)


@pytest.mark.parametrize("level", [0, 1, 2, 3])
@TESTS
@given(random=random_models())
def test_a_random_graph_compiles_and_matches_onnxruntime(random: RandomModel, level: int) -> None:
    expected = run_reference(random)
    actual = ge.backend.prepare(random.model, optimization_level=level).run(list(random.feeds.values()))
    assert_close(actual, expected, random.half, f"O{level}")


@pytest.mark.parametrize("level", [1, 3])
@TESTS
@given(random=random_models())
def test_each_graph_pass_keeps_what_the_graph_computes(random: RandomModel, level: int) -> None:
    """O2's graph passes are O3's; the reference interpreter is checked against onnxruntime first."""
    expected = run_reference(random)
    imported = ge.GraphParser().parse_onnx(random.model)
    inputs = list(random.feeds.values())
    before = run_function(imported.module, inputs, imported.weights)
    assert_close(before, expected, random.half, "the reference interpreter on the imported graph")
    module = imported.module.clone()
    session = CompileSession(imported.weights.copy())

    def compare(previous: ModulePass | None, module: ModuleOp, _: ModulePass | None) -> None:
        nonlocal before
        if previous is not None:
            after = run_function(module, inputs, session.weights)
            assert_close(after, before, random.half, f"after {previous.name}")
            before = after

    PassManager(graph_passes(level), instruments=[compare]).run(module, session)
