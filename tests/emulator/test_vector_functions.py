"""The vector unit's own fp32 erf, and the cube's loaded forms of read-only weights.

erf is checked against Python's correctly rounded `math.erf`; the loaded forms by counting how
often they are built."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ge
from ge.dialects import graph as ops
from ge.emulator import cube
from ge.emulator.functions import erf_fp32, vector_implementation
from ge.semantics import IMPLEMENTATIONS

FP32_ULP = np.spacing(np.float32(1))


def test_fp32_erf_is_within_seven_ulp_of_the_correctly_rounded_value() -> None:
    x = np.linspace(-6, 6, 100_001).astype(np.float32)
    got = erf_fp32(x)
    assert got.dtype == np.float32
    exact = np.array([math.erf(float(v)) for v in x])
    ulps = np.abs(got - exact) / np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert ulps.max() <= 7.5
    special = erf_fp32(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32))
    assert np.isnan(special[0])
    np.testing.assert_array_equal(special[1:3], [1.0, -1.0])
    assert special[3] == 0 and not np.signbit(special[3]) and np.signbit(special[4])


@pytest.mark.parametrize(("dtype", "own"), [("float32", True), ("float16", True), ("float64", False)])
def test_erf_and_gelu_take_the_vector_units_form_for_fp32_and_narrower(dtype: str, own: bool) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[4], dtype=dtype)
    erf, gelu = g.add_op(ops.ErfOp, [x]), g.add_op(ops.GeluOp, [x])
    g.add_output(erf, "e")
    g.add_output(gelu, "g")
    for op in (erf.value.owner, gelu.value.owner):
        chosen = vector_implementation(op)
        assert (chosen is not IMPLEMENTATIONS[type(op)]) == own


def test_a_read_only_weight_is_laid_out_once_and_a_writable_one_every_time() -> None:
    builds: list[str] = []

    def form(name: str) -> np.ndarray:
        builds.append(name)
        return np.zeros(1)

    weight = np.arange(6, dtype=np.float32)
    weight.flags.writeable = False
    columns = cube.LoadedForm()
    first = columns(weight, lambda: form("columns"))
    assert columns(weight, lambda: form("columns")) is first
    other = weight.copy()  # another array, even with the same bytes: laid out for it
    other.flags.writeable = False
    columns(other, lambda: form("other"))
    assert builds == ["columns", "other"]
    writable = np.arange(6, dtype=np.float32)
    columns(writable, lambda: form("again"))
    columns(writable, lambda: form("again"))
    assert builds == ["columns", "other", "again", "again"]  # its bytes may change between runs
