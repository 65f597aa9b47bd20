"""RotaryEmbedding, SwiGLU, CausalConvWithState and TensorScatter, through `ge.backend`.

RotaryEmbedding and TensorScatter are compared with onnxruntime; SwiGLU (opset 28) and
CausalConvWithState (opset 27) are newer than onnxruntime's kernels, so their expected values
are written out in numpy from the operators' definitions.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import run_onnxruntime
from single_node import feeds, one_node

import ge.backend
from ge.errors import InvalidModelError


def run_ge(op_type: str, inputs: list[np.ndarray | None], opset: int, outputs: int = 1, **attrs):
    model = one_node(op_type, inputs, opset, outputs, **attrs)
    return ge.backend.prepare(model).run(feeds(inputs, ()))


def check(op_type: str, inputs: list[np.ndarray | None], opset: int, outputs: int = 1, **attrs) -> None:
    got = run_ge(op_type, inputs, opset, outputs, **attrs)
    want = run_onnxruntime(one_node(op_type, inputs, opset, outputs, **attrs), feeds(inputs, ()))
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def normal(rng: np.random.Generator, *shape: int, dtype=np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------------------------
# RotaryEmbedding
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rotary", [0, 4])
def test_rotary_embedding_with_positions(interleaved, rotary, rng) -> None:
    x = normal(rng, 2, 3, 5, 8)
    half = (rotary or 8) // 2
    angles = rng.uniform(0, 6, (11, half))
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    positions = rng.integers(0, 11, (2, 5)).astype(np.int64)
    check(
        "RotaryEmbedding",
        [x, cos, sin, positions],
        23,
        interleaved=interleaved,
        rotary_embedding_dim=rotary,
    )


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding_3d_without_positions(interleaved, rng) -> None:
    x = normal(rng, 2, 4, 12)  # three heads of 4
    cos, sin = normal(rng, 2, 4, 2), normal(rng, 2, 4, 2)
    check("RotaryEmbedding", [x, cos, sin], 23, interleaved=interleaved, num_heads=3)


def test_rotary_embedding_3d_needs_heads(rng) -> None:
    x = normal(rng, 2, 4, 12)
    with pytest.raises(InvalidModelError, match="num_heads"):
        run_ge("RotaryEmbedding", [x, normal(rng, 2, 4, 2), normal(rng, 2, 4, 2)], 23)


# --------------------------------------------------------------------------------------------
# SwiGLU
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [None, 1.702])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_swiglu(alpha, dtype, rng) -> None:
    a, b = normal(rng, 3, 7, dtype=dtype), normal(rng, 3, 7, dtype=dtype)
    attrs = {} if alpha is None else {"alpha": alpha}
    (got,) = run_ge("SwiGLU", [a, b], 28, **attrs)
    wide_a = a.astype(np.float64)
    want = wide_a / (1 + np.exp(-(alpha or 1.0) * wide_a)) * b.astype(np.float64)
    assert got.dtype == dtype
    tolerance = 1e-5 if dtype == np.float32 else 2e-3
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tolerance, atol=tolerance)


def test_swiglu_needs_one_shape(rng) -> None:
    with pytest.raises(InvalidModelError, match="one shape"):
        run_ge("SwiGLU", [normal(rng, 3, 7), normal(rng, 1, 7)], 28)


# --------------------------------------------------------------------------------------------
# CausalConvWithState
# --------------------------------------------------------------------------------------------


def causal_conv(x, w, bias, past, activation):
    """The operator's definition: a depthwise causal convolution over [past, x]."""
    k = w.shape[2]
    if past is None:
        past = np.zeros((*x.shape[:2], k - 1))
    padded = np.concatenate([past, x], axis=2).astype(np.float64)
    windows = np.lib.stride_tricks.sliding_window_view(padded, k, axis=2)  # B, C, L, k
    y = np.einsum("bclk,ck->bcl", windows, w[:, 0, :].astype(np.float64))
    if bias is not None:
        y = y + bias[:, None]
    if activation != "none":
        y = y / (1 + np.exp(-y))
    return y, padded[:, :, padded.shape[2] - (k - 1) :]


@pytest.mark.parametrize("activation", ["none", "silu", "swish"])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("with_past", [False, True])
@pytest.mark.parametrize(("length", "k"), [(8, 4), (1, 4), (6, 1), (2, 5)])
def test_causal_conv_with_state(activation, with_bias, with_past, length, k, rng) -> None:
    x, w = normal(rng, 2, 3, length), normal(rng, 3, 1, k)
    bias = normal(rng, 3) if with_bias else None
    past = normal(rng, 2, 3, k - 1) if with_past else None
    output, present = run_ge("CausalConvWithState", [x, w, bias, past], 27, outputs=2, activation=activation)
    want_output, want_present = causal_conv(x, w, bias, past, activation)
    assert output.shape == (2, 3, length) and present.shape == (2, 3, k - 1)
    np.testing.assert_allclose(output, want_output, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(present, want_present.astype(np.float32))


def test_causal_conv_with_state_unknown_activation(rng) -> None:
    with pytest.raises(InvalidModelError, match="unknown activation 'gelu'"):
        run_ge("CausalConvWithState", [normal(rng, 1, 2, 4), normal(rng, 2, 1, 3)], 27, 2, activation="gelu")


# --------------------------------------------------------------------------------------------
# TensorScatter
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("axis", [-2, 1, 2])
def test_tensor_scatter(mode, axis, rng) -> None:
    cache = normal(rng, 2, 6, 5, 3)
    update_shape = list(cache.shape)
    update_shape[axis] = 2
    update = normal(rng, *update_shape)
    length = cache.shape[axis]
    starts = np.array([0, length - 1 if mode == "circular" else length - 2], np.int64)
    check("TensorScatter", [cache, update, starts], 24, mode=mode, axis=axis)


def test_tensor_scatter_without_write_indices(rng) -> None:
    check("TensorScatter", [normal(rng, 3, 7, 4), normal(rng, 3, 2, 4)], 24)


def test_tensor_scatter_batch_axis_is_invalid(rng) -> None:
    with pytest.raises(InvalidModelError, match="non-batch axis"):
        run_ge("TensorScatter", [normal(rng, 3, 7, 4), normal(rng, 3, 7, 4)], 24, axis=0)
