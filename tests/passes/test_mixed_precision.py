"""`ge-mixed-precision`: each precision mode keeps a ResNet-style CNN and a BERT-like encoder close
to their fp32 answers, moves what it should, and shrinks the weights and the arena."""

from __future__ import annotations

import numpy as np
import pytest
from test_transformer_graphs import V, encoder_block
from xdsl.dialects.builtin import NameLoc, bf16, f16, f32

import ge
from ge.dialects import graph as ops
from ge.errors import CompileError
from ge.interpreter import run_function
from ge.passes import get_pass
from ge.passes.graph.mixed_precision import ComputeTypeAnalysis
from ge.passes.manager import PassManager
from ge.passes.session import CompileSession

TOLERANCE = {
    "force_fp16": 1e-2,
    "allow_fp32_to_fp16": 1e-2,
    "allow_mix_precision": 1e-2,
    "allow_mix_precision_bf16": 3e-2,
}
"""Largest error allowed, relative to the fp32 output's largest magnitude."""


def resnet() -> ge.Graph:
    """Stem, an identity block and a downsampling block, then global pool, linear, softmax."""
    g = ge.Graph(seed=7)
    x = g.add_input("image", shape=[2, 3, 32, 32])
    y = g.add_relu(g.add_batchnorm(g.add_conv2d(x, 16, 3, padding=1, name="stem")))
    for channels, stride in ((16, 1), (32, 2)):
        h = g.add_relu(g.add_batchnorm(g.add_conv2d(y, channels, 3, stride=stride, padding=1)))
        h = g.add_batchnorm(g.add_conv2d(h, channels, 3, padding=1))
        skip = y
        if stride != 1:
            skip = g.add_batchnorm(g.add_conv2d(y, channels, 1, stride=stride, bias=False))
        y = g.add_relu(g.add_add(h, skip))
    y = g.add_flatten(g.add_global_avgpool(y))
    g.add_output(g.add_softmax(g.add_linear(y, 10)), "probs")
    return g


def encoder() -> ge.Graph:
    return ge.GraphParser().parse_onnx(encoder_block(17, seed=5))


def inputs_for(name: str) -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    if name == "resnet":
        return [rng.standard_normal((2, 3, 32, 32)).astype(np.float32)]
    return [rng.integers(0, V, (2, 8)).astype(np.int64)]


MODELS = {"resnet": resnet, "encoder": encoder}


def apply(g: ge.Graph, **options):
    module = g.module.clone()
    session = PassManager([get_pass("ge-mixed-precision")(**options)]).run(
        module, CompileSession(g.weights.copy())
    )
    return module, session.weights


def compile_and_run(g: ge.Graph, inputs: list[np.ndarray], mode: str):
    compiled = ge.GraphCompiler().compile(g, precision_mode=mode)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    return compiled, executor.run(inputs)


def relative_error(actual: list[np.ndarray], expected: list[np.ndarray]) -> float:
    return max(
        float(np.abs(a.astype(np.float32) - e).max() / np.abs(e).max())
        for a, e in zip(actual, expected, strict=True)
    )


def result_elements(module, holds) -> list[object]:
    return [op.results[0].type.element_type for op in module.walk() if holds(op)]


def on_cube(op) -> bool:
    return ops.matrix_product(op) is not None


def kept(op) -> bool:
    return op.has_trait(ops.KeepsPrecision)


@pytest.mark.parametrize("mode", sorted(TOLERANCE))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_modes_stay_close_to_fp32(model: str, mode: str) -> None:
    g, inputs = MODELS[model](), inputs_for(model)
    expected = run_function(g.module, inputs, g.weights)
    module, weights = apply(g, mode=mode)
    after_pass = run_function(module, inputs, weights)
    _, compiled = compile_and_run(g, inputs, mode)
    for outputs in (after_pass, compiled):
        assert [o.dtype for o in outputs] == [e.dtype for e in expected]  # graph outputs keep their dtype
        assert relative_error(outputs, expected) < TOLERANCE[mode]


