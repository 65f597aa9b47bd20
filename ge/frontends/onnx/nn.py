"""Converters of neural-network operators: matrix products, convolution, pooling, norms."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ge.dialects import graph as ops
from ge.dialects.common import int_attr, ints_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node


def _matmul(imp: Importer, node: Node) -> list[Tensor]:
    return [imp.g.add_op(ops.MatMulOp, node.inputs[:2], None, node.name)]


def _gemm(imp: Importer, node: Node) -> list[Tensor]:
    props = {
        "alpha": ops.float_attr(node.attr("alpha", 1.0)),
        "beta": ops.float_attr(node.attr("beta", 1.0)),
        "trans_a": int_attr(int(node.attr("transA", 0))),
        "trans_b": int_attr(int(node.attr("transB", 0))),
    }
    operands = [t for t in node.inputs[:3] if t is not None]
    return [imp.g.add_op(ops.GemmOp, operands, props, node.name)]


def _spatial(node: Node, x: Tensor, kernel: Sequence[int]) -> dict[str, tuple[int, ...]]:
    """strides, dilations and explicit [top, left, bottom, right] pads, auto_pad resolved."""
    if len(kernel) != 2 or len(x.shape) != 4:
        raise node.fail(f"only 2-D windows over NCHW input are supported (kernel {list(kernel)})")
    strides = tuple(node.attr("strides", [1, 1]))
    dilations = tuple(node.attr("dilations", [1, 1]))
    auto_pad = node.attr("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad)
    pads = tuple(node.attr("pads", [0, 0, 0, 0]))
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads_begin, pads_end = [], []
        for axis in range(2):
            size = x.shape[2 + axis]
            if size < 0:
                raise node.fail("auto_pad needs static spatial dimensions")
            out = math.ceil(size / strides[axis])
            total = max(0, (out - 1) * strides[axis] + (kernel[axis] - 1) * dilations[axis] + 1 - size)
            small, large = total // 2, total - total // 2
            begin = small if auto_pad == "SAME_UPPER" else large
            pads_begin.append(begin)
            pads_end.append(total - begin)
        pads = (*pads_begin, *pads_end)
    elif auto_pad == "VALID":
        pads = (0, 0, 0, 0)
    elif auto_pad != "NOTSET":
        raise node.invalid(f"unknown auto_pad '{auto_pad}'")
    return {"strides": strides, "dilations": dilations, "pads": pads}


def _conv(imp: Importer, node: Node) -> list[Tensor]:
    x, w = node.inputs[0], node.inputs[1]
    kernel = tuple(node.attr("kernel_shape", w.shape[2:]))
    if tuple(kernel) != tuple(w.shape[2:]):
        raise node.invalid(f"kernel_shape {list(kernel)} disagrees with the weight {list(w.shape)}")
    s = _spatial(node, x, kernel)
    props = {
        "strides": ints_attr(s["strides"]),
        "pads": ints_attr(s["pads"]),
        "dilations": ints_attr(s["dilations"]),
        "groups": int_attr(int(node.attr("group", 1))),
    }
    operands = [t for t in node.inputs[:3] if t is not None]
    return [imp.g.add_op(ops.Conv2DOp, operands, props, node.name)]


def _batch_norm(imp: Importer, node: Node) -> list[Tensor]:
    if node.attr("training_mode", 0):
        raise node.fail("training_mode=1 is not supported")
    if node.opset < 9 and not node.attr("spatial", 1):
        raise node.fail("spatial=0 is not supported")
    if any(o for o in node.proto.output[1:]):
        raise node.fail("running mean/var outputs (training) are not supported")
    props = {"epsilon": ops.float_attr(node.attr("epsilon", 1e-5))}
    return [imp.g.add_op(ops.BatchNormOp, node.inputs[:5], props, node.name)]


def _pool(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        x = node.inputs[0]
        if any(o for o in node.proto.output[1:]):
            raise node.fail("the 'Indices' output of MaxPool is not supported")
        if node.attr("storage_order", 0):
            raise node.fail("storage_order=1 is not supported")
        kernel = tuple(node.attr("kernel_shape", ()))
        s = _spatial(node, x, kernel)
        props = {
            "kernel_shape": ints_attr(kernel),
            "strides": ints_attr(s["strides"]),
            "pads": ints_attr(s["pads"]),
            "ceil_mode": int_attr(int(node.attr("ceil_mode", 0))),
        }
        if op_class is ops.MaxPoolOp:
            props["dilations"] = ints_attr(s["dilations"])
        else:
            if s["dilations"] != (1, 1):
                raise node.fail("dilations other than 1 are not supported for AveragePool")
            props["count_include_pad"] = int_attr(int(node.attr("count_include_pad", 0)))
        return [imp.g.add_op(op_class, [x], props, node.name)]

    return convert


def _global_avg_pool(imp: Importer, node: Node) -> list[Tensor]:
    return [imp.g.add_op(ops.GlobalAvgPoolOp, [node.inputs[0]], None, node.name)]


CONVERTERS: dict[str, Converter] = {
    "MatMul": _matmul,
    "Gemm": _gemm,
    "Conv": _conv,
    "BatchNormalization": _batch_norm,
    "MaxPool": _pool(ops.MaxPoolOp),
    "AveragePool": _pool(ops.AvgPoolOp),
    "GlobalAveragePool": _global_avg_pool,
}
