"""The converter of MindSpore's LSTM primitive (nn.LSTM on CPU) into `ascend.graph.lstm`.

nn.LSTM joins a layer's parameters into one flat weight `[N, 1, 1]`: the input weights
`W_ih` (4H x I), the recurrent weights `W_hh` (4H x H) and, with biases, their sum `b_ih + b_hh`
(4H), gates in torch's order i, f, g, o. The graph op follows ONNX (gates i, o, f, c, biases
`[W_b, R_b]`, results of shape (seq, directions, batch, hidden)), so the flat weight is sliced and
its gate blocks reordered in the graph, where constant folding computes them once.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, ints_attr
from ge.graph import Tensor

from .importer import Converter, Importer, Node, Value

ONNX_GATE_ORDER = (0, 3, 1, 2)
"""Torch's (and MindSpore's) gate blocks i, f, g, o in the graph op's order i, o, f, c."""


def _lstm(imp: Importer, node: Node) -> Value:
    """LSTM(x, h, c, w) {input_size, hidden_size, num_layers, has_bias, bidirectional}: one layer,
    one direction, time-major x; returns (y, h_n, c_n) and MindSpore's two workspace outputs as None."""
    x, h0, c0, flat = (node.tensor(i) for i in range(4))
    layers, bidirectional = int(node.attr("num_layers", 1)), bool(node.attr("bidirectional", False))
    if layers != 1 or bidirectional:
        raise node.fail("an LSTM primitive of several layers or both directions is not supported")
    if int(node.attr("proj_size", 0)):
        raise node.fail("an LSTM with projections (proj_size > 0) is not supported")
    if len(x.shape) != 3 or any(d < 0 for d in x.shape):
        raise node.fail(f"needs a static (seq, batch, input) input, got {list(x.shape)}")
    seq, batch, features = x.shape
    hidden = int(node.attr("hidden_size", h0.shape[-1]))
    gates = 4 * hidden
    sizes = [gates * features, gates * hidden] + ([gates] if node.attr("has_bias", True) else [])
    total = flat.shape[0] if flat.shape else -1
    if total != sum(sizes):
        raise node.invalid(f"the flat weight holds {total} values, {sum(sizes)} expected for {sizes}")
    flat = imp.g.add_reshape(flat, [total], f"{node.name}.flat")
    parts, start = [], 0
    for index, size in enumerate(sizes):
        parts.append(_slice(imp, flat, start, start + size, f"{node.name}.part{index}"))
        start += size
    weight = _reordered(
        imp, imp.g.add_reshape(parts[0], [gates, features], f"{node.name}.w_ih"), hidden, f"{node.name}.W"
    )
    recurrence = _reordered(
        imp, imp.g.add_reshape(parts[1], [gates, hidden], f"{node.name}.w_hh"), hidden, f"{node.name}.R"
    )
    if len(parts) > 2:
        bias = _reordered(imp, parts[2], hidden, f"{node.name}.b")
        zeros = imp.g.add_splat(0.0, [gates], x.dtype, f"{node.name}.r_b")
        bias = imp.g.add_concat([bias, zeros], 0, f"{node.name}.B")
    else:
        bias = imp.g.add_splat(0.0, [2 * gates], x.dtype, f"{node.name}.B")
    operands = [
        x,
        imp.g.add_reshape(weight, [1, gates, features], f"{node.name}.W1"),
        imp.g.add_reshape(recurrence, [1, gates, hidden], f"{node.name}.R1"),
        imp.g.add_reshape(bias, [1, 2 * gates], f"{node.name}.B1"),
        imp.g.add_splat(seq, [batch], "int32", f"{node.name}.sequence_lens"),
        h0,
        c0,
        imp.g.add_splat(0.0, [1, 3 * hidden], x.dtype, f"{node.name}.peepholes"),
    ]
    props = {"direction": StringAttr("forward"), "input_forget": bool_attr(False)}
    y, h, c = imp.g.add_op_results(ops.LSTMOp, operands, props, node.name)
    return imp.g.add_reshape(y, [seq, batch, hidden], f"{node.name}.y"), h, c, None, None


def _reordered(imp: Importer, tensor: Tensor, hidden: int, name: str) -> Tensor:
    """The four gate blocks (along axis 0) in the graph op's order."""
    blocks = [_slice(imp, tensor, k * hidden, (k + 1) * hidden, f"{name}.gate{k}") for k in ONNX_GATE_ORDER]
    return imp.g.add_concat(blocks, 0, name)


def _slice(imp: Importer, tensor: Tensor, start: int, end: int, name: str) -> Tensor:
    props = {"starts": ints_attr([start]), "ends": ints_attr([end]), "axes": ints_attr([0])}
    return imp.g.add_op(ops.SliceOp, [tensor], props, name)


CONVERTERS: dict[str, Converter] = {"LSTM": _lstm}
