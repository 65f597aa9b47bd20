"""Converters of ATen ops that move data or build tensors: views, permutations, slicing, joining,
padding, filled tensors, reductions and gathering rows (embedding).

ATen dims may be negative (counting from the end), as the graph ops' axes may. A size a view
takes from a symbolic dimension arrives as a `Symbolic`, which a reshape infers or copies.
"""

from __future__ import annotations

import math
from typing import Any, cast

from xdsl.dialects.builtin import DYNAMIC_INDEX, StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Graph, Tensor

from .importer import Converter, Node, Symbolic, along_one_axis, is_symbolic

INT64_MAX = 2**63 - 1


def _view(g: Graph, node: Node) -> Tensor:
    """`view`, `_unsafe_view` and `reshape`, to the shape the export recorded. One symbolic size
    is what the element count leaves; several must be the input's own, in order (the graph's
    reshape copies them), else the reshape is refused."""
    x, shape = node.arg(0, "self"), list(node.arg(1, "size"))
    if node.shape is not None:
        shape = list(node.shape)  # the export knows every size but the symbolic ones
    wanted = [d for d in shape if is_symbolic(d)]
    source = node.operand_shapes[0] if node.operand_shapes else None
    if len(wanted) > 1 and (source is None or wanted != [d for d in source if is_symbolic(d)]):
        shown = [str(d) for d in shape]
        raise node.fail(
            f"a reshape into [{', '.join(shown)}], several symbolic sizes that are not the input's "
            "own, is not supported"
        )
    return g.add_reshape(x, _reshape_target(shape), node.name)


def _permute(g: Graph, node: Node) -> Tensor:
    x = node.arg(0, "self")
    perm = [d % len(x.shape) for d in node.arg(1, "dims")]
    return g.add_transpose(x, perm, node.name)


def _transpose(g: Graph, node: Node) -> Tensor:
    """`transpose.int` swaps two dims; `t` transposes a matrix (a vector stays)."""
    x = node.arg(0, "self")
    rank = len(x.shape)
    if rank < 2:
        return x
    a, b = (
        (node.arg(1, "dim0") % rank, node.arg(2, "dim1") % rank)
        if node.target != "aten.t.default"
        else (0, 1)
    )
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return g.add_transpose(x, perm, node.name)


def _expand(g: Graph, node: Node) -> Tensor:
    """-1 (or a symbolic size) keeps the input's size; so does a size of 1 in the graph op, which
    stands for the input's symbolic size here."""
    x, sizes = node.arg(0, "self"), list(node.arg(1, "size"))
    lead = len(sizes) - len(x.shape)
    target = []
    for i, size in enumerate(sizes):
        own = x.shape[i - lead] if i >= lead else 1
        if is_symbolic(size) and own != DYNAMIC_INDEX:  # e.g. a static 1 grown to a batch
            raise node.fail(f"expanding axis {i} of size {own} to the symbolic size {size} is not supported")
        kept = size == -1 or is_symbolic(size)
        target.append((1 if own == DYNAMIC_INDEX else own) if kept else size)
    return g.add_op(ops.ExpandOp, [x], {"shape": ints_attr(target)}, node.name)


def _cat(g: Graph, node: Node) -> Tensor:
    """Empty 1-D tensors (which ATen's cat skips) are left out."""
    tensors = [t for t in node.arg(0, "tensors") if t.shape != (0,)]
    if len(tensors) == 1:
        return tensors[0]
    dtype = node.dtype or tensors[0].dtype
    tensors = [node.tensor(t, dtype) for t in tensors]
    return g.add_concat(tensors, node.arg(1, "dim", 0), node.name)


def _slice(g: Graph, node: Node) -> Tensor:
    x = node.arg(0, "self")
    dim, start, end, step = (
        node.arg(1, "dim", 0),
        node.arg(2, "start"),
        node.arg(3, "end"),
        node.arg(4, "step", 1),
    )
    start = 0 if start is None else start
    axis = dim % len(x.shape)
    # A symbolic end is taken as the axis' own extent (`x[:, : x.shape[1]]`); a static axis cut
    # to a run-time length, or a run-time start, has bounds no static slice holds.
    recorded = node.operand_shapes[0] if node.operand_shapes else None
    extent = recorded[axis] if recorded is not None else None
    if is_symbolic(start, step) or (is_symbolic(end) and end != extent):
        size = "?" if x.shape[axis] == DYNAMIC_INDEX else x.shape[axis]
        raise node.fail(
            f"a slice of axis {axis} (size {extent if is_symbolic(extent) else size}) ending at {end}, "
            "a symbolic size other than the axis' own, is not supported; pass the sliced values as "
            "an input (e.g. position ids) instead"
        )
    end = INT64_MAX if end is None or is_symbolic(end) else min(end, INT64_MAX)
    props = {
        "starts": ints_attr([start]),
        "ends": ints_attr([end]),
        "axes": ints_attr([axis]),
        "steps": ints_attr([step]),
    }
    return g.add_op(ops.SliceOp, [x], props, node.name)


