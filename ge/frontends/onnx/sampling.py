"""Converters of the operators that resample images: AffineGrid, GridSample, RoiAlign, Col2Im and
MaxUnpool.

GridSample and RoiAlign map to the graph ops of the same names. The others decompose: AffineGrid
is a matmul of the theta matrices with the constant grid of normalized cell centres; Col2Im a
scatter_nd that adds every column entry into its cell of the padded image (positions known at
import), then a crop; MaxUnpool a scatter_nd of the values at their flat indices into zeros.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from .composite import Composer
from .importer import Converter, Importer, Node

_OPSET_16_MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}


def _affine_grid(imp: Importer, node: Node) -> list[Tensor]:
    """theta (N, 2, 3) or (N, 3, 4); `size` (N, C, H, W) or (N, C, D, H, W) must be known."""
    c = Composer(imp, node)
    theta = c.input(0, "theta")
    size = [int(v) for v in node.value(1).reshape(-1)]
    spatial = size[2:]
    if len(spatial) not in (2, 3) or list(theta.shape) != [size[0], len(spatial), len(spatial) + 1]:
        raise node.invalid(f"theta {list(theta.shape)} does not fit size {size}")
    if min(spatial) < 1:
        raise node.invalid(f"input #1 ('size') is {size}: its spatial sizes must be positive")
    node.allocate([math.prod(spatial), len(spatial) + 1], np.float64, "its grid of cell centres")
    align = bool(node.attr("align_corners", 0))
    # Homogeneous coordinates of every cell centre, x (the last axis) first: (cells, n + 1).
    axes = [_normalized_centres(n, align) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([*reversed([m.reshape(-1) for m in mesh]), np.ones(math.prod(spatial))], axis=1)
    base_tensor = c.constant(base.astype(theta.dtype if theta.dtype != "bfloat16" else np.float32), "base")
    base_tensor = c.cast(base_tensor, theta.dtype, "base_cast")
    transposed = c.transpose(theta, (0, 2, 1), "theta_t")
    grid = c.op(ops.MatMulOp, [base_tensor, transposed], "points")
    return [c.reshape(grid, [size[0], *spatial, len(spatial)], "")]


def _grid_sample(imp: Importer, node: Node) -> list[Tensor]:
    """Opset 16 names the modes bilinear and bicubic and takes 4-D inputs only."""
    c = Composer(imp, node)
    x, grid = c.input(0, "X"), c.input(1, "grid")
    mode = str(node.attr("mode", "bilinear" if node.opset < 20 else "linear"))
    if node.opset < 20:
        if mode not in _OPSET_16_MODES:
            raise node.invalid(f"unknown mode '{mode}' (known: {', '.join(_OPSET_16_MODES)})")
        mode = _OPSET_16_MODES[mode]
    props = {
        "mode": StringAttr(mode),
        "padding_mode": StringAttr(str(node.attr("padding_mode", "zeros"))),
        "align_corners": bool_attr(node.flag("align_corners", False)),
    }
    return [c.op(ops.GridSampleOp, [x, grid], "", props)]


def _roi_align(imp: Importer, node: Node) -> list[Tensor]:
    """Before opset 16 the boxes are not shifted by half a cell (output_half_pixel)."""
    c = Composer(imp, node)
    default = "output_half_pixel" if node.opset < 16 else "half_pixel"
    coordinates = str(node.attr("coordinate_transformation_mode", default))
    if coordinates not in ("half_pixel", "output_half_pixel"):
        raise node.invalid(f"unknown coordinate_transformation_mode '{coordinates}'")
    props = {
        "mode": StringAttr(str(node.attr("mode", "avg"))),
        "output_height": int_attr(int(node.attr("output_height", 1))),
        "output_width": int_attr(int(node.attr("output_width", 1))),
        "sampling_ratio": int_attr(int(node.attr("sampling_ratio", 0))),
        "spatial_scale": ops.float_attr(float(node.attr("spatial_scale", 1.0))),
        "half_pixel": bool_attr(coordinates == "half_pixel"),
    }
    operands = [c.input(0, "X"), c.input(1, "rois"), c.input(2, "batch_indices")]
    if operands[0].shape and operands[0].shape[0] >= 0:
        _check_known_range(node, 2, "batch_indices", 0, operands[0].shape[0])
    return [c.op(ops.RoiAlignOp, operands, "", props)]


def _col2im(imp: Importer, node: Node) -> list[Tensor]:
    """image_shape and block_shape must be known; the input is (N, C * prod(block), blocks)."""
    c = Composer(imp, node)
    x = c.input(0, "input")
    c.static(x)
    image = [int(v) for v in node.value(1).reshape(-1)]
    block = [int(v) for v in node.value(2).reshape(-1)]
    rank = len(image)
    if len(block) != rank or len(x.shape) != 3:
        raise node.invalid(f"image_shape {image} and block_shape {block} do not fit an input {list(x.shape)}")
    strides = node.ints("strides", rank, 1)
    dilations = node.ints("dilations", rank, 1)
    pads = node.ints("pads", 2 * rank, 0)
    for what, values, least in (
        ("input #2 ('block_shape')", block, 1),
        ("attribute 'strides'", strides, 1),
        ("attribute 'dilations'", dilations, 1),
        ("attribute 'pads'", pads, 0),
    ):
        if min(values, default=least) < least:
            raise node.invalid(f"{what} is {list(values)}: each value must be >= {least}")
    padded = [image[i] + pads[i] + pads[rank + i] for i in range(rank)]
    counts = [(padded[i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1 for i in range(rank)]
    batch, columns, length = x.shape
    kernel = math.prod(block)
    if columns % kernel or length != math.prod(counts) or min(counts) < 1:
        raise node.invalid(
            f"an input {list(x.shape)} does not hold blocks {block} sliding over {counts} "
            f"positions of {image}"
        )
    channels = columns // kernel
    # The padded-image cell of every (kernel offset, block position), in the input's order.
    offsets = np.stack(np.unravel_index(np.arange(kernel), block), axis=1)  # kernel, rank
    starts = np.stack(np.unravel_index(np.arange(length), counts), axis=1)  # length, rank
    cells = offsets[:, None, :] * np.array(dilations) + starts[None, :, :] * np.array(strides)
    flat = np.ravel_multi_index(tuple(np.moveaxis(cells, -1, 0)), padded).reshape(-1, 1)
    updates = c.reshape(x, [batch, channels, kernel, length], "blocks")
    updates = c.transpose(updates, (2, 3, 0, 1), "by_cell")
    updates = c.reshape(updates, [kernel * length, batch, channels], "updates")
    zeros = c.zeros([math.prod(padded), batch, channels], x.dtype, "zeros")
    indices = c.constant(flat.astype(np.int64), "cells")
    summed = c.op(ops.ScatterNDOp, [zeros, indices, updates], "sum", {"reduction": StringAttr("add")})
    summed = c.transpose(summed, (1, 2, 0), "channels_first")
    summed = c.reshape(summed, [batch, channels, *padded], "padded")
    if not any(pads):
        return [summed]
    crop = [0, 0, *(-p for p in pads[:rank]), 0, 0, *(-p for p in pads[rank:])]
    return [c.op(ops.PadOp, [summed], "", {"pads": ints_attr(crop), "mode": StringAttr("constant")})]


def _max_unpool(imp: Importer, node: Node) -> list[Tensor]:
    """The indices count over the whole tensor (N and C included), as MaxPool gives them; an
    `output_shape` (known) larger than the inferred one pads it with zeros at the end of each axis."""
    c = Composer(imp, node)
    x, indices = c.input(0, "X"), c.input(1, "I")
    c.static(x, indices)
    kernel = [int(k) for k in node.attr("kernel_shape", [])]
    rank = len(x.shape) - 2
    if len(kernel) != rank or list(indices.shape) != list(x.shape):
        raise node.invalid(
            f"kernel_shape {kernel} and indices {list(indices.shape)} do not fit X {list(x.shape)}"
        )
    strides = node.ints("strides", rank, 1)
    pads = node.ints("pads", 2 * rank, 0)
    inferred = [
        *x.shape[:2],
        *((x.shape[2 + i] - 1) * strides[i] - pads[i] - pads[rank + i] + kernel[i] for i in range(rank)),
    ]
    _check_known_range(node, 1, "I", 0, math.prod(inferred))
    wanted = [int(v) for v in node.value(2).reshape(-1)] if node.has_input(2) else inferred
    if len(wanted) != len(inferred) or any(w < i for w, i in zip(wanted, inferred, strict=True)):
        raise node.fail(f"an output_shape {wanted} smaller than the unpooled shape {inferred}")
    zeros = c.zeros([math.prod(inferred)], x.dtype, "zeros")
    positions = c.reshape(c.cast(indices, "int64", "indices64"), [-1, 1], "positions")
    values = c.reshape(x, [-1], "values")
    scattered = c.op(
        ops.ScatterNDOp, [zeros, positions, values], "scatter", {"reduction": StringAttr("none")}
    )
    unpooled = c.reshape(scattered, inferred, "unpooled" if wanted != inferred else "")
    if wanted == inferred:
        return [unpooled]
    extra = [0] * len(wanted) + [w - i for w, i in zip(wanted, inferred, strict=True)]
    return [c.op(ops.PadOp, [unpooled], "", {"pads": ints_attr(extra), "mode": StringAttr("constant")})]


def _normalized_centres(count: int, align: bool) -> np.ndarray:
    """Cell centres in [-1, 1]: from edge centre to edge centre with `align` (a single cell at -1,
    as ONNX's definition places it), else cell by cell."""
    if align:
        return np.linspace(-1.0, 1.0, count)
    return (2.0 * np.arange(count) + 1.0) / count - 1.0


def _check_known_range(node: Node, index: int, what: str, low: int, high: int) -> None:
    """Refuses input `index`, when known at import (a constant), holding a value outside
    [low, high), as onnxruntime refuses it: the model is refused when imported rather than run."""
    known = node.known[index]
    if known is None or not known.size:
        return
    outside = known[(known < low) | (known >= high)]
    if outside.size:
        raise node.invalid(
            f"input #{index} ('{what}') holds {outside.reshape(-1)[0].item()}, outside [{low}, {high - 1}]"
        )


CONVERTERS: dict[str, Converter] = {
    "AffineGrid": _affine_grid,
    "GridSample": _grid_sample,
    "RoiAlign": _roi_align,
    "Col2Im": _col2im,
    "MaxUnpool": _max_unpool,
}
