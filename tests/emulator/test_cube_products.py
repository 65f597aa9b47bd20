"""Attention, recurrent layers, transposed and 3-D convolutions run their products on the cube.

Each model is compiled through ge (the op's kernel is a cube kernel with a tiling) and run on the
Emulator. Expected values are worked out here in int64 (integer-valued fp16 inputs: exact) or in
float64 (by direct loops, or by the reference semantics on float64 arrays, whose products are
numpy's float64 `matmul`), never by the cube; the number of cube products (`CubeProduct` calls)
and of k-steps (BLAS calls: numpy's `matmul` and `dot`) is counted from the kernel's tiling.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, FloatAttr, IntegerAttr, StringAttr, f64

import ge
from ge.dialects import graph as ops
from ge.dialects.common import ints_attr
from ge.dialects.stream import KernelFuncOp
from ge.dialects.tiling import CubeTilingAttr
from ge.emulator import Emulator, cube
from ge.emulator.convolution import DEPTHWISE_ROWS, Convolution
from ge.emulator.products import CubeProduct
from ge.semantics.attention import attention
from ge.semantics.recurrent import gru, lstm

FP32_ULP = 2.0**-23
NAMES = ("w", "r", "b", "lens", "h0", "c0", "p")
"""A recurrent layer's operands after its input."""


class _Counting:
    """Wraps a function, counting its calls."""

    def __init__(self, function: Callable) -> None:
        self.calls, self._function = 0, function

    def __call__(self, *args: object, **kwargs: object) -> np.ndarray:
        self.calls += 1
        return self._function(*args, **kwargs)


def _compile(g: ge.Graph, level: int = 3) -> tuple[ge.CompiledModel, int]:
    """The compiled model and the k of its one cube kernel's tiling."""
    compiled = ge.GraphCompiler().compile(g, optimization_level=level)
    kernels = [
        op for op in compiled.module.walk() if isinstance(op, KernelFuncOp) and op.unit.data.value == "cube"
    ]
    assert len(kernels) == 1
    tiling = kernels[0].tiling
    assert isinstance(tiling, CubeTilingAttr)
    return compiled, tiling.k.data


