"""Converters of the neural-network ATen ops ge keeps whole: convolutions, matrix products,
normalizations, pools, softmax, attention and upsampling, each to one `ascend.graph` op.

ATen lists one padding per spatial axis (both sides alike); the graph ops list every leading
padding, then every trailing one, as ONNX does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, StringAttr, f64
from xdsl.ir import Attribute

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Graph, Tensor

from .importer import Converter, Node, along_one_axis, is_symbolic, unbatched
from .tensor import squared_deviations


def _convolution(g: Graph, node: Node) -> Tensor:
    """1-D, 2-D and 3-D convolutions and transposed convolutions (1-D ones as 2-D over a unit
    height)."""
    x, w, b = node.arg(0, "input"), node.arg(1, "weight"), node.arg(2, "bias")
    stride, padding, dilation = node.arg(3, "stride"), node.arg(4, "padding"), node.arg(5, "dilation")
    transposed, output_padding, groups = (
        node.arg(6, "transposed"),
        node.arg(7, "output_padding"),
        node.arg(8, "groups"),
    )
    spatial = len(w.shape) - 2
    if spatial not in (1, 2, 3):
        raise node.fail(f"a {spatial}-D convolution is not supported (1-D, 2-D and 3-D are)")
    if spatial == 1:
        x = g.add_reshape(x, [*x.shape[:2], 1, x.shape[2]], f"{node.name}.2d_input")
        w = g.add_reshape(w, [*w.shape[:2], 1, w.shape[2]], f"{node.name}.2d_weight")
        stride, padding, dilation = [1, *stride], [0, *padding], [1, *dilation]
        output_padding = [0, *output_padding]
    rank = 3 if spatial == 3 else 2
    props = {
        "strides": ints_attr(_spatial(stride, rank)),
        "pads": ints_attr(_spatial(padding, rank) * 2),
        "dilations": ints_attr(_spatial(dilation, rank)),
        "groups": int_attr(groups),
    }
    if transposed:
        props["output_padding"] = ints_attr(_spatial(output_padding, rank))
    if spatial == 3:
        op_class = ops.ConvTranspose3DOp if transposed else ops.Conv3DOp
    else:
        op_class = ops.ConvTranspose2DOp if transposed else ops.Conv2DOp
    operands = [x, w] if b is None else [x, w, b]
    y = g.add_op(op_class, operands, props, node.name if spatial != 1 else f"{node.name}.2d")
    if spatial == 1:
        y = g.add_reshape(y, [y.shape[0], y.shape[1], y.shape[3]], node.name)
    return y


def _linear(g: Graph, node: Node) -> Tensor:
    """`x @ weight.T + bias`: a gemm for a matrix, else a matmul and an add."""
    x, w, b = node.arg(0, "input"), node.arg(1, "weight"), node.arg(2, "bias")
    if len(x.shape) == 2:
        props = {"trans_b": bool_attr(True)}
        return g.add_op(ops.GemmOp, [x, w] if b is None else [x, w, b], props, node.name)
    wt = g.add_transpose(w, [1, 0], f"{node.name}.weight_t")
    y = g.add_matmul(x, wt, node.name if b is None else f"{node.name}.matmul")
    return y if b is None else g.add_add(y, b, node.name)


def _addmm(g: Graph, node: Node) -> Tensor:
    """`beta * input + alpha * (mat1 @ mat2)`."""
    c, a, b = node.arg(0, "self"), node.arg(1, "mat1"), node.arg(2, "mat2")
    props = {
        "alpha": ops.float_attr(node.kwargs.get("alpha", 1.0)),
        "beta": ops.float_attr(node.kwargs.get("beta", 1.0)),
    }
    return g.add_op(ops.GemmOp, [a, b, c], props, node.name)


def _matmul(g: Graph, node: Node) -> Tensor:
    """`mm`, `bmm` and `matmul` (numpy's rules, which the graph op follows)."""
    return g.add_matmul(
        node.arg(0, "self"),
        node.arg(1, "other" if node.target == "aten.matmul.default" else "mat2"),
        node.name,
    )


def _batch_norm(g: Graph, node: Node) -> list[Tensor | None]:
    """`_native_batch_norm_legit_no_training`: the running statistics; the saved mean and
    inverse deviation (for training's backward) are not computed."""
    x, w, b, mean, var = (
        node.arg(i, k) for i, k in enumerate(("input", "weight", "bias", "running_mean", "running_var"))
    )
    eps = node.arg(6, "eps", 1e-5)
    channels = x.shape[1]
    if w is None:
        w = g.add_splat(1.0, [channels], x.dtype, f"{node.name}.weight")
    if b is None:
        b = g.add_splat(0.0, [channels], x.dtype, f"{node.name}.bias")
    y = g.add_op(ops.BatchNormOp, [x, w, b, mean, var], {"epsilon": ops.float_attr(eps)}, node.name)
    return [y, None, None]


def _batch_statistics_norm(g: Graph, node: Node) -> list[Tensor | None]:
    """`_native_batch_norm_legit.no_stats(input, weight, bias, training, momentum, eps)`: a
    batch norm over the input's own statistics (instance norm decomposes to one over a
    (1, N x C, ...) view; so does a batch norm without running statistics). With one instance,
    a group norm of one group per channel; otherwise the biased variance over every axis but 1."""
    x, w, b, eps = node.arg(0, "input"), node.arg(1, "weight"), node.arg(2, "bias"), node.arg(5, "eps", 1e-5)
    channels = x.shape[1]
    if channels == DYNAMIC_INDEX:
        raise node.fail("a normalization over a symbolic number of channels is not supported")
    if w is None:
        w = g.add_splat(1.0, [channels], x.dtype, f"{node.name}.weight")
    if b is None:
        b = g.add_splat(0.0, [channels], x.dtype, f"{node.name}.bias")
    if x.shape[0] == 1:
        props = {"num_groups": int_attr(channels), "epsilon": ops.float_attr(eps)}
        return [g.add_op(ops.GroupNormOp, [x, w, b], props, node.name), None, None]
    axes = [a for a in range(len(x.shape)) if a != 1]
    deviation, squares = squared_deviations(g, x, axes, node.name)
    props = {"axes": ints_attr(axes), "keepdims": bool_attr(True)}
    variance = g.add_op(ops.ReduceMeanOp, [squares], props, f"{node.name}.variance")
    spread = g.add_op(ops.SqrtOp, [g.add_add(variance, node.scalar(eps, x.dtype), f"{node.name}.eps")], None)
    per_channel = [channels] + [1] * (len(x.shape) - 2)
    scale = g.add_reshape(w, per_channel, f"{node.name}.scale")
    shift = g.add_reshape(b, per_channel, f"{node.name}.shift")
    normal = g.add_div(deviation, spread, f"{node.name}.normal")
    return [g.add_add(g.add_mul(normal, scale, f"{node.name}.scaled"), shift, node.name), None, None]


def _group_norm(g: Graph, node: Node) -> list[Tensor | None]:
    """`native_group_norm(input, weight, bias, N, C, HxW, group, eps)`: one group_norm; the
    mean and 1/std per group (for training's backward) are not computed."""
    x, w, b = node.arg(0, "input"), node.arg(1, "weight"), node.arg(2, "bias")
    groups, eps = node.arg(6, "group"), node.arg(7, "eps", 1e-5)
    channels = x.shape[1]
    if w is None:
        w = g.add_splat(1.0, [channels], x.dtype, f"{node.name}.weight")
    if b is None:
        b = g.add_splat(0.0, [channels], x.dtype, f"{node.name}.bias")
    props = {"num_groups": int_attr(groups), "epsilon": ops.float_attr(eps)}
    return [g.add_op(ops.GroupNormOp, [x, w, b], props, node.name), None, None]


def _layer_norm(g: Graph, node: Node) -> Tensor | list[Tensor]:
    """`layer_norm` (one result) and `native_layer_norm` (with the mean and 1/std)."""
    x, shape, w, b = (
        node.arg(0, "input"),
        node.arg(1, "normalized_shape"),
        node.arg(2, "weight"),
        node.arg(3, "bias"),
    )
    eps = node.arg(4, "eps", 1e-5)
    if w is None:
        w = g.add_splat(1.0, list(shape), x.dtype, f"{node.name}.weight")
    props = {"axis": int_attr(-len(shape)), "epsilon": ops.float_attr(eps)}
    y, mean, inv_std = g.add_op_results(ops.LayerNormOp, [x, w] if b is None else [x, w, b], props, node.name)
    return [y, mean, inv_std] if node.target == "aten.native_layer_norm.default" else y


def _softmax(op_class: type) -> Converter:
    """`_softmax(x, dim, half_to_float)` and `softmax.int(x, dim, dtype)`."""

    def convert(g: Graph, node: Node) -> Tensor:
        x = node.tensor(node.arg(0, "self"), node.dtype)
        return g.add_op(op_class, [x], {"axis": int_attr(node.arg(1, "dim"))}, node.name)

    return along_one_axis(convert)


@unbatched
def _max_pool(g: Graph, node: Node) -> Tensor | list[Tensor | None]:
    """`max_pool2d`, `max_pool2d_with_indices` (whose indices are row-major per plane) and
    `max_pool3d_with_indices` (its indices refused when read)."""
    spatial = 3 if node.target == "aten.max_pool3d_with_indices.default" else 2
    x, kernel = node.arg(0, "self"), _spatial(node.arg(1, "kernel_size"), spatial)
    stride = _spatial(node.arg(2, "stride") or kernel, spatial)
    padding, dilation, ceil = (
        _spatial(node.arg(3, "padding", 0), spatial),
        _spatial(node.arg(4, "dilation", 1), spatial),
        node.arg(5, "ceil_mode", False),
    )
    props = {
        "kernel_shape": ints_attr(kernel),
        "strides": ints_attr(stride),
        "pads": ints_attr(padding * 2),
        "dilations": ints_attr(dilation),
        "ceil_mode": bool_attr(ceil),
    }
    if node.target == "aten.max_pool2d.default":
        return g.add_op(ops.MaxPoolOp, [x], props, node.name)
    if spatial == 3:
        if node.uses_result(1):
            raise node.fail("the indices of a 3-D max pool are not supported")
        if len(x.shape) != 5:
            raise node.fail(f"a 3-D max pool of a {len(x.shape)}-D input is not supported (5-D is)")
        return [g.add_op(ops.MaxPool3DOp, [x], props, node.name), None]
    if node.uses_result(1):
        return _max_pool_with_indices(g, node, x, props)
    return [g.add_op(ops.MaxPoolOp, [x], props, node.name), None]


SYMBOLIC_PLANE_INDICES = "the indices of a max pool over a symbolic height or width are not supported"


def _max_pool_with_indices(
    g: Graph, node: Node, x: Tensor, props: Mapping[str, Attribute]
) -> list[Tensor | None]:
    """The maxima and, as ATen gives them, the row-major index of each within its (H, W) plane;
    the graph's indices count through the whole (N, C, H, W) input."""
    height, width = x.shape[2:]
    if DYNAMIC_INDEX in (height, width):
        raise node.fail(SYMBOLIC_PLANE_INDICES)
    values, indices = g.add_op_results(ops.MaxPoolWithArgmaxOp, [x], props, f"{node.name}.pool")
    plane = node.scalar(height * width, "int64")
    return [values, g.add_op(ops.ModOp, [indices, plane], None, f"{node.name}.indices")]


@unbatched
def _avg_pool(g: Graph, node: Node) -> Tensor:
    """`avg_pool2d` and `avg_pool3d` (which torch's local response norm is built on)."""
    spatial = 3 if node.target == "aten.avg_pool3d.default" else 2
    x, kernel = node.arg(0, "self"), _spatial(node.arg(1, "kernel_size"), spatial)
    stride = _spatial(node.arg(2, "stride") or kernel, spatial)
    padding, ceil = _spatial(node.arg(3, "padding", 0), spatial), node.arg(4, "ceil_mode", False)
    count_pad, divisor = node.arg(5, "count_include_pad", True), node.arg(6, "divisor_override")
    if divisor is not None and ceil:
        raise node.fail(f"divisor_override {divisor} with ceil_mode is not supported")
    props = {
        "kernel_shape": ints_attr(kernel),
        "strides": ints_attr(stride),
        "pads": ints_attr(padding * 2),
        "ceil_mode": bool_attr(ceil),
        "count_include_pad": bool_attr(count_pad or divisor is not None),
    }
    pool_class = ops.AvgPool3DOp if spatial == 3 else ops.AvgPoolOp
    if divisor is None:
        return g.add_op(pool_class, [x], props, node.name)
    # Every window then covers the whole kernel (padding counted): its sum over the divisor.
    mean = g.add_op(pool_class, [x], props, f"{node.name}.mean")
    return g.add_mul(mean, node.scalar(math.prod(kernel) / divisor, x.dtype), node.name)


def _adaptive_pool(global_class: type, window_class: type, spatial: int = 2) -> Converter:
    """`adaptive_avg_pool2d`, `adaptive_max_pool2d` and their 3-D forms (`spatial` 3): an output
    of ones is a global pool; one dividing the input evenly is a plain one, others a reduction per
    bin. The 2-D max pool's indices, which need the height and width, come from a max pool whose
    window is the input's plane or an even part of it."""

    def convert(g: Graph, node: Node) -> Tensor | list[Tensor | None]:
        x, size = node.arg(0, "self"), _spatial(node.arg(1, "output_size"), spatial)
        extents, ones = list(x.shape[2:]), [1] * spatial
        static = DYNAMIC_INDEX not in extents
        reads_indices = "max" in node.target and node.uses_result(1)
        if reads_indices and spatial == 3:
            raise node.fail("the indices of a 3-D adaptive max pool are not supported")
        if size != ones and (not static or any(e % s for e, s in zip(extents, size, strict=True))):
            if not static or reads_indices:
                raise node.fail(
                    f"an output size {size} that does not divide the input {extents} is not "
                    "supported" + (" with the indices read" if static else " of a symbolic size")
                )
            pooled = _uneven_adaptive_pool(g, node, x, size)
            return [pooled, None] if "max" in node.target else pooled
        if reads_indices and not static:
            raise node.fail(SYMBOLIC_PLANE_INDICES)
        if size == ones and not reads_indices:
            pooled = g.add_op(global_class, [x], None, node.name)
        else:
            kernel = [e // s for e, s in zip(extents, size, strict=True)]
            props: dict[str, Attribute] = {"kernel_shape": ints_attr(kernel), "strides": ints_attr(kernel)}
            if reads_indices:
                return _max_pool_with_indices(g, node, x, props)
            pooled = g.add_op(window_class, [x], props, node.name)
        return [pooled, None] if "max" in node.target else pooled

    return unbatched(convert, spatial)


def _uneven_adaptive_pool(g: Graph, node: Node, x: Tensor, size: list[int]) -> Tensor:
    """An adaptive pool whose bins differ in size (bin i of n over m spans floor(i m / n) to
    ceil((i + 1) m / n)), one axis after the other: a mean or maximum over a box is that over
    its rows of that over its columns. Each bin is a slice and a reduction."""
    reduce_class = ops.ReduceMaxOp if "max" in node.target else ops.ReduceMeanOp
    for axis, bins in enumerate(size, start=2):
        extent = x.shape[axis]
        if bins == extent:
            continue
        pieces = []
        for i in range(bins):
            start, end = i * extent // bins, -(-(i + 1) * extent // bins)
            where = f"{node.name}.axis{axis}_bin{i}"
            props = {"starts": ints_attr([start]), "ends": ints_attr([end]), "axes": ints_attr([axis])}
            piece = g.add_op(ops.SliceOp, [x], props, f"{where}.slice")
            reduce_props = {"axes": ints_attr([axis]), "keepdims": bool_attr(True)}
            pieces.append(g.add_op(reduce_class, [piece], reduce_props, where))
        x = g.add_concat(pieces, axis, f"{node.name}.axis{axis}")
    return x


def _attention(g: Graph, node: Node) -> Tensor:
    """`scaled_dot_product_attention` over (batch, heads, length, head_dim) tensors, or of rank 3
    or more than 4 viewed so; dropout (training only) is refused."""
    q, k, v = node.arg(0, "query"), node.arg(1, "key"), node.arg(2, "value")
    mask, dropout, causal = (
        node.arg(3, "attn_mask"),
        node.arg(4, "dropout_p", 0.0),
        node.arg(5, "is_causal", False),
    )
    scale = node.kwargs.get("scale")
    if dropout:
        raise node.fail(f"dropout_p={dropout} (training) is not supported")
    ranks = {len(t.shape) for t in (q, k, v)}
    if len(ranks) != 1 or min(ranks) < 3:
        raise node.fail(
            f"attention over tensors of ranks {sorted(len(t.shape) for t in (q, k, v))} is not supported"
        )
    props: dict[str, Attribute] = {"is_causal": bool_attr(bool(causal))}
    if scale is not None:
        props["scale"] = ops.float_attr(scale)
    rank = ranks.pop()
    if rank == 4:
        operands = [q, k, v] if mask is None else [q, k, v, mask]
        return g.add_op(ops.AttentionOp, operands, props, node.name)
    # Other ranks as 4-D: (batch, length, dim) with one head, leading dims beyond two merged.
    if node.shape is None or is_symbolic(*node.shape) or any(DYNAMIC_INDEX in t.shape for t in (q, k, v)):
        raise node.fail(f"attention over {rank}-D tensors of a symbolic size is not supported")

    # The leading dims broadcast (a query of batch 1 against keys of batch 2), so each tensor is
    # expanded to them before its own dims are merged.
    batch = list(np.broadcast_shapes(*(tuple(t.shape[:-2]) for t in (q, k, v))))

    def as_4d(t: Tensor, key: str) -> Tensor:
        if list(t.shape[:-2]) != batch:
            full = ints_attr([*batch, *t.shape[-2:]])
            t = g.add_op(ops.ExpandOp, [t], {"shape": full}, f"{node.name}.{key}_full")
        lead = [1, *batch] if rank == 3 else [math.prod(batch[:-1]), batch[-1]]
        return g.add_reshape(t, [*lead, *t.shape[-2:]], f"{node.name}.{key}_4d")

    operands = [as_4d(q, "query"), as_4d(k, "key"), as_4d(v, "value")]
    if mask is not None:
        full = [*batch, q.shape[-2], k.shape[-2]]
        if list(mask.shape) != full:
            mask = g.add_op(ops.ExpandOp, [mask], {"shape": ints_attr(full)}, f"{node.name}.mask_full")
        operands.append(as_4d(mask, "mask"))
    result = g.add_op(ops.AttentionOp, operands, props, f"{node.name}.4d")
    return g.add_reshape(result, node.static_shape("attention"), node.name)


def _upsample(g: Graph, node: Node) -> Tensor:
    """`upsample_nearest2d` (torch's nearest: floor of `out / scale`), `_upsample_nearest_exact2d`
    (the nearest pixel centre: floor of `(out + 0.5) / scale`), `upsample_bilinear2d` and
    `upsample_bicubic2d` (torch's cubic coefficient -0.75, borders clamped)."""
    x = node.arg(0, "input" if node.target.endswith(".vec") else "self")
    interpolates = "bilinear" in node.target or "bicubic" in node.target  # these take align_corners
    if node.target.endswith(".vec"):
        factors = node.arg(3 if interpolates else 2, "scale_factors")
    else:
        first = 3 if interpolates else 2
        given = [node.arg(first, "scales_h"), node.arg(first + 1, "scales_w")]
        factors = None if None in given else given
    if node.shape is None or is_symbolic(*node.shape[2:]) or DYNAMIC_INDEX in x.shape[2:]:
        raise node.fail("upsampling a symbolic height or width is not supported")
    sizes = [d if isinstance(d, int) else -1 for d in node.shape]  # a symbolic batch as before
    align = interpolates and node.arg(2, "align_corners", False)
    if factors is None or align:  # aligned corners map by the sizes, whatever factor was asked
        factors = [out / size for out, size in zip(sizes[2:], x.shape[2:], strict=True)]
    props = {
        "scales": DenseArrayBase.from_list(f64, [1.0, 1.0, *map(float, factors)]),
        "sizes": ints_attr(sizes),
    }
    if interpolates:
        align = node.arg(2, "align_corners", False)
        props["mode"] = StringAttr("linear" if "bilinear" in node.target else "cubic")
        props["coordinate_transformation_mode"] = StringAttr(
            "align_corners" if align else "pytorch_half_pixel"
        )
        if "bicubic" in node.target:
            props["cubic_coeff_a"] = ops.float_attr(-0.75)
    elif "nearest_exact" in node.target:
        props["mode"] = StringAttr("nearest")
        props["coordinate_transformation_mode"] = StringAttr("half_pixel")
        props["nearest_mode"] = StringAttr("round_prefer_ceil")
    else:
        props["mode"] = StringAttr("nearest")
        props["coordinate_transformation_mode"] = StringAttr("asymmetric")
        props["nearest_mode"] = StringAttr("floor")
    return g.add_op(ops.ResizeOp, [x], props, node.name)


def _pair(value: int | list[int]) -> list[int]:
    return _spatial(value, 2)


def _spatial(value: int | list[int], count: int) -> list[int]:
    """An ATen window size, stride or padding for `count` spatial axes: one number for all, or one each."""
    return [value] * count if isinstance(value, int) else list(value) * (count if len(value) == 1 else 1)


CONVERTERS: dict[str, Converter] = {
    "aten.convolution.default": _convolution,
    "aten.linear.default": _linear,
    "aten.addmm.default": _addmm,
    "aten.mm.default": _matmul,
    "aten.bmm.default": _matmul,
    "aten.matmul.default": _matmul,
    "aten._native_batch_norm_legit_no_training.default": _batch_norm,
    "aten._native_batch_norm_legit.no_stats": _batch_statistics_norm,
    "aten.adaptive_max_pool2d.default": _adaptive_pool(ops.GlobalMaxPoolOp, ops.MaxPoolOp),
    "aten.native_group_norm.default": _group_norm,
    "aten.native_layer_norm.default": _layer_norm,
    "aten.layer_norm.default": _layer_norm,
    "aten._softmax.default": _softmax(ops.SoftmaxOp),
    "aten.softmax.int": _softmax(ops.SoftmaxOp),
    "aten._log_softmax.default": _softmax(ops.LogSoftmaxOp),
    "aten.log_softmax.int": _softmax(ops.LogSoftmaxOp),
    "aten.max_pool2d.default": _max_pool,
    "aten.max_pool2d_with_indices.default": _max_pool,
    "aten.max_pool3d_with_indices.default": _max_pool,
    "aten.avg_pool2d.default": _avg_pool,
    "aten.avg_pool3d.default": _avg_pool,
    "aten.adaptive_avg_pool2d.default": _adaptive_pool(ops.GlobalAvgPoolOp, ops.AvgPoolOp),
    "aten._adaptive_avg_pool2d.default": _adaptive_pool(ops.GlobalAvgPoolOp, ops.AvgPoolOp),
    "aten._adaptive_avg_pool3d.default": _adaptive_pool(ops.GlobalAvgPoolOp, ops.AvgPool3DOp, 3),
    "aten.adaptive_max_pool3d.default": _adaptive_pool(ops.GlobalMaxPoolOp, ops.MaxPool3DOp, 3),
    "aten.scaled_dot_product_attention.default": _attention,
    "aten.upsample_nearest2d.vec": _upsample,
    "aten.upsample_nearest2d.default": _upsample,
    "aten.upsample_bilinear2d.vec": _upsample,
    "aten.upsample_bilinear2d.default": _upsample,
    "aten.upsample_bicubic2d.vec": _upsample,
    "aten.upsample_bicubic2d.default": _upsample,
    "aten._upsample_nearest_exact2d.vec": _upsample,
    "aten._upsample_nearest_exact2d.default": _upsample,
}
