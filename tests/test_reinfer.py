"""Result types inferred again by the ops themselves (`ascend.graph`'s `reinfer`), and what rests
on it: specializing and running a fused symbolic graph, re-batching a symbolic graph for
`MemoryOptimizer`, and the proof that a fused graph keeps samples apart."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType, f16, f32
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

import ge
from ge.batching import SampleIndependence, sample_independence
from ge.context import make_context
from ge.dialects import graph as ops
from ge.dialects.graph.reshaping import reshaped
from ge.symbolic import SpecializationError

DYN = DYNAMIC_INDEX


def _parse(body: str, signature: str) -> ModuleOp:
    text = f"builtin.module {{\n func.func @main({signature}) {{\n{body}\n func.return\n }}\n}}"
    return Parser(make_context(), text).parse_module()


def _ops(module: ModuleOp) -> list:
    func = next(op for op in module.walk() if isinstance(op, FuncOp))
    return list(func.body.block.ops)


# --------------------------------------------------------------------------------------------
# The op's own rule
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "stated", "factors", "expected"),
    [
        # one `?`: what the 3 * 4 * 4 elements leave over 16
        ((DYN, 4, 4), (3, 4, 4), (DYN, 16), (), [3, 16]),
        # several `?`: copies of the input's, in order
        ((DYN, DYN, 8), (2, 5, 8), (DYN, DYN, 2, 4), (), [2, 5, 2, 4]),
        # a static result follows groups: [2, 8] merged into 16 grows by 4 * 10 / 16
        ((2, 8, 64), (4, 10, 64), (16, 64), (Fraction(2), Fraction(5, 4)), [40, 64]),
        # split again: the batch factor 2 on the first dimension, the sequence factor 5/4 next
        ((16, 16), (40, 16), (2, 8, 16), (Fraction(2), Fraction(5, 4)), [4, 10, 16]),
        # without factors the whole ratio 40/16 goes to the group's first dimension
        ((16, 16), (40, 16), (2, 8, 16), (), [5, 8, 16]),
        # an unchanged input keeps the stated shape
        ((2, 6), (2, 6), (3, 4), (), [3, 4]),
    ],
)
def test_the_reshape_rule(before, after, stated, factors, expected) -> None:
    assert reshaped(before, after, stated, factors) == expected


def test_the_reshape_rule_refuses_what_the_result_cannot_hold() -> None:
    with pytest.raises(ValueError, match=r"cannot reshape \[3, 4\] into \[\?, 5\]"):
        reshaped((DYN, 4), (3, 4), (DYN, 5))
    with pytest.raises(
        ValueError, match=r"a reshape of \[16, 16\] into \[2, 8, 16\] cannot follow \[24, 16\]"
    ):
        reshaped((16, 16), (24, 16), (2, 8, 16), (Fraction(2), Fraction(5, 4)))


def test_each_op_infers_its_result_types_again() -> None:
    module = _parse(
        """
  %c = ascend.graph.const dense<1.0> : tensor<2xf32>
  %h = ascend.graph.cast %x : (tensor<?x3xf32>) -> tensor<?x3xf16>
  %r = ascend.graph.reshape %x : (tensor<?x3xf32>) -> tensor<?xf32>
  %s = ascend.graph.add %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
