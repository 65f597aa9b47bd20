"""DeformConv through `ge.backend`: 2-D cases against onnxruntime, 1-D and 3-D ones (which
onnxruntime does not implement) against the definition written out in numpy below.

Each case is a one-node ONNX model that `ge` compiles through its whole pipeline and runs on the
emulator. Offsets reach past the input's edges, so some taps read zeros in part or in whole.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from oracle import run_onnxruntime
from single_node import feeds, one_node

import ge.backend
from ge.errors import InvalidModelError, UnsupportedOperatorError


def deform_conv(
    x, w, offset, bias=None, mask=None, strides=None, pads=None, dilations=None, group=1, offset_group=1
):
    """DeformConv by its definition: every kernel tap moved by its offset, read with (multi)linear
    interpolation between the cells around it (cells outside the input read 0), times the mask,
    summed with the weights over the group's input channels and the taps."""
    batch, channels, *sizes = x.shape
    rank, kernel, outputs = len(sizes), w.shape[2:], offset.shape[2:]
    strides = np.array(strides or [1] * rank)
    dilations = np.array(dilations or [1] * rank)
    begin = np.array((pads or [0] * 2 * rank)[:rank])
    taps, points = math.prod(kernel), math.prod(outputs)
    moved = (
        offset.astype(np.float64).reshape(batch, offset_group, taps, rank, points).transpose(0, 1, 2, 4, 3)
    )
    tap = np.stack(np.unravel_index(np.arange(taps), kernel), axis=-1) * dilations
    start = np.stack(np.unravel_index(np.arange(points), outputs), axis=-1) * strides - begin
    position = moved + tap[:, None, :] + start[None, :, :]  # batch, offset groups, taps, points, rank
    low = np.floor(position)
    image = x.astype(np.float64).reshape(batch, offset_group, channels // offset_group, -1)
    sampled = np.zeros((batch, offset_group, channels // offset_group, taps, points))
    for corner in itertools.product((0, 1), repeat=rank):
        cell = low + np.array(corner)
        weight = np.prod(1 - np.abs(position - cell), axis=-1)
        inside = np.all((cell >= 0) & (cell < np.array(sizes)), axis=-1)
        clipped = np.clip(cell, 0, np.array(sizes) - 1).astype(np.int64)
        flat = np.ravel_multi_index(tuple(np.moveaxis(clipped, -1, 0)), sizes)
        values = np.take_along_axis(image, flat.reshape(batch, offset_group, 1, -1), axis=3)
        sampled += values.reshape(sampled.shape) * (weight * inside)[:, :, None]
    if mask is not None:
        sampled *= mask.astype(np.float64).reshape(batch, offset_group, 1, taps, points)
    columns = sampled.reshape(batch, group, channels // group * taps, points)
    weights = w.astype(np.float64).reshape(group, w.shape[0] // group, -1)
    y = np.einsum("gok,ngkp->ngop", weights, columns).reshape(batch, w.shape[0], *outputs)
    if bias is not None:
        y += bias.reshape(-1, *([1] * rank))
    return y.astype(x.dtype)


def case(
    rng, x_shape, out_channels, kernel, group=1, offset_group=1, with_mask=False, with_bias=False, **attrs
):
    """Inputs of a DeformConv (None for the absent ones) and its attributes."""
    batch, channels, *sizes = x_shape
    rank = len(sizes)
    strides = attrs.get("strides", [1] * rank)
    dilations = attrs.get("dilations", [1] * rank)
    pads = attrs.get("pads", [0] * 2 * rank)
    outputs = [
        (sizes[i] + pads[i] + pads[rank + i] - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1
        for i in range(rank)
    ]
    taps = math.prod(kernel)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((out_channels, channels // group, *kernel)).astype(np.float32)
    offset = rng.uniform(-2.5, 2.5, (batch, offset_group * taps * rank, *outputs)).astype(np.float32)
    bias = rng.standard_normal(out_channels).astype(np.float32) if with_bias else None
    mask = rng.uniform(0, 1, (batch, offset_group * taps, *outputs)).astype(np.float32) if with_mask else None
    return [x, w, offset, bias, mask], {"group": group, "offset_group": offset_group, **attrs}


def run_ge(inputs, opset: int = 22, **attrs) -> np.ndarray:
    model = one_node("DeformConv", inputs, opset, **attrs)
    return ge.backend.prepare(model).run(feeds(inputs, ()))[0]


CASES_2D = {
    "basic": ((1, 2, 5, 5), 3, (3, 3), {}),
    "padded-strided-dilated": (
        (2, 3, 7, 6),
        4,
        (2, 3),
        {"pads": [1, 2, 0, 1], "strides": [2, 1], "dilations": [1, 2]},
    ),
    "groups": ((1, 4, 6, 6), 6, (3, 3), {"group": 2, "offset_group": 2, "with_bias": True}),
    "offset-groups-mask-bias": (
        (2, 6, 5, 4),
        2,
        (2, 2),
        {"offset_group": 3, "with_mask": True, "with_bias": True},
    ),
    "groups-and-offset-groups-differ": (
        (1, 4, 5, 5),
        4,
        (2, 2),
        {"group": 4, "offset_group": 2, "with_mask": True},
    ),
}


@pytest.mark.parametrize("name", list(CASES_2D))
@pytest.mark.parametrize("opset", [19, 22])
def test_deform_conv_2d(name, opset, rng) -> None:
    x_shape, out_channels, kernel, options = CASES_2D[name]
    inputs, attrs = case(rng, x_shape, out_channels, kernel, **options)
    got = run_ge(inputs, opset, **attrs)
    (want,) = run_onnxruntime(one_node("DeformConv", inputs, opset, **attrs), feeds(inputs, ()))
    assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_deform_conv_with_zero_offsets_is_conv(rng) -> None:
    """Zero offsets and no mask sample the kernel taps themselves: a plain convolution."""
    inputs, attrs = case(
        rng, (1, 4, 6, 5), 2, (3, 2), group=2, with_bias=True, pads=[1, 0, 1, 1], strides=[2, 1]
    )
    inputs[2] = np.zeros_like(inputs[2])
    got = run_ge(inputs, **attrs)
    conv_attrs = {k: v for k, v in attrs.items() if k != "offset_group"}
    conv_inputs = [inputs[0], inputs[1], inputs[3]]
    (want,) = run_onnxruntime(one_node("Conv", conv_inputs, 22, **conv_attrs), feeds(conv_inputs, ()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("x_shape", "out_channels", "kernel", "options"),
    [
        ((2, 3, 9), 2, (3,), {"pads": [1, 2], "strides": [2], "with_mask": True, "with_bias": True}),
        ((1, 4, 4, 5, 4), 2, (2, 2, 2), {"offset_group": 2, "group": 2, "dilations": [1, 2, 1]}),
        ((1, 2, 3, 4, 5), 3, (2, 1, 3), {"pads": [1, 0, 1, 0, 1, 1], "with_mask": True, "with_bias": True}),
    ],
    ids=["1d", "3d-groups", "3d-mask-bias"],
)
def test_deform_conv_1d_3d(x_shape, out_channels, kernel, options, rng) -> None:
    inputs, attrs = case(rng, x_shape, out_channels, kernel, **options)
    got = run_ge(inputs, **attrs)
    x, w, offset, bias, mask = inputs
    want = deform_conv(x, w, offset, bias, mask, **attrs)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("dtype", "tolerance"), [(np.float64, 1e-12), (np.float16, 2e-2)])
def test_deform_conv_dtypes(dtype, tolerance, rng) -> None:
    """The sampling grid and the contraction run in the input's dtype; the oracle sees the same values
    in float64, so float16 differs by its rounding of the coordinates and sums."""
    inputs, attrs = case(
        rng, (1, 4, 5, 5), 2, (3, 3), group=2, offset_group=2, with_mask=True, with_bias=True
    )
    inputs = [a.astype(dtype) for a in inputs]
    got = run_ge(inputs, **attrs)
    want = deform_conv(*[a.astype(np.float64) for a in inputs], **attrs)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tolerance, atol=tolerance)


def test_numpy_definition_agrees_with_onnxruntime(rng) -> None:
    """The 1-D and 3-D oracle above, checked where onnxruntime can check it."""
    inputs, attrs = case(
        rng, (2, 4, 5, 6), 4, (2, 3), group=2, offset_group=2, with_mask=True, with_bias=True
    )
    (want,) = run_onnxruntime(one_node("DeformConv", inputs, 22, **attrs), feeds(inputs, ()))
    np.testing.assert_allclose(deform_conv(*inputs, **attrs), want, rtol=1e-4, atol=1e-4)


def test_offset_of_the_wrong_shape_is_invalid(rng) -> None:
    inputs, attrs = case(rng, (1, 2, 5, 5), 3, (3, 3))
    inputs[2] = inputs[2][:, :-2]
    with pytest.raises(InvalidModelError, match="DeformConv at node .*: an offset \\[1, 16, 3, 3\\]"):
        run_ge(inputs, **attrs)


def test_channels_not_divisible_by_offset_groups_is_invalid(rng) -> None:
    inputs, attrs = case(rng, (1, 3, 5, 5), 3, (3, 3))
    attrs["offset_group"] = 2
    with pytest.raises(InvalidModelError, match="do not fit group=1, offset_group=2"):
        run_ge(inputs, **attrs)


def test_four_spatial_axes_are_refused(rng) -> None:
    inputs, attrs = case(rng, (1, 1, 3, 3, 3, 3), 1, (1, 1, 1, 1))
    with pytest.raises(UnsupportedOperatorError, match="4-D deformable convolutions are not supported"):
        run_ge(inputs, **attrs)
