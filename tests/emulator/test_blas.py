"""The cube's direct BLAS calls: sgemm writing or adding each k-step's product into an fp32
accumulator in place (`blas.KSteps`).

Expected values are exact integer products computed in int64 by numpy (integer-valued fp32
inputs whose sums stay below 2**24, so fp32 holds every partial sum exactly)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from ge.emulator import blas


def _integers(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-8, 9, shape).astype(np.float32)


def test_the_bundled_openblas_is_found() -> None:
    assert blas.kernel_set(), "numpy's wheel bundles an OpenBLAS that names its kernels"
    a, b, c = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), np.zeros((2, 4), np.float32)
    steps = blas.KSteps.plan(a, b, c)
    assert steps is not None
    steps(0, 3, add=False)
    np.testing.assert_array_equal(c, np.full((2, 4), 3.0))


@pytest.mark.skipif(platform.machine() != "x86_64", reason="OpenBLAS's x86-64 kernel sets")
def test_names_the_kernel_set_openblas_was_told_to_run() -> None:
    """OpenBLAS reads OPENBLAS_CORETYPE when it loads, so a fresh interpreter is told each."""
    script = "from ge.emulator import blas; print(blas.kernel_set())"
    for kernels in ("Haswell", "Sandybridge"):
        environment = {**os.environ, "OPENBLAS_CORETYPE": kernels}
        done = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == kernels


@pytest.mark.skipif(platform.machine() != "x86_64", reason="OpenBLAS's x86-64 kernel sets")
@pytest.mark.parametrize("kernels, alike", [("Haswell", "False"), ("Sandybridge", "True")])
def test_says_whether_equal_columns_are_rounded_alike(kernels: str, alike: str) -> None:
    """OpenBLAS's AVX2 kernels round the first and last 8 columns of a block in another order,
    so a product whose right operand's columns are all equal has unequal columns; its AVX kernels
    do not. The probe answers for a squeezenet-sized product as well."""
    script = (
        "import numpy as np; from ge.emulator import blas\n"
        "a = np.random.default_rng(0).standard_normal((169, 512)).astype(np.float32)\n"
        "c = a @ np.full((512, 1000), 0.02, np.float32)\n"
        "print(blas.kernel_set(), blas.columns_alike(), bool((c == c[:, :1]).all()))"
    )
    environment = {**os.environ, "OPENBLAS_CORETYPE": kernels}
    done = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [kernels, alike, alike]


@pytest.mark.parametrize("a_layout", ["rows", "columns", "sliced", "sliced columns"])
@pytest.mark.parametrize("b_layout", ["rows", "columns", "sliced", "sliced columns"])
def test_writes_then_adds_products_for_every_contiguous_layout(
    rng: np.random.Generator, a_layout: str, b_layout: str
) -> None:
    a64 = rng.integers(-8, 9, (37, 50)).astype(np.int64)
    b64 = rng.integers(-8, 9, (50, 23)).astype(np.int64)
    views = {
        "rows": lambda m: m.astype(np.float32),
        "columns": lambda m: np.asfortranarray(m.astype(np.float32)),
        "sliced": lambda m: np.pad(m.astype(np.float32), ((0, 3), (2, 5)))[: m.shape[0], 2 : 2 + m.shape[1]],
        "sliced columns": lambda m: np.asfortranarray(np.pad(m.astype(np.float32), ((1, 4), (0, 2))))[
            1 : 1 + m.shape[0], : m.shape[1]
        ],  # column-major, its leading dimension longer than its columns
    }
    a, b = views[a_layout](a64), views[b_layout](b64)
    c = np.full((37, 23), np.nan, np.float32)
    steps = blas.KSteps.plan(a, b, c)
    assert steps is not None
    steps(0, 20, add=False)  # the first k-step writes
    np.testing.assert_array_equal(c, (a64[:, :20] @ b64[:20]).astype(np.float32))
    steps(20, 16, add=True)  # the next ones add
    steps(36, 14, add=True)
    np.testing.assert_array_equal(c, (a64 @ b64).astype(np.float32))


def test_refuses_what_it_cannot_multiply(rng: np.random.Generator) -> None:
    a, b = _integers(rng, (6, 5)), _integers(rng, (5, 4))
    c = np.full((6, 4), 7.0, np.float32)
    assert blas.KSteps.plan(a.astype(np.float64), b, c) is None  # not fp32
    assert blas.KSteps.plan(a[None], b[None], c[None]) is None  # a batch
    assert blas.KSteps.plan(a, b, np.asfortranarray(c)) is None  # C not row-major
    assert blas.KSteps.plan(a[:, ::2], b[::2], c) is None  # no unit stride
    assert blas.KSteps.plan(a[:, :0], b[:0], c) is None  # nothing to contract
    assert blas.KSteps.plan(a, b, c.astype(np.int32)) is None  # an int32 accumulator
    with pytest.raises(ValueError, match="cannot be written"):
        blas.KSteps.plan(a[:, :4], b, c)  # K disagrees
