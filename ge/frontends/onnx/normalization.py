"""Converters of the normalizations: Layer, RMS, Group, Instance, Lp, MeanVariance and LRN.

InstanceNormalization is group normalization with one group per channel; GroupNormalization
before opset 21 takes one scale and bias per group, which are repeated per channel here.
`stash_type` other than 1 (float32 statistics) is refused.
"""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import int_attr, ints_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node
from .reduction import normalized_axes


def _layer_norm(imp: Importer, node: Node) -> list[Tensor]:
    """stash_type 1 only (float32 Mean and InvStdDev)."""
    _check_stash_type(node)
    operands = node.present_inputs(3)
    props = {
        "axis": int_attr(int(node.attr("axis", -1))),
        "epsilon": ops.float_attr(node.attr("epsilon", 1e-5)),
    }
    return imp.g.add_op_results(ops.LayerNormOp, operands, props, node.name)


def _rms_norm(imp: Importer, node: Node) -> list[Tensor]:
    """stash_type 1 only; the scale must have the input's dtype."""
    _check_stash_type(node)
    x, scale = node.input_tensors(2)
    if scale.dtype != x.dtype:
        raise node.fail(f"a scale of dtype {scale.dtype} for an input of dtype {x.dtype}")
    props = {
        "axis": int_attr(int(node.attr("axis", -1))),
        "epsilon": ops.float_attr(node.attr("epsilon", 1e-5)),
    }
    return [imp.g.add_op(ops.RMSNormOp, [x, scale], props, node.name)]


def _group_norm(imp: Importer, node: Node) -> list[Tensor]:
    """stash_type 1 only; before opset 21 (one scale and bias per group) the channel count must be static."""
    _check_stash_type(node)
    x, scale, bias = node.input_tensors(3)
    groups = int(node.attr("num_groups"))
    if node.opset < 21:
        channels = _channels(node, x)
        if groups < 1 or channels % groups:
            raise node.invalid(f"{channels} channels do not divide into {groups} groups")
        scale, bias = (_per_channel(imp, node, t, i, channels // groups) for i, t in ((1, scale), (2, bias)))
    props = {"num_groups": int_attr(groups), "epsilon": ops.float_attr(node.attr("epsilon", 1e-5))}
    return [imp.g.add_op(ops.GroupNormOp, [x, scale, bias], props, node.name)]


def _instance_norm(imp: Importer, node: Node) -> list[Tensor]:
    """The channel count (axis 1) must be static."""
    x, scale, bias = node.input_tensors(3)
    if len(x.shape) < 3:  # ONNX's input is N x C x D1 x ...; onnxruntime refuses fewer axes
        raise node.invalid(f"the input must have a rank of 3 or more, got shape {list(x.shape)}")
    props = {
        "num_groups": int_attr(_channels(node, x)),
        "epsilon": ops.float_attr(node.attr("epsilon", 1e-5)),
    }
    return [imp.g.add_op(ops.GroupNormOp, [x, scale, bias], props, node.name)]


def _lp_norm(imp: Importer, node: Node) -> list[Tensor]:
    """p = 1 or 2, as ONNX defines."""
    p = int(node.attr("p", 2))
    if p not in (1, 2):
        raise node.fail(f"p = {p} (ONNX defines 1 and 2)")
    props = {"axis": int_attr(int(node.attr("axis", -1))), "p": int_attr(p)}
    return [imp.g.add_op(ops.LpNormOp, [node.input(0)], props, node.name)]


def _mean_variance_norm(imp: Importer, node: Node) -> list[Tensor]:
    x = node.input(0)
    axes = normalized_axes(node, [int(a) for a in node.attr("axes", [0, 2, 3])], len(x.shape))
    return [imp.g.add_op(ops.MeanVarianceNormOp, [x], {"axes": ints_attr(axes)}, node.name)]


def _lrn(imp: Importer, node: Node) -> list[Tensor]:
    if "size" not in node.attrs:
        raise node.invalid("LRN needs a 'size' attribute")
    props = {
        "size": int_attr(int(node.attr("size"))),
        "alpha": ops.float_attr(node.attr("alpha", 1e-4)),
        "beta": ops.float_attr(node.attr("beta", 0.75)),
        "bias": ops.float_attr(node.attr("bias", 1.0)),
    }
    return [imp.g.add_op(ops.LRNOp, [node.input(0)], props, node.name)]


def _check_stash_type(node: Node) -> None:
    stash_type = int(node.attr("stash_type", 1))
    if stash_type != 1:
        raise node.fail(f"stash_type = {stash_type} (only 1, float32 statistics, is supported)")


def _channels(node: Node, x: Tensor) -> int:
    if len(x.shape) < 2 or x.shape[1] < 0:
        raise node.fail(f"an input of shape {list(x.shape)} without a static channel axis 1")
    return x.shape[1]


def _per_channel(imp: Importer, node: Node, t: Tensor, index: int, repeats: int) -> Tensor:
    """A per-group parameter repeated for each channel of its group."""
    known = node.known[index]
    if known is not None:
        return imp.g.add_constant(np.repeat(known.reshape(-1), repeats), f"{node.name}.per_channel")
    if len(t.shape) != 1 or t.shape[0] < 0:
        raise node.fail(f"a per-group parameter of shape {list(t.shape)}")
    column = imp.g.add_reshape(t, [t.shape[0], 1], f"{node.name}.column")
    repeated = imp.g.add_concat([column] * repeats, 1, f"{node.name}.repeat")
    return imp.g.add_reshape(repeated, [t.shape[0] * repeats], f"{node.name}.per_channel")


CONVERTERS: dict[str, Converter] = {
    "LayerNormalization": _layer_norm,
    "RMSNormalization": _rms_norm,
    "GroupNormalization": _group_norm,
    "InstanceNormalization": _instance_norm,
    "LpNormalization": _lp_norm,
    "MeanVarianceNormalization": _mean_variance_norm,
    "LRN": _lrn,
}
