"""ConvInteger and QLinearConv against onnxruntime, through `ge.backend`; integer results must
match exactly, including windows too large for float32 sums (convolved in float64)."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import run_onnxruntime
from single_node import feeds, one_node

import ge.backend
from ge.errors import InvalidModelError


def agree(op_type: str, inputs: list[np.ndarray | None], known: tuple[int, ...] = (), **attrs) -> None:
    model = one_node(op_type, inputs, 10, known=known, **attrs)
    (got,) = ge.backend.prepare(model).run(feeds(inputs, known))
    (want,) = run_onnxruntime(model, feeds(inputs, known))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def uint8(rng, *shape):
    return rng.integers(0, 256, shape).astype(np.uint8)


@pytest.mark.parametrize("channels", [2, 40])  # 40 x 3 x 3 = 360 products: past float32's exact range
def test_conv_integer(channels):
    rng = np.random.default_rng(0)
    x, w = uint8(rng, 1, channels, 6, 5), uint8(rng, 3, channels, 3, 3)
    zeros = [np.array(131, np.uint8), np.array(7, np.uint8)]
    agree("ConvInteger", [x, w, *zeros], pads=[1, 0, 1, 2], strides=[2, 1])


def test_conv_integer_groups_dilations_and_a_weight_zero_point():
    rng = np.random.default_rng(1)
    x, w = uint8(rng, 2, 4, 5, 5), uint8(rng, 4, 2, 2, 2)
    agree("ConvInteger", [x, w, None, np.array(9, np.uint8)], known=(3,), group=2, dilations=[2, 1])


def test_conv_integer_per_channel_weight_zero_points():
    # onnxruntime takes per-tensor zero points only: the oracle is the sum written out.
    rng = np.random.default_rng(3)
    x, w, w_zero = uint8(rng, 1, 2, 4, 4), uint8(rng, 3, 2, 2, 2), uint8(rng, 3)
    model = one_node("ConvInteger", [x, w, None, w_zero], 10, known=(3,))
    (got,) = ge.backend.prepare(model).run({"in0": x, "in1": w})
    shifted = w.astype(np.int64) - w_zero.reshape(3, 1, 1, 1)
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.int64), (2, 2), axis=(2, 3))
    want = np.einsum("ncyxij,ocij->noyx", windows, shifted).astype(np.int32)
    np.testing.assert_array_equal(got, want)


def test_qlinear_conv():
    rng = np.random.default_rng(2)
    x, w = uint8(rng, 1, 3, 6, 6), rng.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
    scales = [np.array(0.02, np.float32), np.array(0.01, np.float32), np.array(0.3, np.float32)]
    w_scale = (0.005 + 0.01 * rng.random(4)).astype(np.float32)
    inputs = [
        x,
        scales[0],
        np.array(128, np.uint8),
        w,
        w_scale,
        np.zeros(4, np.int8),
        scales[2],
        np.array(100, np.uint8),
        rng.integers(-2000, 2000, 4).astype(np.int32),
    ]
    agree("QLinearConv", inputs, known=tuple(range(1, 9)), pads=[1, 1, 1, 1])


def test_wider_integers_are_refused():
    x, w = np.zeros((1, 1, 3, 3), np.int32), np.zeros((1, 1, 2, 2), np.int32)
    with pytest.raises(InvalidModelError, match=r"takes tensor\(int8\), tensor\(uint8\)"):
        ge.backend.prepare(one_node("ConvInteger", [x, w], 10))
