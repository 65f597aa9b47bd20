"""Converters of TensorFlow's indexing ops: gathers, scatters, one-hot, arg-max and top-k,
diagonals and bands, and roll.

Scatters are ONNX's ScatterND (ScatterNd sums duplicate indices into zeros, as TensorFlow does);
diagonals of the last two axes are gathers and selects against an identity mask, for the main
diagonal (k = 0), the one `tf.linalg.diag`, `diag_part`, `set_diag` and `tf.eye` use.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node, add_slice, static_dims, transpose


def _scatter_nd(imp: Importer, node: Node) -> list[Tensor]:
    """ScatterNd(indices, updates, shape): the updates summed into zeros of `shape`."""
    indices, updates = node.inputs[:2]
    shape = node.ints(2)
    zeros = imp.add_constant(f"{node.name}.zeros", np.zeros(shape, dtype=updates.dtype))
    props = {"reduction": StringAttr("add")}
    return [imp.g.add_op(ops.ScatterNDOp, [zeros, indices, updates], props, node.name)]


def _tensor_scatter(reduction: str) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        """TensorScatterUpdate (and its Add, Max, Min forms)(tensor, indices, updates)."""
        props = {"reduction": StringAttr(reduction)}
        return [imp.g.add_op(ops.ScatterNDOp, node.inputs[:3], props, node.name)]

    return convert


def _roll(imp: Importer, node: Node) -> list[Tensor]:
    """Roll(input, shift, axis): per axis, the last `shift` cells moved to the front."""
    x = node.inputs[0]
    dims = static_dims(node, x)
    shifts, axes = node.ints(1), node.ints(2)
    if len(shifts) != len(axes):
        raise node.invalid(f"shift {shifts} and axis {axes} differ in length")
    total: dict[int, int] = {}
    for shift, axis in zip(shifts, axes, strict=True):
        axis %= len(dims)
        total[axis] = total.get(axis, 0) + shift
    for axis, shift in total.items():
        cut = dims[axis] - shift % dims[axis] if dims[axis] else 0
        if cut in (0, dims[axis]):
            continue
        tail = add_slice(imp, f"{node.name}.tail{axis}", x, [cut], [dims[axis]], [axis], [1])
        head = add_slice(imp, f"{node.name}.head{axis}", x, [0], [cut], [axis], [1])
        x = imp.g.add_concat([tail, head], axis, f"{node.name}.axis{axis}")
    return [x]


def _arg_reduce(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        x = node.inputs[0]
        axis = int(node.value(1).reshape(()))
        props = {"axis": int_attr(axis), "keepdims": bool_attr(False), "select_last_index": bool_attr(False)}
        y = imp.g.add_op(op_class, [x], props, node.name)
        dtype = node.dtype("output_type") if "output_type" in node.proto.attr else "int64"
        return [y if y.dtype == dtype else imp.g.add_cast(y, dtype, f"{node.name}.cast")]

    return convert


def _top_k(imp: Importer, node: Node) -> list[Tensor]:
    """The k largest along the last axis, sorted (an unsorted TopKV2 may return them in any
    order, so sorted is one of its answers); indices in the op's index_type (int32 by default)."""
    k = int(node.value(1).reshape(()))
    props = {"k": int_attr(k), "axis": int_attr(-1), "largest": bool_attr(True), "sorted": bool_attr(True)}
    values, indices = imp.g.add_op_results(ops.TopKOp, [node.inputs[0]], props, node.name)
    dtype = node.dtype("index_type") if "index_type" in node.proto.attr else "int32"
    if indices.dtype != dtype:
        indices = imp.g.add_cast(indices, dtype, f"{node.name}.indices")
    return [values, indices]


def _gather_nd(imp: Importer, node: Node) -> list[Tensor]:
    """The slices the last axis of `indices` addresses (ONNX GatherND with batch_dims 0)."""
    return [imp.g.add_op(ops.GatherNDOp, node.inputs[:2], {"batch_dims": int_attr(0)}, node.name)]


def _matrix_band_part(imp: Importer, node: Node) -> list[Tensor]:
    """Keeps the band of `num_lower` diagonals below and `num_upper` above the main one of the
    last two axes (a negative count keeps the whole triangle): two triangle masks."""
    y = node.inputs[0]
    lower, upper = (int(node.value(i).reshape(())) for i in (1, 2))
    if lower >= 0:
        props = {"upper": bool_attr(True), "k": int_attr(-lower)}
        y = imp.g.add_op(ops.TriluOp, [y], props, f"{node.name}.lower" if upper >= 0 else node.name)
    if upper >= 0:
        y = imp.g.add_op(ops.TriluOp, [y], {"upper": bool_attr(False), "k": int_attr(upper)}, node.name)
    return [y]


def _gather(imp: Importer, node: Node) -> list[Tensor]:
    params, indices = node.inputs[:2]
    axis = int(node.value(2).reshape(())) % len(params.shape)
    batch = int(node.attr("batch_dims", 0)) % (len(indices.shape) + 1) if indices.shape else 0
    if not batch:
        return [imp.g.add_op(ops.GatherOp, [params, indices], {"axis": int_attr(axis)}, node.name)]
    return [_batched_gather(imp, node, params, indices, axis, batch)]


