"""`ge-fuse-gelu`, `ge-fuse-layer-norm` and `ge-fuse-attention` on graphs exported in decomposed
form: each fused graph computes what the written-out one does (through the reference
interpreter), near-misses are left alone, and a 2-layer encoder fuses completely and still
matches onnxruntime."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from oracle import run_onnxruntime

import ge
from ge.dialects.common import get_flag
from ge.interpreter import run_function
from ge.passes.manager import PassManager
from ge.passes.pipelines import make_pass
from ge.passes.session import CompileSession

CLEANUP = ("ge-constant-fold", "ge-simplify", "cse", "dce")
FUSIONS = ("ge-fuse-gelu", "ge-fuse-layer-norm", "ge-fuse-attention", "dce")


def model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    outputs: list[str],
    constants: dict[str, object] | None = None,
    opset: int = 17,
) -> onnx.ModelProto:
    """A graph over `inputs` (their shapes and dtypes) with `constants` as initializers."""
    initializers = [numpy_helper.from_array(np.asarray(v), name) for name, v in (constants or {}).items()]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for name, a in inputs.items()
        ],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        initializer=initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def run_passes(proto: onnx.ModelProto, flags: tuple[str, ...]):
    """The imported graph, the module after `flags` and the compile session the passes shared."""
    g = ge.GraphParser().parse_onnx(proto)
    module = g.module.clone()
    session = PassManager([make_pass(flag) for flag in flags]).run(module, CompileSession(g.weights.copy()))
    return g, module, session


def pattern_counts(session: CompileSession) -> dict[str, dict[str, int]]:
    """The fusion counts of every pass, by pattern."""
    return {pattern: counts for by_pass in session.patterns.values() for pattern, counts in by_pass.items()}


def graph_ops(module) -> list[str]:
    return [
        op.name.removeprefix("ascend.graph.") for op in module.walk() if op.name.startswith("ascend.graph.")
    ]


def fuse_and_compare(
    proto: onnx.ModelProto, inputs: dict[str, np.ndarray], flags: tuple[str, ...], rtol: float
) -> tuple[list[str], dict, object]:
    """Runs `flags`; the graph computes the same before and after. Returns the ops left, the
    fusion counts and the module."""
    g, module, ctx = run_passes(proto, flags)
    before = run_function(g.module, list(inputs.values()), g.weights)
    after = run_function(module, list(inputs.values()), ctx.weights)
    for a, b in zip(after, before, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=rtol)
    return [name for name in graph_ops(module) if name != "const"], pattern_counts(ctx), module


def normal(rng: np.random.Generator, *shape: int, dtype=np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------------------------
# GELU
# --------------------------------------------------------------------------------------------

n = helper.make_node
SQRT2, HALF, ONE = math.sqrt(2.0), 0.5, 1.0
K, C = math.sqrt(2 / math.pi), 0.044715

ERF_TORCH = [  # torch: x * 0.5 * (1 + erf(x / sqrt(2))), multiplied by x first
    n("Div", ["x", "sqrt2"], ["d"]),
    n("Erf", ["d"], ["e"]),
    n("Add", ["e", "one"], ["a"]),
    n("Mul", ["x", "a"], ["m"]),
    n("Mul", ["m", "half"], ["y"]),
]
ERF_HALF_FIRST = [  # 0.5 * x first, then times (1 + erf)
    n("Mul", ["x", "half"], ["h"]),
    n("Div", ["x", "sqrt2"], ["d"]),
    n("Erf", ["d"], ["e"]),
    n("Add", ["one", "e"], ["a"]),
    n("Mul", ["h", "a"], ["y"]),
]
ERF_RSQRT2 = [  # x * 0.7071 inside erf, the half on the right
    n("Mul", ["x", "rsqrt2"], ["d"]),
    n("Erf", ["d"], ["e"]),
    n("Add", ["e", "one"], ["a"]),
    n("Mul", ["a", "half"], ["h"]),
    n("Mul", ["x", "h"], ["y"]),
]
TANH_POW = [  # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
    n("Pow", ["x", "three"], ["p"]),
    n("Mul", ["c", "p"], ["t"]),
    n("Add", ["x", "t"], ["u"]),
    n("Mul", ["k", "u"], ["w"]),
    n("Tanh", ["w"], ["th"]),
    n("Add", ["th", "one"], ["a"]),
    n("Mul", ["half", "x"], ["h"]),
    n("Mul", ["h", "a"], ["y"]),
]
TANH_CUBE = [  # x * x * x, and the half applied last
    n("Mul", ["x", "x"], ["x2"]),
    n("Mul", ["x2", "x"], ["x3"]),
    n("Mul", ["x3", "c"], ["t"]),
    n("Add", ["t", "x"], ["u"]),
    n("Mul", ["u", "k"], ["w"]),
    n("Tanh", ["w"], ["th"]),
    n("Add", ["one", "th"], ["a"]),
    n("Mul", ["x", "a"], ["m"]),
    n("Mul", ["m", "half"], ["y"]),
]
TANH_FAST = [  # x * sqrt(2/pi) * (1 + 0.044715 * x * x), divided by 2 at the end
    n("Mul", ["x", "x"], ["x2"]),
    n("Mul", ["x2", "c"], ["t"]),
    n("Add", ["t", "one"], ["u"]),
    n("Mul", ["x", "k"], ["xk"]),
    n("Mul", ["xk", "u"], ["w"]),
    n("Tanh", ["w"], ["th"]),
    n("Add", ["th", "one"], ["a"]),
    n("Mul", ["x", "a"], ["m"]),
    n("Div", ["m", "two"], ["y"]),
]


def gelu_constants(dtype=np.float32, **changes: float) -> dict[str, np.ndarray]:
    values = {
        "sqrt2": SQRT2,
        "rsqrt2": 1 / SQRT2,
        "half": HALF,
        "one": ONE,
        "two": 2.0,
        "three": 3.0,
        "k": K,
        "c": C,
    }
    values.update(changes)
    return {name: np.array(v, dtype) for name, v in values.items()}


def used_constants(nodes: list[onnx.NodeProto], constants: dict[str, object]) -> dict[str, object]:
    names = {i for node in nodes for i in node.input}
    return {k: v for k, v in constants.items() if k in names}


@pytest.mark.parametrize(
    ("nodes", "approximate"),
    [
        (ERF_TORCH, None),
        (ERF_HALF_FIRST, None),
        (ERF_RSQRT2, None),
        (TANH_POW, "tanh"),
        (TANH_CUBE, "tanh"),
        (TANH_FAST, "tanh"),
    ],
    ids=["erf-torch", "erf-half-first", "erf-rsqrt2", "tanh-pow", "tanh-cube", "tanh-fast"],
)
def test_gelu_forms_fuse(nodes, approximate, rng) -> None:
    inputs = {"x": normal(rng, 4, 64) * 3}
    proto = model(nodes, inputs, ["y"], used_constants(nodes, gelu_constants()))
    ops, counts, module = fuse_and_compare(proto, inputs, ("ge-fuse-gelu", "dce"), rtol=1e-6)
    assert ops == ["gelu"]
    pattern = "FuseTanhGelu" if approximate else "FuseErfGelu"
    assert counts == {pattern: {"matched": 1, "applied": 1}}
    (gelu,) = [op for op in module.walk() if op.name == "ascend.graph.gelu"]
    assert (gelu.approximate.data if gelu.approximate else None) == approximate
    assert len(gelu.attributes["sources"].data) == len(nodes)


def test_gelu_in_float16_matches_its_rounded_constants(rng) -> None:
    inputs = {"x": normal(rng, 4, 64, dtype=np.float16)}
    proto = model(ERF_TORCH, inputs, ["y"], used_constants(ERF_TORCH, gelu_constants(np.float16)))
    ops, _, _ = fuse_and_compare(proto, inputs, ("ge-fuse-gelu{keep-rounding=false}", "dce"), rtol=2e-3)
    assert ops == ["gelu"]


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_16_bit_gelu_keeps_every_rounding_by_default(dtype, rng) -> None:
    """gelu would round once where the formula rounds each step: left alone (matched, not
    applied), the graph's numbers are kept bit for bit."""
    inputs = {"x": normal(rng, 4, 64, dtype=dtype)}
    proto = model(ERF_TORCH, inputs, ["y"], used_constants(ERF_TORCH, gelu_constants(dtype)))
    ops, counts, _ = fuse_and_compare(proto, inputs, ("ge-fuse-gelu", "dce"), rtol=0)
    assert "gelu" not in ops and counts == {"FuseErfGelu": {"matched": 1, "applied": 0}}


