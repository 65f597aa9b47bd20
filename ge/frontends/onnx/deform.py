"""The converter of DeformConv: a convolution whose kernel taps move by learned offsets.

It decomposes into graph ops. Every input channel of an offset group is sampled (bilinear, zeros
outside the input) at each kernel tap displaced by that group's offsets, one grid_sample for all
groups (the groups folded into the batch); the samples are scaled by the mask, then contracted
with the weights, one batched matmul over the convolution groups:

```
positions = offset + (-pads + strides * output_position + dilations * tap)   # pixel coordinates
samples   = grid_sample(x, positions as a normalized (x, y, ...) grid) * mask  # N, C, taps, outputs
y         = W (groups, oC / groups, C / groups * taps) @ samples (N, groups, C / groups * taps, outputs)
```
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr
from ge.dtypes import element_type, numpy_dtype
from ge.graph import Tensor

from .composite import Composer
from .importer import Converter, Importer, Node


def _deform_conv(imp: Importer, node: Node) -> list[Tensor]:
    """1-D, 2-D and 3-D; static shapes. The output's spatial shape is the offset's."""
    c = Composer(imp, node)
    x, w, offset = c.input(0, "X"), c.input(1, "W"), c.input(2, "offset")
    mask = node.optional_input(4)
    c.static(x, w, offset, *([mask] if mask is not None else []))
    batch, channels, *sizes = x.shape
    rank = len(sizes)
    kernel = [int(k) for k in node.attr("kernel_shape", w.shape[2:])]
    if rank < 1 or len(w.shape) != rank + 2 or kernel != list(w.shape[2:]):
        raise node.invalid(f"a weight {list(w.shape)} (kernel_shape {kernel}) does not fit X {list(x.shape)}")
    if rank > 3:
        raise node.fail(f"{rank}-D deformable convolutions are not supported")
    strides = node.ints("strides", rank, 1)
    dilations = node.ints("dilations", rank, 1)
    pads = node.ints("pads", 2 * rank, 0)
    groups, offset_groups = int(node.attr("group", 1)), int(node.attr("offset_group", 1))
    out_channels, taps = w.shape[0], math.prod(kernel)
    outputs = [
        (sizes[i] + pads[i] + pads[rank + i] - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1
        for i in range(rank)
    ]
    points = math.prod(outputs)
    if (
        groups < 1
        or offset_groups < 1
        or channels != w.shape[1] * groups
        or out_channels % groups
        or channels % offset_groups
    ):
        raise node.invalid(
            f"X {list(x.shape)} and W {list(w.shape)} do not fit group={groups}, offset_group={offset_groups}"
        )
    if list(offset.shape) != [batch, offset_groups * taps * rank, *outputs]:
        raise node.invalid(
            f"an offset {list(offset.shape)} where ({batch}, {offset_groups * taps * rank}, "
            f"{', '.join(map(str, outputs))}) is due"
        )
    if mask is not None and list(mask.shape) != [batch, offset_groups * taps, *outputs]:
        raise node.invalid(f"a mask {list(mask.shape)} does not fit the offset {list(offset.shape)}")

    grid = _sampling_grid(c, offset, sizes, kernel, outputs, strides, dilations, pads, offset_groups)
    by_group = c.reshape(x, [batch * offset_groups, channels // offset_groups, *sizes], "by_offset_group")
    props = {
        "mode": StringAttr("linear"),
        "padding_mode": StringAttr("zeros"),
        "align_corners": bool_attr(False),
    }
    samples = c.op(ops.GridSampleOp, [by_group, grid], "samples", props)
    if mask is not None:
        samples = c.reshape(samples, [batch, offset_groups, channels // offset_groups, taps, points], "taps")
        scale = c.reshape(mask, [batch, offset_groups, 1, taps, points], "mask_by_group")
        samples = c.op(ops.MulOp, [samples, scale], "masked")
    columns = c.reshape(samples, [batch, groups, channels // groups * taps, points], "columns")
    weights = c.reshape(w, [groups, out_channels // groups, channels // groups * taps], "weights")
    y = c.op(ops.MatMulOp, [weights, columns], "contracted")
    y = c.reshape(y, [batch, out_channels, *outputs], "unbiased" if node.has_input(3) else "")
    if not node.has_input(3):
        return [y]
    bias = c.reshape(node.input(3), [out_channels, *([1] * rank)], "bias")
    return [c.op(ops.AddOp, [y, bias], "")]


def _sampling_grid(
    c: Composer,
    offset: Tensor,
    sizes: list[int],
    kernel: list[int],
    outputs: list[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
    offset_groups: int,
) -> Tensor:
    """The normalized grid (batch * offset groups, taps, outputs, 1..., rank) of every tap of every
    output position, x (the last axis) first, for grid_sample with align_corners = 0."""
    batch, rank = offset.shape[0], len(sizes)
    taps, points = math.prod(kernel), math.prod(outputs)
    dtype = numpy_dtype(element_type(offset.dtype))
    # Pixel coordinate p of axis d is the normalized (2 p + 1) / size - 1: a scale and a shift, which
    # one matmul by an anti-diagonal matrix applies while reversing the axes into x-first order.
    size = np.array(sizes, np.float64)
    scale = np.fliplr(np.diag(2.0 / size))
    tap = np.stack(np.unravel_index(np.arange(taps), kernel), axis=-1) * dilations  # taps, rank
    start = np.stack(np.unravel_index(np.arange(points), outputs), axis=-1) * strides - pads[:rank]
    base = tap[:, None, :] + start[None, :, :]  # taps, points, rank
    shift = base @ scale + (1.0 / size - 1.0)[::-1]
    coordinates = c.reshape(offset, [batch, offset_groups, taps, rank, points], "by_tap")
    coordinates = c.transpose(coordinates, (0, 1, 2, 4, 3), "points_last")
    normalized = c.op(ops.MatMulOp, [coordinates, c.constant(scale.astype(dtype), "scale")], "scaled")
    normalized = c.op(ops.AddOp, [normalized, c.constant(shift.astype(dtype), "shift")], "normalized")
    grid = [taps, points, *([1] * (rank - 2))] if rank >= 2 else [taps * points]
    return c.reshape(normalized, [batch * offset_groups, *grid, rank], "grid")


CONVERTERS: dict[str, Converter] = {"DeformConv": _deform_conv}
