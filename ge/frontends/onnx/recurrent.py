"""Converters of RNN, GRU and LSTM into `ascend.graph.rnn`, `gru` and `lstm`.

Missing optional inputs become constants (zero biases, states and peepholes; full sequence
lengths), `layout = 1` (batch first) becomes transposes around the op, and each activation gets
its alpha and beta resolved (given in order to the activations that take them, else ONNX's
defaults).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, StringAttr, f32
from xdsl.ir import Attribute

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr
from ge.dialects.graph.recurrent import ACTIVATIONS, DIRECTIONS
from ge.graph import Tensor

from .importer import Converter, Importer, Node

LAYERS = {
    "RNN": (ops.RNNOp, ("Tanh",)),
    "GRU": (ops.GRUOp, ("Sigmoid", "Tanh")),
    "LSTM": (ops.LSTMOp, ("Sigmoid", "Tanh", "Tanh")),
}

ALPHA = {
    "Affine": 1.0,
    "LeakyRelu": 0.01,
    "ThresholdedRelu": 1.0,
    "ScaledTanh": 1.0,
    "HardSigmoid": 0.2,
    "Elu": 1.0,
}
BETA = {"Affine": 0.0, "ScaledTanh": 1.0, "HardSigmoid": 0.5}
"""The activations that take an alpha or a beta, and the defaults of their ONNX operators."""


def _recurrent(imp: Importer, node: Node) -> list[Tensor]:
    """activation_alpha and activation_beta must hold one value for each activation that takes
    one (otherwise which value goes where is ambiguous); defaults for missing optional inputs
    need a static batch and sequence length.
    """
    op_class, defaults = LAYERS[node.op_type]
    x, w, r = node.input_tensors(3)
    direction = node.attr("direction", "forward")
    if direction not in DIRECTIONS:
        raise node.invalid(f"unknown direction '{direction}'")
    dirs = DIRECTIONS[direction]
    hidden = int(node.attr("hidden_size", r.shape[-1]))
    if hidden != r.shape[-1]:
        raise node.invalid(f"hidden_size {hidden} disagrees with R of shape {list(r.shape)}")
    batch_first = node.strict_flag("layout", False)
    if batch_first:
        x = imp.g.add_transpose(x, (1, 0, 2), f"{node.name}.sequence_first")
    seq, batch = x.shape[:2]
    if seq < 0 and not node.has_input(4):
        raise node.fail("a dynamic sequence length needs the 'sequence_lens' input")
    gates = op_class.GATES * hidden
    operands = [
        x,
        w,
        r,
        _given(imp, node, 3, [dirs, 2 * gates], 0.0, x.dtype),
        _given(imp, node, 4, [batch], seq, "int32"),
        _state(imp, node, 5, dirs, batch, hidden, batch_first),
    ]
    if op_class is ops.LSTMOp:
        operands.append(_state(imp, node, 6, dirs, batch, hidden, batch_first))
        operands.append(_given(imp, node, 7, [dirs, 3 * hidden], 0.0, x.dtype))
    props = {"direction": StringAttr(direction), **_activations(node, defaults, dirs)}
    if node.attr("clip") is not None:
        clip = float(node.attr("clip"))
        if not clip > 0:  # onnxruntime refuses it; no range [-clip, clip] holds a value
            raise node.invalid(f"attribute 'clip' is {clip}: it must be positive")
        props["clip"] = ops.float_attr(clip)
    if op_class is ops.GRUOp:
        props["linear_before_reset"] = bool_attr(node.flag("linear_before_reset", False))
    if op_class is ops.LSTMOp:
        props["input_forget"] = bool_attr(node.flag("input_forget", False))
    y, *states = imp.g.add_op_results(op_class, operands, props, node.name)
    if batch_first:
        y = imp.g.add_transpose(y, (2, 0, 1, 3), f"{node.name}.batch_first")
        states = [imp.g.add_transpose(s, (1, 0, 2), f"{node.name}.state_batch_first") for s in states]
    return [y, *states]


def _given(imp: Importer, node: Node, index: int, shape: list[int], fill: float, dtype: str) -> Tensor:
    """Input `index`, or a constant of `fill` when the node leaves it out."""
    if node.has_input(index):
        return node.input(index)
    if any(d < 0 for d in shape):
        raise node.fail(f"a default for input #{index} needs a static shape, got {shape}")
    return imp.g.add_splat(fill, shape, dtype, f"{node.name}.default_{index}")


def _state(
    imp: Importer, node: Node, index: int, dirs: int, batch: int, hidden: int, batch_first: bool
) -> Tensor:
    if node.has_input(index) and batch_first:
        return imp.g.add_transpose(node.input(index), (1, 0, 2), f"{node.name}.state_{index}")
    return _given(imp, node, index, [dirs, batch, hidden], 0.0, node.input(0).dtype)


def _activations(node: Node, defaults: tuple[str, ...], dirs: int) -> dict[str, Attribute]:
    """The activation names, one alpha and one beta each (0 where unused)."""
    given = node.attr("activations")
    names = [_canonical(node, n) for n in given] if given else list(defaults)
    if len(names) == len(defaults) and dirs == 2:
        names = names * 2
    if len(names) != len(defaults) * dirs:
        raise node.invalid(f"{len(defaults) * dirs} activations are needed, got {len(names)}")
    props: dict[str, Attribute] = {"activations": ArrayAttr([StringAttr(n) for n in names])}
    for key, table in (("activation_alpha", ALPHA), ("activation_beta", BETA)):
        values = [float(v) for v in node.attr(key, [])]
        takers = [n for n in names if n in table]
        if values and len(values) != len(takers):
            raise node.fail(
                f"{len(values)} values of '{key}' for {len(takers)} activations that take one "
                "(which value goes where is ambiguous)"
            )
        given_values = iter(values)
        resolved = [(next(given_values) if values else table[n]) if n in table else 0.0 for n in names]
        props[key] = DenseArrayBase.from_list(f32, resolved)
    return props


def _canonical(node: Node, name: object) -> str:
    text = name.decode() if isinstance(name, bytes) else str(name)
    for known in ACTIVATIONS:
        if known.lower() == text.lower():
            return known
    raise node.fail(f"activation '{text}' is not supported")


CONVERTERS: dict[str, Converter] = {name: _recurrent for name in LAYERS}
