"""ONNX LinearAttention (opset 27) against the recurrence written out in numpy, through `ge.backend`.

onnxruntime has no kernel for it, so the oracle below is the operator's definition step by step:
a [batch, kv_heads, d_k, d_v] state decayed, corrected (delta rules), written with k v^T and read
by each query head of the group that shares it.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import ge.backend
from ge.errors import InvalidModelError, UnsupportedOperatorError
from ge.frontends.onnx import import_onnx

NAMES = ("query", "key", "value", "past_state", "decay", "beta")


def model(inputs: dict[str, np.ndarray | None], **attrs):
    node_inputs = [name if inputs.get(name) is not None else "" for name in NAMES]
    while not node_inputs[-1]:
        node_inputs.pop()
    node = helper.make_node("LinearAttention", node_inputs, ["output", "present_state"], **attrs)
    graph_inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for name, a in inputs.items()
        if a is not None
    ]
    outputs = [helper.make_empty_tensor_value_info(n) for n in ("output", "present_state")]
    graph = helper.make_graph([node], "linear_attention", graph_inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)], ir_version=10)


def oracle(query, key, value, past=None, decay=None, beta=None, *, q_heads, kv_heads, rule, scale=0.0):
    """The recurrence of the operator's definition, one step at a time, in float64."""
    b, t, _ = query.shape
    d_k, d_v = query.shape[2] // q_heads, value.shape[2] // kv_heads
    q = query.astype(np.float64).reshape(b, t, q_heads, d_k)
    k = key.astype(np.float64).reshape(b, t, kv_heads, d_k)
    v = value.astype(np.float64).reshape(b, t, kv_heads, d_v)
    state = np.zeros((b, kv_heads, d_k, d_v)) if past is None else past.astype(np.float64)
    scale = scale or 1 / np.sqrt(d_k)
    out = np.zeros((b, t, q_heads, d_v))
    for i in range(t):
        if decay is not None:
            g = decay[:, i].astype(np.float64).reshape(b, kv_heads, -1)
            state = state * np.exp(g)[..., None]
        v_i = v[:, i]
        if beta is not None:
            rate = beta[:, i].astype(np.float64).reshape(b, -1, 1)
            v_i = rate * (v_i - np.einsum("bhdm,bhd->bhm", state, k[:, i]))
        state = state + k[:, i, :, :, None] * v_i[:, :, None, :]
        shared = np.repeat(state, q_heads // kv_heads, axis=1)
        out[:, i] = scale * np.einsum("bhd,bhdm->bhm", q[:, i], shared)
    present_dtype = past.dtype if past is not None else query.dtype
    return out.reshape(b, t, q_heads * d_v).astype(query.dtype), state.astype(present_dtype)


def inputs(
    rng, b=2, t=3, q_heads=4, kv_heads=2, d_k=4, d_v=5, rule="gated_delta", past=False, dtype=np.float32
):
    key = rng.standard_normal((b, t, kv_heads, d_k))
    key /= np.linalg.norm(key, axis=-1, keepdims=True)  # delta rules assume unit keys
    arrays = {
        "query": rng.standard_normal((b, t, q_heads * d_k)).astype(dtype),
        "key": key.reshape(b, t, kv_heads * d_k).astype(dtype),
        "value": rng.standard_normal((b, t, kv_heads * d_v)).astype(dtype),
        "past_state": (0.1 * rng.standard_normal((b, kv_heads, d_k, d_v))).astype(dtype) if past else None,
        "decay": None,
        "beta": None,
    }
    if rule in ("gated", "gated_delta"):
        arrays["decay"] = (-0.1 * np.abs(rng.standard_normal((b, t, kv_heads * d_k)))).astype(dtype)
    if rule in ("delta", "gated_delta"):
        arrays["beta"] = rng.random((b, t, kv_heads)).astype(dtype)
    return arrays


def check(arrays, rtol=1e-4, atol=1e-5, **attrs):
    feeds = {name: a for name, a in arrays.items() if a is not None}
    got = ge.backend.prepare(model(arrays, **attrs)).run(feeds)
    want = oracle(
        *(arrays[n] for n in NAMES),
        q_heads=attrs["q_num_heads"],
        kv_heads=attrs["kv_num_heads"],
        rule=attrs.get("update_rule", "gated_delta"),
        scale=attrs.get("scale", 0.0),
    )
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
def test_each_update_rule(rule):
    rng = np.random.default_rng(0)
    check(inputs(rng, rule=rule), update_rule=rule, q_num_heads=4, kv_num_heads=2)


def test_past_state_and_explicit_scale():
    rng = np.random.default_rng(1)
    check(inputs(rng, kv_heads=4, past=True), q_num_heads=4, kv_num_heads=4, scale=0.3)


def test_per_head_decay_and_shared_beta():
    rng = np.random.default_rng(2)
    arrays = inputs(rng, rule="gated_delta", q_heads=3, kv_heads=1)
    arrays["decay"] = (-0.2 * np.abs(rng.standard_normal((2, 3, 1)))).astype(np.float32)
    arrays["beta"] = rng.random((2, 3, 1)).astype(np.float32)
    check(arrays, q_num_heads=3, kv_num_heads=1)


def test_single_decode_step():
    rng = np.random.default_rng(3)
    check(inputs(rng, t=1, past=True), q_num_heads=4, kv_num_heads=2)


def test_float16_computes_in_float32():
    rng = np.random.default_rng(4)
    check(inputs(rng, dtype=np.float16), rtol=2e-3, atol=2e-3, q_num_heads=4, kv_num_heads=2)


def test_rule_without_its_inputs_is_invalid():
    rng = np.random.default_rng(5)
    arrays = inputs(rng, rule="linear")
    with pytest.raises(InvalidModelError, match="takes decay"):
        ge.backend.prepare(model(arrays, update_rule="gated", q_num_heads=4, kv_num_heads=2))


def test_dynamic_sequence_is_refused():
    arrays = inputs(np.random.default_rng(6), rule="linear")
    m = model(arrays, update_rule="linear", q_num_heads=4, kv_num_heads=2)
    for value_info in m.graph.input:
        value_info.type.tensor_type.shape.dim[1].dim_param = "T"
    with pytest.raises(UnsupportedOperatorError, match="dynamic shape"):
        import_onnx(m)
