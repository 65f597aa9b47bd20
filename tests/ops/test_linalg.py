"""Det against onnxruntime, through `ge.backend` (an AI CPU kernel computing in float64)."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import run_onnxruntime
from single_node import feeds, one_node

import ge.backend
from ge.errors import VerificationError


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 5, 5), (1, 1)])
def test_det(shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    model = one_node("Det", [x], 22)
    (got,) = ge.backend.prepare(model).run(feeds([x], ()))
    (want,) = run_onnxruntime(model, feeds([x], ()))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_det_of_float64_by_cofactors():
    # onnxruntime has no float64 Det: the oracle is the cofactor expansion of 3 x 3 matrices.
    x = np.random.default_rng(1).standard_normal((4, 3, 3))
    (got,) = ge.backend.prepare(one_node("Det", [x], 22)).run(feeds([x], ()))
    a = x.transpose(1, 2, 0)
    want = (
        a[0, 0] * (a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1])
        - a[0, 1] * (a[1, 0] * a[2, 2] - a[1, 2] * a[2, 0])
        + a[0, 2] * (a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0])
    )
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_det_of_float16_and_a_singular_matrix():
    x = np.array([[[1, 2], [2, 4]], [[2, 1], [1, 3]]], np.float16)
    (got,) = ge.backend.prepare(one_node("Det", [x], 22)).run(feeds([x], ()))
    np.testing.assert_array_equal(got, np.array([0, 5], np.float16))


def test_det_needs_square_matrices():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(VerificationError, match="square"):
        ge.backend.prepare(one_node("Det", [x], 22))
