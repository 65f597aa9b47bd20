"""float16 and bfloat16 results are rounded wherever an op's result is stored, inside fused
kernels too, so no optimization level changes a 16-bit graph's numbers (the default precision
mode is `must_keep_origin_dtype`): O3 gives O0's results bit for bit, with fewer launches.
float32 stays float32.

Each graph is one that O3 rewrites: an elementwise chain (one vector kernel), a matmul with its
epilogue (one cube kernel), conv + batch norm + relu, and the GELU, layer norm and attention
formulas that pattern fusion recognizes.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge.backend

n = helper.make_node
DTYPES = {"float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16, "float32": TensorProto.FLOAT}

GRAPHS = {
    "elementwise": (
        [
            n("Mul", ["x", "x"], ["p"]),
            n("Add", ["p", "x"], ["q"]),
            n("Sigmoid", ["q"], ["r"]),
            n("Mul", ["r", "x"], ["y"]),
        ],
        {},
    ),
    "gelu": (
        [
            n("Div", ["x", "sqrt2"], ["d"]),
            n("Erf", ["d"], ["e"]),
            n("Add", ["e", "one"], ["a"]),
            n("Mul", ["x", "a"], ["m"]),
            n("Mul", ["m", "half"], ["y"]),
        ],
        {"sqrt2": np.sqrt(2.0), "one": 1.0, "half": 0.5},
    ),
    "layer_norm": (
        [
            n("ReduceMean", ["x"], ["mu"], axes=[-1]),
            n("Sub", ["x", "mu"], ["c"]),
            n("Mul", ["c", "c"], ["sq"]),
            n("ReduceMean", ["sq"], ["var"], axes=[-1]),
            n("Add", ["var", "eps"], ["ve"]),
            n("Sqrt", ["ve"], ["sd"]),
            n("Div", ["c", "sd"], ["y"]),
        ],
        {"eps": 1e-5},
    ),
    "matmul_epilogue": (
        [
            n("MatMul", ["x", "w"], ["mm"]),
            n("Add", ["mm", "bias"], ["ab"]),
            n("Relu", ["ab"], ["r"]),
            n("Mul", ["r", "half"], ["y"]),
        ],
        {"w": "weights 64x32", "bias": "weights 32", "half": 0.5},
    ),
    "conv_batch_norm_relu": (
        [
            n("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            n("BatchNormalization", ["c", "scale", "beta", "mean", "var"], ["b"]),
            n("Relu", ["b"], ["y"]),
        ],
        {
            "w": "weights 8x4x3x3",
            "scale": "weights 8",
            "beta": "weights 8",
            "mean": "weights 8",
            "var": "positive 8",
        },
    ),
    "attention": (
        [
            n("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
            n("MatMul", ["x", "xt"], ["s"]),
            n("Div", ["s", "scale"], ["d"]),
            n("Softmax", ["d"], ["p"], axis=-1),
            n("MatMul", ["p", "x"], ["y"]),
        ],
        {"scale": 8.0},
    ),
}
SHAPES = {"attention": [2, 4, 64], "conv_batch_norm_relu": [1, 4, 8, 8]}
OUTPUT_SHAPES = {"matmul_epilogue": [4, 32], "conv_batch_norm_relu": [1, 8, 8, 8]}


def build(name: str, dtype: str, rng: np.random.Generator):
    nodes, constants = GRAPHS[name]
    numpy_type = np.dtype(getattr(ml_dtypes, dtype, dtype))
    initializers = []
    for key, value in constants.items():
        if isinstance(value, str):
            kind, dims = value.split()
            array = rng.standard_normal([int(d) for d in dims.split("x")]).astype(np.float32)
            array = np.abs(array) + 0.5 if kind == "positive" else array
        else:
            array = np.array(value, np.float32)
        initializers.append(numpy_helper.from_array(array.astype(numpy_type), key))
    shape = SHAPES.get(name, [4, 64])
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("x", DTYPES[dtype], shape)],
        [helper.make_tensor_value_info("y", DTYPES[dtype], OUTPUT_SHAPES.get(name, shape))],
        initializer=initializers,
    )
    # ONNX's schemas take bfloat16 convolutions from opset 22 (whose reductions take axes as inputs).
    opset = 22 if name == "conv_batch_norm_relu" else 17
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    x = (rng.standard_normal(shape) * 2).astype(np.float32).astype(numpy_type)
    return model, x


def launches(rep) -> int:
    """Kernels that compute (format conversions aside)."""
    (step,) = rep.steps.values()
    histogram = step.compiled.kernel_histogram()
    return sum(count for kind, count in histogram.items() if kind != "trans_data")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_o3_keeps_the_16_bit_results_of_o0(name, dtype, rng):
    model, x = build(name, dtype, rng)
    o0_model, o3_model = (ge.backend.prepare(model, optimization_level=level) for level in (0, 3))
    [o0], [o3] = o0_model.run([x]), o3_model.run([x])
    assert launches(o3_model) < launches(o0_model), "O3 merged nothing: the comparison would be idle"
    assert o0.dtype == o3.dtype == x.dtype
    np.testing.assert_array_equal(o3.view(np.uint16), o0.view(np.uint16))


def test_a_precision_mode_lets_16_bit_formulas_fuse(rng):
    model, x = build("gelu", "float16", rng)
    kept = ge.backend.prepare(model).steps
    mixed = ge.backend.prepare(model, precision_mode="allow_mix_precision").steps
    (kept_step,) = kept.values()
    (mixed_step,) = mixed.values()
    assert "ascend.graph.gelu" not in str(kept_step.compiled.module)
    assert "ascend.graph.gelu" in str(mixed_step.compiled.module)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_float32_stays_float32(name, rng):
    """At float32 the fusions apply, and the results stay float32 to float32 rounding."""
    model, x = build(name, "float32", rng)
    [o0] = ge.backend.prepare(model, optimization_level=0).run([x])
    [o3] = ge.backend.prepare(model, optimization_level=3).run([x])
    assert o3.dtype == o0.dtype == np.float32
    np.testing.assert_allclose(o3, o0, rtol=1e-5, atol=1e-5)
