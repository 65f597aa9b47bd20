"""Converters of TensorFlow's neural-network ops: convolutions, pools, batch norm, matrix products,
and the window of every convolution and pool, 2-D or 3-D (`spatial_attr`, `window_props`).

NHWC ops become their NCHW `ascend.graph` op between a transpose to NCHW and one back to NHWC
(see the importer's docstring); filters (HWIO) are transposed to OIHW at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from ..common import same_pads, tensorflow_resize_props
from .importer import Converter, Importer, Node, transpose


def _conv2d(imp: Importer, node: Node) -> list[Tensor]:
    """A filter [H, W, I, O] on C input channels is a grouped convolution of C / I groups (Keras'
    Conv2D with `groups`)."""
    x, w = node.inputs
    kernel = w.shape[:2]
    channels = x.shape[-1] if node.data_format() == "NHWC" else x.shape[1]
    props = window_props(node, x, kernel, dilated=True)
    if channels >= 0 and w.shape[2] > 0 and channels != w.shape[2]:
        if channels % w.shape[2] or w.shape[3] % (channels // w.shape[2]):
            raise node.invalid(
                f"{channels} input channels and filter {list(w.shape)} do not make groups of equal size"
            )
        props["groups"] = int_attr(channels // w.shape[2])
    weight = _constant_or_op(imp, node, w, (3, 2, 0, 1), "filter")
    return [_nchw(imp, node, x, ops.Conv2DOp, [weight], props)]


def _depthwise_conv2d(imp: Importer, node: Node) -> list[Tensor]:
    """A filter [H, W, C, M] is a grouped convolution of C groups, output channel c * M + m."""
    x, w = node.inputs
    height, width, channels, multiplier = w.shape
    known = imp.known_value(w)
    if known is None:
        raise node.fail("the filter must be a constant")
    oihw = known.transpose(2, 3, 0, 1).reshape(channels * multiplier, 1, height, width)
    weight = imp.add_constant(f"{node.name}.filter", np.ascontiguousarray(oihw))
    props = {**window_props(node, x, (height, width), dilated=True), "groups": int_attr(channels)}
    return [_nchw(imp, node, x, ops.Conv2DOp, [weight], props)]


def pool_converter(op_class: type[ops.PoolOp], layout: Callable) -> Converter:
    """A pool of `op_class`, its window as many axes as the op's (`SPATIAL`), its input laid out
    by `layout` (2-D or 3-D). SAME average pools divide by the cells inside the input, as
    TensorFlow does: an op with `count_include_pad` leaves the pads out."""
    average = "count_include_pad" in op_class.get_irdl_definition().properties

    def convert(imp: Importer, node: Node) -> list[Tensor]:
        x = node.inputs[0]
        kernel = spatial_attr(node, "ksize", op_class.SPATIAL)
        props = {
            "kernel_shape": ints_attr(kernel),
            "ceil_mode": bool_attr(False),
            **window_props(node, x, kernel, dilated=False),
        }
        if average:
            props["count_include_pad"] = bool_attr(False)
        return [layout(imp, node, x, op_class, [], props)]

    return convert


def _fused_batch_norm(imp: Importer, node: Node) -> list[Tensor | None]:
    """Inference only; the batch statistics outputs are not imported."""
    if node.attr("is_training", True):
        raise node.fail("is_training=true (training) is not supported: freeze the model for inference")
    x, *params = node.inputs[:5]
    props = {"epsilon": ops.float_attr(float(node.attr("epsilon", 1e-4)))}
    y = _nchw(imp, node, x, ops.BatchNormOp, params, props, keep_weights=True)
    return [y, None, None, None, None, None]


def _bias_add(imp: Importer, node: Node) -> list[Tensor]:
    """The bias is added along the channel axis: the last one for NHWC, the second for NCHW."""
    x, bias = node.inputs
    if node.data_format() == "NCHW" and len(x.shape) > 2:
        shaped = imp.g.add_reshape(bias, [bias.shape[0]] + [1] * (len(x.shape) - 2), f"{node.name}.bias")
        return [imp.g.add_op(ops.AddOp, [x, shaped], None, node.name)]
    from .elementwise import binary_op

    return [binary_op(imp, node, ops.AddOp, x, bias)]


def _matmul(imp: Importer, node: Node) -> list[Tensor]:
    a, b = node.inputs
    if node.attr("transpose_a", False):
        a = _constant_or_op(imp, node, a, (1, 0), "a")
    if node.attr("transpose_b", False):
        b = _constant_or_op(imp, node, b, (1, 0), "b")
    return [imp.g.add_op(ops.MatMulOp, [a, b], None, node.name)]


def _batch_matmul(imp: Importer, node: Node) -> list[Tensor]:
    a, b = node.inputs
    for key, index in (("adj_x", 0), ("adj_y", 1)):
        if node.attr(key, False):
            t = node.inputs[index]
            perm = [*range(len(t.shape) - 2), len(t.shape) - 1, len(t.shape) - 2]
            swapped = _constant_or_op(imp, node, t, perm, key)
            a, b = (swapped, b) if index == 0 else (a, swapped)
    return [imp.g.add_op(ops.MatMulOp, [a, b], None, node.name)]


def _einsum(imp: Importer, node: Node) -> list[Tensor]:
    equation = str(node.attr("equation", "")).replace(" ", "")
    if not equation:
        raise node.invalid("has no equation")
    if "..." in equation:
        equation = _explicit_ellipsis(node, equation)
    return [imp.g.add_op(ops.EinsumOp, node.inputs, {"equation": StringAttr(equation)}, node.name)]


def _explicit_ellipsis(node: Node, equation: str) -> str:
    """The equation with each '...' spelled as letters the equation does not use, one per axis
    it stands for, aligned at the right as broadcasting aligns them."""
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(node.inputs):
        raise node.invalid(f"equation '{equation}' names {len(terms)} operands, not {len(node.inputs)}")
    counts = []
    for term, t in zip(terms, node.inputs, strict=True):
        counts.append(len(t.shape) - len(term.replace("...", "")) if "..." in term else 0)
    if any(c < 0 for c in counts):
        raise node.invalid(f"equation '{equation}' has more subscripts than its operands have axes")
    spare = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in equation]
    width = max(counts)
    if width > len(spare):
        raise node.fail(f"equation '{equation}' needs more subscript letters than there are")
    letters = "".join(spare[:width])
    terms = [term.replace("...", letters[width - c :]) for term, c in zip(terms, counts, strict=True)]
    if arrow:
        output = output.replace("...", letters)
    else:
        once = sorted(c for c in set("".join(terms)) if "".join(terms).count(c) == 1 and c not in letters)
        output = letters + "".join(once)
    return ",".join(terms) + "->" + output


def _softmax(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        return [imp.g.add_op(op_class, [node.inputs[0]], {"axis": int_attr(-1)}, node.name)]

    return convert


def _resize(mode: str) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        """See `tensorflow_resize_props`."""
        x = node.inputs[0]
        n, h, w, c = x.shape
        if h < 0 or w < 0:
            raise node.fail("needs static spatial dimensions")
        aligned, half = bool(node.attr("align_corners", False)), bool(node.attr("half_pixel_centers", False))
        props = tensorflow_resize_props(mode, (n, c, h, w), node.ints(1), aligned, half)
        return [_nchw(imp, node, x, ops.ResizeOp, [], props)]

    return convert


def _conv2d_backprop_input(imp: Importer, node: Node) -> list[Tensor]:
    """A transposed convolution: the output size is the `input_sizes` input, which must be known."""
    sizes = node.ints(0)
    w, dy = node.inputs[1], node.inputs[2]
    nhwc = node.data_format() == "NHWC"
    out_h, out_w = (sizes[1], sizes[2]) if nhwc else (sizes[2], sizes[3])
    in_h, in_w = (dy.shape[1], dy.shape[2]) if nhwc else (dy.shape[2], dy.shape[3])
    strides = spatial_attr(node, "strides", 2)
    dilations = spatial_attr(node, "dilations", 2, 1)
    kernel = w.shape[:2]
    padding = str(node.attr("padding", "VALID"))
    if padding not in ("SAME", "VALID"):
        raise node.fail(f"padding '{padding}' is not supported (SAME and VALID are)")
    begin, end, extra = [], [], []
    for size, out, k, s, d in zip((in_h, in_w), (out_h, out_w), kernel, strides, dilations, strict=True):
        span = (k - 1) * d + 1
        total = max(0, (size - 1) * s + span - out) if padding == "SAME" else 0
        if padding == "VALID":
            total = 0
        first = total // 2
        begin.append(first)
        end.append(total - first)
        extra.append(out - ((size - 1) * s + span - total))
    if any(e < 0 or e >= max(s, 1) + 1 for e, s in zip(extra, strides, strict=True)):
        raise node.invalid(f"input_sizes {sizes} do not fit the gradient of shape {list(dy.shape)}")
    props = {
        "strides": ints_attr(strides),
        "pads": ints_attr([*begin, *end]),
        "dilations": ints_attr(dilations),
        "output_padding": ints_attr(extra),
        "groups": int_attr(1),
    }
    weight = _constant_or_op(imp, node, w, (3, 2, 0, 1), "filter")
    if not nhwc:
        return [imp.g.add_op(ops.ConvTranspose2DOp, [dy, weight], props, node.name)]
    y = imp.g.add_op(ops.ConvTranspose2DOp, [imp.to_nchw(dy, node.name), weight], props, f"{node.name}.nchw")
    return [imp.to_nhwc(y, node.name)]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _nchw(
    imp: Importer,
    node: Node,
    x: Tensor,
    op_class: type,
    operands: list[Tensor],
    props: dict,
    keep_weights: bool = False,
) -> Tensor:
    """The NCHW op on `x`; for NHWC data, between a transpose to NCHW and one back."""
    if node.data_format() == "NCHW":
        return imp.g.add_op(op_class, [x, *operands], props, node.name)
    y = imp.g.add_op(op_class, [imp.to_nchw(x, node.name), *operands], props, f"{node.name}.nchw")
    return imp.to_nhwc(y, node.name)


def channels_last(node: Node, rank: int) -> bool:
    """Whether the node's data is NHWC (NDHWC for a 3-D window) rather than NCHW (NCDHW)."""
    return node.data_format(rank).endswith("C")