@pytest.mark.parametrize(
    ("nodes", "changes"),
    [
        (ERF_TORCH, {"sqrt2": 1.5}),
        (ERF_TORCH, {"half": 0.6}),
        (ERF_TORCH, {"one": 2.0}),
        (TANH_POW, {"c": 0.05}),
        (TANH_POW, {"three": 2.0}),
    ],
    ids=["divisor", "half", "one", "cubic-coefficient", "power"],
)
def test_gelu_with_a_wrong_constant_is_left_alone(nodes, changes, rng) -> None:
    inputs = {"x": normal(rng, 4, 64)}
    proto = model(nodes, inputs, ["y"], used_constants(nodes, gelu_constants(**changes)))
    ops, counts, _ = fuse_and_compare(proto, inputs, ("ge-fuse-gelu", "dce"), rtol=0)
    assert "gelu" not in ops and not counts


def test_gelu_with_an_intermediate_used_elsewhere_is_left_alone(rng) -> None:
    inputs = {"x": normal(rng, 4, 64)}
    proto = model(ERF_TORCH, inputs, ["y", "e"], used_constants(ERF_TORCH, gelu_constants()))
    ops, counts, _ = fuse_and_compare(proto, inputs, ("ge-fuse-gelu", "dce"), rtol=0)
    assert "gelu" not in ops
    assert counts == {"FuseErfGelu": {"matched": 1, "applied": 0}}


