"""Converters of the ATen ops that run along a dim or rank its elements: `cumsum`, `cumprod`,
`cummax` and `cummin` (values and indices), `logcumsumexp`, each one of the graph's scans;
`median` and `kthvalue`, the last of a top-k of the smallest elements; `searchsorted` and
`bucketize`, a count of the boundaries below each value.

The index of a running extreme is the last position up to it holding that extreme (ATen's CPU
kernels take the latest of equal values, and a NaN from where it occurs): a running largest of
the positions where the element equals the running extreme.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Graph, Tensor

from .importer import Converter, Node, along_one_axis, is_symbolic


def _scan(op_class: type[ops.ScanOp]) -> Converter:
    """`cumsum`, `cumprod` and `logcumsumexp(self, dim)`: integers and flags accumulate in
    int64, as ATen promotes them (the export records the dtype)."""

    @along_one_axis
    def convert(g: Graph, node: Node) -> Tensor:
        x = node.tensor(node.arg(0, "self"), node.dtype)
        axis = node.arg(1, "dim") % max(len(x.shape), 1)
        return g.add_op(op_class, [x], {"axis": int_attr(axis)}, node.name)

    return convert


def _running_extreme(op_class: type[ops.ScanOp]) -> Converter:
    """`cummax` and `cummin(self, dim)`: the running extreme and the latest index holding it."""

    @along_one_axis
    def convert(g: Graph, node: Node) -> list[Tensor]:
        x = node.arg(0, "self")
        if x.dtype == "bool":
            x = g.add_cast(x, "uint8", f"{node.name}.bytes")
        axis = node.arg(1, "dim") % max(len(x.shape), 1)
        props = {"axis": int_attr(axis)}
        values = g.add_op(op_class, [x], props, f"{node.name}.values")
        holds = g.add_op(ops.EqualOp, [x, values], None, f"{node.name}.holds")
        if x.dtype.startswith(("float", "bfloat")):
            nan = g.add_op(ops.IsNaNOp, [x], None, f"{node.name}.nan")
            holds = g.add_op(ops.OrOp, [holds, nan], None, f"{node.name}.holds_or_nan")
        size = x.shape[axis]
        positions = g.add_constant(
            np.arange(size, dtype=np.int64).reshape([size] + [1] * (len(x.shape) - axis - 1)),
            f"{node.name}.positions",
        )
        zero = node.scalar(0, "int64")
        where = g.add_op(ops.WhereOp, [holds, positions, zero], None, f"{node.name}.where")
        indices = g.add_op(ops.CumMaxOp, [where], props, f"{node.name}.indices")
        if node.dtype is not None and values.dtype != node.dtype:  # flags, scanned as bytes
            values = g.add_cast(values, node.dtype, f"{node.name}.flags")
        return [values, indices]

    return convert


@along_one_axis
def _kthvalue(g: Graph, node: Node) -> list[Tensor]:
    """`kthvalue(self, k, dim=-1, keepdim=False)`: the k-th smallest element and its index."""
    x, k = node.arg(0, "self"), node.arg(1, "k")
    axis = node.arg(2, "dim", -1) % max(len(x.shape), 1)
    return _kth_smallest(g, node, x, k, axis, bool(node.arg(3, "keepdim", False)))


@along_one_axis
def _median_along(g: Graph, node: Node) -> list[Tensor]:
    """`median.dim(self, dim, keepdim=False)`: the lower of the two middle elements of an even
    count, as ATen takes, and its index."""
    x = node.arg(0, "self")
    axis, keep = node.arg(1, "dim") % max(len(x.shape), 1), bool(node.arg(2, "keepdim", False))
    middle = _kth_smallest(g, node, x, (x.shape[axis] + 1) // 2, axis, keep)
    return _nan_if_any(g, node, x, axis, keep, middle)


def _median(g: Graph, node: Node) -> Tensor:
    """`median.default(self)`: the lower middle element of the whole tensor, 0-d."""
    x = node.arg(0, "self")
    flat = g.add_reshape(x, [-1], f"{node.name}.flatten")
    count = int(np.prod(x.shape))
    middle = _kth_smallest(g, node, flat, (count + 1) // 2, 0, False, values_only=True)
    return _nan_if_any(g, node, flat, 0, False, middle)[0]


def _nan_if_any(
    g: Graph, node: Node, x: Tensor, axis: int, keep: bool, results: list[Tensor]
) -> list[Tensor]:
    """A median's `results` (values, and indices if given), NaN and the first NaN's index where
    `x` holds one along `axis`, as ATen's median gives (its kthvalue ranks NaN last instead)."""
    if not x.dtype.startswith(("float", "bfloat")):
        return results
    nan = g.add_cast(g.add_op(ops.IsNaNOp, [x], None, f"{node.name}.nan"), "int32", f"{node.name}.nan_flags")
    reduce = {"axes": ints_attr([axis]), "keepdims": bool_attr(keep)}
    has_nan = g.add_cast(g.add_op(ops.ReduceMaxOp, [nan], reduce, f"{node.name}.any_nan"), "bool")
    values = g.add_op(ops.WhereOp, [has_nan, node.scalar(math.nan, x.dtype), results[0]], None, node.name)
    if len(results) == 1:
        return [values]
    first = g.add_op(
        ops.ArgMaxOp, [nan], {"axis": int_attr(axis), "keepdims": bool_attr(keep)}, f"{node.name}.first_nan"
    )
    return [values, g.add_op(ops.WhereOp, [has_nan, first, results[1]], None, f"{node.name}.indices")]


