"""A fused convolution's epilogue runs as the kernel's own vector ops on the NC1HWC0 accumulator.

The accumulator is rounded to the epilogue argument's type first, as the unfused graph stores the
convolution's result; expected values are worked out in int64 and rounded in that order by hand."""

from __future__ import annotations

import numpy as np

import ge
from ge.dialects import graph as ops
from ge.dialects.common import ints_attr
from ge.emulator import Emulator, vector
from ge.emulator.cube_steps import ConvolutionStep


def test_fp16_conv_rounds_before_its_fused_residual_add_and_relu() -> None:
    # Two input channels of ones, weights 2048 and 1: the accumulator is 2049, exact in fp32 but not
    # an fp16 value. Stored as the unfused graph stores it, it rounds (to even) to 2048; adding the
    # residual 1 in fp32 gives 2049, which rounds to 2048 again. Added before rounding it is 2050.
    g = ge.Graph()
    data = g.add_input("x", shape=[1, 2, 2, 2], dtype="float16")
    residual = g.add_input("r", shape=[1, 1, 2, 2], dtype="float16")
    weights = np.array([[[[2048.0]], [[1.0]]]], np.float16)  # (1, 2, 1, 1)
    conv = g.add_op(ops.Conv2DOp, [data, g.add_constant(weights, "w")], {"pads": ints_attr([0, 0, 0, 0])})
    g.add_output(g.add_op(ops.ReluOp, [g.add_op(ops.AddOp, [conv, residual])]), "y")
    compiled = ge.GraphCompiler().compile(g, optimization_level=3)
    assert any(isinstance(op, ops.FusedOp) for op in compiled.module.walk())
    ones = np.ones((1, 2, 2, 2), np.float16)
    r = np.array([1, -1, 3, -4097], np.float16).reshape(1, 1, 2, 2)
    (got,) = Emulator(compiled.module, compiled.weight_blob).run([ones, r])
    accumulator = np.full(4, 2049, np.int64)  # 2048 * 1 + 1 * 1, exact in fp32
    stored = accumulator.astype(np.float32).astype(np.float16)  # 2048: rounded as the graph stores it
    expected = np.maximum((stored.astype(np.float32) + r.ravel().astype(np.float32)).astype(np.float16), 0)
    np.testing.assert_array_equal(got.ravel(), expected)
    assert got.ravel()[0] == 2048  # 2049 rounded before the add; 2050 had the add come first


def test_a_fused_convolutions_epilogue_runs_on_its_nc1hwc0_accumulator() -> None:
    # The cube kernel's steps: the convolution's accumulator, then the epilogue's relu as a vector
    # op on the NC1HWC0 blocks, with no decode to the logical layout between them.
    g = ge.Graph()
    data = g.add_input("x", shape=[1, 20, 4, 4], dtype="float32")
    weights = np.ones((20, 20, 3, 3), np.float32) / 100
    conv = g.add_op(ops.Conv2DOp, [data, g.add_constant(weights, "w")], {"pads": ints_attr([1, 1, 1, 1])})
    g.add_output(g.add_op(ops.ReluOp, [conv]), "y")
    compiled = ge.GraphCompiler().compile(g, optimization_level=3)
    emulator = Emulator(compiled.module, compiled.weight_blob)
    x = np.random.default_rng(0).standard_normal((1, 20, 4, 4)).astype(np.float32)
    (got,) = emulator.run([x])
    cube = [
        k
        for k in emulator.plan.kernels.values()
        if k._fast_steps and isinstance(k._fast_steps[0], ConvolutionStep)
    ]
    assert len(cube) == 1
    assert [getattr(step, "func", None) for step in cube[0]._fast_steps[1:]] == [vector._elementwise]
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    expected = np.maximum(np.einsum("nchwij,ocij->nohw", windows, weights.astype(np.float64)), 0)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