def _batched_gather(
    imp: Importer, node: Node, params: Tensor, indices: Tensor, axis: int, batch: int
) -> Tensor:
    """Gather with `batch` leading axes shared by params and indices: GatherND over indices with
    a last axis of one, on params whose gathered axis is moved right after the batch axes; the
    axes between them are moved back before the indices' own."""
    if axis < batch:
        raise node.invalid(f"batch_dims {batch} exceeds axis {axis}")
    rank = len(params.shape)
    between = list(range(batch, axis))
    perm = [*range(batch), axis, *between, *range(axis + 1, rank)]
    moved = transpose(imp, params, perm, f"{node.name}.params") if between else params
    column = imp.g.add_reshape(indices, [*indices.shape, 1], f"{node.name}.indices")
    props = {"batch_dims": int_attr(batch)}
    name = f"{node.name}.gather" if between else node.name
    gathered = imp.g.add_op(ops.GatherNDOp, [moved, column], props, name)
    if not between:
        return gathered
    own = len(indices.shape) - batch
    # gathered: batch, indices' own axes, the axes between, the rest; TensorFlow puts `between` first.
    order = [
        *range(batch),
        *range(batch + own, batch + own + len(between)),
        *range(batch, batch + own),
        *range(batch + own + len(between), len(gathered.shape)),
    ]
    return transpose(imp, gathered, order, node.name)


def _one_hot(imp: Importer, node: Node) -> list[Tensor]:
    indices, _, on, off = node.inputs
    values = imp.g.add_concat(
        [imp.g.add_reshape(t, [1], f"{node.name}.{what}") for t, what in ((off, "off"), (on, "on"))],
        0,
        f"{node.name}.values",
    )
    props = {"depth": int_attr(int(node.value(1).reshape(()))), "axis": int_attr(int(node.attr("axis", -1)))}
    return [imp.g.add_op(ops.OneHotOp, [indices, values], props, node.name)]


def _diag_part(imp: Importer, node: Node) -> list[Tensor]:
    """MatrixDiagPartV3(input, k, padding_value): the main diagonal of the last two axes."""
    x = node.inputs[0]
    _main_diagonal_only(node)
    dims = static_dims(node, x)
    rows, columns = dims[-2:]
    flat = imp.g.add_reshape(x, [*dims[:-2], rows * columns], f"{node.name}.flat")
    positions = np.arange(min(rows, columns), dtype=np.int64) * (columns + 1)
    index = imp.add_constant(f"{node.name}.positions", positions)
    return [imp.g.add_op(ops.GatherOp, [flat, index], {"axis": int_attr(-1)}, node.name)]


def _diag(imp: Importer, node: Node) -> list[Tensor]:
    """MatrixDiagV3(diagonal, k, num_rows, num_cols, padding_value): a matrix holding the
    diagonal on its main diagonal and the padding value elsewhere."""
    diagonal = node.inputs[0]
    _main_diagonal_only(node)
    length = static_dims(node, diagonal)[-1]
    rows, columns = (int(node.value(i).reshape(())) for i in (2, 3))
    rows = length if rows < 0 else rows
    columns = length if columns < 0 else columns
    if min(rows, columns) != length:
        raise node.invalid(f"a diagonal of {length} cells does not fit a {rows}x{columns} matrix")
    padding = node.inputs[4]
    return [_on_diagonal(imp, node, diagonal, padding, rows, columns)]


def _set_diag(imp: Importer, node: Node) -> list[Tensor]:
    """MatrixSetDiagV3(input, diagonal, k): the input with its main diagonal replaced."""
    x, diagonal = node.inputs[:2]
    _main_diagonal_only(node, 2)
    rows, columns = static_dims(node, x)[-2:]
    return [_on_diagonal(imp, node, diagonal, x, rows, columns)]


def _on_diagonal(
    imp: Importer, node: Node, diagonal: Tensor, elsewhere: Tensor, rows: int, columns: int
) -> Tensor:
    """The diagonal's cells at (i, i) of a rows x columns matrix, `elsewhere` at the others."""
    length = min(rows, columns)
    cells = imp.g.add_reshape(diagonal, [*diagonal.shape[:-1], 1, length], f"{node.name}.row")
    if columns > length:
        rank = len(cells.shape)
        pads = [0] * (2 * rank)
        pads[2 * rank - 1] = columns - length
        props = {"pads": ints_attr(pads), "mode": StringAttr("constant")}
        cells = imp.g.add_op(ops.PadOp, [cells], props, f"{node.name}.padded")
    mask = imp.add_constant(f"{node.name}.mask", np.eye(rows, columns, dtype=bool))
    return imp.g.add_op(ops.WhereOp, [mask, cells, elsewhere], None, node.name)


def _main_diagonal_only(node: Node, index: int = 1) -> None:
    """Refuses a diagonal other than the main one (`k`, input `index`, other than 0)."""
    k = node.value(index).reshape(-1)
    if k.size != 1 or int(k[0]) != 0:
        raise node.fail(f"diagonals k = {[int(v) for v in k]} are not supported (the main one, k = 0, is)")


CONVERTERS: dict[str, Converter] = {
    "ArgMax": _arg_reduce(ops.ArgMaxOp),
    "ArgMin": _arg_reduce(ops.ArgMinOp),
    "TopKV2": _top_k,
    "GatherNd": _gather_nd,
    "MatrixBandPart": _matrix_band_part,
    "GatherV2": _gather,
    "OneHot": _one_hot,
    "ScatterNd": _scatter_nd,
    "TensorScatterUpdate": _tensor_scatter("none"),
    "TensorScatterAdd": _tensor_scatter("add"),
    "TensorScatterMax": _tensor_scatter("max"),
    "TensorScatterMin": _tensor_scatter("min"),
    "Roll": _roll,
    "MatrixDiagPartV3": _diag_part,
    "MatrixDiagV3": _diag,
    "MatrixSetDiagV3": _set_diag,
}
