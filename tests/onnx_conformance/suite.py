"""The ONNX backend test suite over `ge.backend`, and its checked-in list of expected failures.

`expected_failures.txt` names each case `ge` cannot run yet with the category of what is missing
(an operator, a dtype, an attribute value, an input kind). A listed case must fail with an
`UnsupportedOperatorError` of that category: a wrong value is never an expected failure, and a
listed case that passes fails the run until it is removed from the list.
"""

from __future__ import annotations

import unittest
import warnings
from pathlib import Path

import numpy as np
import onnx.backend.test

import ge.backend

EXPECTED_FAILURES = Path(__file__).with_name("expected_failures.txt")

DEVICE_SUFFIX = "_cpu"
"""Every suite ships inside the onnx package (node cases are generated in memory from
onnx.backend.test.case.node; the "real" models are the light model-zoo CNNs stored with it);
`ge` runs each case once, as the CPU device of the suite."""


TOLERANCES: dict[str, dict[str, float]] = {
    # The expected output was computed in float16 throughout (the softmax sum accumulates in
    # float16); ge accumulates in float32 as the AI Core does, which differs by 2 float16 ulp.
    "test_attention_4d_causal_fp16_expanded": {"rtol": 2e-3},
    # The expected outputs carry float32 FFT rounding (about 2e-7) where the exact value is 0; ge's
    # DFT is one matrix product and gives about 3e-15 there.
    "test_dft_inverse": {"atol": 1e-6},
    "test_dft_inverse_opset19": {"atol": 1e-6},
}
"""Per-case tolerances, where the suite's expected output carries more rounding than ge."""


def expected_failures() -> dict[str, str]:
    """Test name -> category, from the checked-in list."""
    table = {}
    for number, line in enumerate(EXPECTED_FAILURES.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, category = line.split()
        if name in table:
            raise ValueError(f"{EXPECTED_FAILURES.name}:{number}: '{name}' is listed twice")
        table[name] = category
    return table


class _BackendTest(onnx.backend.test.BackendTest):
    @classmethod
    def assert_similar_outputs(cls, ref_outputs, outputs, rtol, atol, model_dir=None):  # type: ignore[override]
        # onnx's runner recurses into a sequence with each element as the list to compare, which
        # fails on a 0-d element (it has no len()): compare such an element as a one-item list.
        if isinstance(ref_outputs, np.ndarray) and isinstance(outputs, np.ndarray):
            ref_outputs, outputs = [ref_outputs], [outputs]
        super().assert_similar_outputs(ref_outputs, outputs, rtol, atol, model_dir)


def backend_test_classes(module: str) -> dict[str, type[unittest.TestCase]]:
    """The suite's unittest classes, holding the CPU variant of every case."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the case generators overflow on purpose
        backend_test = _BackendTest(ge.backend, module, TOLERANCES)
    classes = backend_test.test_cases
    for case in classes.values():
        for name in [n for n in vars(case) if n.startswith("test_") and not n.endswith(DEVICE_SUFFIX)]:
            delattr(case, name)
    return classes
