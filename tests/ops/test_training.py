"""Training steps against their formulas in numpy, through `ge.backend`: the optimizers of
ai.onnx.preview.training (onnxruntime's inference build has no kernels for them) and
BatchNormalization's training mode (its batch statistics and running averages).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from single_node import feeds, one_node

import ge.backend
from ge.errors import InvalidModelError

TRAINING = "ai.onnx.preview.training"


def run_optimizer(op_type: str, inputs: list[np.ndarray], outputs: int, **attrs) -> list[np.ndarray]:
    names = [f"in{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, [f"out{i}" for i in range(outputs)], domain=TRAINING, **attrs)
    graph_inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for n, a in zip(names, inputs, strict=True)
    ]
    graph_outputs = [helper.make_empty_tensor_value_info(f"out{i}") for i in range(outputs)]
    graph = helper.make_graph([node], op_type, graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(TRAINING, 1)], ir_version=9)
    return ge.backend.prepare(model).run(dict(zip(names, inputs, strict=True)))


def close(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.fixture
def state():
    rng = np.random.default_rng(0)
    return [
        rng.standard_normal(shape).astype(np.float32) for shape in ((3,), (2, 2), (3,), (2, 2), (3,), (2, 2))
    ]


@pytest.mark.parametrize("step", [0, 4])
def test_adagrad(state, step):
    x1, x2, g1, g2, h1, h2 = state
    h1, h2 = np.abs(h1), np.abs(h2)
    r, t = np.array(0.1, np.float32), np.array(step, np.int64)
    norm, eps, decay = 0.01, 1e-5, 0.1
    got = run_optimizer(
        "Adagrad", [r, t, x1, x2, g1, g2, h1, h2], 4, norm_coefficient=norm, epsilon=eps, decay_factor=decay
    )
    xs, hs = [], []
    for x, g, h in ((x1, g1, h1), (x2, g2, h2)):
        g = norm * x + g
        h = h + g * g
        xs.append((x - 0.1 / (1 + step * decay) * g / (np.sqrt(h) + eps)).astype(np.float32))
        hs.append(h.astype(np.float32))
    close(got, xs + hs)


@pytest.mark.parametrize("step", [0, 3])
def test_adam(state, step):
    x1, x2, g1, g2, v1, v2 = state
    h1, h2 = np.abs(v1) + 0.5, np.abs(v2) + 0.5
    r, t = np.array(0.05, np.float32), np.array(step, np.int64)
    alpha, beta, norm, post, eps = 0.9, 0.8, 0.01, 0.02, 1e-3
    got = run_optimizer(
        "Adam",
        [r, t, x1, x2, g1, g2, v1, v2, h1, h2],
        6,
        alpha=alpha,
        beta=beta,
        norm_coefficient=norm,
        norm_coefficient_post=post,
        epsilon=eps,
    )
    want: list[list[np.ndarray]] = [[], [], []]
    for x, g, v, h in ((x1, g1, v1, h1), (x2, g2, v2, h2)):
        g = norm * x + g
        v = alpha * v + (1 - alpha) * g
        h = beta * h + (1 - beta) * g * g
        rate = 0.05 * np.sqrt(1 - beta**step) / (1 - alpha**step) if step > 0 else 0.05
        x = (1 - post) * (x - rate * v / (np.sqrt(h) + eps))
        for slot, value in zip(want, (x, v, h), strict=True):
            slot.append(value.astype(np.float32))
    close(got, [a for slot in want for a in slot])


@pytest.mark.parametrize("mode", ["standard", "nesterov"])
@pytest.mark.parametrize("step", [0, 2])
def test_momentum(state, mode, step):
    x1, x2, g1, g2, v1, v2 = state
    r, t = np.array(0.1, np.float32), np.array(step, np.int64)
    alpha, beta, norm = 0.9, 0.5, 0.01
    got = run_optimizer(
        "Momentum",
        [r, t, x1, x2, g1, g2, v1, v2],
        4,
        alpha=alpha,
        beta=beta,
        norm_coefficient=norm,
        mode=mode,
    )
    xs, vs = [], []
    for x, g, v in ((x1, g1, v1), (x2, g2, v2)):
        g = norm * x + g
        v = alpha * v + (beta if step > 0 else 1) * g
        x = x - 0.1 * (v if mode == "standard" else g + alpha * v)
        xs.append(x.astype(np.float32))
        vs.append(v.astype(np.float32))
    close(got, xs + vs)


def test_momentum_needs_its_attributes(state):
    x1, _, g1, _, v1, _ = state
    r, t = np.array(0.1, np.float32), np.array(0, np.int64)
    with pytest.raises(InvalidModelError, match="required attribute 'mode' is missing"):
        run_optimizer("Momentum", [r, t, x1, g1, v1], 2, alpha=0.9, beta=0.5, norm_coefficient=0.0)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3)])
def test_batch_norm_training_mode(shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    scale, bias, mean = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
    var = rng.random(3).astype(np.float32)
    inputs = [x, scale, bias, mean, var]
    model = one_node("BatchNormalization", inputs, 15, 3, training_mode=1, momentum=0.8, epsilon=1e-3)
    got = ge.backend.prepare(model).run(feeds(inputs, ()))
    axes = tuple(a for a in range(len(shape)) if a != 1)
    batch_mean, batch_var = x.mean(axis=axes), x.var(axis=axes)
    channel = [3 if a == 1 else 1 for a in range(len(shape))]
    y = (x - batch_mean.reshape(channel)) / np.sqrt(batch_var.reshape(channel) + 1e-3)
    y = y * scale.reshape(channel) + bias.reshape(channel)
    want = [y, 0.8 * mean + 0.2 * batch_mean, 0.8 * var + 0.2 * batch_var]
    close(got, [a.astype(np.float32) for a in want])


def test_batch_norm_inference_mode_is_unchanged():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    scale, bias, mean = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
    var = rng.random(3).astype(np.float32)
    inputs = [x, scale, bias, mean, var]
    (got,) = ge.backend.prepare(one_node("BatchNormalization", inputs, 15)).run(feeds(inputs, ()))
    c = (1, 3, 1)
    want = (x - mean.reshape(c)) / np.sqrt(var.reshape(c) + 1e-5) * scale.reshape(c) + bias.reshape(c)
    close([got], [want.astype(np.float32)])


def batch_norm_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    scale, bias, mean = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
    return [x, scale, bias, mean, rng.random(3).astype(np.float32)]


@pytest.mark.parametrize(
    ("training_mode", "outputs", "message"),
    [
        (1, 1, "'training_mode' = 1 needs 3 outputs (Y, running_mean and running_var), the node has 1"),
        (1, 2, "'training_mode' = 1 needs 3 outputs (Y, running_mean and running_var), the node has 2"),
        (0, 3, "'training_mode' = 0 needs 1 output (Y only), the node has 3"),
    ],
)
def test_batch_norm_output_count_follows_the_training_mode(training_mode, outputs, message):
    # ONNX's shape inference and onnxruntime refuse these counts.
    inputs = batch_norm_inputs()
    model = one_node("BatchNormalization", inputs, 15, outputs, training_mode=training_mode)
    with pytest.raises(InvalidModelError, match=r"BatchNormalization at node '.*': attribute ") as raised:
        ge.backend.prepare(model).run(feeds(inputs, ()))
    assert message in str(raised.value)


def test_batch_norm_training_mode_may_leave_out_running_mean():
    # Three output slots, the second left out (''): ONNX allows it (onnxruntime 1.32 crashes on it).
    inputs = batch_norm_inputs()
    model = one_node("BatchNormalization", inputs, 15, 3, training_mode=1, momentum=0.5)
    model.graph.node[0].output[1] = ""
    del model.graph.output[1]
    y, running_var = ge.backend.prepare(model).run(feeds(inputs, ()))
    x, scale, bias, _, var = inputs
    c = (1, 3, 1)
    batch_mean, batch_var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    want = (x - batch_mean.reshape(c)) / np.sqrt(batch_var.reshape(c) + 1e-5) * scale.reshape(
        c
    ) + bias.reshape(c)
    close([y, running_var], [want.astype(np.float32), (0.5 * var + 0.5 * batch_var).astype(np.float32)])