# --------------------------------------------------------------------------------------------
# Layer norm and RMS norm
# --------------------------------------------------------------------------------------------


def layer_norm_nodes(x: str, y: str, axes=(-1,), square="pow", divide="div", affine=True) -> list:
    """A layer norm as torch (pow, div) or TF (mul, reciprocal) exports it."""
    nodes = [
        n("ReduceMean", [x], [f"{y}.mean"], axes=list(axes)),
        n("Sub", [x, f"{y}.mean"], [f"{y}.d"]),
        n("Pow", [f"{y}.d", "two"], [f"{y}.sq"])
        if square == "pow"
        else n("Mul", [f"{y}.d", f"{y}.d"], [f"{y}.sq"]),
        n("ReduceMean", [f"{y}.sq"], [f"{y}.var"], axes=list(axes)),
        n("Add", [f"{y}.var", "eps"], [f"{y}.ve"]),
        n("Sqrt", [f"{y}.ve"], [f"{y}.std"]),
    ]
    normalized = f"{y}.n" if affine else y
    if divide == "div":
        nodes.append(n("Div", [f"{y}.d", f"{y}.std"], [normalized]))
    else:
        nodes += [
            n("Reciprocal", [f"{y}.std"], [f"{y}.inv"]),
            n("Mul", [f"{y}.d", f"{y}.inv"], [normalized]),
        ]
    if affine:
        nodes += [n("Mul", [normalized, f"{y}.gamma"], [f"{y}.g"]), n("Add", [f"{y}.beta", f"{y}.g"], [y])]
    return nodes


def norm_constants(rng, y: str, shape) -> dict[str, np.ndarray]:
    return {
        "two": np.array(2.0, np.float32),
        "eps": np.array(1e-5, np.float32),
        f"{y}.gamma": normal(rng, *shape),
        f"{y}.beta": normal(rng, *shape),
    }


@pytest.mark.parametrize(
    ("options", "params"),
    [
        ({}, (32,)),
        ({"square": "mul", "divide": "reciprocal"}, (32,)),
        ({"affine": False}, (32,)),
        ({"axes": (-2, -1)}, (8, 32)),
        ({"axes": (2,), "square": "mul"}, (1, 32)),
    ],
    ids=["torch", "tf", "no-affine", "two-axes", "positive-axis"],
)
def test_layer_norm_forms_fuse(options, params, rng) -> None:
    inputs = {"x": normal(rng, 2, 8, 32) * 2 + 1}
    nodes = layer_norm_nodes("x", "y", **options)
    constants = used_constants(nodes, norm_constants(rng, "y", params))
    ops, counts, _ = fuse_and_compare(
        model(nodes, inputs, ["y"], constants), inputs, ("ge-fuse-layer-norm", "dce"), 1e-5
    )
    assert ops == ["layer_norm"]
    assert counts == {"FuseLayerNorm": {"matched": 1, "applied": 1}}