def _kth_smallest(
    g: Graph, node: Node, x: Tensor, k: int, axis: int, keep: bool, values_only: bool = False
) -> list[Tensor]:
    """The `k`-th smallest element along `axis` (1 for the smallest) and its index: the last of
    the ascending top-k, equal elements in index order."""
    if is_symbolic(k) or k == DYNAMIC_INDEX or DYNAMIC_INDEX in x.shape[axis : axis + 1]:
        raise node.fail("ranking along a symbolic size is not supported")
    if not 1 <= k <= x.shape[axis]:
        raise node.fail(f"k = {k} is out of range for a dim of {x.shape[axis]} elements")
    props = {"k": int_attr(k), "axis": int_attr(axis), "largest": bool_attr(False)}
    smallest = g.add_op_results(ops.TopKOp, [x], props, f"{node.name}.smallest")
    last = g.add_constant(np.array([k - 1] if keep else k - 1, np.int64), f"{node.name}.last")
    picked = smallest[:1] if values_only else smallest
    names = (f"{node.name}.middle", f"{node.name}.middle_index")
    return [
        g.add_op(ops.GatherOp, [result, last], {"axis": int_attr(axis)}, name)
        for result, name in zip(picked, names, strict=False)
    ]


def _search_sorted(g: Graph, node: Node) -> Tensor:
    """`searchsorted(sorted_sequence, self, out_int32, right, side, sorter)` and
    `bucketize(self, boundaries, out_int32, right)`: where each value would go in the sorted
    boundaries (the last dim of an N-D sequence, whose leading dims match the values'), first
    among equals or, with `right`, after them. ATen's binary search moves past a boundary `b`
    unless `b >= v` (`b > v` with `right`), so a NaN value goes last: the count of those."""
    if node.target.startswith("aten.bucketize"):
        values, boundaries = node.arg(0, "self"), node.arg(1, "boundaries")
        right = bool(node.arg(3, "right", False))
    else:
        boundaries, values = node.arg(0, "sorted_sequence"), node.arg(1, "self")
        right = bool(node.arg(3, "right", False)) or node.arg(4, "side") == "right"
        if node.arg(5, "sorter") is not None:
            raise node.fail("a sorter is not supported (sort the sequence first)")
    if not isinstance(values, Tensor):  # a Python number: a float among integers stays one
        floats = isinstance(values, float) and "float" not in boundaries.dtype
        values = node.scalar(values, "float64" if floats else boundaries.dtype)
    if values.dtype != boundaries.dtype:
        values, boundaries = g.add_cast(values, "float64"), g.add_cast(boundaries, "float64")
    column = g.add_reshape(values, [*values.shape, 1], f"{node.name}.column")
    if len(boundaries.shape) > 1:
        boundaries = g.add_reshape(
            boundaries, [*boundaries.shape[:-1], 1, boundaries.shape[-1]], f"{node.name}.row"
        )
    stops = g.add_op(
        ops.GreaterOp if right else ops.GreaterEqualOp, [boundaries, column], None, f"{node.name}.stops"
    )
    passed = g.add_op(ops.NotOp, [stops], None, f"{node.name}.passed")
    counted = g.add_cast(passed, node.dtype or "int64", f"{node.name}.counted")
    props = {"axes": ints_attr([len(counted.shape) - 1]), "keepdims": bool_attr(False)}
    return g.add_op(ops.ReduceSumOp, [counted], props, node.name)


CONVERTERS: dict[str, Converter] = {
    "aten.cumsum.default": _scan(ops.CumSumOp),
    "aten.cumprod.default": _scan(ops.CumProdOp),
    "aten.logcumsumexp.default": _scan(ops.LogCumSumExpOp),
    "aten.cummax.default": _running_extreme(ops.CumMaxOp),
    "aten.cummin.default": _running_extreme(ops.CumMinOp),
    "aten.median.default": _median,
    "aten.median.dim": _median_along,
    "aten.kthvalue.default": _kthvalue,
    "aten.searchsorted.Tensor": _search_sorted,
    "aten.searchsorted.Scalar": _search_sorted,
    "aten.bucketize.Tensor": _search_sorted,
    "aten.bucketize.Scalar": _search_sorted,
}
