"""Converters of reductions, arg-reductions, scans, TopK, and Softmax and its relatives.

Each opset form is resolved here, so the graph ops see one form: reductions get normalized,
sorted `axes` (read from the attribute before opset 13 for ReduceSum and 18 for the others, from
the optional input after; an empty set with `noop_with_empty_axes` reduces nothing), and the
softmax family before opset 13 (which normalizes the input flattened to 2-D at `axis`) becomes a
reshape around the single-axis op.
"""

from __future__ import annotations

import math

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node


def _reduce(op_class: type[ops.ReduceOp], axes_input_since: int) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        """Axes given as an input must be known when the model is imported (a constant, or an
        input the program is specialized on)."""
        x = node.input(0)
        noop = False
        if node.opset >= axes_input_since:
            if "axes" in node.attrs:
                raise node.invalid(f"opset {node.opset} takes the axes as an input, not an attribute")
            axes = _axes_input(node) if node.has_input(1) else []
            noop = node.strict_flag("noop_with_empty_axes", False)
        else:
            axes = [int(a) for a in node.attr("axes", [])]
        if not axes and not noop:
            axes = list(range(len(x.shape)))
        props = {
            "axes": ints_attr(normalized_axes(node, axes, len(x.shape))),
            "keepdims": bool_attr(node.strict_flag("keepdims", True)),
        }
        return [imp.g.add_op(op_class, [x], props, node.name)]

    return convert


def _arg_reduce(op_class: type[ops.ArgReduceOp]) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        props = {
            "axis": int_attr(int(node.attr("axis", 0))),
            "keepdims": bool_attr(node.strict_flag("keepdims", True)),
            "select_last_index": bool_attr(node.strict_flag("select_last_index", False)),
        }
        return [imp.g.add_op(op_class, [node.input(0)], props, node.name)]

    return convert


def _scan(op_class: type[ops.ScanOp]) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        """The axis input must be known when the model is imported."""
        axis = node.value(1).reshape(-1)
        if axis.size != 1:
            raise node.invalid(f"the axis input must hold one value, got {axis.size}")
        props = {
            "axis": int_attr(int(axis[0])),
            "exclusive": bool_attr(node.strict_flag("exclusive", False)),
            "reverse": bool_attr(node.strict_flag("reverse", False)),
        }
        return [imp.g.add_op(op_class, [node.input(0)], props, node.name)]

    return convert


def _top_k(imp: Importer, node: Node) -> list[Tensor]:
    """K must be known when the model is imported; `sorted = 0` returns the k sorted anyway."""
    if node.opset >= 10:
        given = node.value(1)
        if given.shape != (1,):  # as ONNX's shape inference and onnxruntime want it
            raise node.invalid(
                f"input #1 ('K') must be a 1-D tensor of one value, got shape {list(given.shape)}"
            )
        k = int(given[0])
    else:
        k = int(node.attr("k"))
    props = {
        "k": int_attr(k),
        "axis": int_attr(int(node.attr("axis", -1))),
        "largest": bool_attr(node.strict_flag("largest", True)),
        "sorted": bool_attr(node.strict_flag("sorted", True)),
    }
    return imp.g.add_op_results(ops.TopKOp, [node.input(0)], props, node.name)


def _softmax_family(op_class: type[ops.SoftmaxFamilyOp]) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        """Before opset 13, the flattened form needs a static input shape unless `axis` is the last."""
        x = node.input(0)
        if node.opset >= 13:
            axis = int(node.attr("axis", -1))
            return [imp.g.add_op(op_class, [x], {"axis": int_attr(axis)}, node.name)]
        # Before opset 13 the op normalizes the input flattened to 2-D at `axis`.
        rank = len(x.shape)
        axis = int(node.attr("axis", 1))
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis <= rank:
            raise node.invalid(f"axis {node.attr('axis', 1)} is out of range for rank {rank}")
        if axis == rank - 1:
            return [imp.g.add_op(op_class, [x], {"axis": int_attr(-1)}, node.name)]
        if any(d < 0 for d in x.shape):
            raise node.fail(f"opset {node.opset} form over a dynamic shape {list(x.shape)}")
        rows, columns = math.prod(x.shape[:axis]), math.prod(x.shape[axis:])
        flat = imp.g.add_reshape(x, [rows, columns], f"{node.name}.flatten")
        y = imp.g.add_op(op_class, [flat], {"axis": int_attr(1)}, node.name)
        return [imp.g.add_reshape(y, list(x.shape), f"{node.name}.unflatten")]

    return convert


def _axes_input(node: Node) -> list[int]:
    """The axes input: a 1-D tensor (onnxruntime refuses another rank)."""
    array = node.value(1)
    if array.ndim != 1:
        raise node.invalid(f"input #1 ('axes') must be 1-D, got shape {list(array.shape)}")
    return [int(a) for a in array]


def normalized_axes(node: Node, axes: list[int], rank: int) -> list[int]:
    """`axes` in [0, rank), sorted; repeated or out-of-range axes make the model invalid."""
    if any(not -rank <= a < rank for a in axes):
        raise node.invalid(f"axes {axes} are out of range for rank {rank}")
    normalized = sorted(a + rank if a < 0 else a for a in axes)
    if len(set(normalized)) != len(normalized):
        raise node.invalid(f"axes {axes} name an axis twice")
    return normalized


CONVERTERS: dict[str, Converter] = {
    "ReduceSum": _reduce(ops.ReduceSumOp, 13),
    "ReduceMean": _reduce(ops.ReduceMeanOp, 18),
    "ReduceMax": _reduce(ops.ReduceMaxOp, 18),
    "ReduceMin": _reduce(ops.ReduceMinOp, 18),
    "ReduceProd": _reduce(ops.ReduceProdOp, 18),
    "ReduceL1": _reduce(ops.ReduceL1Op, 18),
    "ReduceL2": _reduce(ops.ReduceL2Op, 18),
    "ReduceLogSum": _reduce(ops.ReduceLogSumOp, 18),
    "ReduceLogSumExp": _reduce(ops.ReduceLogSumExpOp, 18),
    "ReduceSumSquare": _reduce(ops.ReduceSumSquareOp, 18),
    "ArgMax": _arg_reduce(ops.ArgMaxOp),
    "ArgMin": _arg_reduce(ops.ArgMinOp),
    "CumSum": _scan(ops.CumSumOp),
    "CumProd": _scan(ops.CumProdOp),
    "TopK": _top_k,
    "Softmax": _softmax_family(ops.SoftmaxOp),
    "LogSoftmax": _softmax_family(ops.LogSoftmaxOp),
    "Hardmax": _softmax_family(ops.HardmaxOp),
}
