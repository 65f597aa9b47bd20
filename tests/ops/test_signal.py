"""DFT, STFT, the windows and MelWeightMatrix against onnxruntime, through `ge.backend` (each
transform is a matmul on the cube; windows and filter banks are constants).

Inputs that decide a shape (dft_length, the axis of opset 20, frame_step and frame_length) are
initializers. The inverse one-sided transform (irfft), which onnxruntime does not implement, is
compared with numpy's `irfft`.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import run_onnxruntime
from single_node import feeds, one_node

import ge.backend
from ge.errors import InvalidModelError


def run_ge(op_type: str, inputs, opset: int, known: tuple[int, ...], **attrs) -> np.ndarray:
    model = one_node(op_type, inputs, opset, known=known, **attrs)
    return ge.backend.prepare(model).run(feeds(inputs, known))[0]


def check(op_type: str, inputs, opset: int, known: tuple[int, ...] = (), **attrs) -> None:
    got = run_ge(op_type, inputs, opset, known, **attrs)
    (want,) = run_onnxruntime(one_node(op_type, inputs, opset, known=known, **attrs), feeds(inputs, known))
    assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale)


def scalar(value: int) -> np.ndarray:
    return np.array(value, np.int64)


@pytest.mark.parametrize("parts", [1, 2])
@pytest.mark.parametrize("inverse", [0, 1])
@pytest.mark.parametrize("axis", [1, 2, -2])
def test_dft(parts, inverse, axis, rng) -> None:
    x = rng.standard_normal((2, 6, 5, parts)).astype(np.float32)
    check("DFT", [x, None, scalar(axis)], 20, known=(2,), inverse=inverse)


@pytest.mark.parametrize("length", [4, 9])
@pytest.mark.parametrize("inverse", [0, 1])
def test_dft_length_pads_or_cuts(length, inverse, rng) -> None:
    x = rng.standard_normal((3, 7, 2)).astype(np.float32)
    check("DFT", [x, scalar(length)], 20, known=(1,), inverse=inverse)


@pytest.mark.parametrize("length", [None, 6, 7])
def test_dft_one_sided(length, rng) -> None:
    x = rng.standard_normal((2, 8, 1)).astype(np.float32)
    inputs = [x] if length is None else [x, scalar(length)]
    check("DFT", inputs, 20, known=(1,), onesided=1)


def test_dft_opset_17_axis_attribute(rng) -> None:
    x = rng.standard_normal((2, 5, 3, 2)).astype(np.float32)
    check("DFT", [x], 17, axis=2)


@pytest.mark.parametrize("length", [None, 8, 9, 5])
def test_inverse_one_sided_dft_is_irfft(length, rng) -> None:
    spectrum = np.fft.rfft(rng.standard_normal((3, 8)), axis=1)
    x = np.stack([spectrum.real, spectrum.imag], axis=-1).astype(np.float32)  # 3, 5, 2
    inputs = [x] if length is None else [x, scalar(length)]
    got = run_ge("DFT", inputs, 20, (1,), inverse=1, onesided=1)
    want = np.fft.irfft(spectrum, n=length, axis=1)[..., None]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_dft_of_the_complex_axis_is_invalid(rng) -> None:
    x = rng.standard_normal((2, 4, 2)).astype(np.float32)
    with pytest.raises(InvalidModelError, match="signal axis"):
        run_ge("DFT", [x, None, scalar(-1)], 20, (2,))


@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("step", [3, 8])
def test_stft_with_window(onesided, step, rng) -> None:
    signal = rng.standard_normal((2, 40, 1)).astype(np.float32)
    window = np.hanning(10).astype(np.float32)
    check("STFT", [signal, scalar(step), window], 17, known=(1,), onesided=onesided)


@pytest.mark.parametrize("onesided", [0, 1])
def test_stft_with_frame_length(onesided, rng) -> None:
    """(onesided is given: ONNX's shape inference reads an absent one as 0, the operator as 1.)"""
    signal = rng.standard_normal((1, 33, 1)).astype(np.float32)
    check("STFT", [signal, scalar(4), None, scalar(16)], 17, known=(1, 3), onesided=onesided)


def test_stft_of_a_complex_signal(rng) -> None:
    signal = rng.standard_normal((1, 20, 2)).astype(np.float32)
    check("STFT", [signal, scalar(5), np.ones(8, np.float32)], 17, known=(1,), onesided=0)


@pytest.mark.parametrize("op_type", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
@pytest.mark.parametrize("output_datatype", [1, 11])
def test_windows(op_type, periodic, output_datatype) -> None:
    check(op_type, [scalar(12)], 17, known=(0,), periodic=periodic, output_datatype=output_datatype)


@pytest.mark.parametrize(
    ("bins", "length", "rate", "low", "high"), [(8, 16, 8192, 0, 4096), (5, 64, 16000, 100, 6000)]
)
def test_mel_weight_matrix(bins, length, rate, low, high) -> None:
    inputs = [
        scalar(bins),
        scalar(length),
        scalar(rate),
        np.array(low, np.float32),
        np.array(high, np.float32),
    ]
    check("MelWeightMatrix", inputs, 17, known=(0, 1, 2, 3, 4))