def spatial_attr(node: Node, key: str, rank: int, default: int | None = None) -> list[int]:
    """The `rank` spatial values of a per-axis attribute (`rank` + 2 values: ksize, strides,
    dilations) in the node's data format."""
    count = rank + 2
    values = node.attr(key, None if default is None else [default] * count)
    if values is None or len(values) != count:
        raise node.invalid(f"attribute '{key}' needs {count} values, got {values}")
    return [int(values[axis]) for axis in _spatial_axes(node, rank)]


def window_props(node: Node, x: Tensor, kernel: Sequence[int], dilated: bool) -> dict:
    """strides, dilations and pads (every leading, then every trailing) of a window of
    len(kernel) axes from TensorFlow's padding: SAME puts the odd cell at the end, EXPLICIT
    gives every pad."""
    rank = len(kernel)
    strides = spatial_attr(node, "strides", rank)
    dilations = spatial_attr(node, "dilations", rank, 1) if dilated else [1] * rank
    padding = str(node.attr("padding", "VALID"))
    axes = _spatial_axes(node, rank)
    if padding == "SAME":
        sizes = [x.shape[axis] for axis in axes]
        if any(size < 0 for size in sizes):
            raise node.fail("SAME padding needs static spatial dimensions")
        begin, end = same_pads(sizes, kernel, strides, dilations)
    elif padding == "VALID":
        begin, end = [0] * rank, [0] * rank
    elif padding == "EXPLICIT":
        explicit = [int(v) for v in node.attr("explicit_paddings", [])]
        if len(explicit) != 2 * (rank + 2):
            raise node.invalid(f"explicit_paddings needs {2 * (rank + 2)} values, got {explicit}")
        begin, end = [explicit[2 * axis] for axis in axes], [explicit[2 * axis + 1] for axis in axes]
    else:
        raise node.invalid(f"unknown padding '{padding}'")
    return {
        "strides": ints_attr(strides),
        "pads": ints_attr([*begin, *end]),
        "dilations": ints_attr(dilations),
    }


