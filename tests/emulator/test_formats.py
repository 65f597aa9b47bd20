"""Device formats: `device_shape` on hand-worked shapes, and `to_device` / `from_device` against the
element index formulas of the formats written out here."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ge.dialects.formats import FORMATS, c0_of, device_shape
from ge.layout import from_device, reshaped_view, to_device

DTYPES = [
    np.float32,
    np.float16,
    ml_dtypes.bfloat16,
    np.float64,
    np.int8,
    np.uint8,
    np.int32,
    np.int64,
    np.bool_,
]


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """Random data with no zeros (bool: all True), so any zero in a device array is padding."""
    if dtype is np.bool_:
        return np.ones(shape, bool)
    values = rng.integers(1, 100, shape) * rng.choice([-1, 1], shape)
    if np.dtype(dtype).kind == "u":
        values = np.abs(values)
    return values.astype(dtype)


def _gather(logical: np.ndarray, index: tuple[np.ndarray, ...], valid: np.ndarray) -> np.ndarray:
    """logical[index] where `valid`, zero elsewhere (indices clipped so padding positions stay in range)."""
    clipped = tuple(np.minimum(i, size - 1) for i, size in zip(index, logical.shape, strict=True))
    return np.where(valid, logical[clipped], np.zeros((), logical.dtype))


def _expected_nc1hwc0(x: np.ndarray, c0: int) -> np.ndarray:
    n, c, h, w = x.shape
    nn, c1, hh, ww, k0 = np.indices((n, -(-c // c0), h, w, c0))
    channel = c1 * c0 + k0
    return _gather(x, (nn, channel, hh, ww), channel < c)


def _expected_fractal_z(w: np.ndarray, c0: int, groups: int) -> np.ndarray:
    cout, cin, kh, kw = w.shape
    cg, c1 = cout // groups, -(-cin // c0)
    r, n1, n0, k0 = np.indices((groups * c1 * kh * kw, -(-cg // 16), 16, c0))
    # r = ((grp * c1 + c1_index) * kh + i) * kw + j
    j, rest = r % kw, r // kw
    i, rest = rest % kh, rest // kh
    c1_index, grp = rest % c1, rest // c1
    out_channel, in_channel = n1 * 16 + n0, c1_index * c0 + k0
    valid = (out_channel < cg) & (in_channel < cin)
    return _gather(w, (grp * cg + out_channel, in_channel, i, j), valid)


def _expected_fractal_nz(a: np.ndarray) -> np.ndarray:
    *batch, m, n = a.shape
    index = np.indices((*batch, -(-n // 16), -(-m // 16), 16, 16))
    *batch_index, n1, m1, m0, n0 = index
    row, column = m1 * 16 + m0, n1 * 16 + n0
    return _gather(a, (*batch_index, row, column), (row < m) & (column < n))


def test_c0_of() -> None:
    assert [c0_of(bits) for bits in (8, 16, 32)] == [32, 16, 16]


@pytest.mark.parametrize(
    ("shape", "fmt", "c0", "groups", "expected"),
    [
        ((1, 3, 5, 5), "NC1HWC0", 16, 1, (1, 1, 5, 5, 16)),
        ((2, 40, 7, 3), "NC1HWC0", 32, 1, (2, 2, 7, 3, 32)),
        ((2, 32, 1, 1), "NC1HWC0", 16, 1, (2, 2, 1, 1, 16)),
        ((64, 3, 7, 7), "FRACTAL_Z", 16, 1, (49, 4, 16, 16)),
        ((20, 33, 3, 3), "FRACTAL_Z", 16, 1, (27, 2, 16, 16)),
        ((64, 10, 3, 3), "FRACTAL_Z", 16, 2, (18, 2, 16, 16)),  # Cg = 32, C1 = 1
        ((32, 1, 3, 3), "FRACTAL_Z", 16, 32, (288, 1, 16, 16)),  # depthwise
        ((64, 40, 1, 1), "FRACTAL_Z", 32, 1, (2, 4, 16, 32)),
        ((2, 20, 33), "FRACTAL_NZ", 16, 1, (2, 3, 2, 16, 16)),
        ((16, 16), "FRACTAL_NZ", 16, 1, (1, 1, 16, 16)),
        ((3, 4, 1, 17), "FRACTAL_NZ", 16, 1, (3, 4, 2, 1, 16, 16)),
        ((2, 20, 33), "ND", 16, 1, (2, 20, 33)),
        ((1, 3, 5, 5), "NCHW", 16, 1, (1, 3, 5, 5)),
    ],
)
def test_device_shape(
    shape: tuple[int, ...], fmt: str, c0: int, groups: int, expected: tuple[int, ...]
) -> None:
    assert device_shape(shape, fmt, c0, groups) == expected


@pytest.mark.parametrize(
    ("shape", "fmt", "groups", "message"),
    [
        ((1, 3, 5), "NC1HWC0", 1, "rank 3"),
        ((64, 3, 7), "FRACTAL_Z", 1, "rank 3"),
        ((30, 3, 3, 3), "FRACTAL_Z", 4, "groups"),
        ((20,), "FRACTAL_NZ", 1, "rank 1"),
        ((2, 2), "NHWC8", 1, "unknown device format"),
    ],
)
def test_device_shape_errors(shape: tuple[int, ...], fmt: str, groups: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        device_shape(shape, fmt, 16, groups)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(("shape", "c0"), [((1, 3, 5, 5), 16), ((2, 40, 3, 4), 32), ((1, 32, 2, 2), 16)])
def test_nc1hwc0(rng: np.random.Generator, dtype: type, shape: tuple[int, ...], c0: int) -> None:
    x = _random(rng, shape, dtype)
    device = to_device(x, "NC1HWC0", c0)
    assert device.dtype == x.dtype
    np.testing.assert_array_equal(device, _expected_nc1hwc0(x, c0))
    back = from_device(device, "NC1HWC0", shape)
    assert back.dtype == x.dtype
    np.testing.assert_array_equal(back, x)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(
    ("shape", "c0", "groups"),
    [
        ((64, 3, 7, 7), 16, 1),
        ((20, 33, 3, 2), 16, 1),
        ((6, 10, 3, 3), 16, 2),
        ((32, 1, 3, 3), 16, 32),
        ((40, 40, 1, 1), 32, 1),
        ((36, 20, 2, 3), 32, 4),
    ],
)
def test_fractal_z(
    rng: np.random.Generator, dtype: type, shape: tuple[int, ...], c0: int, groups: int
) -> None:
    w = _random(rng, shape, dtype)
    device = to_device(w, "FRACTAL_Z", c0, groups)
    assert device.dtype == w.dtype
    np.testing.assert_array_equal(device, _expected_fractal_z(w, c0, groups))
    np.testing.assert_array_equal(from_device(device, "FRACTAL_Z", shape, groups), w)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(2, 20, 33), (16, 16), (1, 1), (3, 2, 17, 40), (5, 31)])
def test_fractal_nz(rng: np.random.Generator, dtype: type, shape: tuple[int, ...]) -> None:
    a = _random(rng, shape, dtype)
    device = to_device(a, "FRACTAL_NZ", 16)
    assert device.dtype == a.dtype
    np.testing.assert_array_equal(device, _expected_fractal_nz(a))
    np.testing.assert_array_equal(from_device(device, "FRACTAL_NZ", shape), a)


def test_spot_check_positions() -> None:
    """A few elements placed by hand from the formulas."""
    x = np.arange(1 * 20 * 2 * 3).reshape(1, 20, 2, 3)
    device = to_device(x, "NC1HWC0", 16)
    assert device[0, 1, 1, 2, 3] == x[0, 19, 1, 2]
    assert device[0, 1, 1, 2, 4] == 0

    w = np.arange(6 * 10 * 3 * 3).reshape(6, 10, 3, 3) + 1
    device = to_device(w, "FRACTAL_Z", 16, groups=2)  # Cg = 3, C1 = 1
    # group 1, c1 0, i 2, j 1 -> row ((1 * 1 + 0) * 3 + 2) * 3 + 1 = 16; n0 2, k0 7
    assert device[16, 0, 2, 7] == w[1 * 3 + 2, 7, 2, 1]
    assert device[16, 0, 3, 7] == 0 and device[16, 0, 2, 10] == 0

    a = np.arange(2 * 20 * 33).reshape(2, 20, 33) + 1
    device = to_device(a, "FRACTAL_NZ", 16)
    assert device[1, 2, 1, 3, 0] == a[1, 19, 32]
    assert device[1, 2, 1, 4, 0] == 0 and device[1, 2, 1, 3, 1] == 0


def test_nd_formats_copy(rng: np.random.Generator) -> None:
    for fmt in ("ND", "NCHW"):
        x = _random(rng, (1, 3, 4, 5), np.float32)
        device = to_device(x, fmt, 16)
        assert device.shape == x.shape and not np.shares_memory(device, x)
        np.testing.assert_array_equal(from_device(device, fmt, x.shape), x)


def test_from_device_rejects_wrong_shape() -> None:
    with pytest.raises(ValueError, match="NC1HWC0"):
        from_device(np.zeros((1, 2, 5, 5, 16)), "NC1HWC0", (1, 3, 5, 5))
    with pytest.raises(ValueError, match="FRACTAL_NZ"):
        from_device(np.zeros((2, 2, 16, 16)), "FRACTAL_NZ", (20, 40))


def test_every_format_round_trips(rng: np.random.Generator) -> None:
    x = _random(rng, (2, 20, 3, 5), ml_dtypes.bfloat16)
    for fmt in FORMATS:
        np.testing.assert_array_equal(from_device(to_device(x, fmt, 16, 2), fmt, x.shape, 2), x)


def test_reshaped_view_is_a_view_or_refuses() -> None:
    """A C1 slice of an NC1HWC0 buffer merges its W and C0 axes as a view of the same memory;
    merging across the slice would take a copy, which `reshaped_view` refuses."""
    buffer = np.arange(2 * 3 * 4 * 5 * 16, dtype=np.float32).reshape(2, 3, 4, 5, 16)
    part = buffer[:, 1:3]
    view = reshaped_view(part, (2, 2, 4, 80))
    assert np.shares_memory(view, buffer)
    view[0, 0, 0, 0] = -1
    assert buffer[0, 1, 0, 0, 0] == -1
    with pytest.raises(ValueError):
        reshaped_view(part, (2 * 2 * 4 * 5 * 16,))
