"""Converters of TensorFlow's image-layout ops beyond the 2-D convolutions: 3-D convolutions and
pools (NDHWC), local response normalization, the block rearrangements (SpaceToDepth,
DepthToSpace, SpaceToBatchND, BatchToSpaceND), and the area and kernel resizes.

3-D ops import as their NCDHW op between transposes, as the 2-D ones do (see the importer); the
block rearrangements are a reshape, a transpose and a reshape in NHWC.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import int_attr, ints_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node, add_slice, static_dims, transpose
from .nn import channels_last, pool_converter, window_props

TO_NCDHW = (0, 4, 1, 2, 3)
TO_NDHWC = (0, 2, 3, 4, 1)


def _conv3d(imp: Importer, node: Node) -> list[Tensor]:
    """Filter [D, H, W, I, O] as OIDHW; the groups are the input channels over the filter's I."""
    x, w = node.inputs
    known = imp.known_value(w)
    if known is None:
        raise node.fail("the filter must be a constant")
    weight = imp.add_constant(f"{node.name}.filter", known.transpose(4, 3, 0, 1, 2).copy())
    channels = static_dims(node, x)[-1 if channels_last(node, 3) else 1]
    if channels % w.shape[3]:
        raise node.invalid(f"{channels} input channels do not divide into groups of {w.shape[3]}")
    props = {**window_props(node, x, w.shape[:3], dilated=True), "groups": int_attr(channels // w.shape[3])}
    return [_ncdhw(imp, node, x, ops.Conv3DOp, [weight], props)]


def _lrn(imp: Importer, node: Node) -> list[Tensor]:
    """Over the last (channel) axis, 2 * depth_radius + 1 channels: ONNX's LRN on NCHW, whose
    alpha is divided by the window size."""
    x = node.inputs[0]
    radius = int(node.attr("depth_radius", 5))
    size = 2 * radius + 1
    props = {
        "size": int_attr(size),
        "alpha": ops.float_attr(float(node.attr("alpha", 1.0)) * size),
        "beta": ops.float_attr(float(node.attr("beta", 0.5))),
        "bias": ops.float_attr(float(node.attr("bias", 1.0))),
    }
    y = imp.g.add_op(ops.LRNOp, [imp.to_nchw(x, node.name)], props, f"{node.name}.nchw")
    return [imp.to_nhwc(y, node.name)]


def _space_to_depth(imp: Importer, node: Node) -> list[Tensor]:
    """out[n, h, w, (i * b + j) * C + c] = in[n, h * b + i, w * b + j, c]."""
    x, block = node.inputs[0], _block(node)
    n, h, w, c = _nhwc_dims(node, x)
    if h % block or w % block:
        raise node.invalid(f"height {h} and width {w} must divide by block_size {block}")
    y = imp.g.add_reshape(x, [n, h // block, block, w // block, block, c], f"{node.name}.split")
    y = transpose(imp, y, (0, 1, 3, 2, 4, 5), f"{node.name}.blocks")
    return [imp.g.add_reshape(y, [n, h // block, w // block, block * block * c], node.name)]


def _depth_to_space(imp: Importer, node: Node) -> list[Tensor]:
    """out[n, h * b + i, w * b + j, c] = in[n, h, w, (i * b + j) * C' + c]."""
    x, block = node.inputs[0], _block(node)
    n, h, w, c = _nhwc_dims(node, x)
    if c % (block * block):
        raise node.invalid(f"{c} channels do not divide by block_size {block} squared")
    depth = c // (block * block)
    y = imp.g.add_reshape(x, [n, h, w, block, block, depth], f"{node.name}.split")
    y = transpose(imp, y, (0, 1, 3, 2, 4, 5), f"{node.name}.blocks")
    return [imp.g.add_reshape(y, [n, h * block, w * block, depth], node.name)]


def _resize_area(imp: Importer, node: Node) -> list[Tensor]:
    """Each output cell averages the input cells under its box [o * s, (o + 1) * s), weighted by
    the length they share (s = in / out, or (in - 1) / (out - 1) with align_corners), as
    TensorFlow's ResizeArea does: one constant weight matrix per axis, applied by einsum. The
    result is float32 whatever the input's type."""
    x = node.inputs[0]
    n, h, w, c = _nhwc_dims(node, x)
    height, width = node.ints(1)
    if height <= 0 or width <= 0:
        raise node.invalid(f"size {[height, width]} must be positive")
    aligned = bool(node.attr("align_corners", False))
    if x.dtype != "float32":
        x = imp.g.add_cast(x, "float32", f"{node.name}.float")
    rows = imp.add_constant(f"{node.name}.rows", _area_weights(h, height, aligned))
    columns = imp.add_constant(f"{node.name}.columns", _area_weights(w, width, aligned))
    y = imp.g.add_op(
        ops.EinsumOp, [rows, x], {"equation": StringAttr("oh,nhwc->nowc")}, f"{node.name}.height"
    )
    return [imp.g.add_op(ops.EinsumOp, [columns, y], {"equation": StringAttr("pw,nowc->nopc")}, node.name)]


def _scale_and_translate(imp: Importer, node: Node) -> list[Tensor]:
    """ScaleAndTranslate(images, size, scale, translation) {kernel_type, antialias}: what
    tf.image.resize does with antialias or the lanczos, gaussian and mitchellcubic methods. Each
    output cell weighs the input cells near its sample point by the kernel (widened by 1 / scale
    when antialiasing a downscale), the weights normalized to sum to 1, a sample point outside
    the input giving 0: one constant weight matrix per axis, as TensorFlow's spans."""
    x = node.inputs[0]
    n, h, w, c = _nhwc_dims(node, x)
    height, width = node.ints(1)
    scales = [float(v) for v in node.value(2).reshape(-1)]
    shifts = [float(v) for v in node.value(3).reshape(-1)]
    kind = str(node.attr("kernel_type", "lanczos3"))
    if kind not in KERNELS:
        raise node.fail(f"kernel_type '{kind}' is not supported ({', '.join(sorted(KERNELS))} are)")
    antialias = bool(node.attr("antialias", True))
    if x.dtype != "float32":
        x = imp.g.add_cast(x, "float32", f"{node.name}.float")
    matrices = [
        _span_weights(size, out, scale, shift, KERNELS[kind], antialias)
        for size, out, scale, shift in zip((h, w), (height, width), scales, shifts, strict=True)
    ]
    rows = imp.add_constant(f"{node.name}.rows", matrices[0])
    columns = imp.add_constant(f"{node.name}.columns", matrices[1])
    y = imp.g.add_op(
        ops.EinsumOp, [rows, x], {"equation": StringAttr("oh,nhwc->nowc")}, f"{node.name}.height"
    )
    return [imp.g.add_op(ops.EinsumOp, [columns, y], {"equation": StringAttr("pw,nowc->nopc")}, node.name)]


def _span_weights(size: int, out: int, scale: float, shift: float, kernel, antialias: bool) -> np.ndarray:
    """The weights in float32 arithmetic, step by step as TensorFlow's: a sample point that
    falls on the kernel's edge is in or out as it is there."""
    function, radius = kernel
    f32 = np.float32
    inverse = f32(1) / f32(scale)
    offset = -inverse * f32(shift)
    width = max(inverse, f32(1)) if antialias else f32(1)
    reach = f32(radius) * width
    weights = np.zeros((out, size), dtype=np.float32)
    for o in range(out):
        sample = (f32(o) + f32(0.5)) * inverse + offset
        if sample < 0 or sample > size:
            continue
        first = min(max(int(np.ceil(sample - reach - f32(0.5))), 0), size - 1)
        last = min(max(int(np.floor(sample + reach - f32(0.5))), 0), size - 1) + 1
        taps = np.array(
            [function(float(abs((f32(cell) + f32(0.5) - sample) / width))) for cell in range(first, last)],
            dtype=np.float32,
        )
        total = taps.sum(dtype=np.float32)
        weights[o, first:last] = taps / total if abs(total) >= 1000 * np.finfo(np.float32).tiny else taps
    return weights


def _lanczos(radius: float):
    def kernel(x: float) -> float:
        if x > radius:
            return 0.0
        if x <= 1e-3:
            return 1.0
        return radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius) / (np.pi * np.pi * x * x)

    return kernel, radius


def _mitchell(x: float) -> float:
    if x >= 2:
        return 0.0
    if x >= 1:
        return (((-7 / 18) * x + 2) * x - 10 / 3) * x + 16 / 9
    return ((7 / 6) * x - 2) * x * x + 8 / 9


def _keys(x: float) -> float:
    if x >= 2:
        return 0.0
    if x >= 1:
        return ((-0.5 * x + 2.5) * x - 4) * x + 2
    return (1.5 * x - 2.5) * x * x + 1


KERNELS = {
    "lanczos1": _lanczos(1.0),
    "lanczos3": _lanczos(3.0),
    "lanczos5": _lanczos(5.0),
    "gaussian": (lambda x: float(np.exp(-x * x / (2 * 0.5 * 0.5))) if x < 1.5 else 0.0, 1.5),
    "box": (lambda x: 1.0 if x < 0.5 else 0.5 if x == 0.5 else 0.0, 1.0),
    "triangle": (lambda x: max(0.0, 1.0 - x), 1.0),
    "keyscubic": (_keys, 2.0),
    "mitchellcubic": (_mitchell, 2.0),
}
"""TensorFlow's sampling kernels (sampling_kernels.h) by kernel_type: the function of the
distance and its radius."""


def _area_weights(size: int, out: int, aligned: bool) -> np.ndarray:
    scale = (size - 1) / (out - 1) if aligned and out > 1 else size / out
    weights = np.zeros((out, size))
    for o in range(out):
        start, end = o * scale, (o + 1) * scale
        cell = int(np.floor(start))
        while cell < end:
            weights[o, min(cell, size - 1)] += min(cell + 1, end) - max(cell, start)
            cell += 1
    return (weights / scale).astype(np.float32)


def _space_to_batch(imp: Importer, node: Node) -> list[Tensor]:
    """SpaceToBatchND(x, block_shape, paddings): pad the M block axes, split each into
    (size / block, block), move the blocks before the batch and merge them into it."""
    x = node.inputs[0]
    block = node.ints(1)
    paddings = node.value(2).reshape(-1, 2).tolist()
    dims = static_dims(node, x)
    m = len(block)
    if len(paddings) != m or len(dims) < m + 1:
        raise node.invalid(f"block_shape {block} and paddings {paddings} do not fit input {dims}")
    pads = [0] * len(dims) * 2
    for i, (before, after) in enumerate(paddings):
        pads[1 + i], pads[len(dims) + 1 + i] = int(before), int(after)
    if any(pads):
        props = {"pads": ints_attr(pads), "mode": StringAttr("constant")}
        x = imp.g.add_op(ops.PadOp, [x], props, f"{node.name}.pad")
    padded = list(x.shape)
    split = [padded[0]]
    for i, b in enumerate(block):
        if padded[1 + i] % b:
            raise node.invalid(f"padded axis {1 + i} of size {padded[1 + i]} does not divide by block {b}")
        split += [padded[1 + i] // b, b]
    rest = padded[1 + m :]
    x = imp.g.add_reshape(x, split + rest, f"{node.name}.split")
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    perm += list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    x = transpose(imp, x, perm, f"{node.name}.blocks_first")
    batch = padded[0] * int(np.prod(block))
    return [imp.g.add_reshape(x, [batch] + [split[1 + 2 * i] for i in range(m)] + rest, node.name)]


def _batch_to_space(imp: Importer, node: Node) -> list[Tensor]:
    """BatchToSpaceND(x, block_shape, crops): the inverse of SpaceToBatchND, then the crops."""
    x = node.inputs[0]
    block = node.ints(1)
    crops = node.value(2).reshape(-1, 2).tolist()
    dims = static_dims(node, x)
    m = len(block)
    total = int(np.prod(block))
    if len(crops) != m or len(dims) < m + 1 or dims[0] % total:
        raise node.invalid(f"block_shape {block} and crops {crops} do not fit input {dims}")
    batch = dims[0] // total
    spatial, rest = dims[1 : 1 + m], dims[1 + m :]
    x = imp.g.add_reshape(x, [*block, batch, *spatial, *rest], f"{node.name}.split")
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    x = transpose(imp, x, perm, f"{node.name}.blocks_last")
    grown = [s * b for s, b in zip(spatial, block, strict=True)]
    x = imp.g.add_reshape(x, [batch, *grown, *rest], f"{node.name}.merge")
    if not any(v for pair in crops for v in pair):
        return [x]
    starts = [int(c[0]) for c in crops]
    ends = [g - int(c[1]) for g, c in zip(grown, crops, strict=True)]
    return [add_slice(imp, node.name, x, starts, ends, list(range(1, 1 + m)), [1] * m)]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _block(node: Node) -> int:
    block = int(node.attr("block_size", 0))
    if block < 2:
        raise node.invalid(f"block_size must be at least 2, got {block}")
    return block


def _nhwc_dims(node: Node, x: Tensor) -> list[int]:
    if str(node.attr("data_format", "NHWC")) != "NHWC":
        raise node.fail(f"data_format '{node.attr('data_format')}' is not supported (NHWC is)")
    dims = static_dims(node, x)
    if len(dims) != 4:
        raise node.invalid(f"needs a rank-4 input, got {dims}")
    return dims


def _ncdhw(
    imp: Importer, node: Node, x: Tensor, op_class: type, operands: list[Tensor], props: dict
) -> Tensor:
    if not channels_last(node, 3):
        return imp.g.add_op(op_class, [x, *operands], props, node.name)
    y = imp.g.add_op(
        op_class,
        [transpose(imp, x, TO_NCDHW, f"{node.name}.to_ncdhw"), *operands],
        props,
        f"{node.name}.ncdhw",
    )
    return transpose(imp, y, TO_NDHWC, node.name)


CONVERTERS: dict[str, Converter] = {
    "Conv3D": _conv3d,
    "MaxPool3D": pool_converter(ops.MaxPool3DOp, _ncdhw),
    "AvgPool3D": pool_converter(ops.AvgPool3DOp, _ncdhw),
    "LRN": _lrn,
    "SpaceToDepth": _space_to_depth,
    "DepthToSpace": _depth_to_space,
    "SpaceToBatchND": _space_to_batch,
    "BatchToSpaceND": _batch_to_space,
    "ResizeArea": _resize_area,
    "ScaleAndTranslate": _scale_and_translate,
}
