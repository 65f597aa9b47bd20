"""Recurrent layers: `rnn`, `gru` and `lstm`, as ONNX defines them, in the sequence-first layout.

Every operand is present (frontends supply zero biases and states, full sequence lengths), and
the activation functions carry their `alpha` and `beta`, one of each per activation (unused
ones are 0), so the ops need no defaults beyond their properties.
```
X: [seq, batch, input]   W: [dirs, gates * hidden, input]   R: [dirs, gates * hidden, hidden]
B: [dirs, 2 * gates * hidden]   sequence_lens: [batch] (i32)   initial states: [dirs, batch, hidden]
Y: [seq, dirs, batch, hidden]   final states: [dirs, batch, hidden]
```
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def

from ..common import FloatArray
from .base import DYN, GraphOp, flag_def, same_dims, same_elements
from .products import RecurrentProduct

DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}
ACTIVATIONS = (
    "Relu",
    "Tanh",
    "Sigmoid",
    "Affine",
    "LeakyRelu",
    "ThresholdedRelu",
    "ScaledTanh",
    "HardSigmoid",
    "Elu",
    "Softsign",
    "Softplus",
)


class RecurrentOp(GraphOp, ABC):
    """A recurrent layer over a sequence, run forward, in reverse or both ways."""

    traits = traits_def(RecurrentProduct())

    GATES: ClassVar[int]
    """Gates per hidden unit: the row blocks of W and R."""
    FUNCTIONS: ClassVar[int]
    """Activation functions per direction."""
    STATES: ClassVar[int] = 1

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    recurrence = operand_def(TensorType)
    bias = operand_def(TensorType)
    sequence_lens = operand_def(TensorType)
    initial_h = operand_def(TensorType)
    result = result_def(TensorType)
    final_h = result_def(TensorType)

    direction = opt_prop_def(StringAttr)
    activations = opt_prop_def(ArrayAttr[StringAttr])
    activation_alpha = opt_prop_def(FloatArray)
    activation_beta = opt_prop_def(FloatArray)
    clip = opt_prop_def(FloatAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        float_types = [t for i, t in enumerate(operand_types) if i != 4]
        element = same_elements(float_types, "every operand but sequence_lens")
        if isinstance(element, IntegerType):
            raise ValueError(f"recurrent layers compute on floats, got {element}")
        direction = props.get("direction")
        if not isinstance(direction, StringAttr | None):
            raise ValueError(f"'direction' must be a string, got {direction}")
        direction = "forward" if direction is None else direction.data
        if direction not in DIRECTIONS:
            raise ValueError(f"'direction' must be forward, reverse or bidirectional, got '{direction}'")
        dirs = DIRECTIONS[direction]
        x, w, r = (t.get_shape() for t in operand_types[:3])
        if len(x) != 3:
            raise ValueError(f"the input must be [seq, batch, input], got rank {len(x)}")
        seq, batch, features = x
        hidden = r[-1] if len(r) == 3 else DYN
        gates = cls.GATES * hidden if hidden != DYN else DYN
        expected = {
            "weight": (w, (dirs, gates, features)),
            "recurrence": (r, (dirs, gates, hidden)),
            "bias": (operand_types[3].get_shape(), (dirs, 2 * gates if gates != DYN else DYN)),
            "sequence_lens": (operand_types[4].get_shape(), (batch,)),
        }
        for index in range(5, len(operand_types)):
            name = cls.get_irdl_definition().operands[index][0]
            shape = (
                (dirs, 3 * hidden if hidden != DYN else DYN) if name == "peepholes" else (dirs, batch, hidden)
            )
            expected[name] = (operand_types[index].get_shape(), shape)
        for name, (actual, wanted) in expected.items():
            if not same_dims(actual, wanted):
                raise ValueError(f"'{name}' must have shape {_show(wanted)}, got {_show(actual)}")
        lens = operand_types[4].element_type
        if not isinstance(lens, IntegerType) or lens.width.data != 32:
            raise ValueError(f"'sequence_lens' must hold i32, got {lens}")
        cls._check_activations(props, dirs)
        state = TensorType(element, (dirs, batch, hidden))
        return [TensorType(element, (seq, dirs, batch, hidden))] + [state] * cls.STATES

    @classmethod
    def _check_activations(cls, props, dirs: int) -> None:
        names = props.get("activations")
        count = cls.FUNCTIONS * dirs
        if names is None:
            return
        functions = [n.data for n in names.data]
        if len(functions) != count:
            raise ValueError(f"{count} activations are needed, got {len(functions)}")
        unknown = [f for f in functions if f not in ACTIVATIONS]
        if unknown:
            raise ValueError(f"unknown activation {unknown[0]}; known: {', '.join(ACTIVATIONS)}")
        for name in ("activation_alpha", "activation_beta"):
            values = props.get(name)
            if values is not None and len(values.get_values()) != count:
                raise ValueError(f"'{name}' needs one value per activation ({count})")


def _show(shape) -> str:
    return "[" + ", ".join("?" if d == DYN else str(d) for d in shape) + "]"


@irdl_op_definition
class RNNOp(RecurrentOp):
    """`H = f(X W^T + H R^T + Wb + Rb)`, f Tanh by default.

    ```
    %y, %h = ascend.graph.rnn %x, %w, %r, %b, %lens, %h0 {direction = "forward"}
        : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x8xf32>, tensor<2xi32>,
        tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
    ```
    """

    name = "ascend.graph.rnn"
    GATES: ClassVar[int] = 1
    FUNCTIONS: ClassVar[int] = 1


@irdl_op_definition
class GRUOp(RecurrentOp):
    """Gated recurrent unit, gates z, r, h in W and R (f = Sigmoid, g = Tanh by default);
    `linear_before_reset = true` applies the reset gate after the recurrent product.

    ```
    %y, %h = ascend.graph.gru %x, %w, %r, %b, %lens, %h0 {linear_before_reset = true}
        : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x24xf32>,
        tensor<2xi32>, tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
    ```
    """

    name = "ascend.graph.gru"
    GATES: ClassVar[int] = 3
    FUNCTIONS: ClassVar[int] = 2

    linear_before_reset = flag_def(False)


@irdl_op_definition
class LSTMOp(RecurrentOp):
    """Long short-term memory, gates i, o, f, c in W and R, peepholes i, o, f in P (f =
    Sigmoid, g = h = Tanh by default); `input_forget = true` couples the forget gate to `1 - i`.

    ```
    %y, %h, %c = ascend.graph.lstm %x, %w, %r, %b, %lens, %h0, %c0, %p
        : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x32xf32>,
        tensor<2xi32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x12xf32>)
        -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
    ```
    """

    name = "ascend.graph.lstm"
    GATES: ClassVar[int] = 4
    FUNCTIONS: ClassVar[int] = 3
    STATES: ClassVar[int] = 2

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    recurrence = operand_def(TensorType)
    bias = operand_def(TensorType)
    sequence_lens = operand_def(TensorType)
    initial_h = operand_def(TensorType)
    initial_c = operand_def(TensorType)
    peepholes = operand_def(TensorType)
    result = result_def(TensorType)
    final_h = result_def(TensorType)
    final_c = result_def(TensorType)

    input_forget = flag_def(False)


OPS = (RNNOp, GRUOp, LSTMOp)
