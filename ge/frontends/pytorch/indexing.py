"""Converters of ATen ops that pick along an axis or build index ranges: `max`/`min` along a dim
(values and indices), `argmax`/`argmin`, `gather`, `index.Tensor` and its writes
(`index_put`, the scatters, slice and select scatters), `diagonal`, `_embedding_bag`, and
`arange`.

Ties pick the first index, as the graph's arg reductions do (ATen's CPU kernels do the same).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, StringAttr

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
def _gather(g: Graph, node: Node) -> Tensor:
    """`gather(self, dim, index)`: numpy's take_along_axis, the graph's gather_elements."""
    x, dim, index = node.arg(0, "self"), node.arg(1, "dim"), node.arg(2, "index")
    axis = dim % max(len(x.shape), 1)
    return g.add_op(ops.GatherElementsOp, [x, index], {"axis": int_attr(axis)}, node.name)


def _index(g: Graph, node: Node) -> Tensor:
    """`x[..., idx]` with one integer index tensor (the dims before it sliced whole): a gather;
    with several (`x[rows, cols]`), a gather_nd of the indexed dims moved to the front."""
    x, indices = node.arg(0, "self"), list(node.arg(1, "indices"))
    given = _index_tensors(node, indices)
    if len(given) == 1:
        return g.add_op(ops.GatherOp, [x, indices[given[0]]], {"axis": int_attr(given[0])}, node.name)
    front, index, batch = _indexed_front(g, node, x, indices, given)
    picked = g.add_op(ops.GatherNDOp, [front, index], None, f"{node.name}.gather_nd")
    return _indexed_back(g, node, picked, len(batch), given, len(x.shape))


def _index_put(g: Graph, node: Node) -> Tensor:
    """`index_put(self, indices, values, accumulate)`, what `x[rows, cols] = v`, `index_add`
    and `index_copy` become: a scatter_nd into the indexed dims moved to the front, adding
    with `accumulate`."""
    x, indices = node.arg(0, "self"), list(node.arg(1, "indices"))
    values, accumulate = node.arg(2, "values"), bool(node.arg(3, "accumulate", False))
    given = _index_tensors(node, indices)
    front, index, batch = _indexed_front(g, node, x, indices, given)
    rest = list(front.shape[len(given) :])
    # `values` broadcasts to what `x[indices]` gives, in ATen's order of its dims.
    picked_shape = _indexed_shape(batch, given, list(x.shape))
    updates = g.add_op(
        ops.ExpandOp,
        [node.tensor(values, x.dtype)],
        {"shape": ints_attr(picked_shape)},
        f"{node.name}.values",
    )
    if picked_shape != batch + rest:  # the indexed dims stood together, after others
        perm = _front_of(len(batch), given, len(x.shape))
        updates = g.add_transpose(updates, perm, f"{node.name}.values_front")
    props = {"reduction": StringAttr("add")} if accumulate else None
    written = g.add_op(ops.ScatterNDOp, [front, index, updates], props, f"{node.name}.scatter_nd")
    order = given + [d for d in range(len(x.shape)) if d not in given]
    if order == sorted(order):
        return written
    return g.add_transpose(written, [order.index(d) for d in range(len(x.shape))], node.name)


def _index_tensors(node: Node, indices: list) -> list[int]:
    """The dims `indices` indexes with a tensor; boolean masks (a data-dependent size) refused."""
    given = [i for i, index in enumerate(indices) if index is not None]
    for i in given:
        if not isinstance(indices[i], Tensor) or indices[i].dtype == "bool":
            raise node.fail("a boolean mask index is not supported (its result size depends on the data)")
    return given


def _indexed_front(
    g: Graph, node: Node, x: Tensor, indices: list, given: list[int]
) -> tuple[Tensor, Tensor, list[int]]:
    """`x` with its indexed dims moved to the front, the index tensors broadcast together and
    stacked along a last axis (int64), and their broadcast shape."""
    shapes = [tuple(indices[i].shape) for i in given]
    if any(d == DYNAMIC_INDEX for shape in shapes for d in shape):
        raise node.fail("index tensors of a symbolic size are not supported")
    batch = [int(d) for d in np.broadcast_shapes(*shapes)]
    order = given + [d for d in range(len(x.shape)) if d not in given]
    front = x if order == list(range(len(x.shape))) else g.add_transpose(x, order, f"{node.name}.front")
    columns = []
    for i in given:
        index = g.add_cast(indices[i], "int64") if indices[i].dtype != "int64" else indices[i]
        if list(index.shape) != batch:
            index = g.add_op(ops.ExpandOp, [index], {"shape": ints_attr(batch)}, f"{node.name}.index{i}")
        columns.append(g.add_reshape(index, [*batch, 1], f"{node.name}.column{i}"))
    return front, g.add_concat(columns, -1, f"{node.name}.indices"), batch


def _indexed_shape(batch: list[int], given: list[int], shape: list[int]) -> list[int]:
    """The shape of `x[indices]`: the index shape in place of the indexed dims when they stand
    together, else first (ATen's, and numpy's, rule)."""
    rest = [d for i, d in enumerate(shape) if i not in given]
    if given == list(range(given[0], given[0] + len(given))):
        return rest[: given[0]] + batch + rest[given[0] :]
    return batch + rest


def _front_of(batch_rank: int, given: list[int], rank: int) -> list[int]:
    """The permutation taking `x[indices]` in ATen's order to the index dims first."""
    start, rest = given[0], rank - len(given)
    return [*range(start, start + batch_rank), *range(start), *range(start + batch_rank, batch_rank + rest)]


