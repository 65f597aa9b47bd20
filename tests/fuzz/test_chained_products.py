"""Random chains of matrix products, the case `ge-assign-formats` may keep in FRACTAL_NZ from one
product to the next: 2 or 3 MatMul or Gemm nodes, each reading the previous one's result as its
left matrix, some with a bias and an activation after them, of random sizes (rows often a multiple
of 16, where the cost model may prefer the tiles, else any), batch dimensions and float types.
Each is compiled at O3 and run on the emulator against onnxruntime, and the chains that went
FRACTAL_NZ must have done so without a conversion kernel. The random graphs of
`test_random_graphs.py` are too small for the cost model ever to choose the tiles."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import onnxruntime
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import ge

EXAMPLES = {"ci": 200, "fuzz": 2000}
TESTS = settings(
    max_examples=EXAMPLES.get(settings.get_current_profile_name(), settings().max_examples),
    suppress_health_check=[HealthCheck.too_slow],
)
TYPES = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}
ACTIVATIONS = ["Relu", "Sigmoid", "Tanh", "Gelu"]


@st.composite
def chains(draw: st.DrawFn) -> tuple:
    dtype = draw(st.sampled_from([np.float32, np.float16]))
    rows = draw(st.one_of(st.sampled_from([16, 32, 48, 64]), st.integers(1, 70)))
    batch = draw(st.sampled_from([(), (2,), (1, 3)]))
    widths = [draw(st.integers(1, 80)) for _ in range(draw(st.integers(3, 4)))]
    links = [
        (
            draw(st.sampled_from(["MatMul", "Gemm"])) if not batch else "MatMul",
            draw(st.booleans()),
            draw(st.sampled_from([None, *ACTIVATIONS])),
        )
        for _ in widths[1:]
    ]
    return dtype, rows, batch, widths, links, draw(st.integers(0, 2**32 - 1))


def build(dtype: type, rows: int, batch: tuple[int, ...], widths: list[int], links: list, seed: int):
    rng = np.random.default_rng(seed)
    nodes, weights, value = [], {}, "x"
    for index, ((op, bias, activation), (k, n)) in enumerate(
        zip(links, itertools.pairwise(widths), strict=True)
    ):
        w = f"w{index}"
        weights[w] = (rng.standard_normal((k, n)) / math.sqrt(k)).astype(dtype)
        product = f"p{index}"
        if op == "Gemm":
            trans_b = bool(rng.integers(2))
            if trans_b:
                weights[w] = np.ascontiguousarray(weights[w].T)
            nodes.append(helper.make_node("Gemm", [value, w], [product], transB=int(trans_b)))
        else:
            nodes.append(helper.make_node("MatMul", [value, w], [product]))
        value = product
        if bias:
            weights[f"b{index}"] = rng.standard_normal(n).astype(dtype)
            nodes.append(helper.make_node("Add", [value, f"b{index}"], [f"s{index}"]))
            value = f"s{index}"
        if activation:
            nodes.append(helper.make_node(activation, [value], [f"a{index}"]))
            value = f"a{index}"
    nodes.append(helper.make_node("Identity", [value], ["y"]))
    x_shape = [*batch, rows, widths[0]]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TYPES[dtype], x_shape)],
        [helper.make_tensor_value_info("y", TYPES[dtype], None)],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return model, rng.standard_normal(x_shape).astype(dtype)


@TESTS
@given(chain=chains())
def test_a_chain_of_products_matches_onnxruntime_and_converts_nothing_between_tiles(chain: tuple) -> None:
    dtype, rows, batch, widths, links, seed = chain
    model, x = build(dtype, rows, batch, widths, links, seed)
    compiled = ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(model), optimization_level=3)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    (got,) = executor.run({"x": x})
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    tolerance = 1e-4 if dtype == np.float32 else 2e-2
    scale = max(1.0, float(np.max(np.abs(expected.astype(np.float64)), initial=0)))
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tolerance, atol=tolerance * scale)
    text = str(compiled.module)
    if re.search(r"-> tensor<[^>]*#ascend\.format<FRACTAL_NZ>>", text):  # a product's result in tiles
        event("a chain through FRACTAL_NZ")
        assert "@trans_data" not in text  # no conversion kernel