@pytest.mark.parametrize("model", sorted(MODELS))
def test_mix_precision_moves_cube_ops_and_keeps_black_ops(model: str) -> None:
    g = MODELS[model]()
    for mode, low in (("allow_mix_precision", f16), ("allow_mix_precision_bf16", bf16)):
        module, _ = apply(g, mode=mode)
        cube = result_elements(module, on_cube)
        assert cube and set(cube) == {low}
        assert set(result_elements(module, kept)) == {f32}
        compiled = ge.GraphCompiler().compile(g, precision_mode=mode)
        cube = result_elements(compiled.module, on_cube)  # inside the compiled kernels
        assert len(cube) >= 4 and set(cube) == {low}


@pytest.mark.parametrize("model", sorted(MODELS))
def test_weights_and_arena_shrink(model: str) -> None:
    g = MODELS[model]()
    fp32 = ge.GraphCompiler().compile(g)
    fp16 = ge.GraphCompiler().compile(g, precision_mode="allow_mix_precision")
    weights = (len(fp32.weight_blob), len(fp16.weight_blob))
    arena = (fp32.model.arena_size.value.data, fp16.model.arena_size.value.data)
    assert weights[1] < 0.65 * weights[0], f"weight bytes fp32 -> fp16: {weights}"
    assert arena[1] < 0.8 * arena[0], f"arena bytes fp32 -> fp16: {arena}"


def mlp(dtype: str, rng: np.random.Generator) -> ge.Graph:
    """Linear, relu, linear, softmax on weights that fp16 holds exactly."""

    def exact(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float16).astype(np.float32)

    g = ge.Graph()
    x = g.add_input("x", shape=[4, 64], dtype=dtype)
    h = g.add_relu(g.add_linear(x, 64, weight=exact(64, 64), bias_value=exact(64)))
    g.add_output(g.add_softmax(g.add_linear(h, 16, weight=exact(16, 64), bias_value=exact(16))), "y")
    return g


def test_force_fp32_computes_an_fp16_graph_in_fp32(rng: np.random.Generator) -> None:
    half, wide = mlp("float16", np.random.default_rng(3)), mlp("float32", np.random.default_rng(3))
    module, weights = apply(half, mode="force_fp32")
    computing = [op for op in module.walk() if isinstance(op, ops.GemmOp | ops.ReluOp | ops.SoftmaxOp)]
    assert len(computing) == 4 and {op.results[0].type.element_type for op in computing} == {f32}
    data = rng.standard_normal((4, 64)).astype(np.float16)
    (forced,) = run_function(module, [data], weights)
    assert forced.dtype == np.float16  # the graph's output keeps its type
    # Computed in fp32 throughout, rounded once at the output.
    (exact,) = run_function(wide.module, [data.astype(np.float32)], wide.weights)
    np.testing.assert_array_equal(forced, exact.astype(np.float16))
    (rounded_per_op,) = run_function(half.module, [data], half.weights)
    assert not np.array_equal(rounded_per_op, forced)
    _, (compiled,) = compile_and_run(half, [data], "force_fp32")
    np.testing.assert_array_equal(compiled, forced)


def test_must_keep_origin_dtype_changes_nothing() -> None:
    g = resnet()
    module, _ = apply(g)
    assert str(module) == str(g.module)
    module, _ = apply(g, mode="must_keep_origin_dtype", keep_nodes=("stem",))
    assert str(module) == str(g.module)


def test_keep_lists_hold_ops_in_fp32() -> None:
    g = resnet()
    module, _ = apply(g, mode="allow_mix_precision", keep_op_types=("gemm",), keep_nodes=("stem",))
    convs = {
        op.location.desc.data: op.result.type.element_type
        for op in module.walk()
        if isinstance(op, ops.Conv2DOp)
    }
    assert convs.pop("stem") == f32 and set(convs.values()) == {f16}
    assert set(result_elements(module, lambda op: isinstance(op, ops.GemmOp))) == {f32}