RMS_RECIPROCAL = [  # Llama: x * rsqrt(mean(x^2) + eps), then weight * that
    n("Pow", ["x", "two"], ["sq"]),
    n("ReduceMean", ["sq"], ["ms"], axes=[-1]),
    n("Add", ["ms", "eps"], ["ve"]),
    n("Sqrt", ["ve"], ["rms"]),
    n("Reciprocal", ["rms"], ["inv"]),
    n("Mul", ["x", "inv"], ["xn"]),
    n("Mul", ["y.gamma", "xn"], ["y"]),
]
RMS_DIV = [
    n("Mul", ["x", "x"], ["sq"]),
    n("ReduceMean", ["sq"], ["ms"], axes=[-1]),
    n("Add", ["eps", "ms"], ["ve"]),
    n("Sqrt", ["ve"], ["rms"]),
    n("Div", ["x", "rms"], ["xn"]),
    n("Mul", ["xn", "y.gamma"], ["y"]),
]


@pytest.mark.parametrize("nodes", [RMS_RECIPROCAL, RMS_DIV], ids=["reciprocal", "div"])
def test_rms_norm_forms_fuse(nodes, rng) -> None:
    inputs = {"x": normal(rng, 2, 8, 32)}
    constants = used_constants(nodes, norm_constants(rng, "y", (32,)))
    ops, counts, _ = fuse_and_compare(
        model(nodes, inputs, ["y"], constants), inputs, ("ge-fuse-layer-norm", "dce"), 1e-5
    )
    assert ops == ["rms_norm"]
    assert counts == {"FuseRMSNorm": {"matched": 1, "applied": 1}}


@pytest.mark.parametrize(
    ("nodes", "outputs"),
    [
        (layer_norm_nodes("x", "y", axes=(1,)), ["y"]),
        (layer_norm_nodes("x", "y"), ["y", "y.mean"]),
        (layer_norm_nodes("x", "y"), ["y", "y.std"]),
    ],
    ids=["leading-axis", "mean-used-elsewhere", "std-used-elsewhere"],
)
def test_layer_norm_near_misses_are_left_alone(nodes, outputs, rng) -> None:
    inputs = {"x": normal(rng, 2, 8, 32)}
    constants = used_constants(nodes, norm_constants(rng, "y", (32,)))
    ops, counts, _ = fuse_and_compare(
        model(nodes, inputs, outputs, constants), inputs, ("ge-fuse-layer-norm", "dce"), 0
    )
    assert "layer_norm" not in ops and "rms_norm" not in ops
    assert counts == {"FuseLayerNorm": {"matched": 1, "applied": 0}}


def test_a_parameter_that_varies_along_other_axes_stays_outside(rng) -> None:
    """A per-row `gamma` is not a layer norm scale: the norm fuses, the product stays."""
    inputs = {"x": normal(rng, 2, 8, 32)}
    nodes = layer_norm_nodes("x", "y")
    constants = {**norm_constants(rng, "y", (32,)), "y.gamma": normal(rng, 8, 1)}
    ops, _, _ = fuse_and_compare(
        model(nodes, inputs, ["y"], constants), inputs, ("ge-fuse-layer-norm", "dce"), 1e-5
    )
    assert ops == ["layer_norm", "mul", "add"]


# --------------------------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------------------------

B, H, S, DIM = 2, 4, 8, 16