def _indexed_back(
    g: Graph, node: Node, picked: Tensor, batch_rank: int, given: list[int], rank: int
) -> Tensor:
    """gather_nd's result (index dims first) in ATen's order of `x[indices]`."""
    perm = _front_of(batch_rank, given, rank)
    together = given == list(range(given[0], given[0] + len(given)))
    if not together or perm == list(range(len(perm))):
        return picked
    return g.add_transpose(picked, [perm.index(d) for d in range(len(perm))], node.name)


@along_one_axis
def _scatter(g: Graph, node: Node) -> Tensor:
    """`scatter(self, dim, index, src or value)`, `scatter_add` and `scatter_reduce(..., reduce,
    include_self)`: scatter_elements. Only the part of `src` that `index` covers is written, as
    ATen does. Without `include_self`, the written places start from the reduction's identity;
    a mean divides the sum by the count of what was combined there."""
    x, dim, index, source = node.arg(0, "self"), node.arg(1, "dim"), node.arg(2, "index"), node.arg(3, "src")
    axis = dim % len(x.shape)
    shape = [int(d) for d in index.shape]
    if isinstance(source, Tensor):
        if list(source.shape) != shape:
            props = {"starts": ints_attr([0] * len(shape)), "ends": ints_attr(shape)}
            source = g.add_op(ops.SliceOp, [source], props, f"{node.name}.src")
        source = node.tensor(source, x.dtype)
    else:
        source = g.add_splat(
            source if "float" in x.dtype else int(source), shape, x.dtype, f"{node.name}.value"
        )
    reduce = {"aten.scatter_add.default": "sum"}.get(node.target, node.arg(4, "reduce"))
    include_self = bool(node.arg(5, "include_self", True))

    def scatter(data: Tensor, updates: Tensor, reduction: str, name: str) -> Tensor:
        props = {"axis": int_attr(axis), "reduction": StringAttr(reduction)}
        return g.add_op(ops.ScatterElementsOp, [data, index, updates], props, name)

    if reduce is None:
        return scatter(x, source, "none", node.name)
    reductions = {"sum": "add", "mean": "add", "prod": "mul", "amax": "max", "amin": "min"}
    if reduce not in reductions or (reduce == "mean" and "float" not in x.dtype):
        raise node.fail(f"reduce '{reduce}' is not supported" + (" on integers" if reduce == "mean" else ""))
    data = x
    if not include_self:
        identity = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
        if "float" not in x.dtype and reduce in ("amax", "amin"):
            info = np.iinfo(x.dtype)
            identity = info.min if reduce == "amax" else info.max
        start = g.add_splat(
            identity if "float" in x.dtype else int(identity), shape, x.dtype, f"{node.name}.identity"
        )
        data = scatter(x, start, "none", f"{node.name}.cleared")
    combined = scatter(
        data, source, reductions[reduce], node.name if reduce != "mean" else f"{node.name}.sum"
    )
    if reduce != "mean":
        return combined
    ones = g.add_splat(1.0, shape, x.dtype, f"{node.name}.one")
    zeros = g.add_splat(
        1.0 if include_self else 0.0, [int(d) for d in x.shape], x.dtype, f"{node.name}.start"
    )
    count = scatter(zeros, ones, "add", f"{node.name}.count")
    mean = g.add_div(
        combined,
        g.add_op(ops.MaxOp, [count, node.scalar(1.0, x.dtype)], None, f"{node.name}.at_least_one"),
        f"{node.name}.mean",
    )
    touched = g.add_op(ops.GreaterOp, [count, node.scalar(0.0, x.dtype)], None, f"{node.name}.touched")
    return g.add_op(ops.WhereOp, [touched, mean, x], None, node.name)