def _select(g: Graph, node: Node) -> Tensor:
    """One index along `dim`: a slice of one, then the dim dropped."""
    x, dim, index = (
        node.arg(0, "self"),
        node.arg(1, "dim") % len(node.arg(0, "self").shape),
        node.arg(2, "index"),
    )
    if is_symbolic(index):
        raise node.fail(f"selecting index {index}, a symbolic size, is not supported")
    end = INT64_MAX if index == -1 else index + 1
    props = {"starts": ints_attr([index]), "ends": ints_attr([end]), "axes": ints_attr([dim])}
    one = g.add_op(ops.SliceOp, [x], props, f"{node.name}.slice")
    return g.add_reshape(one, _reshape_target([d for i, d in enumerate(one.shape) if i != dim]), node.name)


def _unsqueeze(g: Graph, node: Node) -> Tensor:
    x = node.arg(0, "self")
    dim = node.arg(1, "dim") % (len(x.shape) + 1)
    shape = list(x.shape)
    shape.insert(dim, 1)
    return g.add_reshape(x, _reshape_target(shape), node.name)


def _squeeze(g: Graph, node: Node) -> Tensor:
    """`squeeze.dim`, `squeeze.dims` and `squeeze.default`: only dims of size 1 go."""
    x = node.arg(0, "self")
    rank = len(x.shape)
    given = node.arg(1, "dim")
    dims = range(rank) if given is None else [given] if isinstance(given, int) else given
    drop = {d % rank for d in dims if x.shape[d % rank] == 1} if rank else set()
    return g.add_reshape(x, _reshape_target([d for i, d in enumerate(x.shape) if i not in drop]), node.name)


def _split(g: Graph, node: Node) -> list[Tensor]:
    """`split.Tensor` (chunks of one size, the last maybe smaller) and `split_with_sizes`."""
    x, size, dim = node.arg(0, "self"), node.arg(1, "split_size"), node.arg(2, "dim", 0)
    axis = dim % len(x.shape)
    total = x.shape[axis]
    if total == DYNAMIC_INDEX or is_symbolic(*(size if isinstance(size, list | tuple) else [size])):
        raise node.fail("splitting a symbolic dimension, or into symbolic sizes, is not supported")
    sizes = (
        list(size)
        if isinstance(size, list | tuple)
        else [min(size, total - i) for i in range(0, total, size)]
    )
    props = {"axis": int_attr(axis), "sizes": ints_attr(sizes)}
    return g.add_op_results(ops.SplitOp, [x], props, node.name)


def _full(g: Graph, node: Node) -> Tensor:
    """`full` and `scalar_tensor`: a constant of the export's dtype."""
    if node.target == "aten.scalar_tensor.default":
        size, value = [], node.arg(0, "s")
    else:
        size, value = list(node.arg(0, "size")), node.arg(1, "fill_value")
    if is_symbolic(*size):
        raise node.fail("a filled tensor of a symbolic size is not supported")
    dtype = node.dtype or "float32"
    value = float(value) if "float" in dtype else bool(value) if dtype == "bool" else int(value)
    return g.add_splat(value, size, dtype, node.name)


GRAPH_PAD_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
"""The graph's pad mode of each of torch's."""


