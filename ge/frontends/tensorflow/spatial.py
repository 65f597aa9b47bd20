"""Converters of TensorFlow's image-layout ops beyond the 2-D convolutions: 3-D convolutions and
pools (NDHWC), local response normalization, and the block rearrangements SpaceToDepth and
DepthToSpace.

3-D ops import as their NCDHW op between transposes, as the 2-D ones do (see the importer); the
block rearrangements are a reshape, a transpose and a reshape in NHWC.
"""

from __future__ import annotations

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from ..common import same_pads
from .importer import Converter, Importer, Node, static_dims, transpose

TO_NCDHW = (0, 4, 1, 2, 3)
TO_NDHWC = (0, 2, 3, 4, 1)


def _conv3d(imp: Importer, node: Node) -> list[Tensor]:
    """Filter [D, H, W, I, O] as OIDHW; the groups are the input channels over the filter's I."""
    x, w = node.inputs
    known = imp.known_value(w)
    if known is None:
        raise node.fail("the filter must be a constant")
    weight = imp.add_constant(f"{node.name}.filter", known.transpose(4, 3, 0, 1, 2).copy())
    channels = static_dims(node, x)[-1]
    if channels % w.shape[3]:
        raise node.invalid(f"{channels} input channels do not divide into groups of {w.shape[3]}")
    props = {**_window_props(node, x, w.shape[:3], dilated=True), "groups": int_attr(channels // w.shape[3])}
    return [_ncdhw(imp, node, x, ops.Conv3DOp, [weight], props)]


def _pool3d(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        """SAME average pools divide by the cells inside the input, as TensorFlow does."""
        x = node.inputs[0]
        kernel = _spatial(node, "ksize")
        props = {
            "kernel_shape": ints_attr(kernel),
            "ceil_mode": bool_attr(False),
            **_window_props(node, x, kernel, dilated=False),
        }
        if op_class is ops.AvgPool3DOp:
            props["count_include_pad"] = bool_attr(False)
        return [_ncdhw(imp, node, x, op_class, [], props)]

    return convert


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


def _channels_last(node: Node) -> bool:
    data_format = str(node.attr("data_format", "NDHWC"))
    if data_format not in ("NDHWC", "NCDHW"):
        raise node.fail(f"data_format '{data_format}' is not supported (NDHWC and NCDHW are)")
    return data_format == "NDHWC"


def _spatial(node: Node, key: str, default: int | None = None) -> list[int]:
    """The three spatial values of a 5-value attribute in the node's data format."""
    values = node.attr(key, None if default is None else [default] * 5)
    if values is None or len(values) != 5:
        raise node.invalid(f"attribute '{key}' needs 5 values, got {values}")
    values = [int(v) for v in values]
    return values[1:4] if _channels_last(node) else values[2:5]


def _window_props(node: Node, x: Tensor, kernel, dilated: bool) -> dict:
    strides = _spatial(node, "strides")
    dilations = _spatial(node, "dilations", 1) if dilated else [1, 1, 1]
    padding = str(node.attr("padding", "VALID"))
    dims = static_dims(node, x)
    sizes = dims[1:4] if _channels_last(node) else dims[2:5]
    if padding == "SAME":
        begin, end = same_pads(sizes, kernel, strides, dilations)
    elif padding == "VALID":
        begin, end = [0, 0, 0], [0, 0, 0]
    else:
        raise node.fail(f"padding '{padding}' is not supported (SAME and VALID are)")
    return {
        "strides": ints_attr(strides),
        "pads": ints_attr([*begin, *end]),
        "dilations": ints_attr(dilations),
    }


def _ncdhw(
    imp: Importer, node: Node, x: Tensor, op_class: type, operands: list[Tensor], props: dict
) -> Tensor:
    if not _channels_last(node):
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
    "MaxPool3D": _pool3d(ops.MaxPool3DOp),
    "AvgPool3D": _pool3d(ops.AvgPool3DOp),
    "LRN": _lrn,
    "SpaceToDepth": _space_to_depth,
    "DepthToSpace": _depth_to_space,
}
