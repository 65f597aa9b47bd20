"""Converters of the ATen ops that run along a dim: `cumsum`, `cumprod`, `cummax` and `cummin`
(values and indices), `logcumsumexp`, each one of the graph's scans.

The index of a running extreme is the last position up to it holding that extreme (ATen's CPU
kernels take the latest of equal values, and a NaN from where it occurs): a running largest of
the positions where the element equals the running extreme.
"""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import int_attr
from ge.graph import Graph, Tensor

from .importer import Converter, Node, along_one_axis


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
        if values.dtype != node.dtype:
            values = g.add_cast(values, node.dtype or "bool", f"{node.name}.flags")
        return [values, indices]

    return convert


CONVERTERS: dict[str, Converter] = {
    "aten.cumsum.default": _scan(ops.CumSumOp),
    "aten.cumprod.default": _scan(ops.CumProdOp),
    "aten.logcumsumexp.default": _scan(ops.LogCumSumExpOp),
    "aten.cummax.default": _running_extreme(ops.CumMaxOp),
    "aten.cummin.default": _running_extreme(ops.CumMinOp),
}