def attention_model(rng, mask: str = "none", scale: str = "div", key: str = "transpose", **changes) -> tuple:
    """`softmax(Q K^T * scale + mask) V` as exporters write it, with these variations."""
    inputs = {"q": normal(rng, B, H, S, DIM), "v": normal(rng, B, H, S, DIM)}
    inputs["k"] = normal(rng, B, H, DIM, S) if key == "transposed" else normal(rng, B, H, S, DIM)
    constants = {"c": np.array(changes.get("c", math.sqrt(DIM)), np.float32)}
    nodes = []
    kt = "k"
    if key == "transpose":
        nodes.append(n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]))
        kt = "kt"
    q = "q"
    if scale == "query":
        constants["c"] = 1 / constants["c"]
        nodes.append(n("Mul", ["q", "c"], ["qs"]))
        q = "qs"
    nodes.append(n("MatMul", [q, kt], ["s"]))
    scores = "s"
    if scale == "div":
        nodes.append(n("Div", ["s", "c"], ["ss"]))
        scores = "ss"
    elif scale == "mul":
        constants["c"] = 1 / constants["c"]
        nodes.append(n("Mul", ["c", "s"], ["ss"]))
        scores = "ss"
    fill = np.array(changes.get("fill", -np.inf), np.float32)
    if mask == "float":
        inputs["mask"] = normal(rng, S, S)
        nodes.append(n("Add", [scores, "mask"], ["m"]))
    elif mask == "keep":
        inputs["mask"] = rng.random((B, 1, S, S)) > 0.3
        inputs["mask"][..., 0] = True
        constants["fill"] = fill
        nodes.append(n("Where", ["mask", scores, "fill"], ["m"]))
    elif mask == "drop":
        inputs["mask"] = rng.random((S, S)) > 0.7
        inputs["mask"][..., 0] = False
        constants["fill"] = fill
        nodes.append(n("Where", ["mask", "fill", scores], ["m"]))
    elif mask == "causal":  # as torch exports it: a lower triangle of ones, then Where
        constants.update(ones=np.ones((S, S), np.float32), zero=np.array(0.0, np.float32), fill=fill)
        nodes += [
            n("Trilu", ["ones"], ["tri"], upper=0),
            n("Cast", ["tri"], ["keep"], to=TensorProto.BOOL),
            n("Where", ["keep", "zero", "fill"], ["bias"]),
            n("Add", [scores, "bias"], ["m"]),
        ]
    m = "m" if mask != "none" else scores
    nodes += [n("Softmax", [m], ["p"], axis=changes.get("axis", -1)), n("MatMul", ["p", "v"], ["y"])]
    return nodes, inputs, constants


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"scale": "mul"},
        {"scale": "query"},
        {"scale": "none"},
        {"key": "transposed"},
        {"mask": "float"},
        {"mask": "keep"},
        {"mask": "drop"},
        {"mask": "keep", "fill": -3.4028234663852886e38},
        {"mask": "causal", "fill": -1e9},
        {"mask": "causal", "fill": -np.inf},
    ],
    ids=[
        "div",
        "mul",
        "scale-in-query",
        "unscaled",
        "key-transposed",
        "float-mask",
        "bool-keep",
        "bool-drop",
        "bool-keep-lowest",
        "causal-1e9",
        "causal-inf",
    ],
)
def test_attention_forms_fuse(options, rng) -> None:
    nodes, inputs, constants = attention_model(rng, **options)
    # The causal mask is built from constants: folding turns it into one constant first.
    flags = ("ge-constant-fold", "ge-fuse-attention", "dce")
    proto = model(nodes, inputs, ["y"], constants)
    ops, counts, module = fuse_and_compare(proto, inputs, flags, rtol=1e-5)
    assert [o for o in ops if o not in ("transpose", "not")] == ["attention"]
    assert counts == {"FuseScaledDotProductAttention": {"matched": 1, "applied": 1}}
    (attention,) = [op for op in module.walk() if op.name == "ascend.graph.attention"]
    causal = options.get("mask") == "causal"
    assert get_flag(attention, "is_causal") == causal
    assert len(attention.operands) == (4 if options.get("mask", "none") not in ("none", "causal") else 3)


def test_multi_query_attention_fuses(rng) -> None:
    """One key/value head shared by every query head, by matmul broadcasting."""
    nodes, inputs, constants = attention_model(rng)
    inputs["k"], inputs["v"] = normal(rng, B, 1, S, DIM), normal(rng, B, 1, S, DIM)
    ops, _, _ = fuse_and_compare(
        model(nodes, inputs, ["y"], constants), inputs, ("ge-fuse-attention", "dce"), 1e-5
    )
    assert ops == ["attention"]


