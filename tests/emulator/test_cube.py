"""The cube unit's convolution and matrix product against direct numpy formulas in float64 (int64 for
8-bit integers)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ge.emulator import blas, cube
from ge.emulator.convolution import conv2d
from ge.emulator.cube import matmul
from ge.emulator.cube_loads import stored_nc1hwc0
from ge.layout import from_device, to_device


def _direct_conv(
    x: np.ndarray,
    w: np.ndarray,
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    groups: int,
    bias: np.ndarray | None,
) -> np.ndarray:
    """ONNX Conv by its definition: a sum over the kernel window of shifted inputs times weights."""
    wide = np.int64 if x.dtype.kind in "iu" else np.float64
    x, w = x.astype(wide), w.astype(wide)
    n, cin, h, width = x.shape
    cout, cin_group, kh, kw = w.shape
    (sh, sw), (dh, dw), (top, left, bottom, right) = strides, dilations, pads
    padded = np.zeros((n, cin, h + top + bottom, width + left + right), wide)
    padded[:, :, top : top + h, left : left + width] = x
    ho = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    wo = (width + left + right - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, groups, cout // groups, ho, wo), wide)
    w = w.reshape(groups, cout // groups, cin_group, kh, kw)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (ho - 1) + 1, sh)
            cols = slice(j * dw, j * dw + sw * (wo - 1) + 1, sw)
            patch = padded[:, :, rows, cols].reshape(n, groups, cin_group, ho, wo)
            out += np.einsum("ngchw,goc->ngohw", patch, w[:, :, :, i, j])
    out = out.reshape(n, cout, ho, wo)
    if bias is not None:
        out += bias.astype(wide)[:, None, None]
    return out


CONV_CASES = {
    # name: (batch, in, out, (h, w), kernel, strides, pads (top, left, bottom, right), dilations, groups)
    "stride2": (1, 16, 32, (9, 9), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),
    "asymmetric_pads": (2, 20, 20, (7, 6), (3, 2), (1, 1), (0, 1, 2, 3), (1, 1), 1),
    "dilation2": (1, 3, 8, (10, 11), (3, 3), (1, 2), (2, 2, 2, 2), (2, 2), 1),
    "three_channels_7x7": (1, 3, 20, (15, 15), (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1),
    "groups2": (2, 20, 6, (6, 6), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),
    "groups4_wide": (1, 64, 40, (5, 5), (1, 3), (1, 2), (0, 1, 0, 0), (1, 1), 4),
    # Narrow groups of more channels than a block (20 > 16): their taps are reordered to device K.
    "groups2_narrow_20_channels": (2, 40, 4, (6, 5), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),
    "depthwise32": (1, 32, 32, (8, 8), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 32),
    # Unit width stride: the depthwise route on NC1HWC0 rows; 20 channels leave padded lanes.
    "depthwise20_rows": (2, 20, 20, (7, 9), (3, 3), (1, 1), (1, 2, 1, 0), (2, 1), 20),
    "grouped_depthwise20_rows_bias": (1, 20, 20, (6, 6), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 20),
    "depthwise_multiplier2": (1, 20, 40, (5, 7), (3, 3), (1, 1), (1, 1, 1, 1), (2, 1), 20),
    # Width strides 2 and 3: the rows route reads the input split into column phases.
    "depthwise20_stride2_rows": (2, 20, 20, (9, 8), (3, 3), (2, 2), (1, 0, 1, 2), (1, 2), 20),
    "depthwise20_stride3_rows": (1, 20, 20, (7, 11), (3, 5), (1, 3), (2, 3, 0, 1), (1, 1), 20),
    "pointwise": (3, 40, 17, (4, 5), (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    # Strides past the padded input (one output row or column): no window view may stride that far.
    "stride_beyond_input": (1, 16, 8, (5, 6), (3, 3), (2**62, 2**62), (1, 1, 1, 1), (1, 1), 1),
    "three_channels_stride_beyond_rows": (1, 3, 8, (5, 6), (3, 3), (2**62, 2), (1, 1, 1, 1), (1, 1), 1),
    "depthwise20_stride_beyond_columns": (1, 20, 20, (5, 6), (3, 3), (1, 2**62), (1, 1, 1, 1), (1, 1), 20),
}


def _run_conv(
    rng: np.random.Generator, case: tuple, dtype: type, with_bias: bool, k_step: int | None = None
) -> tuple[np.ndarray, np.ndarray, int]:
    """(cube result as NC1HWC0, direct result as NCHW, c0) for one case and input dtype."""
    batch, cin, cout, (h, width), kernel, strides, pads, dilations, groups = case
    integer = np.dtype(dtype).kind in "iu"
    c0 = 32 if integer else 16
    if integer:
        low, high = np.iinfo(dtype).min, np.iinfo(dtype).max + 1
        x = rng.integers(low, high, (batch, cin, h, width)).astype(dtype)
        w = rng.integers(low, high, (cout, cin // groups, *kernel)).astype(dtype)
        bias = rng.integers(-5000, 5000, cout).astype(np.int32) if with_bias else None
    else:
        x = rng.standard_normal((batch, cin, h, width)).astype(dtype)
        w = rng.standard_normal((cout, cin // groups, *kernel)).astype(dtype)
        bias = rng.standard_normal(cout).astype(np.float32) if with_bias else None
    got = conv2d(
        to_device(x, "NC1HWC0", c0),
        to_device(w, "FRACTAL_Z", c0, groups),
        out_channels=cout,
        in_channels=cin,
        kernel=kernel,
        strides=strides,
        pads=pads,
        dilations=dilations,
        groups=groups,
        bias=bias,
        k_step=k_step,
    )
    return got, _direct_conv(x, w, strides, pads, dilations, groups, bias), c0


def _check_padded_channels_zero(got: np.ndarray, cout: int) -> None:
    n, c1, ho, wo, c0 = got.shape
    channels = got.transpose(0, 2, 3, 1, 4).reshape(n, ho, wo, c1 * c0)
    assert c1 == -(-cout // c0)
    assert not channels[..., cout:].any()


@pytest.mark.parametrize("name", sorted(CONV_CASES))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, ml_dtypes.bfloat16], ids=["f16", "f32", "bf16"])
def test_conv2d_float(rng: np.random.Generator, name: str, dtype: type) -> None:
    got, expected, _ = _run_conv(rng, CONV_CASES[name], dtype, with_bias=name.startswith(("s", "g")))
    assert got.dtype == np.float32
    _check_padded_channels_zero(got, expected.shape[1])
    logical = from_device(got, "NC1HWC0", expected.shape)
    # fp16/bf16 products are exact in fp32; only the fp32 summation order differs from float64.
    np.testing.assert_allclose(logical, expected, rtol=1e-5, atol=1e-4)


_PADDED_LANE_CASES = [
    name for name, case in sorted(CONV_CASES.items()) if case[1] % 16 and case[8] in (1, case[1])
]
"""The cases whose input leaves padded lanes, one group or depthwise: the general, narrow and
depthwise rows routes."""


@pytest.mark.parametrize("kept", [True, False], ids=["kept", "made_per_call"])
@pytest.mark.parametrize("name", _PADDED_LANE_CASES)
def test_conv2d_reads_no_padded_lane(
    rng: np.random.Generator, name: str, kept: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NaN in the input's padded lanes changes no bit of the result, whichever route reads it; the
    planned convolution, called twice, reads each call's input, whether its loads keep their
    padded inputs (small ones) or make them at every call (larger than `KEPT_AT_MOST`)."""
    from ge.emulator import cube_loads
    from ge.emulator.convolution import plan_conv2d

    if not kept:
        monkeypatch.setattr(cube_loads, "KEPT_AT_MOST", 0)

    batch, cin, cout, (h, width), kernel, strides, pads, dilations, groups = CONV_CASES[name]
    logical_x = rng.standard_normal((batch, cin, h, width)).astype(np.float32)
    logical_w = rng.standard_normal((cout, cin // groups, *kernel)).astype(np.float32)
    x, w = to_device(logical_x, "NC1HWC0", 16), to_device(logical_w, "FRACTAL_Z", 16, groups)
    parameters = dict(
        out_channels=cout, in_channels=cin, kernel=kernel, strides=strides, pads=pads, dilations=dilations
    )
    convolution = plan_conv2d(x.shape, x.dtype, w.shape, w.dtype, groups=groups, **parameters)
    clean = convolution(x, w).copy()
    dirty = x.copy()
    dirty[:, -1, ..., cin % 16 :] = np.nan
    np.testing.assert_array_equal(convolution(dirty, w), clean)
    for scale, got in ((1, clean), (-2, convolution(x * -2, w))):  # the second call's own input
        expected = _direct_conv(logical_x * scale, logical_w, strides, pads, dilations, groups, None)
        logical = from_device(got, "NC1HWC0", expected.shape)
        np.testing.assert_allclose(logical, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("name", ["stride2", "asymmetric_pads", "groups2", "depthwise32", "pointwise"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_conv2d_int8_accumulates_exactly_in_int32(rng: np.random.Generator, name: str, dtype: type) -> None:
    got, expected, c0 = _run_conv(rng, CONV_CASES[name], dtype, with_bias=True)
    assert got.dtype == np.int32 and c0 == 32
    _check_padded_channels_zero(got, expected.shape[1])
    np.testing.assert_array_equal(from_device(got, "NC1HWC0", expected.shape), expected)


@pytest.mark.parametrize("name", ["depthwise32", "depthwise_multiplier2"])
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
@pytest.mark.parametrize("taps_per_step", [1, 2, 4])
def test_depthwise_k_steps_cut_the_window(
    rng: np.random.Generator, name: str, dtype: type, taps_per_step: int
) -> None:
    """A depthwise window (one channel per group, padded to c0 in K) contracted a few taps per
    k-step sums to the direct convolution; 8-bit integers exactly."""
    c0 = 32 if np.dtype(dtype).kind == "i" else 16
    got, expected, _ = _run_conv(rng, CONV_CASES[name], dtype, with_bias=True, k_step=taps_per_step * c0)
    _check_padded_channels_zero(got, expected.shape[1])
    logical = from_device(got, "NC1HWC0", expected.shape)
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(logical, expected)
    else:
        np.testing.assert_allclose(logical, expected, rtol=1e-5, atol=1e-4)


def test_conv2d_fp16_products_are_exact(rng: np.random.Generator) -> None:
    """Inputs whose products and sums are exact in fp32 but not in fp16 give the exact result."""
    x = (rng.integers(-1024, 1024, (1, 16, 4, 4)) / 1024).astype(np.float16)
    w = (rng.integers(-1024, 1024, (16, 16, 1, 1)) / 1024).astype(np.float16)
    got = conv2d(
        to_device(x, "NC1HWC0", 16),
        to_device(w, "FRACTAL_Z", 16),
        out_channels=16,
        in_channels=16,
        kernel=(1, 1),
        strides=(1, 1),
        pads=(0, 0, 0, 0),
        dilations=(1, 1),
        groups=1,
    )
    expected = np.einsum("nchw,oc->nohw", x.astype(np.float64), w[:, :, 0, 0].astype(np.float64))
    np.testing.assert_array_equal(from_device(got, "NC1HWC0", expected.shape), expected)


def test_conv2d_rejects_bad_inputs() -> None:
    x = np.zeros((1, 1, 5, 5, 16), np.float16)
    w = np.zeros((9, 1, 16, 16), np.float16)
    args = dict(in_channels=16, kernel=(3, 3), strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), groups=1)
    with pytest.raises(ValueError, match="FRACTAL_Z"):
        conv2d(x, w[:4], out_channels=16, **args)
    with pytest.raises(ValueError, match="float64"):
        conv2d(x.astype(np.float64), w, out_channels=16, **args)
    with pytest.raises(ValueError, match="fit"):
        conv2d(x, w, out_channels=16, **{**args, "dilations": (3, 3)})


def _operand(array: np.ndarray, fmt: str, transposed: bool) -> np.ndarray:
    stored = array.swapaxes(-1, -2) if transposed else array
    return to_device(stored, fmt, 16) if fmt == "FRACTAL_NZ" else stored


@pytest.mark.parametrize("a_format", ["ND", "FRACTAL_NZ"])
@pytest.mark.parametrize("b_format", ["ND", "FRACTAL_NZ"])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize(
    ("a_batch", "b_batch", "m", "k", "n"),
    [((), (), 20, 33, 17), ((2, 3), (), 16, 16, 16), ((), (4,), 1, 50, 70), ((3, 1), (1, 2), 5, 7, 3)],
)
def test_matmul_float(
    rng: np.random.Generator,
    a_format: str,
    b_format: str,
    trans_a: bool,
    trans_b: bool,
    a_batch: tuple[int, ...],
    b_batch: tuple[int, ...],
    m: int,
    k: int,
    n: int,
) -> None:
    a = rng.standard_normal((*a_batch, m, k)).astype(np.float16)
    b = rng.standard_normal((*b_batch, k, n)).astype(np.float16)
    got = matmul(
        _operand(a, a_format, trans_a),
        _operand(b, b_format, trans_b),
        a_format=a_format,
        b_format=b_format,
        m=m,
        k=k,
        n=n,
        trans_a=trans_a,
        trans_b=trans_b,
    )
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16], ids=["f32", "bf16"])
def test_matmul_other_float_types(rng: np.random.Generator, dtype: type) -> None:
    a = rng.standard_normal((2, 37, 45)).astype(dtype)
    b = rng.standard_normal((45, 19)).astype(dtype)
    got = matmul(to_device(a, "FRACTAL_NZ", 16), b, a_format="FRACTAL_NZ", b_format="ND", m=37, k=45, n=19)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("a_format", ["ND", "FRACTAL_NZ"])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_matmul_int8_is_exact_int32(
    rng: np.random.Generator, a_format: str, trans_b: bool, dtype: type
) -> None:
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max + 1, (3, 21, 70)).astype(dtype)  # K = 70: three K tiles of 32
    b = rng.integers(info.min, info.max + 1, (70, 18)).astype(dtype)
    got = matmul(
        _operand(a, a_format, False),
        _operand(b, "FRACTAL_NZ", trans_b),
        a_format=a_format,
        b_format="FRACTAL_NZ",
        m=21,
        k=70,
        n=18,
        trans_b=trans_b,
    )
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
@pytest.mark.parametrize("shape", [(32, 256), (2, 37, 19), (16, 1)])
def test_the_cubes_fractal_nz_store_puts_each_element_where_the_format_says(
    rng: np.random.Generator, dtype: type, shape: tuple[int, ...]
) -> None:
    """NZ[..., n // 16, m // 16, m % 16, n % 16] = A[..., m, n], zero elsewhere; the tile load
    reads it back, from C-ordered tiles and from tiles laid out otherwise."""
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    *batch, m, n = shape
    stored = cube.store_fractal_nz(a)
    expected = np.zeros((*batch, -(-n // 16), -(-m // 16), 16, 16), dtype)
    for index in np.ndindex(*shape):
        *b, i, j = index
        expected[(*b, j // 16, i // 16, i % 16, j % 16)] = a[index]
    np.testing.assert_array_equal(stored, expected)
    for tiles in (stored, np.asfortranarray(stored)):
        loaded = cube._fractal_nz_load(tiles, (m, n), "a")  # pyright: ignore[reportPrivateUsage] the load under test
        np.testing.assert_array_equal(loaded, a)
    into = np.full(expected.shape, 7, dtype)
    assert cube.store_fractal_nz(a, into) is into
    np.testing.assert_array_equal(into, expected)


def test_matmul_rejects_bad_operands() -> None:
    a = np.zeros((4, 5), np.float16)
    b = np.zeros((5, 6), np.float16)
    with pytest.raises(ValueError, match="must end in"):
        matmul(a, b, a_format="ND", b_format="ND", m=5, k=4, n=6)
    with pytest.raises(ValueError, match="ND or FRACTAL_NZ"):
        matmul(a, b, a_format="NC1HWC0", b_format="ND", m=4, k=5, n=6)
    with pytest.raises(ValueError, match="int8"):
        matmul(a.astype(np.int8), b, a_format="ND", b_format="ND", m=4, k=5, n=6)


@pytest.mark.parametrize(
    "buffer, index",
    [
        ((2, 3, 3, 5, 16), (slice(None), slice(1, 3))),  # a C1 slice of a concat's buffer
        ((2, 2, 4, 5, 16), (slice(None), slice(None), slice(1, 4))),  # rows
        ((2, 2, 3, 7, 16), (slice(None), slice(None), slice(None), slice(2, 7))),  # columns
    ],
)
def test_a_convolution_stores_its_accumulator_into_a_slice(
    rng: np.random.Generator, buffer: tuple[int, ...], index: tuple[slice, ...]
) -> None:
    """The NC1HWC0 store writes a given output in place, whatever its strides: 20 channels of
    (2, 3, 5) pixels as two blocks of 16 lanes, the last 12 lanes zero."""
    rows = rng.standard_normal((2 * 3 * 5, 20)).astype(np.float32)
    channels = np.zeros((2, 3, 5, 32), np.float32)
    channels[..., :20] = rows.reshape(2, 3, 5, 20)
    expected = channels.reshape(2, 3, 5, 2, 16).transpose(0, 3, 1, 2, 4)
    memory = np.full(buffer, 7.0, np.float32)
    into = memory[index]
    stored = stored_nc1hwc0(rows, (2, 3, 5), 20, 16, None, into=into)
    assert stored is into
    np.testing.assert_array_equal(memory[index], expected)
    outside = np.ones(buffer, bool)
    outside[index] = False
    assert (memory[outside] == 7.0).all()  # nothing written beside the slice


@pytest.mark.parametrize(
    "m, k, n, steps, accumulator, planned",
    [
        (64, 96, 32, [slice(0, 48), slice(48, 96)], np.float32, True),  # 2^16 per step: sgemm
        (64, 96, 32, [slice(0, 96)], np.float32, False),  # one step: numpy's matmul
        (16, 96, 32, [slice(0, 48), slice(48, 96)], np.float32, False),  # 2^14 per step: numpy
        (64, 96, 32, [slice(0, 48), slice(48, 96)], np.int32, False),  # int32 accumulator
        (64, 96, 32, [slice(0, 48), np.arange(48, 96)], np.float32, False),  # an index array
        (64, 96, 32, [slice(0, 64), slice(64, 128)], np.float32, False),  # a range past K
    ],
)
def test_accumulate_runs_a_products_k_steps_as_sgemm_calls_where_they_pay(
    rng: np.random.Generator,
    monkeypatch: pytest.MonkeyPatch,
    m: int,
    k: int,
    n: int,
    steps: list,
    accumulator: type,
    planned: bool,
) -> None:
    plans: list[object] = []
    plan = blas.KSteps.plan
    monkeypatch.setattr(blas.KSteps, "plan", lambda *operands: plans.append(plan(*operands)) or plans[-1])
    rows = rng.integers(-8, 9, (m, k)).astype(np.float32)
    columns = rng.integers(-8, 9, (k, n)).astype(np.float32)
    got = cube.accumulate(rows, columns, steps, np.dtype(accumulator))
    np.testing.assert_array_equal(got, rows.astype(np.int64) @ columns.astype(np.int64))
    assert got.dtype == accumulator
    assert [p is not None for p in plans] == ([True] if planned else [])


@pytest.mark.parametrize(
    "m, k, n, steps",
    [
        (1, 64, 256, [slice(0, 32), slice(32, 64)]),  # an LSTM time step at k 32
        (3, 40, 5, [slice(0, 16), slice(16, 32), slice(32, 40)]),  # a short last step
        (4, 24, 8, [slice(0, 24)]),  # one step
        (4, 24, 8, [np.arange(0, 12), np.arange(12, 24)]),  # index arrays (a narrow route's)
    ],
)
def test_a_small_product_sums_its_steps_as_a_given_accumulator_does(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, m: int, k: int, n: int, steps: list
) -> None:
    """Without an accumulator to sum into, a small 2-D product takes numpy's matmul step by step
    with none of the planning, its first step's product the accumulator; its fp32 sums are the
    same, bit for bit, as those summed into a given accumulator."""
    rows = rng.standard_normal((m, k)).astype(np.float32)
    columns = rng.standard_normal((k, n)).astype(np.float32)
    f32 = np.dtype(np.float32)
    into = np.full((m, n), np.nan, np.float32)
    given = cube.accumulate(rows, columns, steps, f32, into=into)
    accumulators: list[np.ndarray | None] = []
    step_product = cube.step_product

    def recording(rows: np.ndarray, columns: np.ndarray, step, out, add, direct=None) -> np.ndarray:
        accumulators.append(out)
        return step_product(rows, columns, step, out, add, direct)

    monkeypatch.setattr(cube, "step_product", recording)
    fresh = cube.accumulate(rows, columns, steps, f32)
    assert accumulators[0] is None and all(a is fresh for a in accumulators[1:])
    assert len(accumulators) == len(steps)
    assert given is into and fresh is not into
    np.testing.assert_array_equal(fresh, given)
    assert fresh.dtype == np.float32 and fresh.shape == (m, n)
    by_step = sum(
        (rows[:, s].astype(np.float64) @ columns[s].astype(np.float64) for s in steps), np.zeros((m, n))
    )
    np.testing.assert_allclose(
        fresh, by_step, rtol=0, atol=k * np.finfo(np.float32).eps * np.abs(by_step).max()
    )
