"""ONNX Attention (opsets 23 to 25) against onnxruntime, through `ge.backend`.

Each case is a one-node model that `ge` compiles through its whole pipeline (attention is one
cube kernel) and runs on the emulator, and that onnxruntime runs too. 16-bit float cases are
compared with onnxruntime on the float32 model of the same values, rounded.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

import ge.backend
from ge.errors import UnsupportedOperatorError, VerificationError

BF16 = np.dtype(ml_dtypes.bfloat16)
NARROW = (np.dtype(np.float16), BF16)
OUTPUTS = ("Y", "present_key", "present_value", "qk_matmul_output")


def model(
    inputs: dict[str, np.ndarray | None], outputs: tuple[str, ...], opset: int, **attrs
) -> onnx.ModelProto:
    """One Attention node; inputs given as None are left out, and so are outputs not listed."""
    names = list(inputs)
    node_inputs = [name if inputs[name] is not None else "" for name in names]
    while node_inputs and not node_inputs[-1]:
        node_inputs.pop()
    node_outputs = [
        name if name in outputs else "" for name in OUTPUTS[: 1 + max(OUTPUTS.index(o) for o in outputs)]
    ]
    node = helper.make_node("Attention", node_inputs, node_outputs, name="attention", **attrs)
    graph_inputs = [
        helper.make_tensor_value_info(
            name,
            TensorProto.BFLOAT16 if a.dtype == BF16 else helper.np_dtype_to_tensor_dtype(a.dtype),
            a.shape,
        )
        for name, a in inputs.items()
        if a is not None
    ]
    graph = helper.make_graph(
        [node], "attention", graph_inputs, [helper.make_empty_tensor_value_info(o) for o in outputs]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def check(
    inputs: dict[str, np.ndarray | None],
    outputs: tuple[str, ...] = ("Y",),
    opset: int = 23,
    rtol=1e-5,
    **attrs,
) -> list[np.ndarray]:
    feeds = {name: a for name, a in inputs.items() if a is not None}
    got = ge.backend.prepare(model(inputs, outputs, opset, **attrs)).run(feeds)
    wide = {
        name: a.astype(np.float32) if a is not None and a.dtype in NARROW else a for name, a in inputs.items()
    }
    session = onnxruntime.InferenceSession(
        model(wide, outputs, opset, **attrs).SerializeToString(), providers=["CPUExecutionProvider"]
    )
    want = session.run(None, {name: a for name, a in wide.items() if a is not None})
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape, (g.shape, w.shape)
        if g.dtype in NARROW:
            w = w.astype(g.dtype)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        # onnxruntime writes a causally masked score as the lowest float, ONNX as -inf.
        lowest = np.finfo(np.float32).min
        g, w = (np.maximum(a.astype(np.float64), lowest) for a in (g, w))
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
    return got


def qkv(rng, batch=2, heads=4, kv_heads=4, q_seq=3, kv_seq=5, dim=8, v_dim=8, dtype=np.float32):
    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32).astype(dtype)

    return {
        "Q": normal(batch, heads, q_seq, dim),
        "K": normal(batch, kv_heads, kv_seq, dim),
        "V": normal(batch, kv_heads, kv_seq, v_dim),
    }


@pytest.mark.parametrize(
    ("shape", "attrs"),
    [
        ({}, {}),
        ({"kv_heads": 2}, {}),
        ({"kv_heads": 1, "v_dim": 6}, {}),
        ({}, {"scale": 0.3}),
        ({"q_seq": 5}, {"is_causal": 1}),
        ({"q_seq": 3, "kv_seq": 6, "kv_heads": 2}, {"is_causal": 1}),
        ({}, {"softcap": 2.0}),
    ],
    ids=["mha", "gqa", "mqa-v-dim", "scale", "causal", "causal-rectangular-gqa", "softcap"],
)
@pytest.mark.parametrize("opset", [23, 24])
def test_attention_4d(shape, attrs, opset, rng) -> None:
    check(qkv(rng, **shape), opset=opset, **attrs)


@pytest.mark.parametrize("mask_shape", [(3, 5), (1, 4, 3, 5), (2, 1, 3, 5), (4, 3, 5)], ids=str)
@pytest.mark.parametrize("kind", ["float", "bool"])
@pytest.mark.parametrize("causal", [0, 1])
def test_masks(mask_shape, kind, causal, rng) -> None:
    """A float mask is added, a boolean one selects. (Masks shorter than the keys, which ONNX pads
    and onnxruntime refuses, are covered by the conformance suite.)"""
    if kind == "float":
        mask = rng.standard_normal(mask_shape).astype(np.float32)
    else:
        mask = rng.random(mask_shape) > 0.3
        mask[..., 0] = True  # onnxruntime gives NaN for a fully masked row
    check({**qkv(rng), "attn_mask": mask}, is_causal=causal)


@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_kv_cache_and_qk_output(causal, mode, rng) -> None:
    inputs = qkv(rng, kv_heads=2, q_seq=3, kv_seq=3)
    inputs["attn_mask"] = rng.standard_normal((3, 7)).astype(np.float32)
    inputs["past_key"] = rng.standard_normal((2, 2, 4, 8)).astype(np.float32)
    inputs["past_value"] = rng.standard_normal((2, 2, 4, 8)).astype(np.float32)
    check(inputs, OUTPUTS, is_causal=causal, softcap=3.0, qk_matmul_output_mode=mode)


@pytest.mark.parametrize("causal", [0, 1])
def test_3d_inputs(causal, rng) -> None:
    inputs = {
        "Q": rng.standard_normal((2, 4, 32)).astype(np.float32),
        "K": rng.standard_normal((2, 6, 16)).astype(np.float32),
        "V": rng.standard_normal((2, 6, 12)).astype(np.float32),
    }
    check(inputs, is_causal=causal, q_num_heads=4, kv_num_heads=2)


@pytest.mark.parametrize("causal", [0, 1])
def test_nonpad_kv_seqlen(causal, rng) -> None:
    """An external cache: per-batch valid lengths, and the causal diagonal at their end."""
    inputs = qkv(rng, batch=3, kv_heads=2, q_seq=2, kv_seq=6)
    inputs.update(attn_mask=None, past_key=None, past_value=None)
    inputs["nonpad_kv_seqlen"] = np.array([4, 6, 3], np.int64)
    check(inputs, opset=24, is_causal=causal)


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_16_bit_floats(dtype, rng) -> None:
    check({**qkv(rng, dtype=dtype), "attn_mask": rng.random((3, 5)) > 0.2}, is_causal=1, rtol=2e-2)


def test_softmax_precision(rng) -> None:
    check(qkv(rng, dtype=np.float16), rtol=2e-2, softmax_precision=int(TensorProto.FLOAT))


def test_integer_masks_are_refused(rng) -> None:
    inputs = {**qkv(rng), "attn_mask": np.ones((3, 5), np.int32)}
    with pytest.raises(UnsupportedOperatorError, match="attn_mask of dtype int32"):
        ge.backend.prepare(model(inputs, ("Y",), 23)).run(inputs)


@pytest.mark.parametrize(
    ("attrs", "nonpad"),
    [
        ({"is_causal": 1, "left_window_size": 2}, False),
        ({"left_window_size": 1, "right_window_size": 2}, False),
        ({"is_causal": 1, "left_window_size": 1}, True),
    ],
    ids=["causal-left", "both-sides", "external-cache"],
)
def test_sliding_windows(attrs, nonpad, rng) -> None:
    """Opset 25's windows around each query's position (shifted by the valid lengths)."""
    inputs = qkv(rng, batch=2, q_seq=3, kv_seq=6)
    if nonpad:
        inputs.update(
            attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=np.array([5, 6], np.int64)
        )
    check(inputs, opset=25, **attrs)


@pytest.mark.parametrize("scale", [-0.5, 0.0, float("nan")])
def test_a_scale_not_positive_is_refused(scale, rng) -> None:
    """onnxruntime refuses a scale that is not positive; ge applies it as sqrt(scale) to Q and K,
    which took the root of a negative number at run time."""
    with pytest.raises(VerificationError, match=r"'scale' must be positive, got"):
        ge.backend.prepare(model(qkv(rng), ("Y",), 23, scale=scale))


def test_an_empty_key_sequence_is_refused(rng) -> None:
    """onnxruntime refuses a key sequence of length 0; its softmax over no scores took the
    maximum of an empty row at run time."""
    with pytest.raises(VerificationError, match="the key sequence is empty"):
        ge.backend.prepare(model(qkv(rng, kv_seq=0), ("Y",), 23))
