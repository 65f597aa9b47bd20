"""The proof that a graph computes each sample alone (`ge.batching`), on graphs whose answer is
worked out by hand, and by running padded batches: where the proof holds, padding leaves the
real rows exact; where it names a blocker, padding changes them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i64
from xdsl.dialects.func import FuncOp

import ge
from ge.batching import SampleIndependence, sample_independence
from ge.dialects import graph as ops
from ge.interpreter import run_function

Build = Callable[[ge.Graph, ge.Tensor], ge.Tensor]


def _analyse(
    shape: list[int], build: Build, axes: list[int | None] | None = None, dtype: str = "float32"
) -> SampleIndependence:
    g = ge.Graph()
    g.add_output(build(g, g.add_input("x", shape, dtype)))
    function = next(op for op in g.module.walk() if isinstance(op, FuncOp))
    return sample_independence(function, axes if axes is not None else [0])


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def _axes(*values: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


def _classifier(g: ge.Graph, x: ge.Tensor) -> ge.Tensor:
    y = g.add_relu(g.add_conv2d(x, 4, 3, padding=1))
    y = g.add_maxpool(y, 2, 2)
    return g.add_softmax(g.add_linear(g.add_flatten(y), 10))


def test_a_classifier_keeps_samples_along_axis_0() -> None:
    assert _analyse([4, 3, 8, 8], _classifier) == SampleIndependence((0,))


MIXING: dict[str, tuple[list[int], Build, str]] = {
    # softmax over the batch axis normalizes across samples
    "softmax-axis-0": ([4, 6], lambda g, x: g.add_op(ops.SoftmaxOp, [x], {"axis": _int(0)}), "softmax"),
    # a reduction over the batch axis sums samples
    "reduce-axis-0": (
        [4, 6],
        lambda g, x: g.add_op(ops.ReduceSumOp, [x], {"axes": _axes(0), "keepdims": False}),
        "reduce_sum",
    ),
    # argmax along the batch axis compares samples
    "argmax-axis-0": ([4, 6], lambda g, x: g.add_op(ops.ArgMaxOp, [x], {"axis": _int(0)}), "arg_max"),
    # a reshape that regroups rows: [4, 6] -> [2, 12] puts samples 0 and 1 in one row
    "regrouping-reshape": ([4, 6], lambda g, x: g.add_reshape(x, [2, 12]), "reshape"),
    # a constant with one row per sample ties row i to sample i
    "per-row-constant": (
        [4, 6],
        lambda g, x: g.add_add(x, g.add_constant(np.ones((4, 6), np.float32))),
        "add",
    ),
    # x as the right operand of a matmul: samples along the contracted axis
    "contracted-axis": (
        [4, 6],
        lambda g, x: g.add_matmul(g.add_constant(np.ones((2, 4), np.float32)), x),
        "matmul",
    ),
    # a layer norm over every axis, the batch one included
    "layer-norm-from-0": (
        [4, 6],
        lambda g, x: g.add_op(
            ops.LayerNormOp, [x, g.add_constant(np.ones((4, 6), np.float32))], {"axis": _int(0)}
        ),
        "layer_norm",
    ),
}
"""Graphs that mix samples, with the op the proof must name."""


@pytest.mark.parametrize("case", MIXING)
def test_ops_that_mix_samples_are_named(case: str) -> None:
    shape, build, blocker = MIXING[case]
    answer = _analyse(shape, build)
    assert not answer.proven
    assert answer.blocker is not None and answer.blocker.startswith(f"'ascend.graph.{blocker}'")


def test_an_op_nothing_describes_ends_the_proof() -> None:
    # tile repeats along axis 1 only, which keeps samples apart, but no rule says so
    answer = _analyse([4, 6], lambda g, x: g.add_op(ops.TileOp, [x], {"repeats": _axes(1, 2)}))
    assert answer.blocker is not None and answer.blocker.startswith("'ascend.graph.tile'")


def test_gather_keeps_samples_of_its_indices_and_of_its_data_off_the_gathered_axis() -> None:
    table = np.ones((50, 16), np.float32)
    # an embedding lookup: ids [4, 8] -> [4, 8, 16], samples stay at axis 0
    lookup = _analyse(
        [4, 8],
        lambda g, x: g.add_op(ops.GatherOp, [g.add_constant(table), x], {"axis": _int(0)}),
        [0],
        "int64",
    )
    assert lookup == SampleIndependence((0,))
    # data [6, 4] with samples at axis 1, gathered along axis 0 by indices [2, 3]: [2, 3, 4], axis 2
    indices = np.zeros((2, 3), np.int64)
    moved = _analyse(
        [6, 4], lambda g, x: g.add_op(ops.GatherOp, [x, g.add_constant(indices)], {"axis": _int(0)}), [1]
    )
    assert moved == SampleIndependence((2,))
    # gathering along the batch axis picks samples by index: blocked
    picked = _analyse(
        [4, 6],
        lambda g, x: g.add_op(
            ops.GatherOp, [x, g.add_constant(np.array([1, 0], np.int64))], {"axis": _int(0)}
        ),
    )
    assert picked.blocker is not None and picked.blocker.startswith("'ascend.graph.gather'")


@pytest.mark.parametrize(
    ("shape", "build", "expected"),
    [
        # reductions and scans over other axes keep the batch axis, dropped axes before it move it
        ([4, 6, 5], lambda g, x: g.add_op(ops.ReduceMeanOp, [x], {"axes": _axes(1), "keepdims": False}), 0),
        ([2, 4, 5], lambda g, x: g.add_op(ops.ReduceMeanOp, [x], {"axes": _axes(0), "keepdims": False}), 0),
        ([4, 6], lambda g, x: g.add_op(ops.CumSumOp, [x], {"axis": _int(1)}), 0),
        # a transpose moves the batch axis where the permutation puts it
        ([4, 6, 5], lambda g, x: g.add_transpose(x, [1, 2, 0]), 2),
        # a reshape that keeps the first extent keeps rows
        ([4, 6], lambda g, x: g.add_reshape(x, [4, 2, 3]), 0),
        # broadcasting against a row that every sample shares
        ([4, 6], lambda g, x: g.add_mul(x, g.add_constant(np.ones((1, 6), np.float32))), 0),
        # concat of two samplewise values along another axis
        ([4, 6], lambda g, x: g.add_op(ops.ConcatOp, [x, g.add_relu(x)], {"axis": _int(1)}), 0),
        # layer norm over the trailing axis
        (
            [4, 6],
            lambda g, x: g.add_op(
                ops.LayerNormOp, [x, g.add_constant(np.ones(6, np.float32))], {"axis": _int(-1)}
            ),
            0,
        ),
    ],
    ids=[
        "reduce-other",
        "reduce-before",
        "cumsum-other",
        "transpose",
        "reshape-rows",
        "shared-row",
        "concat-other",
        "layer-norm",
    ],
)
def test_samplewise_ops_keep_the_axis(shape: list[int], build: Build, expected: int) -> None:
    assert _analyse(shape, build, [1] if shape[0] == 2 else None) == SampleIndependence((expected,))


def test_an_output_that_does_not_vary_with_the_sample() -> None:
    g = ge.Graph()
    x = g.add_input("x", [4, 6])
    g.add_output(g.add_relu(x), "y")
    g.add_output(g.add_relu(g.add_constant(np.ones(3, np.float32))), "bias")
    function = next(op for op in g.module.walk() if isinstance(op, FuncOp))
    assert sample_independence(function, [0]) == SampleIndependence((0, None))


def _run(build: Build, batch: np.ndarray) -> np.ndarray:
    g = ge.Graph(seed=7)
    g.add_output(build(g, g.add_input("x", list(batch.shape))))
    return run_function(g.module, [batch], g.weights)[0]


def test_padding_is_exact_where_the_proof_holds_and_not_where_it_fails() -> None:
    rng = np.random.default_rng(0)
    real = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    padded = np.concatenate([real, np.zeros((2, 3, 8, 8), np.float32)])
    # proven: the first two rows of the padded run are the unpadded run's rows
    np.testing.assert_allclose(_run(_classifier, padded)[:2], _run(_classifier, real), rtol=1e-6)
    # blocked (softmax over the batch axis): padding changes the real rows
    mixing: Build = lambda g, x: g.add_op(ops.SoftmaxOp, [g.add_flatten(x)], {"axis": _int(0)})  # noqa: E731
    assert not np.allclose(_run(mixing, padded)[:2], _run(mixing, real))
    assert not _analyse([4, 3, 8, 8], mixing).proven
