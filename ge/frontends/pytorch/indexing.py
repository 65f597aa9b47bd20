"""Converters of ATen ops that pick along an axis or build index ranges: `max`/`min` along a dim
(values and indices), `argmax`/`argmin`, `cumsum`, `gather`, `index.Tensor` with one index
tensor, and `arange`.

Ties pick the first index, as the graph's arg reductions do (ATen's CPU kernels do the same).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Graph, Tensor

from .importer import Converter, Node, along_one_axis, is_symbolic


def _extreme_along(reduce_class: type, arg_class: type) -> Converter:
    """`max.dim` and `min.dim`: the values (a reduction) and their indices (an arg reduction)."""

    def convert(g: Graph, node: Node) -> list[Tensor]:
        x, dim, keep = node.arg(0, "self"), node.arg(1, "dim"), bool(node.arg(2, "keepdim", False))
        axis = dim % max(len(x.shape), 1)
        props = {"axes": ints_attr([axis]), "keepdims": bool_attr(keep)}
        values = g.add_op(reduce_class, [x], props, f"{node.name}.values")
        indices = g.add_op(
            arg_class, [x], {"axis": int_attr(axis), "keepdims": bool_attr(keep)}, f"{node.name}.indices"
        )
        return [values, indices]

    return along_one_axis(convert)


def _arg_extreme(arg_class: type) -> Converter:
    """`argmax` and `argmin`; without a dim they index the flattened tensor."""

    def convert(g: Graph, node: Node) -> Tensor:
        x, dim, keep = node.arg(0, "self"), node.arg(1, "dim"), bool(node.arg(2, "keepdim", False))
        if dim is not None:
            props = {"axis": int_attr(dim % max(len(x.shape), 1)), "keepdims": bool_attr(keep)}
            return g.add_op(arg_class, [x], props, node.name)
        flat = g.add_reshape(x, [-1], f"{node.name}.flatten")
        index = g.add_op(arg_class, [flat], {"axis": int_attr(0), "keepdims": bool_attr(False)}, node.name)
        return g.add_reshape(index, [1] * len(x.shape), f"{node.name}.keepdim") if keep else index

    return along_one_axis(convert)


@along_one_axis
def _top_k(g: Graph, node: Node) -> list[Tensor]:
    """`topk(self, k, dim, largest, sorted)` and `sort(self, dim, descending)` (all of the dim,
    in order): values and int64 indices; equal values keep index order."""
    x = node.arg(0, "self")
    if node.target == "aten.sort.default":
        dim, largest, k = node.arg(1, "dim", -1), bool(node.arg(2, "descending", False)), None
    else:
        k, dim, largest = node.arg(1, "k"), node.arg(2, "dim", -1), bool(node.arg(3, "largest", True))
    axis = dim % max(len(x.shape), 1)
    k = x.shape[axis] if k is None else k
    if is_symbolic(k) or k == DYNAMIC_INDEX:
        raise node.fail("selecting a symbolic number of elements is not supported")
    props = {"k": int_attr(k), "axis": int_attr(axis), "largest": bool_attr(largest)}
    return g.add_op_results(ops.TopKOp, [x], props, node.name)


@along_one_axis
def _cumsum(g: Graph, node: Node) -> Tensor:
    """Integers accumulate in int64, as ATen promotes them (the export records the dtype)."""
    x = node.tensor(node.arg(0, "self"), node.dtype)
    axis = node.arg(1, "dim") % max(len(x.shape), 1)
    return g.add_op(ops.CumSumOp, [x], {"axis": int_attr(axis)}, node.name)


@along_one_axis
def _gather(g: Graph, node: Node) -> Tensor:
    """`gather(self, dim, index)`: numpy's take_along_axis, the graph's gather_elements."""
    x, dim, index = node.arg(0, "self"), node.arg(1, "dim"), node.arg(2, "index")
    axis = dim % max(len(x.shape), 1)
    return g.add_op(ops.GatherElementsOp, [x, index], {"axis": int_attr(axis)}, node.name)


def _index(g: Graph, node: Node) -> Tensor:
    """`x[..., idx]` with one integer index tensor (the dims before it sliced whole): a gather."""
    x, indices = node.arg(0, "self"), list(node.arg(1, "indices"))
    given = [i for i, index in enumerate(indices) if index is not None]
    if len(given) != 1:
        raise node.fail(f"{len(given)} index tensors; one is supported (use gather for more)")
    index = indices[given[0]]
    if not isinstance(index, Tensor) or index.dtype == "bool":
        raise node.fail("a boolean mask index is not supported (its result size depends on the data)")
    return g.add_op(ops.GatherOp, [x, index], {"axis": int_attr(given[0])}, node.name)


def _one_hot(g: Graph, node: Node) -> Tensor:
    """`one_hot(self, num_classes)`: int64 rows, 1 at each index. The export needs `num_classes`
    (-1, the largest index plus one, depends on the values). Indices are not checked as torch
    checks them when it runs: one of num_classes or more gives a row of zeros, a negative one
    counts from the end."""
    indices, classes = node.arg(0, "self"), node.arg(1, "num_classes", -1)
    if classes is None or is_symbolic(classes) or classes < 1:
        raise node.fail(f"num_classes {classes} is not supported: give the number of classes")
    values = g.add_constant(np.array([0, 1], np.int64), f"{node.name}.values")
    return g.add_op(
        ops.OneHotOp, [indices, values], {"depth": int_attr(classes), "axis": int_attr(-1)}, node.name
    )


def _arange(g: Graph, node: Node) -> Tensor:
    """`arange.default(end)`, `arange.start(start, end)`, `arange.start_step(start, end, step)`:
    a constant, `start + step * i` for each of the sizes the export recorded."""
    if node.target == "aten.arange.default":
        start, step = 0, 1
    else:
        start, step = node.arg(0, "start"), node.arg(2, "step", 1)
    if is_symbolic(start, step):
        raise node.fail("a range of a symbolic size is not supported")
    (length,) = node.static_shape("a range")
    dtype = node.dtype or "int64"
    values = (np.float64(start) + np.float64(step) * np.arange(length)).astype(dtype)
    return g.add_constant(values, node.name)


CONVERTERS: dict[str, Converter] = {
    "aten.max.dim": _extreme_along(ops.ReduceMaxOp, ops.ArgMaxOp),
    "aten.min.dim": _extreme_along(ops.ReduceMinOp, ops.ArgMinOp),
    "aten.argmax.default": _arg_extreme(ops.ArgMaxOp),
    "aten.argmin.default": _arg_extreme(ops.ArgMinOp),
    "aten.cumsum.default": _cumsum,
    "aten.topk.default": _top_k,
    "aten.sort.default": _top_k,
    "aten.gather.default": _gather,
    "aten.index.Tensor": _index,
    "aten.one_hot.default": _one_hot,
    "aten.arange.default": _arange,
    "aten.arange.start": _arange,
    "aten.arange.start_step": _arange,
}
