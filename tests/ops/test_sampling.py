"""AffineGrid, GridSample, RoiAlign, Col2Im and MaxUnpool against onnxruntime, through `ge.backend`.

Each case is a one-node ONNX model that `ge` compiles through its whole pipeline and runs on the
emulator. Inputs that decide a shape (AffineGrid's size, Col2Im's image and block shapes,
MaxUnpool's output_shape) are initializers. RoiAlign is compared at opset 16, the newest that
onnxruntime implements. MaxUnpool with an output_shape follows ONNX's own test (the unpooled
tensor padded at the end of each axis), where onnxruntime reads the indices in the larger
shape: that case is checked against the worked example of the ONNX specification.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import run_onnxruntime
from single_node import feeds, one_node

import ge.backend
from ge.errors import InvalidModelError, UnsupportedOperatorError


def run_ge(op_type: str, inputs, opset: int, known: tuple[int, ...] = (), **attrs) -> np.ndarray:
    model = one_node(op_type, inputs, opset, known=known, **attrs)
    return ge.backend.prepare(model).run(feeds(inputs, known))[0]


def check(op_type: str, inputs, opset: int, known: tuple[int, ...] = (), tolerance: float = 1e-5, **attrs):
    got = run_ge(op_type, inputs, opset, known, **attrs)
    model = one_node(op_type, inputs, opset, known=known, **attrs)
    (want,) = run_onnxruntime(model, feeds(inputs, known))
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


def ints(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


# --------------------------------------------------------------------------------------------
# AffineGrid
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 4, 2)])
def test_affine_grid(align, size, rng) -> None:
    spatial = len(size) - 2
    theta = rng.standard_normal((size[0], spatial, spatial + 1)).astype(np.float32)
    check("AffineGrid", [theta, ints(*size)], 20, known=(1,), align_corners=align)


@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid_of_a_single_row(align) -> None:
    """One row sits at y = 0 between the edges, and at -1 when aligned to the corners (ONNX's
    definition; onnxruntime places it at 1 and PyTorch at 0, so this is a worked example)."""
    theta = np.array([[[1, 0, 0], [0, 1, 0]]], np.float32)  # the identity
    got = run_ge("AffineGrid", [theta, ints(1, 1, 1, 3)], 20, known=(1,), align_corners=align)
    xs = [-1, 0, 1] if align else [-2 / 3, 0, 2 / 3]
    want = np.array([[[[x, -1.0 if align else 0.0] for x in xs]]], np.float32)
    np.testing.assert_allclose(got, want, atol=1e-7)


# --------------------------------------------------------------------------------------------
# GridSample
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample(mode, padding, align, rng) -> None:
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1.4, 1.4, (2, 4, 7, 2)).astype(np.float32)  # some points fall outside
    check("GridSample", [x, grid], 20, mode=mode, padding_mode=padding, align_corners=align)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_3d(mode, padding, rng) -> None:
    x = rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid = rng.uniform(-1.3, 1.3, (1, 2, 3, 4, 3)).astype(np.float32)
    check("GridSample", [x, grid], 20, mode=mode, padding_mode=padding)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_opset_16_names(mode, rng) -> None:
    x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, (1, 3, 5, 2)).astype(np.float32)
    check("GridSample", [x, grid], 16, mode=mode)


def test_grid_sample_exact_points() -> None:
    """With align_corners, -1 and 1 are the corner cells: the grid reads them exactly."""
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    grid = np.array([[[[-1, -1], [1, -1], [1, 1], [0, 0]]]], np.float32)  # (x, y) pairs
    got = run_ge("GridSample", [x, grid], 20, align_corners=1)
    np.testing.assert_allclose(got.reshape(-1), [0, 3, 11, 5.5])


def test_grid_sample_unknown_mode(rng) -> None:
    x, grid = np.zeros((1, 1, 2, 2), np.float32), np.zeros((1, 1, 1, 2), np.float32)
    with pytest.raises(InvalidModelError, match="unknown mode 'linear'"):
        run_ge("GridSample", [x, grid], 16, mode="linear")


# --------------------------------------------------------------------------------------------
# RoiAlign
# --------------------------------------------------------------------------------------------

ROIS = np.array(
    [[0, 0, 9, 9], [0, 5, 4, 9], [5, 5, 9, 9], [1.3, 2.2, 7.7, 5.1], [3, 3, 3.2, 3.4]], np.float32
)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("coordinates", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align(mode, coordinates, ratio, rng) -> None:
    x = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
    batch = ints(0, 1, 0, 1, 1)
    check(
        "RoiAlign",
        [x, ROIS, batch],
        16,
        mode=mode,
        coordinate_transformation_mode=coordinates,
        sampling_ratio=ratio,
        output_height=3,
        output_width=2,
    )


def test_roi_align_scaled_and_outside(rng) -> None:
    x = rng.standard_normal((1, 2, 6, 8)).astype(np.float32)
    rois = np.array([[2, 2, 30, 20], [-10, -8, 4, 6], [20, 10, 40, 30]], np.float32)
    check("RoiAlign", [x, rois, ints(0, 0, 0)], 16, spatial_scale=0.25, output_height=4, output_width=4)


# --------------------------------------------------------------------------------------------
# Col2Im
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "block", "attrs"),
    [
        ((5, 5), (2, 2), {}),
        ((5, 5), (2, 3), {"strides": [2, 1]}),
        ((6, 5), (2, 2), {"dilations": [2, 1]}),
        ((4, 5), (3, 3), {"pads": [1, 0, 1, 2]}),
        ((3, 4, 3), (2, 2, 1), {"strides": [1, 2, 1]}),
    ],
)
def test_col2im(image, block, attrs, rng) -> None:
    rank = len(image)
    strides = attrs.get("strides", [1] * rank)
    dilations = attrs.get("dilations", [1] * rank)
    pads = attrs.get("pads", [0] * 2 * rank)
    counts = [
        (image[i] + pads[i] + pads[rank + i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1
        for i in range(rank)
    ]
    x = rng.standard_normal((2, 3 * int(np.prod(block)), int(np.prod(counts)))).astype(np.float32)
    check("Col2Im", [x, ints(*image), ints(*block)], 18, known=(1, 2), **attrs)


def test_col2im_inconsistent_blocks_are_invalid(rng) -> None:
    x = rng.standard_normal((1, 4, 7)).astype(np.float32)
    with pytest.raises(InvalidModelError, match="does not hold blocks"):
        run_ge("Col2Im", [x, ints(4, 4), ints(2, 2)], 18, known=(1, 2))


# --------------------------------------------------------------------------------------------
# MaxUnpool
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "attrs"),
    [
        ((2, 3, 6, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}),
        ((1, 2, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
        ((1, 2, 9), {"kernel_shape": [3], "strides": [3]}),
    ],
)
def test_max_unpool_of_max_pool(shape, attrs, rng) -> None:
    """The values and indices of a MaxPool go back to where they came from."""
    source = rng.standard_normal(shape).astype(np.float32)
    pool = one_node("MaxPool", [source], 12, outputs=2, **attrs)
    values, indices = run_onnxruntime(pool, {"in0": source})
    check("MaxUnpool", [values, indices], 11, **attrs)


def test_max_unpool_with_output_shape() -> None:
    """ONNX's example: the unpooled 4x4 tensor, padded to the 5x5 output_shape."""
    values = np.array([[[[5, 6], [7, 8]]]], np.float32)
    indices = ints(5, 7, 13, 15).reshape(1, 1, 2, 2)
    got = run_ge(
        "MaxUnpool", [values, indices, ints(1, 1, 5, 5)], 11, known=(2,), kernel_shape=[2, 2], strides=[2, 2]
    )
    want = np.zeros((1, 1, 5, 5), np.float32)
    want[0, 0, 1, 1], want[0, 0, 1, 3], want[0, 0, 3, 1], want[0, 0, 3, 3] = 5, 6, 7, 8
    np.testing.assert_array_equal(got, want)


def test_max_unpool_smaller_output_shape_is_refused() -> None:
    values, indices = np.ones((1, 1, 2, 2), np.float32), ints(0, 1, 2, 3).reshape(1, 1, 2, 2)
    with pytest.raises(UnsupportedOperatorError, match="smaller than the unpooled shape"):
        run_ge(
            "MaxUnpool",
            [values, indices, ints(1, 1, 3, 3)],
            11,
            known=(2,),
            kernel_shape=[2, 2],
            strides=[2, 2],
        )
