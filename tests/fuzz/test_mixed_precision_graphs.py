"""`ge-mixed-precision` on random valid graphs (`graphs.py`): each graph run with the reference
interpreter before and after the pass, at `allow_mix_precision` and at `force_fp16`, gives the
same outputs within float16's tolerance, in the graph's own dtypes; and under
`allow_mix_precision` no black-listed op changes type.

Graphs that compare values (`Where` and its conditions) or cast floats to integers are left
out: one float16 rounding upstream flips a comparison or an integer, which no tolerance covers.
Outputs of the float32 graph beyond 1,000 are left out too: float16 holds nothing above 65,504,
and an intermediate a few times larger than the output would overflow.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from graphs import RandomModel, random_models
from hypothesis import HealthCheck, assume, given, settings

import ge
from ge.dialects.graph import KeepsPrecision
from ge.interpreter import run_function
from ge.passes import get_pass
from ge.passes.manager import PassManager
from ge.passes.session import CompileSession

EXAMPLES = {"ci": 150, "fuzz": 1000}
TESTS = settings(
    max_examples=EXAMPLES.get(settings.get_current_profile_name(), settings().max_examples),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

FLOAT16 = 2e-2
"""Relative to an output's largest magnitude (at least 1): a few float16 roundings (2**-11 each)
on the way, grown by the sums of matmuls and reductions."""
LARGEST = 1000.0
COMPARISONS = {"Where", "Greater", "Less", "Equal"}
INTEGERS = {onnx.TensorProto.INT32, onnx.TensorProto.INT64}


@pytest.mark.parametrize("mode", ["allow_mix_precision", "force_fp16"])
@TESTS
@given(random=random_models())
def test_mixed_precision_keeps_what_a_random_graph_computes(random: RandomModel, mode: str) -> None:
    assume(not reads_exact_values(random.model))
    imported = ge.GraphParser().parse_onnx(random.model)
    inputs = list(random.feeds.values())
    expected = run_function(imported.module, inputs, imported.weights)
    assume(all(np.all(np.abs(e) <= LARGEST) for e in expected if e.dtype.kind == "f"))
    module = imported.module.clone()
    pass_ = get_pass("ge-mixed-precision")(mode=mode)
    session = PassManager([pass_]).run(module, CompileSession(imported.weights.copy()))
    actual = run_function(module, inputs, session.weights)
    assert len(actual) == len(expected)
    for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
        where = f"{mode}: output {index}"
        assert (a.dtype, a.shape) == (e.dtype, e.shape), where  # outputs keep their types
        if e.dtype.kind != "f":
            np.testing.assert_array_equal(a, e, err_msg=where)
            continue
        atol = FLOAT16 * max(1.0, float(np.max(np.abs(e), initial=0)))
        np.testing.assert_allclose(
            a.astype(np.float64), e.astype(np.float64), rtol=FLOAT16, atol=atol, err_msg=where
        )
    if mode == "allow_mix_precision":
        assert black_list_types(module) == black_list_types(imported.module)


def reads_exact_values(model: onnx.ModelProto) -> bool:
    """Whether the model compares values or casts them to integers."""
    for node in model.graph.node:
        if node.op_type in COMPARISONS:
            return True
        if node.op_type == "Cast" and any(a.name == "to" and a.i in INTEGERS for a in node.attribute):
            return True
    return False


def black_list_types(module) -> list[tuple[str, list[str], list[str]]]:
    """Each black-listed op in program order: its name and its operand and result types."""
    return [
        (op.name, [str(v.type) for v in op.operands], [str(r.type) for r in op.results])
        for op in module.walk()
        if op.has_trait(KeepsPrecision)
    ]
