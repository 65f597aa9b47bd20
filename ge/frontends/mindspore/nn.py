"""Converters of MindSpore's neural-network primitives: convolution, bias, batch norm, pooling and
matrix products.

MindSpore 2 passes some arguments of a primitive as inputs (AvgPool's window, BatchNorm's epsilon,
MatMul's transposes) and keeps others as attributes of the primitive (Conv2D's, MaxPool's);
each converter reads both forms. Windows are NCHW; `pad_list` and SAME padding put the odd
cell after, as MindSpore does.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from ..common import same_pads, tensorflow_resize_props
from .importer import Converter, Importer, Node, Value

PAD_MODES = {0: "pad", 1: "same", 2: "valid"}
"""MindSpore's PadMode enum, as a pad mode given as an input holds it."""
FORMATS = {0: "NCHW", 1: "NHWC"}
"""MindSpore's Format enum (the `data_format` input)."""
NCDHW = (14, "NCDHW")
"""The 3-D channel-first format, as its Format enum value or name (BiasAdd after a Conv3D)."""


def _conv2d(imp: Importer, node: Node) -> Value:
    x, w = node.tensor(0), node.tensor(1)
    _check_nchw(node, node.attr("format", "NCHW"))
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise node.fail(f"needs NCHW input and OIHW weight, got {list(x.shape)} and {list(w.shape)}")
    strides = _pair(node, node.attr("stride", 1), "stride")
    dilations = _pair(node, node.attr("dilation", 1), "dilation")
    mode = _pad_mode(node, node.attr("pad_mode", "valid"))
    pad_list = node.attr("pad_list")
    if mode == "same":
        top, bottom, left, right = _same(node, x.shape[2:], w.shape[2:], strides, dilations)
    elif mode == "pad" or (pad_list and any(pad_list)):
        pads = node.ints(pad_list or node.attr("pad", 0), "pad_list")
        if len(pads) not in (1, 4):
            raise node.invalid(f"pad_list {pads} is neither one number nor (top, bottom, left, right)")
        top, bottom, left, right = pads * 4 if len(pads) == 1 else pads
    else:
        top = bottom = left = right = 0
    props = {
        "strides": ints_attr(strides),
        "pads": ints_attr((top, left, bottom, right)),
        "dilations": ints_attr(dilations),
        "groups": int_attr(int(node.attr("group", node.attr("groups", 1)))),
    }
    return imp.g.add_op(ops.Conv2DOp, [x, w], props, node.name)


def _bias_add(imp: Importer, node: Node) -> Value:
    x, bias = node.tensor(0), node.tensor(1)
    data_format = node.value(2) if len(node.inputs) > 2 else node.attr("data_format", node.attr("format", 0))
    if len(x.shape) > 2 and (data_format in NCDHW or _format(node, data_format) == "NCHW"):
        shape = [bias.shape[0], *[1] * (len(x.shape) - 2)]
        bias = imp.g.add_reshape(bias, shape, f"{node.name}.bias")
    return imp.g.add_op(ops.AddOp, [x, bias], None, node.name)


def _batch_norm(imp: Importer, node: Node) -> Value:
    x = node.tensor(0)
    params = [node.tensor(i) for i in range(1, 5)]
    given = len(node.inputs) > 5
    training = node.value(5) if given else node.attr("is_training", False)
    epsilon = node.value(6) if given else node.attr("epsilon", 1e-5)
    if not isinstance(epsilon, int | float):
        raise node.invalid(f"epsilon must be a number, got {epsilon!r:.60}")
    if len(node.inputs) > 8:
        _check_nchw(node, node.value(8))
    if training:
        raise node.fail("is_training is True: export the network after net.set_train(False)")
    y = imp.g.add_op(ops.BatchNormOp, [x, *params], {"epsilon": ops.float_attr(float(epsilon))}, node.name)
    # Its other outputs are the saved statistics, which inference reads as they are.
    return (y, params[2], params[3], params[2], params[3])


