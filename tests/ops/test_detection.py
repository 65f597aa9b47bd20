"""NonMaxSuppression against onnxruntime, through `ge.backend`.

The number of boxes selected decides the output's shape, so `ge` specializes the graph on the
boxes and scores of each run (or runs the graph's prefix first when they are computed); the op
itself runs on the AI CPU of the emulator.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from oracle import run_onnxruntime
from single_node import feeds, one_node

import ge.backend
from ge.errors import InvalidModelError

OPSET = 11


def boxes_and_scores(rng: np.random.Generator, batches: int, classes: int, count: int, center: int = 0):
    """Clustered boxes, so that many overlap; corners in either order unless `center`."""
    middle = rng.uniform(0, 10, (batches, count, 2)).round(1)
    size = rng.uniform(0.5, 3, (batches, count, 2)).round(1)
    if center:
        boxes = np.concatenate([middle, size], axis=-1)
    else:
        first, second = middle - size / 2, middle + size / 2
        flip = rng.random((batches, count, 1)) < 0.3
        boxes = np.concatenate([np.where(flip, second, first), np.where(flip, first, second)], axis=-1)
    scores = rng.uniform(0, 1, (batches, classes, count)).round(2)  # rounded: some ties
    return boxes.astype(np.float32), scores.astype(np.float32)


def check(inputs: list[np.ndarray | None], known: tuple[int, ...] = (2, 3, 4), **attrs) -> np.ndarray:
    model = one_node("NonMaxSuppression", inputs, OPSET, known=known, **attrs)
    (got,) = ge.backend.prepare(model).run(feeds(inputs, known))
    (want,) = run_onnxruntime(model, feeds(inputs, known))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    return got


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("iou", [0.0, 0.3, 0.7])
def test_non_max_suppression(center, iou, rng) -> None:
    boxes, scores = boxes_and_scores(rng, 2, 3, 20, center)
    check([boxes, scores, np.array([5], np.int64), np.array([iou], np.float32)], center_point_box=center)


@pytest.mark.parametrize("score_threshold", [0.2, 0.6, 1.5])
def test_non_max_suppression_score_threshold(score_threshold, rng) -> None:
    boxes, scores = boxes_and_scores(rng, 1, 2, 16)
    limit, iou = np.array([10], np.int64), np.array([0.5], np.float32)
    check([boxes, scores, limit, iou, np.array([score_threshold], np.float32)])


def test_non_max_suppression_optional_inputs(rng) -> None:
    """Without the limit nothing is selected; without thresholds every overlap suppresses."""
    boxes, scores = boxes_and_scores(rng, 1, 1, 8)
    assert check([boxes, scores], known=()).shape == (0, 3)
    check([boxes, scores, np.array([8], np.int64)], known=(2,))


def test_non_max_suppression_identical_boxes_and_ties() -> None:
    boxes = np.tile(np.array([[[0, 0, 1, 1]]], np.float32), (1, 6, 1))
    scores = np.array([[[0.9, 0.9, 0.8, 0.9, 0.7, 0.9]]], np.float32)
    got = check([boxes, scores, np.array([3], np.int64), np.array([0.5], np.float32)])
    np.testing.assert_array_equal(got, [[0, 0, 0]])


def test_non_max_suppression_each_run_specializes(rng) -> None:
    """One prepared model, inputs of different selections: each run gets its own count."""
    limit, iou = np.array([4], np.int64), np.array([0.4], np.float32)
    model = one_node("NonMaxSuppression", [None, None, limit, iou], OPSET, known=(2, 3))
    graph = model.graph
    graph.input.extend(
        [
            onnx.helper.make_tensor_value_info("in0", onnx.TensorProto.FLOAT, [1, 12, 4]),
            onnx.helper.make_tensor_value_info("in1", onnx.TensorProto.FLOAT, [1, 2, 12]),
        ]
    )
    graph.node[0].input[0], graph.node[0].input[1] = "in0", "in1"
    rep = ge.backend.prepare(model)
    for seed in range(3):
        boxes, scores = boxes_and_scores(np.random.default_rng(seed), 1, 2, 12)
        (got,) = rep.run({"in0": boxes, "in1": scores})
        (want,) = run_onnxruntime(model, {"in0": boxes, "in1": scores})
        np.testing.assert_array_equal(got, want)


def test_non_max_suppression_of_computed_boxes(rng) -> None:
    """Boxes computed by the graph: the prefix runs first, then the rest is planned on its values."""
    boxes, scores = boxes_and_scores(rng, 1, 2, 10)
    shift = onnx.helper.make_node("Add", ["boxes", "offset"], ["moved"])
    nms = onnx.helper.make_node("NonMaxSuppression", ["moved", "scores", "limit", "iou"], ["selected"])
    graph = onnx.helper.make_graph(
        [shift, nms],
        "computed",
        [
            onnx.helper.make_tensor_value_info("boxes", onnx.TensorProto.FLOAT, list(boxes.shape)),
            onnx.helper.make_tensor_value_info("offset", onnx.TensorProto.FLOAT, [4]),
            onnx.helper.make_tensor_value_info("scores", onnx.TensorProto.FLOAT, list(scores.shape)),
        ],
        [onnx.helper.make_tensor_value_info("selected", onnx.TensorProto.INT64, None)],
        initializer=[
            onnx.numpy_helper.from_array(np.array([3], np.int64), "limit"),
            onnx.numpy_helper.from_array(np.array([0.3], np.float32), "iou"),
        ],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", OPSET)], ir_version=9)
    inputs = {"boxes": boxes, "offset": np.array([0, 0, 0.5, 0.5], np.float32), "scores": scores}
    (got,) = ge.backend.prepare(model).run(inputs)
    (want,) = run_onnxruntime(model, inputs)
    np.testing.assert_array_equal(got, want)


def test_non_max_suppression_center_point_box_must_be_0_or_1(rng) -> None:
    boxes, scores = boxes_and_scores(rng, 1, 1, 4)
    model = one_node("NonMaxSuppression", [boxes, scores], OPSET, center_point_box=2)
    with pytest.raises(InvalidModelError, match="center_point_box"):
        ge.backend.prepare(model).run({"in0": boxes, "in1": scores})