@pytest.mark.parametrize(
    ("options", "outputs", "recorded"),
    [
        ({"axis": 2}, ["y"], True),
        ({}, ["y", "s"], True),
        ({}, ["y", "p"], True),
        ({"mask": "keep", "fill": 0.0}, ["y"], False),
        ({"mask": "keep", "fill": -1e4}, ["y"], False),
    ],
    ids=[
        "softmax-axis",
        "scores-used-elsewhere",
        "probabilities-used-elsewhere",
        "fill-zero",
        "fill-not-blocking",
    ],
)
def test_attention_near_misses_are_left_alone(options, outputs, recorded, rng) -> None:
    nodes, inputs, constants = attention_model(rng, **options)
    proto = model(nodes, inputs, outputs, constants)
    ops, counts, _ = fuse_and_compare(proto, inputs, ("ge-fuse-attention", "dce"), rtol=0)
    assert "attention" not in ops and "softmax" in ops
    assert counts == ({"FuseScaledDotProductAttention": {"matched": 1, "applied": 0}} if recorded else {})


# --------------------------------------------------------------------------------------------
# A 2-layer encoder, decomposed as older exporters write it
# --------------------------------------------------------------------------------------------

VOCAB, D, HEADS = 50, 32, 4


def encoder(layers: int = 2, seed: int = 0) -> onnx.ModelProto:
    """Embedding, then per layer: layer norm, causal self-attention with the exported reshape
    chains, residual, layer norm, GELU MLP, residual; every layer norm (torch's form before the
    attention, TF's before the MLP), GELU (erf in even layers, tanh in odd ones) and attention
    is written out."""
    rng = np.random.default_rng(seed)
    dh = D // HEADS
    constants: dict[str, object] = {
        "tok": normal(rng, VOCAB, D),
        "pos": normal(rng, S, D),
        "positions": np.arange(S, dtype=np.int64),
        "split": np.array([D, D, D], np.int64),
        "heads": np.array([B, S, HEADS, dh], np.int64),
        "flat": np.array([B, S, D], np.int64),
        "scale": np.array(np.sqrt(dh), np.float32),
        "ones": np.ones((S, S), np.float32),
        "zero": np.array(0.0, np.float32),
        "neg": np.array(-1e9, np.float32),
        "eps": np.array(1e-5, np.float32),
        **gelu_constants(),
    }
    nodes = [
        n("Gather", ["tok", "ids"], ["emb"]),
        n("Gather", ["pos", "positions"], ["pemb"]),
        n("Add", ["emb", "pemb"], ["h0"]),
        n("Trilu", ["ones"], ["tri"], upper=0),
        n("Cast", ["tri"], ["keep"], to=TensorProto.BOOL),
        n("Where", ["keep", "zero", "neg"], ["causal"]),
    ]
    for i in range(layers):
        p, h = f"l{i}", f"h{i}"
        for name, shape, scale, offset in (
            ("x1.gamma", (D,), 0.1, 1.0),
            ("x1.beta", (D,), 0.1, 0.0),
            ("qkv.w", (D, 3 * D), 0.2, 0.0),
            ("qkv.b", (3 * D,), 0.1, 0.0),
            ("out.w", (D, D), 0.2, 0.0),
            ("x2.gamma", (D,), 0.1, 1.0),
            ("x2.beta", (D,), 0.1, 0.0),
            ("fc1.w", (D, 4 * D), 0.2, 0.0),
            ("fc2.w", (4 * D, D), 0.2, 0.0),
        ):
            constants[f"{p}.{name}"] = normal(rng, *shape) * scale + offset
        nodes += layer_norm_nodes(h, f"{p}.x1")
        nodes += [
            n("MatMul", [f"{p}.x1", f"{p}.qkv.w"], [f"{p}.qkv0"]),
            n("Add", [f"{p}.qkv0", f"{p}.qkv.b"], [f"{p}.qkv"]),
            n("Split", [f"{p}.qkv", "split"], [f"{p}.q0", f"{p}.k0", f"{p}.v0"], axis=-1),
        ]
        for t in ("q", "k", "v"):
            nodes += [
                n("Reshape", [f"{p}.{t}0", "heads"], [f"{p}.{t}1"]),
                n("Transpose", [f"{p}.{t}1"], [f"{p}.{t}"], perm=[0, 2, 1, 3]),
            ]
        nodes += [
            n("Transpose", [f"{p}.k"], [f"{p}.kt"], perm=[0, 1, 3, 2]),
            n("MatMul", [f"{p}.q", f"{p}.kt"], [f"{p}.s0"]),
            n("Div", [f"{p}.s0", "scale"], [f"{p}.s1"]),
            n("Add", [f"{p}.s1", "causal"], [f"{p}.s"]),
            n("Softmax", [f"{p}.s"], [f"{p}.probs"], axis=-1),
            n("MatMul", [f"{p}.probs", f"{p}.v"], [f"{p}.ctx0"]),
            n("Transpose", [f"{p}.ctx0"], [f"{p}.ctx1"], perm=[0, 2, 1, 3]),
            n("Reshape", [f"{p}.ctx1", "flat"], [f"{p}.ctx"]),
            n("MatMul", [f"{p}.ctx", f"{p}.out.w"], [f"{p}.attn"]),
            n("Add", [h, f"{p}.attn"], [f"{p}.h1"]),
        ]
        nodes += layer_norm_nodes(f"{p}.h1", f"{p}.x2", square="mul", divide="reciprocal")
        nodes.append(n("MatMul", [f"{p}.x2", f"{p}.fc1.w"], [f"{p}.f0"]))
        nodes += instantiate(ERF_TORCH if i % 2 == 0 else TANH_POW, f"{p}.gelu", f"{p}.f0", f"{p}.f1")
        nodes += [
            n("MatMul", [f"{p}.f1", f"{p}.fc2.w"], [f"{p}.f2"]),
            n("Add", [f"{p}.h1", f"{p}.f2"], [f"h{i + 1}"]),
        ]
    nodes.append(n("ReduceMean", [f"h{layers}"], ["pooled"], axes=[1], keepdims=0))
    graph = helper.make_graph(
        nodes,
        "encoder",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [B, S])],
        [
            helper.make_tensor_value_info(f"h{layers}", TensorProto.FLOAT, [B, S, D]),
            helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [B, D]),
        ],
        initializer=[
            numpy_helper.from_array(np.asarray(v), k) for k, v in used_constants(nodes, constants).items()
        ],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(proto)
    return proto


