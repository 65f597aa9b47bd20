"""The cube runs the compiled tiling: k-step by k-step into an fp32 (int32) accumulator.

Expected values come from numpy in float64 or int64 on the same inputs, never from the cube;
the k-step count from the kernel's tiling attribute and the device K worked out here.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import ge
from ge.dialects import graph as ops
from ge.dialects.common import TARGET_ATTR_NAME, TargetAttr, ints_attr
from ge.dialects.stream import KernelFuncOp
from ge.dialects.tiling import CubeTilingAttr
from ge.emulator import Emulator, cube
from ge.emulator.convolution import conv2d
from ge.emulator.cube import matmul
from ge.emulator.tiles import prepare_cube
from ge.errors import VerificationError
from ge.layout import from_device, to_device

FP32_ULP = 2.0**-23
"""The distance from 1.0 to the next fp32."""


def _bound(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """K ulps of fp32 relative to sum |a_i b_i|: the classic bound on summing K products in fp32."""
    return k * FP32_ULP * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


def _matmul(a: np.ndarray, b: np.ndarray, k_step: int | None) -> np.ndarray:
    m, k = a.shape[-2:]
    return matmul(a, b, a_format="ND", b_format="ND", m=m, k=k, n=b.shape[-1], k_step=k_step)


@pytest.mark.parametrize("k_step", [None, 16, 64, 256])
def test_integer_valued_fp16_is_exact(rng: np.random.Generator, k_step: int | None) -> None:
    a = rng.integers(-16, 17, (40, 1000)).astype(np.float16)
    b = rng.integers(-16, 17, (1000, 24)).astype(np.float16)
    got = _matmul(a, b, k_step)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))


def test_integer_valued_fp16_convolution_is_exact(rng: np.random.Generator) -> None:
    x = rng.integers(-8, 9, (1, 40, 6, 6)).astype(np.float16)
    w = rng.integers(-8, 9, (24, 40, 3, 3)).astype(np.float16)
    got = conv2d(
        to_device(x, "NC1HWC0", 16),
        to_device(w, "FRACTAL_Z", 16),
        out_channels=24,
        in_channels=40,
        kernel=(3, 3),
        strides=(1, 1),
        pads=(1, 1, 1, 1),
        dilations=(1, 1),
        groups=1,
        k_step=32,
    )
    padded = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = np.zeros((1, 24, 6, 6), np.int64)
    for i in range(3):
        for j in range(3):
            expected += np.einsum(
                "nchw,oc->nohw", padded[:, :, i : i + 6, j : j + 6], w[:, :, i, j].astype(np.int64)
            )
    np.testing.assert_array_equal(from_device(got, "NC1HWC0", expected.shape), expected)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32], ids=["f16", "bf16", "f32"])
@pytest.mark.parametrize("k_step", [None, 32, 256])
def test_float_sums_are_within_k_ulps_of_float64(
    rng: np.random.Generator, dtype: type, k_step: int | None
) -> None:
    a = rng.standard_normal((3, 33, 700)).astype(dtype)
    b = rng.standard_normal((700, 45)).astype(dtype)
    got = _matmul(a, b, k_step)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert got.dtype == np.float32
    assert np.all(np.abs(got - exact) <= _bound(a, b, 700))


def test_fp16_operands_are_the_rounded_values_not_the_fp32_originals(rng: np.random.Generator) -> None:
    a32 = rng.standard_normal((16, 300)).astype(np.float32)
    b32 = rng.standard_normal((300, 16)).astype(np.float32)
    a16, b16 = a32.astype(np.float16), b32.astype(np.float16)
    from_fp16, from_fp32 = _matmul(a16, b16, 64), _matmul(a32, b32, 64)
    bound = _bound(a32, b32, 300)
    # Each result is the fp32-accumulated product of its own operands...
    assert np.all(np.abs(from_fp16 - a16.astype(np.float64) @ b16.astype(np.float64)) <= bound)
    assert np.all(np.abs(from_fp32 - a32.astype(np.float64) @ b32.astype(np.float64)) <= bound)
    # ...and fp16 rounding of the operands moves the result further than accumulation error can.
    assert np.max(np.abs(from_fp16 - a32.astype(np.float64) @ b32.astype(np.float64)) - bound) > 0


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("k_step", [None, 16, 256])
def test_8_bit_products_are_exact_in_int32(rng: np.random.Generator, dtype: type, k_step: int | None) -> None:
    info = np.iinfo(dtype)
    # K = 3000: without a tiling the whole K is one step, beyond what fp32 sums hold exactly.
    a = rng.integers(info.min, info.max + 1, (2, 17, 3000)).astype(dtype)
    b = rng.integers(info.min, info.max + 1, (3000, 20)).astype(dtype)
    got = _matmul(a, b, k_step)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))


def test_int8_accumulator_wraps_as_int32(rng: np.random.Generator) -> None:
    a = np.full((1, 160_000), -128, np.int8)
    b = np.full((160_000, 1), -128, np.int8)
    expected = (160_000 * 2**14 + 2**31) % 2**32 - 2**31  # 2**14 per product, wrapped once past 2**31
    assert _matmul(a, b, 256)[0, 0] == expected


def _compiled_matmul(dtype: str, m: int, k: int, n: int, level: int) -> ge.CompiledModel:
    g = ge.Graph()
    a = g.add_input("a", shape=[m, k], dtype=dtype)
    b = g.add_input("b", shape=[k, n], dtype=dtype)
    g.add_output(g.add_op(ops.MatMulOp, [a, b]), "y")
    return ge.GraphCompiler().compile(g, optimization_level=level)


def _cube_kernel(module) -> KernelFuncOp:
    kernels = [op for op in module.walk() if isinstance(op, KernelFuncOp) and op.unit.data.value == "cube"]
    assert len(kernels) == 1
    return kernels[0]


class _CountingProducts:
    """The cube's one-BLAS-call k-step product (`cube.step_product`), counting its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self._product = cube.step_product

    def __call__(self, *args: object, **kwargs: object) -> np.ndarray:
        self.calls += 1
        return self._product(*args, **kwargs)


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_a_compiled_matmul_takes_one_blas_product_per_k_step(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, level: int, dtype: str
) -> None:
    compiled = _compiled_matmul(dtype, 64, 1000, 48, level)
    tiling = _cube_kernel(compiled.module).tiling
    assert isinstance(tiling, CubeTilingAttr)
    steps = math.ceil(1000 / tiling.k.data)  # a matmul's device K is its K
    assert steps > 1
    a = rng.integers(-4, 5, (64, 1000)).astype(dtype)
    b = rng.integers(-4, 5, (1000, 48)).astype(dtype)
    counting = _CountingProducts()
    monkeypatch.setattr(cube, "step_product", counting)
    (got,) = Emulator(compiled.module, compiled.weight_blob).run([a, b])
    assert counting.calls == steps
    np.testing.assert_array_equal(got, (a.astype(np.int64) @ b.astype(np.int64)).astype(dtype))


