"""Converters of TensorFlow's scatter, diagonal and roll ops.

Scatters are ONNX's ScatterND (ScatterNd sums duplicate indices into zeros, as TensorFlow does);
diagonals of the last two axes are gathers and selects against an identity mask, for the main
diagonal (k = 0), the one `tf.linalg.diag`, `diag_part`, `set_diag` and `tf.eye` use.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import int_attr, ints_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node, static_dims


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
        tail = _slice(imp, f"{node.name}.tail{axis}", x, cut, dims[axis], axis)
        head = _slice(imp, f"{node.name}.head{axis}", x, 0, cut, axis)
        x = imp.g.add_concat([tail, head], axis, f"{node.name}.axis{axis}")
    return [x]


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


def _slice(imp: Importer, name: str, x: Tensor, start: int, end: int, axis: int) -> Tensor:
    props = {
        "starts": ints_attr([start]),
        "ends": ints_attr([end]),
        "axes": ints_attr([axis]),
        "steps": ints_attr([1]),
    }
    return imp.g.add_op(ops.SliceOp, [x], props, name)


CONVERTERS: dict[str, Converter] = {
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