def _pool(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        x = node.tensor(0)
        if len(node.inputs) > 1:  # kernel_size, strides, pad_mode, data_format as inputs
            kernel, strides, mode = node.value(1), node.value(2), node.value(3)
            data_format = node.value(4) if len(node.inputs) > 4 else 0
        else:
            kernel, strides = node.attr("kernel_size", 1), node.attr("strides", 1)
            mode, data_format = node.attr("pad_mode", "valid"), node.attr("format", "NCHW")
        _check_nchw(node, data_format)
        if len(x.shape) != 4:
            raise node.fail(f"needs an NCHW input, got shape {list(x.shape)}")
        kernel, strides = _pair(node, kernel, "kernel_size"), _pair(node, strides, "strides")
        mode = _pad_mode(node, mode)
        if mode == "same":
            top, bottom, left, right = _same(node, x.shape[2:], kernel, strides, (1, 1))
        elif mode == "valid":
            top = bottom = left = right = 0
        else:
            raise node.fail(f"pad_mode '{mode}' is not supported for pooling (use 'same' or 'valid')")
        props = {
            "kernel_shape": ints_attr(kernel),
            "strides": ints_attr(strides),
            "pads": ints_attr((top, left, bottom, right)),
        }
        return imp.g.add_op(op_class, [x], props, node.name)

    return convert


def _matmul(imp: Importer, node: Node) -> Value:
    a, b = node.tensor(0), node.tensor(1)
    if len(node.inputs) > 3:
        trans_a, trans_b = bool(node.value(2)), bool(node.value(3))
    else:
        trans_a = bool(node.attr("transpose_a", node.attr("transpose_x1", False)))
        trans_b = bool(node.attr("transpose_b", node.attr("transpose_x2", False)))
    if len(a.shape) == 2 and len(b.shape) == 2:
        props = {"trans_a": bool_attr(trans_a), "trans_b": bool_attr(trans_b)}
        return imp.g.add_op(ops.GemmOp, [a, b], props, node.name)
    a = _transposed_last(imp, a, f"{node.name}.a_t") if trans_a else a
    b = _transposed_last(imp, b, f"{node.name}.b_t") if trans_b else b
    return imp.g.add_op(ops.MatMulOp, [a, b], None, node.name)


def _dense(imp: Importer, node: Node) -> Value:
    """`x @ W^T + b`, W out x in."""
    x, w = node.tensor(0), node.tensor(1)
    wt = _transposed_last(imp, w, f"{node.name}.weight_t")
    y = imp.g.add_op(ops.MatMulOp, [x, wt], None, node.name)
    if len(node.inputs) > 2 and node.inputs[2] is not None:
        y = imp.g.add_op(ops.AddOp, [y, node.tensor(2)], None, f"{node.name}.bias")
    return y


def _matmul_ext(imp: Importer, node: Node) -> Value:
    """numpy's matmul, batch axes broadcast."""
    return imp.g.add_op(ops.MatMulOp, [node.tensor(0), node.tensor(1)], None, node.name)


def _layer_norm(imp: Importer, node: Node) -> Value:
    """LayerNorm(x, gamma, beta, begin_norm_axis, begin_params_axis, epsilon): over the axes from
    begin_norm_axis on; its mean and rstd outputs are the op's own."""
    x, gamma, beta = node.tensor(0), node.tensor(1), node.tensor(2)
    if len(node.inputs) > 5:
        axis, params_axis, epsilon = node.value(3), node.value(4), node.value(5)
    else:
        axis = node.attr("begin_norm_axis", -1)
        params_axis, epsilon = node.attr("begin_params_axis", -1), node.attr("epsilon", 1e-7)
    rank = len(x.shape)
    axis, params_axis = node.ints(axis, "begin_norm_axis")[0], node.ints(params_axis, "begin_params_axis")[0]
    if axis % rank != params_axis % rank:
        raise node.fail(f"begin_norm_axis {axis} and begin_params_axis {params_axis} differ")
    props = {"axis": int_attr(axis), "epsilon": ops.float_attr(node.number(epsilon, "epsilon"))}
    return tuple(imp.g.add_op_results(ops.LayerNormOp, [x, gamma, beta], props, node.name))


def _adaptive_avg_pool(imp: Importer, node: Node) -> Value:
    """An output size that divides the input's is an average pool of input / output cells (None
    keeps the input's size); others are refused."""
    x = node.tensor(0)
    if len(x.shape) != 4 or any(d < 0 for d in x.shape[2:]):
        raise node.fail(f"needs an NCHW input of static size, got {list(x.shape)}")
    sizes = node.value(1) if len(node.inputs) > 1 else node.attr("output_size")
    sizes = sizes if isinstance(sizes, tuple | list) else (sizes, sizes)
    out = [
        x.shape[2 + i] if size is None else node.ints(size, "output_size")[0] for i, size in enumerate(sizes)
    ]
    if any(o <= 0 or d % o for d, o in zip(x.shape[2:], out, strict=True)):
        raise node.fail(f"an output size {out} that does not divide the input's {list(x.shape[2:])}")
    kernel = [d // o for d, o in zip(x.shape[2:], out, strict=True)]
    props = {"kernel_shape": ints_attr(kernel), "strides": ints_attr(kernel), "pads": ints_attr([0, 0, 0, 0])}
    return imp.g.add_op(ops.AvgPoolOp, [x], props, node.name)


def _conv2d_transpose(imp: Importer, node: Node) -> Value:
    """Conv2DTranspose(dout, weight, input_size): the gradient of a convolution, whose input
    size (NCHW) it produces; weight [C_in, C_out / group, kH, kW], as ge's transposed
    convolution takes it."""
    dy, w = node.tensor(0), node.tensor(1)
    _check_nchw(node, node.attr("format", "NCHW"))
    sizes = node.ints(node.value(2), "input_size")
    if len(dy.shape) != 4 or len(w.shape) != 4 or len(sizes) != 4:
        raise node.fail(f"needs NCHW tensors, got {list(dy.shape)}, {list(w.shape)} and size {sizes}")
    strides = _pair(node, node.attr("stride", 1), "stride")
    dilations = _pair(node, node.attr("dilation", 1), "dilation")
    mode = _pad_mode(node, node.attr("pad_mode", "valid"))
    begin, end, extra = [], [], []
    for i in range(2):
        span = (w.shape[2 + i] - 1) * dilations[i] + 1
        full = (dy.shape[2 + i] - 1) * strides[i] + span
        if mode == "same":
            total = max(0, full - sizes[2 + i])
            first = total // 2
        elif mode == "pad":
            pads = node.ints(node.attr("pad_list", node.attr("pad", 0)), "pad_list")
            pads = pads * 4 if len(pads) == 1 else pads
            first, total = pads[2 * i], pads[2 * i] + pads[2 * i + 1]
        else:
            first = total = 0
        begin.append(first)
        end.append(total - first)
        extra.append(sizes[2 + i] - (full - total))
    if any(e < 0 or e >= max(s, d) for e, s, d in zip(extra, strides, dilations, strict=True)):
        raise node.invalid(f"input_size {sizes} does not fit a gradient of shape {list(dy.shape)}")
    props = {
        "strides": ints_attr(strides),
        "pads": ints_attr([*begin, *end]),
        "dilations": ints_attr(dilations),
        "output_padding": ints_attr(extra),
        "groups": int_attr(int(node.attr("group", node.attr("groups", 1)))),
    }
    return imp.g.add_op(ops.ConvTranspose2DOp, [dy, w], props, node.name)


def _resize(mode: str) -> Converter:
    def convert(imp: Importer, node: Node) -> Value:
        """ResizeBilinearV2, ResizeNearestNeighborV2 and ResizeBicubic(x, size, align_corners,
        half_pixel_centers), NCHW: TensorFlow's (see `tensorflow_resize_props`)."""
        x = node.tensor(0)
        if len(x.shape) != 4 or any(d < 0 for d in x.shape[2:]):
            raise node.fail(f"needs an NCHW input of static size, got {list(x.shape)}")
        aligned = bool(node.value(2)) if len(node.inputs) > 2 else bool(node.attr("align_corners", False))
        half = bool(node.value(3)) if len(node.inputs) > 3 else bool(node.attr("half_pixel_centers", False))
        size = node.ints(node.value(1), "size")[-2:]
        props = tensorflow_resize_props(mode, x.shape, size, aligned, half)
        return imp.g.add_op(ops.ResizeOp, [x], props, node.name)

    return convert


def _group_norm(imp: Importer, node: Node) -> Value:
    """GroupNorm(x, num_groups, gamma, beta, epsilon); its mean and rstd outputs are not read."""
    x = node.tensor(0)
    groups = node.ints(node.value(1), "num_groups")[0]
    epsilon = node.value(4) if len(node.inputs) > 4 else 1e-5
    props = {"num_groups": int_attr(groups), "epsilon": ops.float_attr(node.number(epsilon, "epsilon"))}
    y = imp.g.add_op(ops.GroupNormOp, [x, node.tensor(2, x), node.tensor(3, x)], props, node.name)
    return (y, None, None)


def _conv3d(imp: Importer, node: Node) -> Value:
    """NCDHW; `pad_list` holds (front, back, top, bottom, left, right), which SAME also fills."""
    x, w = node.tensor(0), node.tensor(1)
    if str(node.attr("format", "NCDHW")) != "NCDHW":
        raise node.fail(f"data format {node.attr('format')} is not supported (NCDHW is)")
    strides = node.ints(node.attr("stride", 1), "stride")[-3:]
    dilations = node.ints(node.attr("dilation", 1), "dilation")[-3:]
    strides, dilations = (v * 3 if len(v) == 1 else v for v in (strides, dilations))
    mode = _pad_mode(node, node.attr("pad_mode", "valid"))
    if mode == "same":
        if any(d < 0 for d in x.shape[2:]):
            raise node.fail("SAME padding needs static spatial dimensions")
        begin, end = same_pads(x.shape[2:], w.shape[2:], strides, dilations)
    elif mode == "pad":
        pads = node.ints(node.attr("pad_list", node.attr("pad", 0)), "pad_list")
        pads = pads * 6 if len(pads) == 1 else pads
        begin, end = pads[0::2], pads[1::2]
    else:
        begin, end = [0, 0, 0], [0, 0, 0]
    props = {
        "strides": ints_attr(strides),
        "pads": ints_attr([*begin, *end]),
        "dilations": ints_attr(dilations),
        "groups": int_attr(int(node.attr("group", node.attr("groups", 1)))),
    }
    return imp.g.add_op(ops.Conv3DOp, [x, w], props, node.name)


def _transposed_last(imp: Importer, x: Tensor, name: str) -> Tensor:
    perm = [*range(len(x.shape) - 2), len(x.shape) - 1, len(x.shape) - 2]
    return imp.g.add_op(ops.TransposeOp, [x], {"perm": ints_attr(perm)}, name)


def _same(node: Node, sizes, kernel, strides, dilations) -> tuple[int, int, int, int]:
    """SAME padding: the output has ceil(size / stride) cells; the odd padding cell goes after."""
    if any(size < 0 for size in sizes):
        raise node.fail("SAME padding needs static spatial dimensions")
    (top, left), (bottom, right) = same_pads(sizes, kernel, strides, dilations)
    return top, bottom, left, right


def _pair(node: Node, value: object, what: str) -> tuple[int, int]:
    """A 2-D window parameter given as a number, a pair or MindSpore's NCHW 4-tuple."""
    values = node.ints(value, what)
    if len(values) == 1:
        return values[0], values[0]
    if len(values) in (2, 4):
        return values[-2], values[-1]
    raise node.invalid(f"{what} {values} is neither one number, a pair nor a 4-tuple")


def _einsum(imp: Importer, node: Node) -> Value:
    """Einsum of the tuple of operands (MindSpore runs the primitive on Ascend and GPU only); the
    graph's einsum reads the equation, `...` included, as numpy does."""
    equation = node.attr("equation", "")
    if not isinstance(equation, str) or not equation.strip():
        raise node.invalid(f"attribute 'equation' must be a non-empty string, got {equation!r:.60}")
    values = node.input(0)
    values = values if isinstance(values, tuple) else tuple(node.inputs)
    tensors = [_operand(imp, node, v, i) for i, v in enumerate(values)]
    props = {"equation": StringAttr(equation.replace(" ", ""))}
    return imp.g.add_op(ops.EinsumOp, tensors, props, node.name)


def _operand(imp: Importer, node: Node, value: Value, index: int) -> Tensor:
    return (
        value if isinstance(value, Tensor) else imp.constant(value, f"{node.name}.input{index}", None, node)
    )


def _pad_mode(node: Node, mode: object) -> str:
    if isinstance(mode, int) and mode in PAD_MODES:
        return PAD_MODES[mode]
    if isinstance(mode, str) and mode.lower() in PAD_MODES.values():
        return mode.lower()
    raise node.invalid(f"unknown pad_mode {mode!r}")


def _format(node: Node, value: object) -> str:
    data_format = FORMATS.get(value, value) if isinstance(value, int) else value
    if data_format not in FORMATS.values():
        raise node.invalid(f"unknown data format {value!r}")
    return str(data_format)


def _check_nchw(node: Node, value: object) -> None:
    if _format(node, value) != "NCHW":
        raise node.fail(f"data format {_format(node, value)} is not supported (export the network in NCHW)")


CONVERTERS: dict[str, Converter] = {
    "Conv2D": _conv2d,
    "BiasAdd": _bias_add,
    "BatchNorm": _batch_norm,
    "MaxPool": _pool(ops.MaxPoolOp),
    "AvgPool": _pool(ops.AvgPoolOp),
    "MatMul": _matmul,
    "BatchMatMul": _matmul,
    "Einsum": _einsum,
    "Dense": _dense,
    "MatMulExt": _matmul_ext,
    "LayerNorm": _layer_norm,
    "AdaptiveAvgPool2D": _adaptive_avg_pool,
    "Conv2DTranspose": _conv2d_transpose,
    "ResizeBilinearV2": _resize("linear"),
    "ResizeNearestNeighborV2": _resize("nearest"),
    "ResizeBicubic": _resize("cubic"),
    "GroupNorm": _group_norm,
    "Conv3D": _conv3d,
}
