"""RNN, GRU and LSTM: a loop over time steps, each step vectorized over the batch.

The input projections of all steps are one matrix product up front; each step adds the
recurrent product, applies the gates and keeps the previous state for the batch entries whose
sequence has ended (their outputs are zero). `clip` bounds every gate's input before its
activation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects.common import get_flag, get_float, get_strs
from ge.dialects.graph import GRUOp, LSTMOp, RecurrentOp, RNNOp

from .base import Implementation, Product, float_values, property_of

Array = np.ndarray
Function = Callable[[Array], Array]


def rnn(
    op: RNNOp,
    x: Array,
    w: Array,
    r: Array,
    b: Array,
    lens: Array,
    h0: Array,
    *,
    product: Product = np.matmul,
) -> tuple[Array, Array]:
    def step(gates, state, r, rb, functions, d):
        (h,) = state
        h = functions[0](_clip(op, gates + product(h, r.T) + rb))
        return (h,), h

    y, h = _run(op, x, w, r, b, lens, (h0,), step, product)
    return y, h


def gru(
    op: GRUOp,
    x: Array,
    w: Array,
    r: Array,
    b: Array,
    lens: Array,
    h0: Array,
    *,
    product: Product = np.matmul,
) -> tuple[Array, Array]:
    before_reset = get_flag(op, "linear_before_reset")

    def step(gates, state, r, rb, functions, d):
        (h,) = state
        f, g = functions
        hidden = h.shape[-1]
        update_x, reset_x, candidate_x = np.split(gates, 3, axis=-1)
        recurrent = product(h, r[: 2 * hidden].T) + rb[: 2 * hidden]
        z = f(_clip(op, update_x + recurrent[:, :hidden]))
        reset = f(_clip(op, reset_x + recurrent[:, hidden:]))
        r_h, rb_h = r[2 * hidden :], rb[2 * hidden :]
        if before_reset:
            candidate = g(_clip(op, candidate_x + reset * (product(h, r_h.T) + rb_h)))
        else:
            candidate = g(_clip(op, candidate_x + product(reset * h, r_h.T) + rb_h))
        h = (1 - z) * candidate + z * h
        return (h,), h

    y, h = _run(op, x, w, r, b, lens, (h0,), step, product)
    return y, h


def lstm(
    op: LSTMOp,
    x: Array,
    w: Array,
    r: Array,
    b: Array,
    lens: Array,
    h0: Array,
    c0: Array,
    p: Array,
    *,
    product: Product = np.matmul,
) -> tuple[Array, Array, Array]:
    coupled = get_flag(op, "input_forget")

    def step(gates, state, r, rb, functions, d):
        h, c = state
        f, g, activate = functions
        peep_input, peep_output, peep_forget = np.split(p[d], 3)
        i_x, o_x, f_x, c_x = np.split(gates + product(h, r.T) + rb, 4, axis=-1)
        i = f(_clip(op, i_x + peep_input * c))
        forget = 1 - i if coupled else f(_clip(op, f_x + peep_forget * c))
        c = forget * c + i * g(_clip(op, c_x))
        o = f(_clip(op, o_x + peep_output * c))
        h = o * activate(c)
        return (h, c), h

    y, h, c = _run(op, x, w, r, b, lens, (h0, c0), step, product)
    return y, h, c


def _run(
    op: RecurrentOp,
    x: Array,
    w: Array,
    r: Array,
    b: Array,
    lens: Array,
    initial: tuple[Array, ...],
    step: Callable,
    product: Product,
) -> tuple[Array, ...]:
    """Runs `step` over time in each direction; returns Y and the final states."""
    given = property_of(op, "direction", StringAttr)
    direction = "forward" if given is None else given.data
    orders = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[direction]
    seq, batch = x.shape[:2]
    hidden = r.shape[-1]
    functions = _functions(op, len(orders))
    outputs, finals = [], []
    for d, backwards in enumerate(orders):
        width = r.shape[1]
        projected = product(x, w[d].T) + b[d, :width]  # every step's input projection at once
        state = tuple(s[d] for s in initial)
        y = np.zeros((seq, batch, hidden), dtype=projected.dtype)
        for t in reversed(range(seq)) if backwards else range(seq):
            running = (t < lens)[:, None]
            new, h = step(projected[t], state, r[d], b[d, width:], functions[d], d)
            state = tuple(np.where(running, n, s) for n, s in zip(new, state, strict=True))
            y[t] = np.where(running, h, 0)
        outputs.append(y)
        finals.append(state)
    result = np.stack(outputs, axis=1)
    states = [np.stack([f[k] for f in finals]).astype(result.dtype) for k in range(len(initial))]
    return (result, *states)


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
        return lambda v: 1 / (1 + np.exp(-v))
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


def _clip(op: RecurrentOp, v: np.ndarray) -> np.ndarray:
    if "clip" not in op.properties:
        return v
    bound = get_float(op, "clip", 0.0)
    return np.clip(v, -bound, bound)


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
