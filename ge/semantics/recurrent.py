"""RNN, GRU and LSTM: a loop over time steps, each step vectorized over the batch.

The input projections of all steps are one matrix product up front, with the recurrence biases
that add straight to a gate's input folded in; each step adds the recurrent product, applies the
gates and keeps the previous state for the batch entries whose sequence has ended (their outputs
are zero). `clip` bounds every gate's input before its activation.

The layer's properties (direction, activation functions, clip, ...) are read once per op
(`Prepared`). What does not change over time is decided once per direction, not per step: the
transposed recurrence weights, whether any sequence ends early (else no masks), whether the
peepholes are all zero (else none), whether there is a clip. The same code is the reference
interpreter, the constant folder and, with the cube's products, the emulator's kernel, so its
loop is kept tight.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects.common import get_flag, get_float, get_strs
from ge.dialects.graph import GRUOp, LSTMOp, RecurrentOp, RNNOp

from .base import Compute, Implementation, Prepared, Product, float_values, property_of

Array = np.ndarray
Function = Callable[[Array], Array]
State = tuple[Array, ...]
Step = Callable[[Array, State], tuple[State, Array]]
"""One time step: (the step's projected inputs, the state) -> (the new state, the output)."""
StepOf = Callable[[int, Array, Array, list[Function]], Step]
"""The step of a direction from (direction, transposed recurrence weights, recurrence biases not
folded into the projection, activation functions)."""


@Prepared
def rnn(op: RNNOp) -> Compute:
    clip = _clipper(op)
    orders = _orders(op)
    functions = _functions(op, len(orders))

    def layer(*operands: Array, product: Product = np.matmul) -> tuple[Array, Array]:
        x, w, r, b, lens, h0 = operands

        def step_of(d: int, recurrence: Array, bias: Array, functions: list[Function]) -> Step:
            (f,) = functions

            def step(gates: Array, state: State) -> tuple[State, Array]:
                total = gates + product(state[0], recurrence)
                h = f(total if clip is None else clip(total))
                return (h,), h

            return step

        y, h = _run(orders, functions, x, w, r, b, lens, (h0,), step_of, product, r.shape[1])
        return y, h

    return layer


@Prepared
def gru(op: GRUOp) -> Compute:
    before_reset = get_flag(op, "linear_before_reset")
    clip = _clipper(op) or _unchanged
    orders = _orders(op)
    functions = _functions(op, len(orders))

    def layer(*operands: Array, product: Product = np.matmul) -> tuple[Array, Array]:
        x, w, r, b, lens, h0 = operands
        hidden = r.shape[-1]

        def step_of(d: int, recurrence: Array, bias: Array, functions: list[Function]) -> Step:
            f, g = functions
            r_update_reset, r_candidate = recurrence[:, : 2 * hidden], recurrence[:, 2 * hidden :]

            def step(gates: Array, state: State) -> tuple[State, Array]:
                (h,) = state
                # The update and reset gates' activation at once: one block 2 x hidden wide.
                update_reset = f(clip(gates[:, : 2 * hidden] + product(h, r_update_reset)))
                z, reset = update_reset[:, :hidden], update_reset[:, hidden:]
                if before_reset:  # the candidate's recurrence bias is inside the reset product
                    candidate = reset * (product(h, r_candidate) + bias)
                else:
                    candidate = product(reset * h, r_candidate)
                candidate = g(clip(gates[:, 2 * hidden :] + candidate))
                h = (1 - z) * candidate + z * h
                return (h,), h

            return step

        # Without linear_before_reset every recurrence bias adds to its gate's input, so all fold.
        folded = 2 * hidden if before_reset else 3 * hidden
        y, h = _run(orders, functions, x, w, r, b, lens, (h0,), step_of, product, folded)
        return y, h

    return layer


@Prepared
def lstm(op: LSTMOp) -> Compute:
    coupled = get_flag(op, "input_forget")
    clip = _clipper(op)
    orders = _orders(op)
    functions = _functions(op, len(orders))

    def layer(*operands: Array, product: Product = np.matmul) -> tuple[Array, Array, Array]:
        x, w, r, b, lens, h0, c0, p = operands
        hidden = r.shape[-1]

        def step_of(d: int, recurrence: Array, bias: Array, functions: list[Function]) -> Step:
            f, g, activate = functions
            if not coupled and not np.any(p[d]):  # zero peepholes add nothing
                return _lstm_step(product, recurrence, f, g, activate, clip, hidden)
            bounded = clip or _unchanged
            peep_input, peep_output, peep_forget = np.split(p[d], 3)

            def step(gates: Array, state: State) -> tuple[State, Array]:
                h, c = state
                total = gates + product(h, recurrence)  # gates (i, o, f, c), each `hidden` wide
                i_x, o_x = total[:, :hidden], total[:, hidden : 2 * hidden]
                f_x, c_x = total[:, 2 * hidden : 3 * hidden], total[:, 3 * hidden :]
                i = f(bounded(i_x + peep_input * c))
                forget = 1 - i if coupled else f(bounded(f_x + peep_forget * c))
                c = forget * c + i * g(bounded(c_x))
                o = f(bounded(o_x + peep_output * c))
                h = o * activate(c)
                return (h, c), h

            return step

        y, h, c = _run(orders, functions, x, w, r, b, lens, (h0, c0), step_of, product, r.shape[1])
        return y, h, c

    return layer


def _lstm_step(
    product: Product,
    recurrence: Array,
    f: Function,
    g: Function,
    activate: Function,
    clip: Function | None,
    hidden: int,
) -> Step:
    """An LSTM step without peepholes: the input, output and forget gates share the function f,
    so one call activates their contiguous block."""
    two, three = 2 * hidden, 3 * hidden

    def step(gates: Array, state: State) -> tuple[State, Array]:
        h, c = state
        total = gates + product(h, recurrence)  # gates (i, o, f, c), each `hidden` wide
        block, candidate = total[:, :three], total[:, three:]
        if clip is not None:
            block, candidate = clip(block), clip(candidate)
        block = f(block)
        c = block[:, two:] * c  # forget * c
        c += block[:, :hidden] * g(candidate)  # + i * g(candidate)
        h = block[:, hidden:two] * activate(c)
        return (h, c), h

    return step


def _run(
    orders: list[bool],
    functions: list[list[Function]],
    x: Array,
    w: Array,
    r: Array,
    b: Array,
    lens: Array,
    initial: State,
    step_of: StepOf,
    product: Product,
    folded: int,
) -> tuple[Array, ...]:
    """Runs each direction's step over time (`orders`: whether it runs backwards; `functions`:
    its activation functions); returns Y and the final states.

    The first `folded` recurrence biases add straight to their gates' inputs, so they join the
    input biases in the projection made once up front."""
    seq, batch = x.shape[:2]
    hidden, width = r.shape[-1], r.shape[1]
    ragged = bool(np.any(lens < seq))  # else no sequence ends early: no masks
    outputs, finals = [], []
    for d, backwards in enumerate(orders):
        bias = b[d, :width].astype(np.promote_types(b.dtype, np.float32))  # a copy, at least fp32
        bias[:folded] += b[d, width : width + folded]
        projected = product(x, w[d].T) + bias  # every step's input projection at once
        recurrence = np.ascontiguousarray(r[d].T)
        step = step_of(d, recurrence, b[d, width + folded :], functions[d])
        state = tuple(s[d] for s in initial)
        steps: list[Array] = []  # each step's output, stacked once at the end
        times = range(seq - 1, -1, -1) if backwards else range(seq)
        if ragged:
            for t in times:
                new, h = step(projected[t], state)
                running = (t < lens)[:, None]
                state = tuple(np.where(running, n, s) for n, s in zip(new, state, strict=True))
                steps.append(np.where(running, h, 0))
        else:
            for t in times:
                state, h = step(projected[t], state)
                steps.append(h)
        if backwards:
            steps.reverse()
        # np.concatenate is several times quicker than np.stack on many small arrays.
        y = np.concatenate(steps).reshape(seq, batch, hidden) if seq else np.zeros((seq, batch, hidden))
        outputs.append(y.astype(projected.dtype, copy=False))
        finals.append(state)
    result = np.stack(outputs, axis=1)
    states = [np.stack([f[k] for f in finals]).astype(result.dtype) for k in range(len(initial))]
    return (result, *states)


def _orders(op: RecurrentOp) -> list[bool]:
    """Whether each direction of the op runs backwards over time."""
    given = property_of(op, "direction", StringAttr)
    direction = "forward" if given is None else given.data
    return {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[direction]


def _functions(op: RecurrentOp, dirs: int) -> list[list[Function]]:
    """The activation functions of each direction, with their alpha and beta bound."""
    per_direction = op.FUNCTIONS
    names = list(get_strs(op, "activations")) or list(DEFAULTS[type(op)]) * dirs
    alphas = _floats(op, "activation_alpha", len(names))
    betas = _floats(op, "activation_beta", len(names))
    bound = [_function(n, a, b) for n, a, b in zip(names, alphas, betas, strict=True)]
    return [bound[d * per_direction : (d + 1) * per_direction] for d in range(dirs)]


def _function(name: str, alpha: float, beta: float) -> Function:
    if name == "Relu":
        return lambda v: np.maximum(v, 0)
    if name == "Tanh":
        return np.tanh
    if name == "Sigmoid":
        return _sigmoid
    if name == "Affine":
        return lambda v: alpha * v + beta
    if name == "LeakyRelu":
        return lambda v: np.where(v >= 0, v, alpha * v)
    if name == "ThresholdedRelu":
        return lambda v: np.where(v > alpha, v, 0)
    if name == "ScaledTanh":
        return lambda v: alpha * np.tanh(beta * v)
    if name == "HardSigmoid":
        return lambda v: np.clip(alpha * v + beta, 0, 1)
    if name == "Elu":
        return lambda v: np.where(v >= 0, v, alpha * (np.exp(np.minimum(v, 0)) - 1))
    if name == "Softsign":
        return lambda v: v / (1 + np.abs(v))
    assert name == "Softplus", name
    return lambda v: np.logaddexp(v, 0)


def _clipper(op: RecurrentOp) -> Function | None:
    """The function bounding a gate's input by the op's `clip`; None when the op has none."""
    if "clip" not in op.properties:
        return None
    bound = get_float(op, "clip", 0.0)
    return lambda v: np.clip(v, -bound, bound)


def _unchanged(v: Array) -> Array:
    return v


def _sigmoid(v: Array) -> Array:
    """1 / (1 + exp(-v)), in one buffer."""
    out = np.negative(v)
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


def _floats(op: RecurrentOp, name: str, count: int) -> list[float]:
    values = float_values(op, name)
    return [0.0] * count if values is None else values


DEFAULTS: dict[type, tuple[str, ...]] = {
    RNNOp: ("Tanh",),
    GRUOp: ("Sigmoid", "Tanh"),
    LSTMOp: ("Sigmoid", "Tanh", "Tanh"),
}
"""The activation functions of each kind of layer when none are given."""

IMPLEMENTATIONS: dict[type, Implementation] = {RNNOp: rnn, GRUOp: gru, LSTMOp: lstm}