""",
        "%x: tensor<?x3xf32>",
    )
    const, cast, reshape, add, end = _ops(module)
    four = TensorType(f32, [4, 3])
    assert ops.reinfer(const, []) == [TensorType(f32, [2])]
    assert ops.reinfer(cast, [four]) == [TensorType(f16, [4, 3])]
    assert ops.reinfer(reshape, [four]) == [TensorType(f32, [12])]
    assert ops.reinfer(add, [four, four]) == [four]
    with pytest.raises(ValueError, match="'func.return' has no type inference"):
        ops.reinfer(end, [])


def test_a_fused_op_infers_its_epilogue_again() -> None:
    module = _parse(
        """
  %y = ascend.graph.fused_matmul %a, %b, %r {extras = 1 : i64}
      : (tensor<?x4xf32>, tensor<4x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32> {
  ^bb0(%acc: tensor<?x5xf32>, %res: tensor<?x5xf32>):
    %s = ascend.graph.add %acc, %res : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
    ascend.graph.yield %s : tensor<?x5xf32>
  }
""",
        "%a: tensor<?x4xf32>, %b: tensor<4x5xf32>, %r: tensor<?x5xf32>",
    )
    fused = _ops(module)[0]
    types = [TensorType(f32, [7, 4]), TensorType(f32, [4, 5]), TensorType(f32, [7, 5])]
    seven = TensorType(f32, [7, 5])
    assert ops.reinfer(fused, types) == [seven]
    values = ops.reinfer_values(fused, types)
    block = fused.epilogue.block
    assert values[block.args[0]] == values[block.args[1]] == values[block.first_op.results[0]] == seven
    with pytest.raises(ValueError, match="contracting dimensions differ: 3 and 4"):
        ops.reinfer(fused, [TensorType(f32, [7, 3]), *types[1:]])


# --------------------------------------------------------------------------------------------
# A fused symbolic graph: symbols, specializing, gears and running
# --------------------------------------------------------------------------------------------

WEIGHT = np.arange(4 * 3 * 3 * 3, dtype=np.float32).reshape(4, 3, 3, 3) / 50 - 1
BIAS = np.array([0.5, -0.25, 0.0, 1.0], dtype=np.float32)


def _conv_bias_relu(batch: int | str = "batch") -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("x", [batch, 3, 16, 16])
    y = g.add_conv2d(x, out_channels=4, kernel_size=3, padding=1, weight=WEIGHT, bias_value=BIAS)
    g.add_output(g.add_relu(y), "y")
    return ge.GraphOptimizer().apply_operator_fusion(g)


def _reference(x: np.ndarray) -> np.ndarray:
    """conv 3x3 (padding 1) + bias + relu, as sums over the kernel's nine offsets."""
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((x.shape[0], 4, 16, 16), dtype=np.float64)
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", padded[:, :, i : i + 16, j : j + 16], WEIGHT[:, :, i, j])
    return np.maximum(out + BIAS[None, :, None, None], 0)


def test_a_fused_graph_keeps_its_symbols() -> None:
    g = _conv_bias_relu()
    assert "ascend.graph.fused_conv2d" in str(g)
    shapes = {value.name_hint: dims for value, dims in g.symbolic_shapes().items()}
    assert shapes["relu"] == ("batch", 4, 16, 16)


def test_a_fused_graph_specializes_compiles_gears_and_runs() -> None:
    g = _conv_bias_relu()
    special = g.specialize({"batch": 2})
    assert "tensor<2x4x16x16xf32>" in str(special) and "tensor<?x" not in str(special)
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(np.float32)
    compiled = ge.GraphCompiler().compile(g, dynamic_batch_size=[1, 4])
    for model in (compiled, ge.GraphCompiler().compile(special), g):
        executor = ge.GraphExecutor()
        executor.load_graph(model)
        np.testing.assert_allclose(executor.run(x)[0], _reference(x), rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------------------------
# Re-batching a symbolic graph
# --------------------------------------------------------------------------------------------


def _small(batch: int | str) -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("x", [batch, 3, 8, 8])
    g.add_output(g.add_relu(g.add_conv2d(x, out_channels=4, kernel_size=3, padding=1, weight=WEIGHT)), "y")
    return g


def test_the_memory_of_a_symbolic_graph_at_a_batch_size() -> None:
    usage = ge.MemoryOptimizer().calculate_memory_usage(_small("batch"), batch_size=2)
    assert usage.input_bytes == 2 * 3 * 8 * 8 * 4 and usage.output_bytes == 2 * 4 * 8 * 8 * 4
    static = ge.GraphCompiler().compile(_small(2), techniques=["memory-reuse"]).memory
    assert (usage.arena_bytes, usage.weight_bytes) == (static.arena_bytes, static.weight_bytes)


# --------------------------------------------------------------------------------------------
# Size 0
# --------------------------------------------------------------------------------------------


def test_specialize_refuses_an_empty_batch() -> None:
    g = ge.Graph()
    g.add_output(g.add_relu(g.add_input("x", [-1, 3])), "y")
    with pytest.raises(
        SpecializationError, match=r"symbol 'x_0': symbol 'x_0' cannot be 0: give a size of at least 1"
    ):
        g.specialize({"x_0": 0})
    with pytest.raises(SpecializationError, match=r"input 'x' axis 0: symbol 'x_0' cannot be 0"):
        g.specialize({"x": [0, 3]})


# --------------------------------------------------------------------------------------------
# Padding a fused graph
# --------------------------------------------------------------------------------------------


def _independence(graph: ge.Graph) -> SampleIndependence:
    return sample_independence(next(op for op in graph.module.walk() if isinstance(op, FuncOp)), [0])


def test_a_fused_conv_bias_relu_keeps_samples_apart() -> None:
    assert _independence(_conv_bias_relu(4)) == SampleIndependence((0,))


def test_a_fused_residual_keeps_samples_apart_and_a_per_row_extra_mixes_them() -> None:
    g = ge.Graph()
    x = g.add_input("x", [4, 3, 8, 8])
    y = g.add_conv2d(x, out_channels=3, kernel_size=3, padding=1)
    g.add_output(g.add_relu(g.add_add(y, x)), "y")
    fused = ge.GraphOptimizer().apply_operator_fusion(g)
    assert "extras = 1" in str(fused)
    assert _independence(fused) == SampleIndependence((0,))
    # A constant of one row per sample added in the epilogue: a padded batch has other rows.
    g = ge.Graph()
    a = g.add_input("a", [4, 6])
    product = g.add_matmul(a, g.add_constant(np.ones((6, 5), np.float32)))
    g.add_output(g.add_relu(g.add_add(product, g.add_constant(np.ones((4, 5), np.float32)))), "y")
    fused = ge.GraphOptimizer().apply_operator_fusion(g)
    assert "ascend.graph.fused_matmul" in str(fused)
    assert _independence(fused).blocker is not None
    assert _independence(fused).blocker.startswith("'ascend.graph.fused_matmul'")


# --------------------------------------------------------------------------------------------
# Messages
# --------------------------------------------------------------------------------------------


def test_compiling_a_symbolic_api_graph_suggests_specializing_it_or_gears() -> None:
    with pytest.raises(ge.CompileError) as error:
        ge.GraphCompiler().compile(_small("batch"))
    message = str(error.value)
    assert message.startswith("input 'x' has a dynamic dimension at axis 0 (tensor<?x3x8x8xf32>)")
    assert "graph.specialize({'batch': 8})" in message
    assert "compile(graph, dynamic_batch_size=[1, 8])" in message
    g = ge.Graph()
    g.add_output(g.add_relu(g.add_input("x", [2, "width"])), "y")
    with pytest.raises(ge.CompileError) as error:
        ge.GraphCompiler().compile(g)
    message = str(error.value)
    assert (
        "input 'x' has a dynamic dimension at axis 1" in message
        and "graph.specialize({'width': 8})" in message
    )
    assert "dynamic_batch_size" not in message, "gears size the batch axis only"


def test_recorded_dims_that_contradict_the_type_are_a_verification_error() -> None:
    text = (
        'builtin.module {\n func.func @main(%x: tensor<?x3xf32> {ascend.name = "x", ascend.dims = ["n", 4]})'
        " -> tensor<?x3xf32> {\n  func.return %x : tensor<?x3xf32>\n }\n}"
    )
    with pytest.raises(ge.VerificationError, match=r"input 'x': ascend.dims = \['n', 4\] does not fit"):
        ge.Graph.from_module(Parser(make_context(), text).parse_module())
