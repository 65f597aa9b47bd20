"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against onnxruntime, through `ge.backend`.

Each case is a one-node ONNX model that `ge` decomposes into graph ops, compiles through its whole
pipeline and runs on the emulator, and that onnxruntime runs too: every reduction, with and
without class weights, with an `ignore_index` inside and outside the class range, inputs of rank
2 to 5, and the log-probability output of the cross entropy.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import run_onnxruntime
from single_node import feeds, one_node

import ge.backend
from ge.errors import InvalidModelError

OPSET = 13


def check(
    op_type: str, inputs: list[np.ndarray | None], outputs: int = 1, rtol: float = 1e-5, **attrs
) -> None:
    model = one_node(op_type, inputs, OPSET, outputs, **attrs)
    got = ge.backend.prepare(model).run(feeds(inputs, ()))
    wide = [a.astype(np.float32) if a is not None and a.dtype == np.float16 else a for a in inputs]
    want = run_onnxruntime(one_node(op_type, wide, OPSET, outputs, **attrs), feeds(wide, ()))
    assert len(got) == outputs
    for g, w in zip(got, want, strict=True):
        assert g.dtype == inputs[0].dtype and g.shape == w.shape, (g.dtype, g.shape, w.shape)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=rtol)


def problem(
    rng: np.random.Generator, shape: tuple[int, ...], target_dtype=np.int64, ignore: int | None = None
):
    """Scores of `shape` (N, C, d...), targets in [0, C) and, if given, `ignore` at a few places."""
    scores = rng.standard_normal(shape).astype(np.float32)
    target = rng.integers(0, shape[1], (shape[0], *shape[2:])).astype(target_dtype)
    if ignore is not None:
        target.reshape(-1)[:: max(2, target.size // 3)] = ignore
    weights = rng.uniform(0.2, 2.0, shape[1]).astype(np.float32)
    return scores, target, weights


SHAPES = [(4, 5), (3, 5, 2), (2, 3, 4, 2), (2, 3, 2, 1, 3)]


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
def test_negative_log_likelihood_loss(reduction, shape, weighted, rng) -> None:
    scores, target, weights = problem(rng, shape)
    log_prob = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    check("NegativeLogLikelihoodLoss", [log_prob, target, weights if weighted else None], reduction=reduction)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("ignore", [0, -1, 7])
@pytest.mark.parametrize("weighted", [False, True])
def test_negative_log_likelihood_loss_ignore_index(reduction, ignore, weighted, rng) -> None:
    """The ignored positions add nothing, and the mean divides by the weights of the others."""
    scores, target, weights = problem(rng, (3, 5, 4), np.int32, ignore)
    check(
        "NegativeLogLikelihoodLoss",
        [scores, target, weights if weighted else None],
        reduction=reduction,
        ignore_index=ignore,
    )


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
def test_softmax_cross_entropy_loss(reduction, shape, weighted, rng) -> None:
    scores, target, weights = problem(rng, shape)
    check("SoftmaxCrossEntropyLoss", [scores, target, weights if weighted else None], reduction=reduction)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
def test_softmax_cross_entropy_loss_with_log_prob(reduction, weighted, rng) -> None:
    scores, target, weights = problem(rng, (3, 4, 2, 3), ignore=-5)
    check(
        "SoftmaxCrossEntropyLoss",
        [scores, target, weights if weighted else None],
        outputs=2,
        reduction=reduction,
        ignore_index=-5,
    )


def test_softmax_cross_entropy_loss_float16(rng) -> None:
    scores, target, weights = problem(rng, (4, 6, 3), ignore=2)
    check(
        "SoftmaxCrossEntropyLoss",
        [scores.astype(np.float16), target, weights.astype(np.float16)],
        outputs=2,
        rtol=4e-3,
        ignore_index=2,
    )


def test_mean_of_weights_by_hand() -> None:
    """A worked example: the mean divides by the weights applied, not by the count."""
    log_prob = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]], np.float32))
    target = np.array([0, 1, 2], np.int64)
    weights = np.array([1.0, 2.0, 0.5], np.float32)
    model = one_node("NegativeLogLikelihoodLoss", [log_prob, target, weights], OPSET, ignore_index=2)
    (got,) = ge.backend.prepare(model).run({"in0": log_prob, "in1": target, "in2": weights})
    want = -(1.0 * np.log(0.5) + 2.0 * np.log(0.8)) / 3.0
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_unknown_reduction_is_invalid(rng) -> None:
    scores, target, _ = problem(rng, (2, 3))
    model = one_node("SoftmaxCrossEntropyLoss", [scores, target], OPSET, reduction="max")
    with pytest.raises(InvalidModelError, match="unknown reduction 'max'"):
        ge.backend.prepare(model).run({"in0": scores, "in1": target})


def test_float_targets_are_invalid(rng) -> None:
    scores, target, _ = problem(rng, (2, 3))
    model = one_node("NegativeLogLikelihoodLoss", [scores, target.astype(np.float32)], OPSET)
    with pytest.raises(InvalidModelError, match=r"takes tensor\(int32\), tensor\(int64\)"):
        ge.backend.prepare(model).run({"in0": scores, "in1": target.astype(np.float32)})