def _slice_scatter(g: Graph, node: Node) -> Tensor:
    """`slice_scatter(self, src, dim, start, end, step)` (what `x[:, 1:3] = v` becomes) and
    `select_scatter(self, src, dim, index)`: `src` written along `dim` at the sliced positions,
    a scatter_elements of constant indices."""
    x, source = node.arg(0, "self"), node.arg(1, "src")
    axis = node.arg(2, "dim", 0) % len(x.shape)
    size = x.shape[axis]
    if size == DYNAMIC_INDEX or any(d == DYNAMIC_INDEX for d in x.shape):
        raise node.fail("writing into a tensor of a symbolic size is not supported")
    if node.target == "aten.select_scatter.default":
        start = node.arg(3, "index") % size
        positions = np.array([start])
        source = g.add_reshape(source, [*source.shape[:axis], 1, *source.shape[axis:]], f"{node.name}.src")
    else:
        start, end, step = node.arg(3, "start"), node.arg(4, "end"), node.arg(5, "step", 1)
        if is_symbolic(start, end, step):
            raise node.fail("a slice of symbolic bounds is not supported")
        positions = np.arange(size)[slice(start, end, step)]
    shape = [int(d) for d in source.shape]
    view = [1] * len(shape)
    view[axis] = len(positions)
    index = g.add_constant(positions.astype(np.int64).reshape(view), f"{node.name}.positions")
    index = g.add_op(ops.ExpandOp, [index], {"shape": ints_attr(shape)}, f"{node.name}.index")
    props = {"axis": int_attr(axis)}
    return g.add_op(ops.ScatterElementsOp, [x, index, node.tensor(source, x.dtype)], props, node.name)


def _copy(g: Graph, node: Node) -> Tensor:
    """`copy(self, src)`: `src` broadcast to `self`'s shape, in its dtype."""
    x, source = node.arg(0, "self"), node.tensor(node.arg(1, "src"), node.arg(0, "self").dtype)
    if list(source.shape) == list(x.shape):
        return source
    return g.add_op(ops.ExpandOp, [source], {"shape": ints_attr([int(d) for d in x.shape])}, node.name)


def _diagonal(g: Graph, node: Node) -> Tensor:
    """`diagonal(self, offset, dim1, dim2)`: the two dims moved last and flattened, then a gather
    of the diagonal's places; the diagonal is the last dim of the result, as in ATen."""
    x, offset = node.arg(0, "self"), node.arg(1, "offset", 0)
    rank = len(x.shape)
    first, second = node.arg(2, "dim1", 0) % rank, node.arg(3, "dim2", 1) % rank
    rows, columns = x.shape[first], x.shape[second]
    if DYNAMIC_INDEX in (rows, columns):
        raise node.fail("the diagonal of a symbolic size is not supported")
    others = [d for d in range(rank) if d not in (first, second)]
    moved = g.add_transpose(x, [*others, first, second], f"{node.name}.last")
    flat = g.add_reshape(moved, [*[x.shape[d] for d in others], rows * columns], f"{node.name}.flatten")
    start_row, start_column = max(-offset, 0), max(offset, 0)
    length = max(min(rows - start_row, columns - start_column), 0)
    places = (np.arange(length) + start_row) * columns + np.arange(length) + start_column
    index = g.add_constant(places.astype(np.int64), f"{node.name}.places")
    return g.add_op(ops.GatherOp, [flat, index], {"axis": int_attr(len(others))}, node.name)


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


_BAG_MODES = ("sum", "mean", "max")
"""`_embedding_bag`'s `mode` numbers."""


