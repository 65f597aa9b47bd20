"""Converters of the ATen ops of vector and distance algebra beyond the matrix products of
`nn`: `addmv` and `_cdist_forward` (`torch.cdist`).

torch.cdist of order 2 computes through a matrix product (|a|^2 + |b|^2 - 2 a.b) when a side
has more than 25 points (or when asked), else from the differences; so does the converter, so
that both round alike.
"""

from __future__ import annotations

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, ints_attr
from ge.graph import Graph, Tensor

from .importer import Converter, Node
from .tensor import vector_norm

_MATRIX_PRODUCT_FROM = 25
"""torch.cdist's `use_mm_for_euclid_dist_if_necessary`: a matrix product past 25 points a side."""


def _addmv(g: Graph, node: Node) -> Tensor:
    """`addmv(self, mat, vec, beta=1, alpha=1)`: `beta * self + alpha * (mat @ vec)`; with beta 0
    `self` is not read (its NaN stays out), as ATen does."""
    x, matrix, vector = node.arg(0, "self"), node.arg(1, "mat"), node.arg(2, "vec")
    beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
    product = g.add_matmul(matrix, vector, node.name if alpha == 1 and beta == 0 else f"{node.name}.product")
    if alpha != 1:
        product = g.add_mul(product, node.scalar(alpha), node.name if beta == 0 else f"{node.name}.alpha")
    if beta == 0:
        return product
    if beta != 1:
        x = g.add_mul(x, node.scalar(beta), f"{node.name}.beta")
    return g.add_add(x, product, node.name)


def _cdist(g: Graph, node: Node) -> Tensor:
    """`_cdist_forward(x1, x2, p, compute_mode)`: the p-norm distance of each row of x1 (..., P, M)
    to each row of x2 (..., R, M), (..., P, R); the batch dims broadcast."""
    a, b, order, mode = node.arg(0, "x1"), node.arg(1, "x2"), node.arg(2, "p"), node.arg(3, "compute_mode")
    points, others = a.shape[-2], b.shape[-2]
    if order == 2 and (mode == 1 or (mode in (None, 0) and max(points, others) > _MATRIX_PRODUCT_FROM)):
        return _euclidean_by_product(g, node, a, b)
    rows = g.add_reshape(a, [*a.shape[:-1], 1, a.shape[-1]], f"{node.name}.rows")
    columns = g.add_reshape(b, [*b.shape[:-2], 1, *b.shape[-2:]], f"{node.name}.columns")
    differences = g.add_sub(rows, columns, f"{node.name}.differences")
    rank = len(differences.shape)
    if order == 0:  # ATen's sum of min(ceil(|d|), 1): unlike vector_norm's count, NaN stays NaN
        size = g.add_op(ops.CeilOp, [g.add_op(ops.AbsOp, [differences], None, f"{node.name}.abs")], None)
        counts = g.add_op(ops.MinOp, [size, node.scalar(1.0, size.dtype)], None, f"{node.name}.nonzero")
        return g.add_op(
            ops.ReduceSumOp,
            [counts],
            {"axes": ints_attr([rank - 1]), "keepdims": bool_attr(False)},
            node.name,
        )
    return vector_norm(g, node, differences, order, [rank - 1], False, node.name)


def _euclidean_by_product(g: Graph, node: Node, a: Tensor, b: Tensor) -> Tensor:
    """`sqrt(max(|a|^2 + |b|^2 - 2 a.b, 1e-30))`, as torch.cdist computes it by a product."""
    rank = len(b.shape)
    a_squared = _squared_norms(g, node, a, "a")
    b_squared = g.add_transpose(
        _squared_norms(g, node, b, "b"), [*range(rank - 2), rank - 1, rank - 2], f"{node.name}.b_row"
    )
    b_t = g.add_transpose(b, [*range(rank - 2), rank - 1, rank - 2], f"{node.name}.b_t")
    twice = g.add_mul(a, node.scalar(-2.0), f"{node.name}.minus_twice")
    product = g.add_matmul(twice, b_t, f"{node.name}.product")
    squared = g.add_add(
        g.add_add(product, a_squared, f"{node.name}.plus_a"), b_squared, f"{node.name}.squared"
    )
    positive = g.add_op(ops.MaxOp, [squared, node.scalar(1e-30)], None, f"{node.name}.positive")
    return g.add_op(ops.SqrtOp, [positive], None, node.name)


def _squared_norms(g: Graph, node: Node, x: Tensor, which: str) -> Tensor:
    """The squared norm of each row of `x`, kept as a column."""
    squares = g.add_mul(x, x, f"{node.name}.{which}_squares")
    props = {"axes": ints_attr([len(x.shape) - 1]), "keepdims": True}
    return g.add_op(ops.ReduceSumOp, [squares], props, f"{node.name}.{which}_squared")


CONVERTERS: dict[str, Converter] = {
    "aten.addmv.default": _addmv,
    "aten._cdist_forward.default": _cdist,
}