def _run_counted(
    compiled: ge.CompiledModel, inputs: list[np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[np.ndarray], int, int]:
    """The outputs, the cube products run and the BLAS products (k-steps) they took."""
    products, blas = _Counting(CubeProduct.__call__), _Counting(cube.step_product)

    def product(self: CubeProduct, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return products(self, a, b)

    monkeypatch.setattr(CubeProduct, "__call__", product)
    monkeypatch.setattr(cube, "step_product", blas)
    outputs = Emulator(compiled.module, compiled.weight_blob).run(inputs)
    monkeypatch.undo()
    return outputs, products.calls, blas.calls


# --------------------------------------------------------------------------------------------
# Attention: Q K^T and P V on the cube, the softmax on the vector unit
# --------------------------------------------------------------------------------------------


def _attention_graph(shape: tuple[int, int, int, int], dtype: str, properties: dict) -> ge.Graph:
    g = ge.Graph()
    q, k, v = (g.add_input(name, shape=list(shape), dtype=dtype) for name in "qkv")
    mask = g.add_input("mask", shape=[shape[2], shape[2]], dtype="bool")
    if "scores_output" in properties:
        y, scores = g.add_op_results(ops.AttentionOp, [q, k, v, mask], properties)
        g.add_output(scores, "scores")
    else:
        y = g.add_op(ops.AttentionOp, [q, k, v, mask], properties)
    g.add_output(y, "y")
    return g


def test_attention_products_are_exact_on_integer_valued_fp16(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = (1, 2, 24, 300)  # head dim 300: Q K^T takes more than one k-step
    properties = {"scale": FloatAttr(1.0, f64), "scores_output": StringAttr("raw")}
    compiled, k_step = _compile(_attention_graph(shape, "float16", properties))
    q, k, v = (rng.integers(-3, 4, shape).astype(np.float16) for _ in range(3))
    # Each query sees one key: the probabilities are one-hot, so P V picks rows of V exactly.
    seen = rng.integers(0, 24, 24)
    mask = np.zeros((24, 24), bool)
    mask[np.arange(24), seen] = True
    (scores, y), products, blas = _run_counted(compiled, [q, k, v, mask], monkeypatch)
    raw = q.astype(np.int64) @ k.astype(np.int64).swapaxes(-1, -2)
    np.testing.assert_array_equal(scores, raw.astype(np.float16))
    np.testing.assert_array_equal(y, v[:, :, seen])
    assert products == 2
    assert blas == math.ceil(300 / k_step) + math.ceil(24 / k_step) > 2


@pytest.mark.parametrize("level", [0, 3])
def test_attention_is_within_k_ulps_of_float64(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, level: int
) -> None:
    shape = (2, 2, 20, 64)
    graph = _attention_graph(shape, "float32", {"is_causal": True})
    compiled, _ = _compile(graph, level)
    q, k, v = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    mask = rng.random((20, 20)) < 0.8
    (y,), products, _ = _run_counted(compiled, [q, k, v, mask], monkeypatch)
    assert products == 2
    op = next(op for op in compiled.module.walk() if isinstance(op, ops.AttentionOp))
    wide = [a.astype(np.float64) for a in (q, k, v)]
    expected = attention(op, *wide, mask)
    assert isinstance(expected, np.ndarray) and expected.dtype == np.float64
    # Scores off by K ulps of their magnitude move each probability by as much, relatively.
    scale = np.abs(wide[0]) @ np.abs(wide[1]).swapaxes(-1, -2) / 8
    bound = (64 * scale.max() + 20) * FP32_ULP * (np.abs(expected).max() + np.abs(wide[2]).max())
    assert np.max(np.abs(y - expected)) <= bound


# --------------------------------------------------------------------------------------------
# Recurrent layers: X W^T for every step at once, H R^T per step, the gates on the vector unit
# --------------------------------------------------------------------------------------------


def _recurrent_graph(
    op_class: type, arrays: list[np.ndarray], hidden: int, properties: dict
) -> tuple[ge.Graph, list[np.ndarray]]:
    """Input x is a model input, the other operands weights; returns the graph and its inputs."""
    g = ge.Graph()
    x = g.add_input("x", shape=list(arrays[0].shape), dtype=str(arrays[0].dtype))
    rest = [g.add_constant(a, name) for a, name in zip(arrays[1:], NAMES[: len(arrays) - 1], strict=True)]
    results = g.add_op_results(op_class, [x, *rest], properties)
    for index, result in enumerate(results):
        g.add_output(result, f"y{index}")
    return g, arrays[:1]


def test_rnn_with_identity_activation_is_exact_on_integer_valued_fp16(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    seq, batch, size, hidden = 3, 2, 600, 8  # input K 600: more than one k-step
    x = rng.integers(-1, 2, (seq, batch, size)).astype(np.float16)
    w = rng.integers(-1, 2, (1, hidden, size)).astype(np.float16)
    r = rng.integers(-1, 2, (1, hidden, hidden)).astype(np.float16)
    b = rng.integers(-2, 3, (1, 2 * hidden)).astype(np.float16)
    lens = np.full(batch, seq, np.int32)
    h0 = rng.integers(-2, 3, (1, batch, hidden)).astype(np.float16)
    properties = {
        "activations": ArrayAttr([StringAttr("Affine")]),
        "activation_alpha": DenseArrayBase.from_list(f64, [1.0]),
        "activation_beta": DenseArrayBase.from_list(f64, [0.0]),
    }
    g, inputs = _recurrent_graph(ops.RNNOp, [x, w, r, b, lens, h0], hidden, properties)
    compiled, k_step = _compile(g)
    (y, final), products, blas = _run_counted(compiled, inputs, monkeypatch)
    h = h0[0].astype(np.int64)
    expected = []
    for t in range(seq):
        h = x[t].astype(np.int64) @ w[0].T.astype(np.int64) + h @ r[0].T.astype(np.int64)
        h = h + b[0, :hidden].astype(np.int64) + b[0, hidden:].astype(np.int64)
        expected.append(h)
    assert np.abs(expected).max() < 2048  # every value an fp16 integer
    np.testing.assert_array_equal(y[:, 0], np.stack(expected).astype(np.float16))
    np.testing.assert_array_equal(final[0], expected[-1].astype(np.float16))
    assert products == 1 + seq  # the input product once, the recurrence per step
    assert blas == math.ceil(size / k_step) + seq * math.ceil(hidden / k_step) > 1 + seq


@pytest.mark.parametrize("op_class", [ops.LSTMOp, ops.GRUOp])
def test_lstm_and_gru_are_within_k_ulps_of_float64(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, op_class: type
) -> None:
    seq, batch, size, hidden, gates = 4, 3, 40, 16, 4 if op_class is ops.LSTMOp else 3
    directions = 2
    arrays = [
        rng.standard_normal((seq, batch, size)).astype(np.float32),
        (rng.standard_normal((directions, gates * hidden, size)) / 4).astype(np.float32),
        (rng.standard_normal((directions, gates * hidden, hidden)) / 4).astype(np.float32),
        rng.standard_normal((directions, 2 * gates * hidden)).astype(np.float32),
        np.array([4, 2, 3], np.int32),
        rng.standard_normal((directions, batch, hidden)).astype(np.float32),
    ]
    if op_class is ops.LSTMOp:
        arrays += [
            rng.standard_normal((directions, batch, hidden)).astype(np.float32),
            rng.standard_normal((directions, 3 * hidden)).astype(np.float32),
        ]
    g, inputs = _recurrent_graph(op_class, arrays, hidden, {"direction": StringAttr("bidirectional")})
    compiled, _ = _compile(g)
    outputs, products, _ = _run_counted(compiled, inputs, monkeypatch)
    assert products == directions * (1 + seq) + (directions * seq if op_class is ops.GRUOp else 0)
    op = next(op for op in compiled.module.walk() if isinstance(op, op_class))
    reference = lstm if op_class is ops.LSTMOp else gru
    expected = reference(op, *[a.astype(np.float64) if a.dtype == np.float32 else a for a in arrays])
    for got, want in zip(outputs, expected, strict=True):
        assert want.dtype == np.float64
        # Each step's sums are within K ulps; the gates keep that size, over `seq` steps.
        assert np.max(np.abs(got - want)) <= seq * (size + hidden) * FP32_ULP * 16


# --------------------------------------------------------------------------------------------
# Transposed and 3-D convolutions; depthwise convolutions on conv2d's grouped path
# --------------------------------------------------------------------------------------------


def _conv_transpose(x: np.ndarray, w: np.ndarray, stride: int, groups: int) -> np.ndarray:
    """Each input pixel times the kernel, scattered into the output at stride `stride` (no pads)."""
    n, cin, h, width = x.shape
    _, per_group, kh, kw = w.shape
    y = np.zeros((n, groups * per_group, stride * (h - 1) + kh, stride * (width - 1) + kw), x.dtype)
    for g in range(groups):
        for c in range(g * cin // groups, (g + 1) * cin // groups):
            for i in range(h):
                for j in range(width):
                    patch = x[:, c, i, j, None, None, None] * w[c]
                    y[
                        :,
                        g * per_group : (g + 1) * per_group,
                        stride * i : stride * i + kh,
                        stride * j : stride * j + kw,
                    ] += patch
    return y


@pytest.mark.parametrize("groups", [1, 2])
def test_conv_transpose_is_exact_on_integer_valued_fp16(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, groups: int
) -> None:
    x = rng.integers(-3, 4, (2, 40, 5, 4)).astype(np.float16)
    w = rng.integers(-3, 4, (40, 6, 3, 3)).astype(np.float16)
    g = ge.Graph()
    data = g.add_input("x", shape=list(x.shape), dtype="float16")
    properties = {"strides": ints_attr([2, 2]), "groups": IntegerAttr(groups, 64)}
    g.add_output(g.add_op(ops.ConvTranspose2DOp, [data, g.add_constant(w, "w")], properties), "y")
    compiled, _ = _compile(g)
    (y,), products, _ = _run_counted(compiled, [x], monkeypatch)
    assert products == 1
    np.testing.assert_array_equal(y, _conv_transpose(x.astype(np.int64), w.astype(np.int64), 2, groups))


def test_conv_transpose_is_within_k_ulps_of_float64(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    x = rng.standard_normal((1, 300, 4, 4)).astype(np.float32)
    w = rng.standard_normal((300, 8, 2, 2)).astype(np.float32)
    g = ge.Graph()
    data = g.add_input("x", shape=list(x.shape), dtype="float32")
    g.add_output(g.add_op(ops.ConvTranspose2DOp, [data, g.add_constant(w, "w")], {}), "y")
    compiled, k_step = _compile(g)
    (y,), products, blas = _run_counted(compiled, [x], monkeypatch)
    assert products == 1 and blas == math.ceil(300 / k_step) > 1
    expected = _conv_transpose(x.astype(np.float64), w.astype(np.float64), 1, 1)
    bound = (
        300 * 4 * FP32_ULP * _conv_transpose(np.abs(x).astype(np.float64), np.abs(w).astype(np.float64), 1, 1)
    )
    assert np.all(np.abs(y - expected) <= bound)


def _conv3d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cross-correlation, stride 1, no pads, by one einsum per kernel tap."""
    kd, kh, kw = w.shape[2:]
    d, h, width = (s - k + 1 for s, k in zip(x.shape[2:], (kd, kh, kw), strict=True))
    y = np.zeros((x.shape[0], w.shape[0], d, h, width), x.dtype)
    for a, b, c in np.ndindex(kd, kh, kw):
        window = x[:, :, a : a + d, b : b + h, c : c + width]
        y += np.einsum("ncdhw,oc->nodhw", window, w[:, :, a, b, c])
    return y


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_conv3d_on_the_cube(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    x = rng.integers(-3, 4, (1, 20, 5, 5, 5)).astype(dtype)
    w = rng.integers(-3, 4, (8, 20, 3, 3, 3)).astype(dtype)
    if dtype == "float32":
        x, w = x + rng.standard_normal(x.shape).astype(dtype), w + rng.standard_normal(w.shape).astype(dtype)
    g = ge.Graph()
    data = g.add_input("x", shape=list(x.shape), dtype=dtype)
    g.add_output(g.add_op(ops.Conv3DOp, [data, g.add_constant(w, "w")], {}), "y")
    compiled, k_step = _compile(g)
    (y,), products, blas = _run_counted(compiled, [x], monkeypatch)
    assert products == 1 and blas == math.ceil(20 * 27 / k_step) > 1
    expected = _conv3d(x.astype(np.float64), w.astype(np.float64))
    if dtype == "float16":  # integer-valued: exact
        np.testing.assert_array_equal(y, expected.astype(np.float16))
    else:
        bound = 20 * 27 * FP32_ULP * _conv3d(np.abs(x).astype(np.float64), np.abs(w).astype(np.float64))
        assert np.all(np.abs(y - expected) <= bound)


def test_depthwise_convolution_runs_on_the_cube(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    x = rng.integers(-3, 4, (1, 32, 6, 6)).astype(np.float16)
    w = rng.integers(-3, 4, (32, 1, 3, 3)).astype(np.float16)
    g = ge.Graph()
    data = g.add_input("x", shape=list(x.shape), dtype="float16")
    properties = {"groups": IntegerAttr(32, 64), "pads": ints_attr([1, 1, 1, 1])}
    g.add_output(g.add_op(ops.Conv2DOp, [data, g.add_constant(w, "w")], properties), "y")
    compiled, _ = _compile(g)
    routes: list[str] = []
    run = Convolution.__call__

    def recorded(self: Convolution, *args: np.ndarray, **kwargs: np.ndarray | None) -> np.ndarray:
        routes.append(self.route)
        return run(self, *args, **kwargs)

    monkeypatch.setattr(Convolution, "__call__", recorded)
    (y,) = Emulator(compiled.module, compiled.weight_blob).run([x])
    monkeypatch.undo()
    assert routes == [DEPTHWISE_ROWS]  # one convolution on the cube, per-tap k-steps in fp32
    padded = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = sum(
        padded[:, :, i : i + 6, j : j + 6] * w[None, :, 0, i, j, None, None].astype(np.int64)
        for i, j in np.ndindex(3, 3)
    )
    np.testing.assert_array_equal(y, np.asarray(expected).astype(np.float16))


def test_a_fused_conv3d_runs_its_product_on_the_cube(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    x = rng.integers(-3, 4, (1, 8, 4, 4, 4)).astype(np.float16)
    w = rng.integers(-3, 4, (4, 8, 2, 2, 2)).astype(np.float16)
    g = ge.Graph()
    data = g.add_input("x", shape=list(x.shape), dtype="float16")
    conv = g.add_op(ops.Conv3DOp, [data, g.add_constant(w, "w")], {})
    g.add_output(g.add_op(ops.ReluOp, [conv]), "y")
    compiled, _ = _compile(g)
    assert any(isinstance(op, ops.FusedOp) for op in compiled.module.walk())
    (y,), products, _ = _run_counted(compiled, [x], monkeypatch)
    assert products == 1
    expected = np.maximum(_conv3d(x.astype(np.float64), w.astype(np.float64)), 0)
    np.testing.assert_array_equal(y, expected.astype(np.float16))