def test_keep_lists_name_fused_ops_by_what_they_fused() -> None:
    g = resnet()
    fused = g.module.clone()
    passes = [get_pass(name)() for name in ("ge-fuse-conv-bn", "ge-fuse-bias-activation")]
    session = PassManager(passes).run(fused, CompileSession(g.weights.copy()))
    g = ge.Graph.from_module(fused, session.weights)
    module, _ = apply(g, mode="allow_mix_precision", keep_nodes=("stem",))
    types = {
        "stem" in [s.data for s in op.attributes["sources"]]: op.result.type.element_type
        for op in module.walk()
        if isinstance(op, ops.FusedConv2DOp)
    }
    assert types == {True: f32, False: f16}
    module, _ = apply(g, mode="allow_mix_precision", keep_op_types=("conv2d",))
    assert set(result_elements(module, lambda op: isinstance(op, ops.FusedConv2DOp | ops.Conv2DOp))) == {f32}
    assert set(result_elements(module, lambda op: isinstance(op, ops.GemmOp))) == {f16}


def test_integer_graphs_are_untouched() -> None:
    g = ge.Graph()
    a = g.add_input("a", shape=[4, 4], dtype="int32")
    g.add_output(g.add_add(g.add_matmul(a, a), a))
    for mode in TOLERANCE:
        module, _ = apply(g, mode=mode)
        assert str(module) == str(g.module)


def test_unknown_mode_and_op_type_are_errors() -> None:
    with pytest.raises(CompileError, match="unknown mode 'fp8'"):
        apply(resnet(), mode="fp8")
    with pytest.raises(CompileError, match="unknown op types: convolution"):
        apply(resnet(), mode="force_fp16", keep_op_types=("convolution",))


def test_force_fp16_converts_every_float_weight_once() -> None:
    g = encoder()
    module, weights = apply(g, mode="force_fp16")
    floats = [
        op
        for op in module.walk()
        if isinstance(op, ops.ConstOp) and op.result.type.element_type in (f16, f32)
    ]
    assert floats and {op.result.type.element_type for op in floats} == {f16}
    keys = [op.value.resource_handle.data for op in floats if op.value.name == "dense_resource"]
    before = [
        op for op in g.module.walk() if isinstance(op, ops.ConstOp) and op.value.name == "dense_resource"
    ]
    assert len(keys) == len(set(keys)) == len(before)
    assert all(weights.get(key).dtype == np.float16 for key in keys)


def two_branches(white_first: bool) -> ge.Graph:
    """x feeds a white branch (matmul, relu, transpose) and a black one (softmax, transpose),
    built in either order; an add and a div join them."""
    g = ge.Graph()
    x = g.add_input("x", shape=[4, 8])

    def white() -> ge.Tensor:
        y = g.add_relu(g.add_matmul(x, g.add_constant(np.ones((8, 8), np.float32)), name="mm"), name="r")
        return g.add_transpose(y, [1, 0], name="t_white")

    def black() -> ge.Tensor:
        return g.add_transpose(g.add_softmax(x, name="s"), [1, 0], name="t_black")

    if white_first:
        low, high = white(), black()
    else:
        high, low = black(), white()
    g.add_output(g.add_add(low, high, name="join"), "sum")
    g.add_output(g.add_op(ops.DivOp, [low, high], None, "ratio"), "ratio")
    return g


def test_the_analysis_does_not_depend_on_the_order_of_independent_branches() -> None:
    # White ops and the gray transpose after them move; softmax, the gray transpose after it and
    # the gray div that reads both keep fp32; the white add moves whatever it reads.
    expected = {"mm": f16, "r": f16, "t_white": f16, "s": None, "t_black": None, "join": f16, "ratio": None}
    for white_first in (True, False):
        g = two_branches(white_first)
        names = [node_name(op) for op in g.module.walk()]
        assert (names.index("mm") < names.index("s")) == white_first
        decided = ComputeTypeAnalysis("allow_mix_precision").run(g.module)
        assert {node_name(op): t for op, t in decided.items() if node_name(op) in expected} == expected


def node_name(op) -> str | None:
    return op.location.desc.data if isinstance(op.location, NameLoc) else None