def _embedding_bag(g: Graph, node: Node) -> list[Tensor | None]:
    """`_embedding_bag` (and `_embedding_bag_forward_only`, what torch.compile sees without
    autograd) `(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
    per_sample_weights, include_last_offset, padding_idx)`: the rows of `weight` picked by
    `indices`, reduced per bag. Bag b holds the indices from `offsets[b]` to the next offset, the
    last bag to the end (an included last offset, `include_last_offset`, is only dropped: ATen's
    kernel ignores it); indices equal to `padding_idx` (-1: none) count in no bag. A membership
    matrix (bags x indices) computes the sums (weighted by `per_sample_weights`) as one product
    and masks the maxima; empty bags give zeros, as ATen's do. The other results serve
    training's backward and are not computed."""
    weight, indices, offsets = node.arg(0, "weight"), node.arg(1, "indices"), node.arg(2, "offsets")
    mode = _BAG_MODES[node.arg(4, "mode", 0)]
    sample_weights, include_last = node.arg(6, "per_sample_weights"), bool(node.arg(7, "include_last_offset"))
    padding = node.arg(8, "padding_idx", -1)
    if any(node.uses_result(i) for i in (1, 2, 3)):
        raise node.fail("the bag sizes and offsets (for training's backward) are not computed")
    count, starts_count = indices.shape[0], offsets.shape[0]
    if DYNAMIC_INDEX in (count, starts_count):
        raise node.fail("bags of a symbolic number of indices or offsets are not supported")
    bags = starts_count - 1 if include_last else starts_count
    offsets = offsets if offsets.dtype == "int64" else g.add_cast(offsets, "int64", f"{node.name}.offsets")
    # The last bag ends where the indices do, whatever an included last offset says (as ATen's
    # kernel reads it).
    end = g.add_constant(np.array([count], np.int64), f"{node.name}.end")
    firsts = _pick(g, node, offsets, np.arange(bags), "firsts")
    bounds = g.add_concat([firsts, end], 0, f"{node.name}.bounds")
    starts = _pick(g, node, bounds, np.arange(bags)[:, None], "starts")
    ends = _pick(g, node, bounds, np.arange(1, bags + 1)[:, None], "ends")
    positions = g.add_constant(np.arange(count, dtype=np.int64)[None], f"{node.name}.positions")
    member = g.add_op(
        ops.AndOp,
        [
            g.add_op(ops.LessEqualOp, [starts, positions], None, f"{node.name}.after_start"),
            g.add_op(ops.LessOp, [positions, ends], None, f"{node.name}.before_end"),
        ],
        None,
        f"{node.name}.member",
    )
    if padding is not None and padding >= 0:
        padded = g.add_op(
            ops.EqualOp, [indices, node.scalar(padding, indices.dtype)], None, f"{node.name}.padded"
        )
        kept = g.add_op(ops.NotOp, [padded], None, f"{node.name}.kept")
        member = g.add_op(ops.AndOp, [member, kept], None, f"{node.name}.member_kept")
    rows = g.add_op(ops.GatherOp, [weight, indices], {"axis": int_attr(0)}, f"{node.name}.rows")
    shares = g.add_cast(member, weight.dtype, f"{node.name}.shares")
    sizes = g.add_op(
        ops.ReduceSumOp, [shares], {"axes": ints_attr([1]), "keepdims": bool_attr(True)}, f"{node.name}.sizes"
    )
    if mode == "max":
        masked = g.add_op(
            ops.WhereOp,
            [
                g.add_reshape(member, [bags, count, 1], f"{node.name}.member_3d"),
                g.add_reshape(rows, [1, *rows.shape], f"{node.name}.rows_3d"),
                node.scalar(-math.inf, weight.dtype),
            ],
            None,
            f"{node.name}.masked",
        )
        props = {"axes": ints_attr([1]), "keepdims": bool_attr(False)}
        largest = g.add_op(ops.ReduceMaxOp, [masked], props, f"{node.name}.largest")
        empty = g.add_op(ops.EqualOp, [sizes, node.scalar(0, weight.dtype)], None, f"{node.name}.empty")
        return [
            g.add_op(ops.WhereOp, [empty, node.scalar(0, weight.dtype), largest], None, node.name),
            None,
            None,
            None,
        ]
    if sample_weights is not None:
        shares = g.add_mul(shares, sample_weights, f"{node.name}.weighted")
    total = g.add_matmul(shares, rows, node.name if mode == "sum" else f"{node.name}.sum")
    if mode == "sum":
        return [total, None, None, None]
    at_least_one = g.add_op(ops.MaxOp, [sizes, node.scalar(1, weight.dtype)], None, f"{node.name}.count")
    return [g.add_div(total, at_least_one, node.name), None, None, None]


def _pick(g: Graph, node: Node, offsets: Tensor, picked: np.ndarray, what: str) -> Tensor:
    """`offsets[picked]`, of the shape of `picked`."""
    index = g.add_constant(picked.astype(np.int64), f"{node.name}.{what}_index")
    return g.add_op(ops.GatherOp, [offsets, index], {"axis": int_attr(0)}, f"{node.name}.{what}")


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
    "aten.topk.default": _top_k,
    "aten.sort.default": _top_k,
    "aten.gather.default": _gather,
    "aten.index.Tensor": _index,
    "aten.index_put.default": _index_put,
    "aten.scatter.src": _scatter,
    "aten.scatter.value": _scatter,
    "aten.scatter_add.default": _scatter,
    "aten.scatter_reduce.two": _scatter,
    "aten.slice_scatter.default": _slice_scatter,
    "aten.select_scatter.default": _slice_scatter,
    "aten.copy.default": _copy,
    "aten.diagonal.default": _diagonal,
    "aten.one_hot.default": _one_hot,
    "aten._embedding_bag.default": _embedding_bag,
    "aten._embedding_bag_forward_only.default": _embedding_bag,
    "aten.arange.default": _arange,
    "aten.arange.start": _arange,
    "aten.arange.start_step": _arange,
}