def test_a_compiled_convolution_takes_one_blas_product_per_k_step(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = ge.Graph()
    x = g.add_input("x", shape=[1, 70, 8, 8], dtype="float16")
    weights = rng.integers(-3, 4, (32, 70, 3, 3)).astype(np.float16)
    w = g.add_constant(weights, "w")
    g.add_output(g.add_op(ops.Conv2DOp, [x, w], {"pads": ints_attr([1, 1, 1, 1])}), "y")
    compiled = ge.GraphCompiler().compile(g, optimization_level=3)
    tiling = _cube_kernel(compiled.module).tiling
    assert isinstance(tiling, CubeTilingAttr)
    device_k = math.ceil(70 / 16) * 16 * 3 * 3  # channels padded to whole C0 = 16 blocks, x window
    steps = math.ceil(device_k / tiling.k.data)
    assert steps > 1
    data = rng.integers(-3, 4, (1, 70, 8, 8)).astype(np.float16)
    counting = _CountingProducts()
    monkeypatch.setattr(cube, "step_product", counting)
    (got,) = Emulator(compiled.module, compiled.weight_blob).run([data])
    assert counting.calls == steps
    padded = np.pad(data.astype(np.int64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = np.zeros((1, 32, 8, 8), np.int64)
    for i in range(3):
        for j in range(3):
            window = padded[:, :, i : i + 8, j : j + 8]
            expected += np.einsum("nchw,oc->nohw", window, weights[:, :, i, j].astype(np.int64))
    np.testing.assert_array_equal(got, expected.astype(np.float16))  # exact sums, rounded once to fp16


def test_a_tiling_that_overflows_l0_is_refused_before_running(rng: np.random.Generator) -> None:
    compiled = _compiled_matmul("float16", 256, 256, 256, 3)
    module = compiled.module.clone()
    kernel = _cube_kernel(module)
    # Set after compilation, past the verifier: 256 x 256 fp16 x 2 buffers = 262144 bytes of L0A.
    kernel.tiling = CubeTilingAttr(256, 256, 256, 2, 1)
    name = kernel.sym_name.data
    message = rf"kernel @{name}: .* needs 262144 bytes of L0A per step, the \w+ has 65536"
    with pytest.raises(VerificationError, match=message):
        prepare_cube(kernel)
    with pytest.raises(VerificationError, match=message):
        Emulator(module, compiled.weight_blob)  # at load, before any run


def test_a_target_lacking_a_buffer_figure_is_refused_at_load() -> None:
    compiled = _compiled_matmul("float16", 64, 64, 64, 3)
    module = compiled.module.clone()
    target = module.attributes[TARGET_ATTR_NAME]
    assert isinstance(target, TargetAttr)
    figures = {k: v for k, v in target.as_dict().items() if k != "l0b_bytes"}
    module.attributes[TARGET_ATTR_NAME] = TargetAttr(target.soc.data, figures)
    name = _cube_kernel(module).sym_name.data
    with pytest.raises(VerificationError, match=rf"kernel @{name}: target \w+ has no figure 'l0b_bytes'"):
        Emulator(module, compiled.weight_blob)


def test_a_fitting_tiling_reports_its_claims() -> None:
    compiled = _compiled_matmul("float16", 64, 1000, 48, 3)
    kernel = _cube_kernel(compiled.module)
    tiling = kernel.tiling
    assert isinstance(tiling, CubeTilingAttr)
    m, n, k, db = tiling.m.data, tiling.n.data, tiling.k.data, tiling.db.data
    schedule = prepare_cube(kernel)
    assert schedule.k_step == k
    assert schedule.claims == {
        "l0a_bytes": m * k * 2 * db,
        "l0b_bytes": k * n * 2 * db,
        "l0c_bytes": m * n * 4 * db,
        "ub_bytes": m * n * 4 * db,
    }
