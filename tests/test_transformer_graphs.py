"""Transformer-style graphs as torch.onnx exports them (opset 17-18), built with onnx.helper and
compared with onnxruntime through the whole pipeline."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from oracle import run_onnxruntime

import ge.backend

B, S, D, H, V = 2, 8, 32, 4, 50


def _init(rng, name, *shape, scale=0.1):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def _const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def encoder_block(opset: int, seed: int = 0) -> onnx.ModelProto:
    """Embedding, causal self-attention with the exported reshape chains, GELU (erf) MLP."""
    rng = np.random.default_rng(seed)
    dh = D // H
    inits = [
        _init(rng, "tok", V, D, scale=1.0),
        _init(rng, "pos", S, D, scale=1.0),
        _init(rng, "ln1.w", D, scale=0.1),
        _init(rng, "ln1.b", D),
        _init(rng, "qkv.w", D, 3 * D),
        _init(rng, "qkv.b", 3 * D),
        _init(rng, "out.w", D, D),
        _init(rng, "ln2.w", D),
        _init(rng, "ln2.b", D),
        _init(rng, "fc1.w", D, 4 * D),
        _init(rng, "fc2.w", 4 * D, D),
        _const("positions", np.arange(S, dtype=np.int64)),
        _const("split", np.array([D, D, D], np.int64)),
        _const("zero", np.array([0], np.int64)),
        _const("heads", np.array([H, dh], np.int64)),
        _const("minus1", np.array([-1], np.int64)),
        _const("scale", np.array(np.sqrt(dh), np.float32)),
        _const("half", np.array(0.5, np.float32)),
        _const("one", np.array(1.0, np.float32)),
        _const("sqrt2", np.array(np.sqrt(2.0), np.float32)),
        _const("neg", np.array(-1e9, np.float32)),
        _const("ones", np.ones((S, S), np.float32)),
        _const("izero", np.array(0.0, np.float32)),
    ]
    n = helper.make_node
    nodes = [
        n("Gather", ["tok", "ids"], ["emb"]),
        n("Gather", ["pos", "positions"], ["pemb"]),
        n("Add", ["emb", "pemb"], ["h0"]),
        n("LayerNormalization", ["h0", "ln1.w", "ln1.b"], ["x1"], axis=-1, epsilon=1e-5),
        n("MatMul", ["x1", "qkv.w"], ["qkv0"]),
        n("Add", ["qkv0", "qkv.b"], ["qkv"]),
        n("Split", ["qkv", "split"], ["q0", "k0", "v0"], axis=-1),
        # The reshape target is computed from the input's shape, as torch exports it.
        n("Shape", ["x1"], ["shp"]),
        n("Slice", ["shp", "zero", "minus1"], ["bs"]),
        n("Concat", ["bs", "heads"], ["target"], axis=0),
    ]
    for t in ("q", "k", "v"):
        nodes += [
            n("Reshape", [f"{t}0", "target"], [f"{t}1"]),
            n("Transpose", [f"{t}1"], [f"{t}"], perm=[0, 2, 1, 3]),
        ]
    nodes += [
        n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        n("MatMul", ["q", "kt"], ["scores0"]),
        n("Div", ["scores0", "scale"], ["scores1"]),
        n("Trilu", ["ones"], ["causal"], upper=0),
        n("Cast", ["causal"], ["keep"], to=TensorProto.BOOL),
        n("Where", ["keep", "izero", "neg"], ["mask"]),
        n("Add", ["scores1", "mask"], ["scores"]),
        n("Softmax", ["scores"], ["probs"], axis=-1),
        n("MatMul", ["probs", "v"], ["ctx0"]),
        n("Transpose", ["ctx0"], ["ctx1"], perm=[0, 2, 1, 3]),
        n("Concat", ["bs", "minus1"], ["flat"], axis=0),
        n("Reshape", ["ctx1", "flat"], ["ctx"]),
        n("MatMul", ["ctx", "out.w"], ["attn"]),
        n("Add", ["h0", "attn"], ["h1"]),
        n("LayerNormalization", ["h1", "ln2.w", "ln2.b"], ["x2"], axis=-1, epsilon=1e-5),
        n("MatMul", ["x2", "fc1.w"], ["f0"]),
        n("Div", ["f0", "sqrt2"], ["f1"]),
        n("Erf", ["f1"], ["f2"]),
        n("Add", ["f2", "one"], ["f3"]),
        n("Mul", ["f0", "f3"], ["f4"]),
        n("Mul", ["f4", "half"], ["gelu"]),
        n("MatMul", ["gelu", "fc2.w"], ["f5"]),
        n("Add", ["h1", "f5"], ["y"]),
        n("ReduceMean", ["y"], ["pooled"], axes=[1], keepdims=0)
        if opset < 18
        else n("ReduceMean", ["y", "axis1"], ["pooled"], keepdims=0),
    ]
    if opset >= 18:
        inits.append(_const("axis1", np.array([1], np.int64)))
    graph = helper.make_graph(
        nodes,
        "encoder",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [B, S])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, S, D]),
            helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [B, D]),
        ],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


@pytest.mark.parametrize("opset", [17, 18])
def test_encoder_block_matches_onnxruntime(opset: int) -> None:
    model = encoder_block(opset)
    ids = np.random.default_rng(3).integers(0, V, (B, S)).astype(np.int64)
    expected = run_onnxruntime(model, {"ids": ids})
    actual = ge.backend.prepare(model).run({"ids": ids})
    for a, e in zip(actual, expected, strict=True):
        assert a.shape == e.shape and a.dtype == e.dtype
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)
