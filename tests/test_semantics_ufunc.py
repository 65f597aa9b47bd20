"""`ge.semantics.base.Ufunc`: a min/max over a large array and one value reads the value as a
contiguous splat, and gives numpy's broadcast answer bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ge.semantics.base as base
from ge.semantics.base import SPLAT_AT_MOST, SPLAT_FROM, SPLATTED, Ufunc, splat

SHAPE = (2, 3, 40, 40, 16)  # 153,600 elements, trailing block (40, 40, 16)


def _array(dtype: type, rng: np.random.Generator) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.5, -2.0, 6.0], dtype)
        return rng.choice(specials, size=SHAPE)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=SHAPE, dtype=dtype, endpoint=True)


def _values(dtype: type) -> list:
    if np.dtype(dtype).kind == "f":
        return [0.0, -0.0, np.nan, 6.0]
    return [0, 1, np.iinfo(dtype).max]


class _Counting:
    def __init__(self) -> None:
        self.shapes: list[tuple[int, ...]] = []

    def __call__(self, value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        self.shapes.append(shape)
        return splat(value, shape)


@pytest.mark.parametrize("ufunc", SPLATTED, ids=lambda u: u.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int8, np.uint8])
def test_a_splatted_value_gives_numpys_broadcast_answer_bit_for_bit(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, ufunc: np.ufunc, dtype: type
) -> None:
    counting = _Counting()
    monkeypatch.setattr(base, "splat", counting)
    implementation = Ufunc(ufunc)
    x = _array(dtype, rng)
    for v in _values(dtype):
        value = np.array(v, dtype).reshape(1, 1, 1, 1, 1)
        for operands in ((x, value), (value, x)):
            expected = ufunc(*operands)  # numpy's loop over the broadcast value
            got = implementation(None, *operands)
            assert got.dtype == expected.dtype and got.shape == expected.shape
            assert got.tobytes() == expected.tobytes()  # signed zeros and NaNs as numpy gives them
            into = np.empty_like(expected)
            implementation.into(into, *operands)
            assert into.tobytes() == expected.tobytes()
    assert counting.shapes == [SHAPE[2:]] * (4 * len(_values(dtype)))


def test_a_splat_keeps_the_promotion_of_the_value_it_replaces(rng: np.random.Generator) -> None:
    """NumPy 2 promotes by a 0-d array's dtype: float32 with an int64 value gives float64, and so
    does the splat, which keeps the value's dtype."""
    x = rng.standard_normal(SHAPE).astype(np.float32)
    value = np.array(3, np.int64)
    got = Ufunc(np.minimum)(None, x, value)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, np.minimum(x, value))


@pytest.mark.parametrize(
    "x, value",
    [
        (np.ones(SPLAT_FROM - 16, np.float32), np.float32(0)),  # too few elements
        (np.ones((2, SPLAT_FROM), np.float32)[:, ::2], np.float32(0)),  # not contiguous
        (np.ones(SPLAT_FROM, np.float32), np.zeros(2, np.float32)[:1].reshape(1, 1)),  # more dims
        (np.ones((SPLAT_FROM, 2), np.float32), np.zeros((1, 2), np.float32)),  # two values
        (np.ones(SPLAT_AT_MOST + 16, np.float32), np.float32(0)),  # a splat of megabytes
    ],
    ids=["small", "strided", "more dims", "not one value", "too long a run"],
)
def test_no_splat_where_it_does_not_apply(
    monkeypatch: pytest.MonkeyPatch, x: np.ndarray, value: np.ndarray | np.generic
) -> None:
    counting = _Counting()
    monkeypatch.setattr(base, "splat", counting)
    got = Ufunc(np.maximum)(None, x, value)
    np.testing.assert_array_equal(got, np.maximum(x, value))
    assert counting.shapes == []


def test_relus_zero_is_splatted(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting()
    monkeypatch.setattr(base, "splat", counting)
    x = rng.standard_normal((1, 2 * SPLAT_FROM)).astype(np.float32)
    got = Ufunc(np.maximum, with_zero=True)(None, x)
    np.testing.assert_array_equal(got, np.where(x > 0, x, 0))
    assert counting.shapes == [(2 * SPLAT_FROM,)]  # the trailing dimension alone is long enough


def test_a_splat_is_a_read_only_view_of_one_kept_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_SPLATS", {})
    value = np.float32(2.5)
    small, large = splat(value, (4, 8)), splat(value, (100,))
    again = splat(value, (10, 10))
    assert not again.flags.writeable and again.flags.c_contiguous
    assert np.all(small == 2.5) and np.all(large == 2.5) and again.shape == (10, 10)
    assert np.shares_memory(again, large)  # grown once to 100, then reused
    assert len(base._SPLATS) == 1
    for v in range(base._SPLATS_KEPT + 5):
        splat(np.float32(v), (3,))
    assert len(base._SPLATS) == base._SPLATS_KEPT


def test_splats_of_dtypes_with_one_descriptor_are_kept_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """ml_dtypes' 8- and 4-bit types all describe themselves as '<V1': the same byte in two of
    them is two values."""
    monkeypatch.setattr(base, "_SPLATS", {})
    e4m3fn, e4m3fnuz = np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e4m3fnuz)
    assert e4m3fn.str == e4m3fnuz.str
    first = splat(np.array(1.0, e4m3fn), (4,))
    second = splat(np.array(1.0, e4m3fn).view(e4m3fnuz), (4,))  # the same byte
    assert first.tobytes() == second.tobytes()
    assert first.dtype == e4m3fn and second.dtype == e4m3fnuz
    signed = splat(np.array(-1, ml_dtypes.int4), (4,))
    unsigned = splat(np.array(-1, ml_dtypes.int4).view(ml_dtypes.uint4), (4,))
    assert signed.dtype == ml_dtypes.int4 and unsigned.dtype == ml_dtypes.uint4
    assert np.all(unsigned.astype(np.int64) == 15) and np.all(signed.astype(np.int64) == -1)
