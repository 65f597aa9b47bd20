"""The converter of `aten.lstm.input` (nn.LSTM) into `ascend.graph.lstm`, one op per layer.

The graph op follows ONNX's LSTM: gates in the order input, output, forget, cell (torch orders
them input, forget, cell, output), one bias of both halves `[W_b, R_b]`, time-major input and
results `Y` of shape (seq, directions, batch, hidden). A layer's input is the previous layer's
`Y` with the directions joined along the features, as torch feeds it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX, StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, ints_attr
from ge.graph import Graph, Tensor

from .importer import Converter, Node

ONNX_GATE_ORDER = (0, 3, 1, 2)
"""Torch's gate chunks (i, f, g, o) in the graph op's order (i, o, f, c)."""


def _lstm(g: Graph, node: Node) -> list[Tensor]:
    """Dropout between layers (training) and projections (proj_size) are refused."""
    x, (h0, c0), params = node.arg(0, "input"), node.arg(1, "hx"), list(node.arg(2, "params"))
    has_biases, layers, dropout = node.arg(3, "has_biases"), node.arg(4, "num_layers"), node.arg(5, "dropout")
    train, bidirectional, batch_first = (
        node.arg(6, "train"),
        node.arg(7, "bidirectional"),
        node.arg(8, "batch_first"),
    )
    if train and dropout:
        raise node.fail("dropout between layers (training) is not supported")
    dirs = 2 if bidirectional else 1
    per_direction = 4 if has_biases else 2
    if len(params) != layers * dirs * per_direction:
        raise node.fail("an LSTM with projections (proj_size > 0) is not supported")
    if batch_first:
        x = g.add_transpose(x, [1, 0, 2], f"{node.name}.sequence_first")
    seq, batch = x.shape[:2]
    if DYNAMIC_INDEX in (seq, batch):
        raise node.fail("an LSTM over a symbolic sequence length or batch is not supported")
    hidden = h0.shape[-1]
    lengths = g.add_splat(seq, [batch], "int32", f"{node.name}.sequence_lens")
    peepholes = g.add_splat(0.0, [dirs, 3 * hidden], x.dtype, f"{node.name}.peepholes")
    states_h, states_c = [], []
    for layer in range(layers):
        name = f"{node.name}.layer{layer}"
        weights, recurrences, biases = [], [], []
        for d in range(dirs):
            first = (layer * dirs + d) * per_direction
            w_ih, w_hh = params[first], params[first + 1]
            weights.append(_reordered(g, w_ih, hidden, f"{name}.W{d}"))
            recurrences.append(_reordered(g, w_hh, hidden, f"{name}.R{d}"))
            if has_biases:
                both = [_reordered(g, params[first + i], hidden, f"{name}.B{d}_{i}") for i in (2, 3)]
                biases.append(g.add_concat(both, 0, f"{name}.B{d}"))
            else:
                biases.append(g.add_splat(0.0, [8 * hidden], x.dtype, f"{name}.B{d}"))
        operands = [
            _stacked(g, weights, f"{name}.W"),
            _stacked(g, recurrences, f"{name}.R"),
            _stacked(g, biases, f"{name}.B"),
            lengths,
            _directions(g, h0, layer, dirs, f"{name}.initial_h"),
            _directions(g, c0, layer, dirs, f"{name}.initial_c"),
            peepholes,
        ]
        props = {
            "direction": StringAttr("bidirectional" if bidirectional else "forward"),
            "input_forget": bool_attr(False),
        }
        y, h, c = g.add_op_results(ops.LSTMOp, [x, *operands], props, name)
        states_h.append(h)
        states_c.append(c)
        # (seq, dirs, batch, hidden) -> (seq, batch, dirs * hidden), the next layer's input.
        y = g.add_transpose(y, [0, 2, 1, 3], f"{name}.directions_last")
        x = g.add_reshape(y, [seq, batch, dirs * hidden], f"{name}.output")
    if batch_first:
        x = g.add_transpose(x, [1, 0, 2], f"{node.name}.batch_first")
    h_n = states_h[0] if layers == 1 else g.add_concat(states_h, 0, f"{node.name}.h_n")
    c_n = states_c[0] if layers == 1 else g.add_concat(states_c, 0, f"{node.name}.c_n")
    return [x, h_n, c_n]


def _reordered(g: Graph, tensor: Tensor, hidden: int, name: str) -> Tensor:
    """A weight or bias with its four gate chunks (along axis 0) in the graph op's order."""
    chunks = [
        g.add_op(
            ops.SliceOp,
            [tensor],
            {
                "starts": ints_attr([k * hidden]),
                "ends": ints_attr([(k + 1) * hidden]),
                "axes": ints_attr([0]),
            },
            f"{name}.gate{k}",
        )
        for k in ONNX_GATE_ORDER
    ]
    return g.add_concat(chunks, 0, name)


def _stacked(g: Graph, tensors: list[Tensor], name: str) -> Tensor:
    """One tensor per direction, stacked along a new leading axis."""
    shaped = [g.add_reshape(t, [1, *t.shape], f"{name}{i}") for i, t in enumerate(tensors)]
    return shaped[0] if len(shaped) == 1 else g.add_concat(shaped, 0, name)


def _directions(g: Graph, state: Tensor, layer: int, dirs: int, name: str) -> Tensor:
    """The initial states of one layer's directions: rows layer*dirs onwards of h0 or c0."""
    props = {
        "starts": ints_attr([layer * dirs]),
        "ends": ints_attr([(layer + 1) * dirs]),
        "axes": ints_attr([0]),
    }
    return g.add_op(ops.SliceOp, [state], props, name)


CONVERTERS: dict[str, Converter] = {"aten.lstm.input": _lstm}
