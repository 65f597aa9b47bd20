"""Converters of indexing operators: gathers, scatters, OneHot, Trilu, ReverseSequence, and the
operators whose output shape depends on values (Compress, NonZero, Unique), which read those
values with `node.value` so that every shape in the graph stays static.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node


def _gather(imp: Importer, node: Node) -> list[Tensor]:
    axis = int(node.attr("axis", 0))
    _check_known_indices(node, [(node.known[1], axis)])
    props = {"axis": int_attr(axis)}
    return [imp.g.add_op(ops.GatherOp, node.input_tensors(2), props, node.name)]


def _gather_elements(imp: Importer, node: Node) -> list[Tensor]:
    axis = int(node.attr("axis", 0))
    _check_known_indices(node, [(node.known[1], axis)])
    props = {"axis": int_attr(axis)}
    return [imp.g.add_op(ops.GatherElementsOp, node.input_tensors(2), props, node.name)]


def _gather_nd(imp: Importer, node: Node) -> list[Tensor]:
    batch = int(node.attr("batch_dims", 0))
    _check_known_indices(node, _columns(node.known[1], batch))
    props = {"batch_dims": int_attr(batch)}
    return [imp.g.add_op(ops.GatherNDOp, node.input_tensors(2), props, node.name)]


def _scatter_elements(imp: Importer, node: Node) -> list[Tensor]:
    axis = int(node.attr("axis", 0))
    _check_known_indices(node, [(node.known[1], axis)])
    props = {"axis": int_attr(axis), "reduction": StringAttr(_reduction(node))}
    return [imp.g.add_op(ops.ScatterElementsOp, node.input_tensors(3), props, node.name)]


def _scatter_nd(imp: Importer, node: Node) -> list[Tensor]:
    _check_known_indices(node, _columns(node.known[1], 0))
    props = {"reduction": StringAttr(_reduction(node))}
    return [imp.g.add_op(ops.ScatterNDOp, node.input_tensors(3), props, node.name)]


def _one_hot(imp: Importer, node: Node) -> list[Tensor]:
    # Negative indices count from the end in every opset, as onnxruntime and ONNX's reference
    # read them (opset 9's text left them out of range).
    given = node.value(1)
    if given.ndim > 1:  # as ONNX's shape inference and onnxruntime refuse it
        raise node.invalid(f"input #1 ('depth') must be a scalar or 1-D, got shape {list(given.shape)}")
    depth = given.reshape(-1)
    if depth.size != 1:
        raise node.invalid(f"depth must be one value, got {depth.size}")
    props = {
        "depth": int_attr(int(depth[0])),  # a float depth is truncated, as ONNX casts it
        "axis": int_attr(int(node.attr("axis", -1))),
    }
    return [imp.g.add_op(ops.OneHotOp, [node.input(0), node.input(2)], props, node.name)]


def _trilu(imp: Importer, node: Node) -> list[Tensor]:
    k = 0
    if node.has_input(1):
        given = node.value(1)
        if given.size != 1:
            raise node.invalid(f"input #1 ('k') must hold one value, got shape {list(given.shape)}")
        k = int(given.reshape(()))
    props = {"upper": bool_attr(bool(node.attr("upper", 1))), "k": int_attr(k)}
    return [imp.g.add_op(ops.TriluOp, [node.input(0)], props, node.name)]


def _reverse_sequence(imp: Importer, node: Node) -> list[Tensor]:
    batch_axis, time_axis = int(node.attr("batch_axis", 1)), int(node.attr("time_axis", 0))
    lengths, shape = node.known[1], node.input(0).shape
    if lengths is not None and -len(shape) <= time_axis < len(shape) and shape[time_axis] >= 0:
        steps = shape[time_axis]
        outside = lengths[(lengths < 0) | (lengths > steps)]
        if outside.size:  # onnxruntime refuses it when run; a constant is refused on import
            raise node.invalid(
                f"input #1 ('sequence_lens') holds {int(outside[0])}, outside [0, {steps}] "
                f"(the {steps} steps of axis {time_axis})"
            )
    props = {"batch_axis": int_attr(batch_axis), "time_axis": int_attr(time_axis)}
    return [imp.g.add_op(ops.ReverseSequenceOp, node.input_tensors(2), props, node.name)]


def _compress(imp: Importer, node: Node) -> list[Tensor]:
    """A gather of the positions the condition selects (the condition decides the shape)."""
    x = node.input(0)
    condition = node.value(1).reshape(-1)
    axis = node.attr("axis")
    if axis is None:
        if any(d < 0 for d in x.shape):
            raise node.fail("Compress without axis of a tensor with dynamic dimensions")
        x = imp.g.add_reshape(x, [-1], f"{node.name}.flatten")
        axis = 0
    axis, rank = int(axis), len(x.shape)
    if not -rank <= axis < rank:
        raise node.invalid(f"attribute 'axis' is {axis}: it is out of range for rank {rank}")
    size = x.shape[axis]
    if size >= 0 and condition.size > size:
        raise node.invalid(f"a condition of {condition.size} values is longer than the axis ({size})")
    indices = imp.g.add_constant(np.flatnonzero(condition).astype(np.int64), f"{node.name}.indices")
    props = {"axis": int_attr(axis)}
    return [imp.g.add_op(ops.GatherOp, [x, indices], props, node.name)]


def _non_zero(imp: Importer, node: Node) -> list[Tensor]:
    props = {"count": int_attr(int(np.count_nonzero(node.value(0))))}
    return [imp.g.add_op(ops.NonZeroOp, [node.input(0)], props, node.name)]


def _unique(imp: Importer, node: Node) -> list[Tensor]:
    x = node.value(0)
    if x.dtype.kind not in "biuU":
        x = x.astype(np.float64)  # numpy sorts neither bfloat16 elements nor rows of them
    props = {"sorted": bool_attr(node.flag("sorted", True))}
    axis = node.attr("axis")
    if axis is None:
        count = np.unique(x.reshape(-1)).size
    else:
        axis = int(axis)
        if not -x.ndim <= axis < x.ndim:
            raise node.invalid(f"attribute 'axis' is {axis}: it is out of range for rank {x.ndim}")
        props["axis"] = int_attr(axis)
        count = np.unique(x, axis=axis).shape[axis]
    props["count"] = int_attr(int(count))
    return imp.g.add_op_results(ops.UniqueOp, [node.input(0)], props, node.name)


def _check_known_indices(node: Node, groups: Sequence[tuple[np.ndarray | None, int]]) -> None:
    """Refuses indices known at import (constants) that lie outside [-size, size) of the data
    axis they address, as ONNX and onnxruntime refuse them: the model is refused when imported
    rather than when run. `groups`: each array of indices with the axis it addresses; an axis
    out of range or of dynamic size is left to the op's verifier and to the run."""
    data = node.input(0).shape
    for indices, axis in groups:
        if indices is None or not -len(data) <= axis < len(data) or data[axis] < 0:
            continue
        size = data[axis]
        outside = indices[(indices < -size) | (indices >= size)] if indices.size else indices[:0]
        if outside.size:
            raise node.invalid(
                f"input #1 ('indices') holds {int(outside.reshape(-1)[0])}, outside [{-size}, {size - 1}] "
                f"for axis {axis} of the data {list(data)}"
            )


def _columns(indices: np.ndarray | None, first: int) -> list[tuple[np.ndarray | None, int]]:
    """GatherND's and ScatterND's index tuples, one column per data axis from `first` on."""
    if indices is None or indices.ndim == 0:
        return []
    return [(indices[..., k], first + k) for k in range(indices.shape[-1])]


def _reduction(node: Node) -> str:
    reduction = str(node.attr("reduction", "none"))
    known = ("none", "add", "mul") if node.opset < 18 else ("none", "add", "mul", "max", "min")
    if reduction not in known:
        raise node.invalid(f"unknown reduction '{reduction}' (opset {node.opset} knows {', '.join(known)})")
    return reduction


CONVERTERS: dict[str, Converter] = {
    "Gather": _gather,
    "GatherElements": _gather_elements,
    "GatherND": _gather_nd,
    "ScatterElements": _scatter_elements,
    "Scatter": _scatter_elements,
    "ScatterND": _scatter_nd,
    "OneHot": _one_hot,
    "Trilu": _trilu,
    "ReverseSequence": _reverse_sequence,
    "Compress": _compress,
    "NonZero": _non_zero,
    "Unique": _unique,
}
