"""FlexAttention (domain ai.onnx.preview) against numpy attention, through `ge.backend`.

onnxruntime has no kernel for it; the oracle is scaled dot-product attention in float64 with the
modifier subgraphs' formulas written out (a causal mask and a soft cap on the scores, a scale on
the probabilities).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import ge.backend
from ge.errors import InvalidModelError

PREVIEW = "ai.onnx.preview"


def modifier(kind: str) -> object:
    """A modifier subgraph: "causal" (-inf above the diagonal), "cap" (5 tanh(x / 5)), "half" (x / 2)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "H", "L", "S"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "H", "L", "S"])
    if kind == "causal":
        nodes = [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("Slice", ["shape", "two", "four"], ["sizes"]),
            helper.make_node(
                "ConstantOfShape", ["sizes"], ["ones"], value=helper.make_tensor("v", 7, [1], [1])
            ),
            helper.make_node("Trilu", ["ones"], ["lower"], upper=0),
            helper.make_node("Cast", ["lower"], ["mask"], to=TensorProto.BOOL),
            helper.make_node("Where", ["mask", "x", "neg_inf"], ["y"]),
        ]
        initializers = [
            helper.make_tensor("two", TensorProto.INT64, [1], [2]),
            helper.make_tensor("four", TensorProto.INT64, [1], [4]),
            helper.make_tensor("neg_inf", TensorProto.FLOAT, [], [-np.inf]),
        ]
    elif kind == "cap":
        nodes = [
            helper.make_node("Div", ["x", "cap"], ["scaled"]),
            helper.make_node("Tanh", ["scaled"], ["bounded"]),
            helper.make_node("Mul", ["bounded", "cap"], ["y"]),
        ]
        initializers = [helper.make_tensor("cap", TensorProto.FLOAT, [], [5.0])]
    else:
        nodes = [helper.make_node("Mul", ["x", "half"], ["y"])]
        initializers = [helper.make_tensor("half", TensorProto.FLOAT, [], [0.5])]
    return helper.make_graph(nodes, kind, [x], [y], initializers)


def model(q, k, v, **attrs):
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain=PREVIEW, **attrs)
    graph_inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for name, a in (("Q", q), ("K", k), ("V", v))
    ]
    graph = helper.make_graph([node], "flex", graph_inputs, [helper.make_empty_tensor_value_info("Y")])
    opsets = [helper.make_opsetid("", 26), helper.make_opsetid(PREVIEW, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def oracle(q, k, v, scale=None, score_mod=None, prob_mod=None):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    scores = scale * q @ np.swapaxes(k, -1, -2)
    if score_mod == "causal":
        scores = np.where(np.tril(np.ones(scores.shape[-2:], bool)), scores, -np.inf)
    elif score_mod == "cap":
        scores = 5 * np.tanh(scores / 5)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    if prob_mod == "half":
        probs = probs / 2
    return probs @ v


def check(q, k, v, rtol=1e-5, atol=1e-6, **mods):
    attrs = {key: modifier(kind) for key, kind in mods.items() if key.endswith("_mod")}
    if "scale" in mods:
        attrs["scale"] = mods["scale"]
    (got,) = ge.backend.prepare(model(q, k, v, **attrs)).run({"Q": q, "K": k, "V": v})
    want = oracle(q, k, v, **mods)
    assert got.dtype == v.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol)


def rand(rng, *shape, dtype=np.float32):
    return rng.random(shape).astype(dtype)


def test_plain_attention_with_scale():
    rng = np.random.default_rng(0)
    check(rand(rng, 2, 3, 5, 8), rand(rng, 2, 3, 7, 8), rand(rng, 2, 3, 7, 6), scale=0.2)


def test_grouped_query_heads():
    rng = np.random.default_rng(1)
    check(rand(rng, 1, 6, 4, 8), rand(rng, 1, 2, 5, 8), rand(rng, 1, 2, 5, 8))


@pytest.mark.parametrize("score_mod", ["causal", "cap"])
def test_score_modifiers(score_mod):
    rng = np.random.default_rng(2)
    check(rand(rng, 2, 2, 6, 4), rand(rng, 2, 2, 6, 4), rand(rng, 2, 2, 6, 4), score_mod=score_mod)


def test_probability_modifier():
    rng = np.random.default_rng(3)
    check(rand(rng, 1, 2, 3, 4), rand(rng, 1, 2, 5, 4), rand(rng, 1, 2, 5, 4), prob_mod="half")


def test_float64_and_float16():
    rng = np.random.default_rng(4)
    # The scale's square root is taken in float32 (as the operator's reference does): 1e-9 apart.
    check(*(rand(rng, 1, 2, 3, 4, dtype=np.float64) for _ in range(3)), rtol=1e-8, atol=1e-8)
    check(*(rand(rng, 1, 2, 3, 4, dtype=np.float16) for _ in range(3)), rtol=2e-3, atol=2e-3)


def test_uneven_head_groups_are_invalid():
    rng = np.random.default_rng(5)
    q, k = rand(rng, 1, 3, 2, 4), rand(rng, 1, 2, 2, 4)
    with pytest.raises(InvalidModelError, match="query heads"):
        ge.backend.prepare(model(q, k, k))
