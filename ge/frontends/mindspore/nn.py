"""Converters of MindSpore's neural-network primitives: convolution, bias, batch norm, pooling and
matrix products.

MindSpore 2 passes some arguments of a primitive as inputs (AvgPool's window, BatchNorm's epsilon,
MatMul's transposes) and keeps others as attributes of the primitive (Conv2D's, MaxPool's);
each converter reads both forms. Windows are NCHW; `pad_list` and SAME padding put the odd
cell after, as MindSpore does.
"""

from __future__ import annotations

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from ..common import same_pads
from .importer import Converter, Importer, Node, Value

PAD_MODES = {0: "pad", 1: "same", 2: "valid"}
"""MindSpore's PadMode enum, as a pad mode given as an input holds it."""
FORMATS = {0: "NCHW", 1: "NHWC"}
"""MindSpore's Format enum (the `data_format` input)."""


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
    if len(x.shape) > 2 and _format(node, data_format) == "NCHW":
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
    "Dense": _dense,
}