def instantiate(nodes: list[onnx.NodeProto], prefix: str, x: str, y: str) -> list[onnx.NodeProto]:
    """`nodes` computing `y` from `x`, their intermediates prefixed; constants keep their names."""
    constants = set(gelu_constants())

    def rename(name: str) -> str:
        return {"x": x, "y": y}.get(name, name if name in constants else f"{prefix}.{name}")

    copies = []
    for node in nodes:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.input[:] = [rename(i) for i in node.input]
        copy.output[:] = [rename(o) for o in node.output]
        copies.append(copy)
    return copies


def test_two_layer_encoder_fuses_completely_and_matches_onnxruntime() -> None:
    proto = encoder(layers=2)
    _, module, ctx = run_passes(proto, CLEANUP + FUSIONS)
    ops = graph_ops(module)
    assert ops.count("layer_norm") == 4
    assert ops.count("gelu") == 2
    assert ops.count("attention") == 2
    for written_out in ("erf", "tanh", "softmax", "sqrt", "pow", "reciprocal"):
        assert written_out not in ops
    assert ops.count("reduce_mean") == 1  # the pooling
    assert all(entry["matched"] == entry["applied"] for entry in pattern_counts(ctx).values())
    attentions = [op for op in module.walk() if op.name == "ascend.graph.attention"]
    assert all(op.is_causal is not None and len(op.operands) == 3 for op in attentions)
    ids = np.random.default_rng(3).integers(0, VOCAB, (B, S)).astype(np.int64)
    expected = run_onnxruntime(proto, {"ids": ids})
    actual = run_function(module, [ids], ctx.weights)
    for a, e in zip(actual, expected, strict=True):
        assert a.shape == e.shape and a.dtype == e.dtype
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)