def _pad(g: Graph, node: Node) -> Tensor:
    """`constant_pad_nd`, and `pad` (F.pad) in each of its modes: constant, reflect, replicate
    and circular. ATen lists (before, after) pairs from the last dim backwards."""
    x, pad = node.arg(0, "self"), list(node.arg(1, "pad"))
    mode = node.arg(2, "mode", "constant") if node.target == "aten.pad.default" else "constant"
    value = node.arg(3 if node.target == "aten.pad.default" else 2, "value")
    if mode not in GRAPH_PAD_MODE:
        raise node.fail(f"padding mode '{mode}' is not supported ({', '.join(GRAPH_PAD_MODE)} are)")
    if is_symbolic(*pad):
        raise node.fail("a padding of a symbolic size is not supported")
    rank = len(x.shape)
    before, after = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        before[rank - 1 - i], after[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    props = {"pads": ints_attr(before + after), "mode": StringAttr(GRAPH_PAD_MODE[mode])}
    if mode != "constant":
        return g.add_op(ops.PadOp, [x], props, node.name)
    return g.add_op(ops.PadOp, [x, node.scalar(value or 0, x.dtype)], props, node.name)


def _reduce(op_class: type) -> Converter:
    """`mean.dim`, `sum.dim_IntList`, `amax`, `amin`, `prod.dim_int`, and the overloads without
    a dim (`mean.default`, `max.default`, ...): no dims (or an empty list) reduce them all."""

    def convert(g: Graph, node: Node) -> Tensor:
        x = node.arg(0, "self")
        axes = _axes(x, node.arg(1, "dim"))
        keep = node.arg(2, "keepdim", False)
        x = node.tensor(x, node.dtype)
        return g.add_op(op_class, [x], {"axes": ints_attr(axes), "keepdims": bool_attr(keep)}, node.name)

    return along_one_axis(convert)


def _any_or_all(op_class: type) -> Converter:
    """`any` and `all` (of every element, along a dim or dims): whether any (every) element is
    nonzero, the largest (smallest) of the flags; integer-typed for uint8, as ATen gives it."""

    def convert(g: Graph, node: Node) -> Tensor:
        flags = node.tensor(node.arg(0, "self"), "bool")
        props = {
            "axes": ints_attr(_axes(flags, node.arg(1, "dim"))),
            "keepdims": bool_attr(bool(node.arg(2, "keepdim", False))),
        }
        dtype = node.dtype or "bool"
        result = g.add_op(op_class, [flags], props, node.name if dtype == "bool" else f"{node.name}.flags")
        return result if dtype == "bool" else g.add_cast(result, dtype, node.name)

    return along_one_axis(convert)


def _axes(x: Tensor, dims: Any) -> list[int]:
    """ATen's `dim` argument as axes: none (or an empty list) is every axis."""
    rank = len(x.shape)
    if not dims:
        return list(range(rank))
    return sorted({d % rank for d in ([dims] if isinstance(dims, int) else dims)})  # rms_norm gives [2, 1]


@along_one_axis
def _variance(g: Graph, node: Node) -> Tensor:
    """`var.correction`: the mean squared deviation over `dim`, divided by the count less
    `correction` (1 unless given: Bessel's); `std` is its square root."""
    x = node.tensor(node.arg(0, "self"), node.dtype)
    axes = _axes(x, node.arg(1, "dim"))
    correction = node.kwargs.get("correction")
    correction = 1 if correction is None else correction
    keep = node.kwargs.get("keepdim", False)
    sizes = [x.shape[a] for a in axes]
    if DYNAMIC_INDEX in sizes:
        raise node.fail("a variance over a symbolic dimension is not supported")
    _, squares = squared_deviations(g, x, axes, node.name)
    props = {"axes": ints_attr(axes), "keepdims": bool_attr(bool(keep))}
    total = g.add_op(ops.ReduceSumOp, [squares], props, f"{node.name}.sum")
    return g.add_div(total, node.scalar(max(math.prod(sizes) - correction, 0)), node.name)


def squared_deviations(g: Graph, x: Tensor, axes: list[int], name: str) -> tuple[Tensor, Tensor]:
    """`x - mean(x)` over `axes` and its squares, which a variance sums."""
    mean = g.add_op(
        ops.ReduceMeanOp, [x], {"axes": ints_attr(axes), "keepdims": bool_attr(True)}, f"{name}.mean"
    )
    deviation = g.add_sub(x, mean, f"{name}.deviation")
    return deviation, g.add_mul(deviation, deviation, f"{name}.squares")


@along_one_axis
def _vector_norm(g: Graph, node: Node) -> Tensor:
    """`linalg_vector_norm` of any order over `dim`."""
    x, order = node.arg(0, "self"), node.arg(1, "ord", 2)
    axes, keep = _axes(x, node.arg(2, "dim")), bool(node.arg(3, "keepdim"))
    return vector_norm(g, node, node.tensor(x, node.dtype), order, axes, keep, node.name)


def vector_norm(
    g: Graph, node: Node, x: Tensor, order: float, axes: list[int], keep: bool, name: str
) -> Tensor:
    """The norm of `order` of `x` over `axes`: 1 and 2 one reduction, infinities the largest or
    smallest magnitude, 0 the count of nonzeros, others `sum(|x|^p)^(1/p)`."""
    props = {"axes": ints_attr(axes), "keepdims": bool_attr(keep)}
    if order in (1, 2):
        return g.add_op(ops.ReduceL1Op if order == 1 else ops.ReduceL2Op, [x], props, name)
    if order == 0:  # x != 0, as ATen counts: NaN is nonzero
        zero = g.add_op(ops.EqualOp, [x, node.scalar(0, x.dtype)], None, f"{name}.zero")
        nonzero = g.add_cast(g.add_op(ops.NotOp, [zero], None), x.dtype, f"{name}.nonzero")
        return g.add_op(ops.ReduceSumOp, [nonzero], props, name)
    size = g.add_op(ops.AbsOp, [x], None, f"{name}.abs")
    if order in (math.inf, -math.inf):
        return g.add_op(ops.ReduceMaxOp if order > 0 else ops.ReduceMinOp, [size], props, name)
    powers = g.add_op(ops.PowOp, [size, node.scalar(order, x.dtype)], None, f"{name}.powers")
    total = g.add_op(ops.ReduceSumOp, [powers], props, f"{name}.sum")
    return g.add_op(ops.PowOp, [total, node.scalar(1 / order, x.dtype)], None, name)


@along_one_axis
def _variance_and_mean(g: Graph, node: Node) -> list[Tensor]:
    """`var_mean.correction`: the variance as `var.correction` computes it, and the mean."""
    x = node.tensor(node.arg(0, "self"), node.dtype)
    props = {
        "axes": ints_attr(_axes(x, node.arg(1, "dim"))),
        "keepdims": bool_attr(bool(node.kwargs.get("keepdim", False))),
    }
    mean = g.add_op(ops.ReduceMeanOp, [x], props, f"{node.name}.mean")
    return [cast(Tensor, _variance(g, node)), mean]  # along_one_axis keeps a converter's tensor


def _repeat(g: Graph, node: Node) -> Tensor:
    """`repeat`: a tile, the input first given leading dims of 1 when `repeats` has more."""
    x, repeats = node.arg(0, "self"), list(node.arg(1, "repeats"))
    if is_symbolic(*repeats):
        raise node.fail("repeating a symbolic number of times is not supported")
    if len(repeats) > len(x.shape):
        ones = [1] * (len(repeats) - len(x.shape))
        x = g.add_reshape(x, _reshape_target([*ones, *x.shape]), f"{node.name}.ranked")
    return g.add_op(ops.TileOp, [x], {"repeats": ints_attr(repeats)}, node.name)


@along_one_axis
def _flip(g: Graph, node: Node) -> Tensor:
    """`flip`: each of `dims` read backwards (a slice of step -1)."""
    x = node.arg(0, "self")
    axes = sorted({d % len(x.shape) for d in node.arg(1, "dims")})
    props = {
        "starts": ints_attr([-1] * len(axes)),
        "ends": ints_attr([-INT64_MAX] * len(axes)),
        "axes": ints_attr(axes),
        "steps": ints_attr([-1] * len(axes)),
    }
    return g.add_op(ops.SliceOp, [x], props, node.name)


@along_one_axis
def _index_select(g: Graph, node: Node) -> Tensor:
    """Rows along `dim` picked by a 1-D index; a 0-d index picks one and keeps the dim (size 1),
    unlike a gather by a 0-d index."""
    x, dim, index = node.arg(0, "self"), node.arg(1, "dim"), node.arg(2, "index")
    if index.shape == ():
        index = g.add_reshape(index, [1], f"{node.name}.index")
    return g.add_op(ops.GatherOp, [x, index], {"axis": int_attr(dim % len(x.shape))}, node.name)


def _full_like(g: Graph, node: Node) -> Tensor:
    """`full_like`: a constant of the export's shape and dtype."""
    shape = node.static_shape("a filled tensor")
    dtype = node.dtype or "float32"
    value = node.arg(1, "fill_value")
    value = float(value) if "float" in dtype else bool(value) if dtype == "bool" else int(value)
    return g.add_splat(value, shape, dtype, node.name)


def _embedding(g: Graph, node: Node) -> Tensor:
    """Rows of the weight picked by the indices (padding_idx only matters to training)."""
    weight, indices = node.arg(0, "weight"), node.arg(1, "indices")
    return g.add_op(ops.GatherOp, [weight, indices], {"axis": int_attr(0)}, node.name)


def _sym_size(g: Graph, node: Node) -> int | Symbolic:
    """A size of a tensor: the number when the export knows it, else the `Symbolic` it recorded."""
    x, dim = node.arg(0, "self"), node.arg(1, "dim")
    if x.shape[dim] != DYNAMIC_INDEX:  # a graph type holds a symbolic size as DYNAMIC_INDEX
        return x.shape[dim]
    recorded = node.operand_shapes[0] if node.operand_shapes else None
    size = recorded[dim] if recorded is not None else None
    return size if isinstance(size, Symbolic) else Symbolic(f"{node.name}")


def _assertion(g: Graph, node: Node) -> None:
    """Checks the export adds (of metadata, of symbolic sizes), which the graph's types state."""
    return None


def _reshape_target(shape: list[int | Symbolic]) -> list[int]:
    """A reshape target from a shape with symbolic sizes: one may be inferred (-1); with more,
    they stay symbolic for `Graph.add_reshape` to pair with the input's. A graph shape's own
    symbolic sizes (DYNAMIC_INDEX) pass through."""
    unknown = sum(is_symbolic(d) for d in shape)
    return [(-1 if unknown == 1 else DYNAMIC_INDEX) if isinstance(d, Symbolic) else d for d in shape]


CONVERTERS: dict[str, Converter] = {
    "aten.view.default": _view,
    "aten._unsafe_view.default": _view,
    "aten.reshape.default": _view,
    "aten.permute.default": _permute,
    "aten.transpose.int": _transpose,
    "aten.t.default": _transpose,
    "aten.expand.default": _expand,
    "aten.cat.default": _cat,
    "aten.slice.Tensor": _slice,
    "aten.select.int": _select,
    "aten.unsqueeze.default": _unsqueeze,
    "aten.squeeze.dim": _squeeze,
    "aten.squeeze.dims": _squeeze,
    "aten.squeeze.default": _squeeze,
    "aten.split.Tensor": _split,
    "aten.split_with_sizes.default": _split,
    "aten.full.default": _full,
    "aten.scalar_tensor.default": _full,
    "aten.constant_pad_nd.default": _pad,
    "aten.pad.default": _pad,
    "aten.mean.dim": _reduce(ops.ReduceMeanOp),
    "aten.sum.dim_IntList": _reduce(ops.ReduceSumOp),
    "aten.amax.default": _reduce(ops.ReduceMaxOp),
    "aten.amin.default": _reduce(ops.ReduceMinOp),
    "aten.mean.default": _reduce(ops.ReduceMeanOp),
    "aten.sum.default": _reduce(ops.ReduceSumOp),
    "aten.max.default": _reduce(ops.ReduceMaxOp),
    "aten.min.default": _reduce(ops.ReduceMinOp),
    "aten.prod.default": _reduce(ops.ReduceProdOp),
    "aten.prod.dim_int": _reduce(ops.ReduceProdOp),
    "aten.any.default": _any_or_all(ops.ReduceMaxOp),
    "aten.any.dim": _any_or_all(ops.ReduceMaxOp),
    "aten.any.dims": _any_or_all(ops.ReduceMaxOp),
    "aten.all.default": _any_or_all(ops.ReduceMinOp),
    "aten.all.dim": _any_or_all(ops.ReduceMinOp),
    "aten.all.dims": _any_or_all(ops.ReduceMinOp),
    "aten.var.correction": _variance,
    "aten.var_mean.correction": _variance_and_mean,
    "aten.linalg_vector_norm.default": _vector_norm,
    "aten.repeat.default": _repeat,
    "aten.flip.default": _flip,
    "aten.index_select.default": _index_select,
    "aten.full_like.default": _full_like,
    "aten.embedding.default": _embedding,
    "aten.sym_size.int": _sym_size,
    "aten._assert_tensor_metadata.default": _assertion,
    "aten._assert_scalar.default": _assertion,
    "aten.sym_constrain_range_for_size.default": _assertion,
}