def _spatial_axes(node: Node, rank: int) -> range:
    return range(1, rank + 1) if channels_last(node, rank) else range(2, rank + 2)


def _constant_or_op(imp: Importer, node: Node, t: Tensor, perm, what: str) -> Tensor:
    """`t` transposed by `perm`: computed now for a constant, else a transpose op."""
    known = imp.known_value(t)
    if known is not None:
        return imp.add_constant(f"{node.name}.{what}", np.ascontiguousarray(known.transpose(perm)))
    return transpose(imp, t, perm, f"{node.name}.{what}")


CONVERTERS: dict[str, Converter] = {
    "Conv2D": _conv2d,
    "DepthwiseConv2dNative": _depthwise_conv2d,
    "Conv2DBackpropInput": _conv2d_backprop_input,
    "MaxPool": pool_converter(ops.MaxPoolOp, _nchw),
    "AvgPool": pool_converter(ops.AvgPoolOp, _nchw),
    "FusedBatchNorm": _fused_batch_norm,
    "FusedBatchNormV3": _fused_batch_norm,
    "BiasAdd": _bias_add,
    "MatMul": _matmul,
    "BatchMatMulV2": _batch_matmul,
    "BatchMatMulV3": _batch_matmul,
    "Einsum": _einsum,
    "Softmax": _softmax(ops.SoftmaxOp),
    "LogSoftmax": _softmax(ops.LogSoftmaxOp),
    "ResizeBilinear": _resize("linear"),
    "ResizeNearestNeighbor": _resize("nearest"),
    "ResizeBicubic": _resize("cubic"),
}
