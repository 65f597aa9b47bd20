"""The converter of `aten.lstm.input` (nn.LSTM) into `ascend.graph.lstm`, one op per layer.

The graph op follows ONNX's LSTM: gates in the order input, output, forget, cell (torch orders
them input, forget, cell, output), one bias of both halves `[W_b, R_b]`, time-major input and
results `Y` of shape (seq, directions, batch, hidden). A layer's input is the previous layer's
`Y` with the directions joined along the features, as torch feeds it.

An LSTM with projections (`proj_size`: h = W_hr (o * tanh(c)), smaller than the cell) has no
ONNX form, so it is unrolled over time into matrix products and gate functions, the input's
products for every step computed at once.
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
    """Dropout between layers (training) is refused."""
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
    projected = len(params) == layers * dirs * (per_direction + 1)
    if not projected and len(params) != layers * dirs * per_direction:
        raise node.fail(f"{len(params)} parameters do not make {layers} layers of {dirs} directions")
    if batch_first:
        x = g.add_transpose(x, [1, 0, 2], f"{node.name}.sequence_first")
    seq, batch = x.shape[:2]
    if DYNAMIC_INDEX in (seq, batch):
        raise node.fail("an LSTM over a symbolic sequence length or batch is not supported")
    if projected:
        x, h_n, c_n = _unrolled_lstm(g, node, x, h0, c0, params, layers, dirs, per_direction + 1)
        if batch_first:
            x = g.add_transpose(x, [1, 0, 2], f"{node.name}.batch_first")
        return [x, h_n, c_n]
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


def _unrolled_lstm(
    g: Graph,
    node: Node,
    x: Tensor,
    h0: Tensor,
    c0: Tensor,
    params: list[Tensor],
    layers: int,
    dirs: int,
    per_direction: int,
) -> tuple[Tensor, Tensor, Tensor]:
    """A projected LSTM over sequence-first `x`, step by step as torch defines it (gates i, f, g,
    o; `c = f c + i g`, `h = W_hr (o tanh(c))`): its output (seq, batch, dirs * proj) and final
    states h (layers * dirs, batch, proj) and c (layers * dirs, batch, hidden)."""
    seq, batch = x.shape[:2]
    hidden = c0.shape[-1]
    finals_h, finals_c = [], []
    for layer in range(layers):
        outputs = []
        for d in range(dirs):
            name, row = f"{node.name}.layer{layer}.direction{d}", layer * dirs + d
            w_ih, w_hh, *biases, w_hr = params[row * per_direction : (row + 1) * per_direction]
            # Every step's input product at once: (seq, batch, 4 hidden).
            inputs = g.add_matmul(x, g.add_transpose(w_ih, [1, 0], f"{name}.W_t"), f"{name}.inputs")
            if biases:
                bias = g.add_add(biases[0], biases[1], f"{name}.bias")  # b_ih + b_hh
                inputs = g.add_add(inputs, bias, f"{name}.inputs_biased")
            recurrence = g.add_transpose(w_hh, [1, 0], f"{name}.R_t")
            projection = g.add_transpose(w_hr, [1, 0], f"{name}.P_t")
            h = g.add_reshape(_rows(g, h0, row, row + 1, 0, f"{name}.h0"), list(h0.shape[1:]), f"{name}.h")
            c = g.add_reshape(_rows(g, c0, row, row + 1, 0, f"{name}.c0"), list(c0.shape[1:]), f"{name}.c")
            steps: list[Tensor] = [h] * seq
            for t in range(seq) if d == 0 else reversed(range(seq)):
                at = f"{name}.t{t}"
                step_input = _rows(g, inputs, t, t + 1, 0, f"{at}.input")
                step_input = g.add_reshape(step_input, [batch, 4 * hidden], f"{at}.input_2d")
                h, c = _projected_step(g, step_input, h, c, recurrence, projection, at)
                steps[t] = g.add_reshape(h, [1, *h.shape], f"{at}.y")
            outputs.append(g.add_concat(steps, 0, f"{name}.y"))
            finals_h.append(g.add_reshape(h, [1, *h.shape], f"{name}.h_n"))
            finals_c.append(g.add_reshape(c, [1, *c.shape], f"{name}.c_n"))
        x = outputs[0] if dirs == 1 else g.add_concat(outputs, 2, f"{node.name}.layer{layer}.output")
    h_n = finals_h[0] if len(finals_h) == 1 else g.add_concat(finals_h, 0, f"{node.name}.h_n")
    c_n = finals_c[0] if len(finals_c) == 1 else g.add_concat(finals_c, 0, f"{node.name}.c_n")
    return x, h_n, c_n


def _projected_step(
    g: Graph, step_input: Tensor, h: Tensor, c: Tensor, recurrence: Tensor, projection: Tensor, at: str
) -> tuple[Tensor, Tensor]:
    """One time step of a projected LSTM: the next h (batch, proj) and c (batch, hidden)."""
    hidden = c.shape[-1]
    gates = g.add_add(step_input, g.add_matmul(h, recurrence, f"{at}.recurrent"), f"{at}.gates")
    i, f, cell, o = (_rows(g, gates, k * hidden, (k + 1) * hidden, 1, f"{at}.gate{k}") for k in range(4))
    i, f, o = (g.add_op(ops.SigmoidOp, [v], None, f"{at}.{n}") for v, n in ((i, "i"), (f, "f"), (o, "o")))
    cell = g.add_op(ops.TanhOp, [cell], None, f"{at}.candidate")
    c = g.add_add(g.add_mul(f, c, f"{at}.kept"), g.add_mul(i, cell, f"{at}.written"), f"{at}.c")
    unprojected = g.add_mul(o, g.add_op(ops.TanhOp, [c], None, f"{at}.tanh_c"), f"{at}.h_full")
    return g.add_matmul(unprojected, projection, f"{at}.h"), c


def _rows(g: Graph, tensor: Tensor, start: int, end: int, axis: int, name: str) -> Tensor:
    """`tensor[start:end]` along `axis`."""
    props = {"starts": ints_attr([start]), "ends": ints_attr([end]), "axes": ints_attr([axis])}
    return g.add_op(ops.SliceOp, [tensor], props, name)


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
    return _rows(g, state, layer * dirs, (layer + 1) * dirs, 0, name)


CONVERTERS: dict[str, Converter] = {"aten.lstm.input": _lstm}
