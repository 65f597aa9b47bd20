"""Object detection: non_max_suppression, as ONNX defines it (and onnxruntime computes it).

The suppression is greedy: each step takes, for every batch entry and class at once, the best
box still a candidate, then drops the candidates it overlaps too much. Overlaps are computed in
the boxes' dtype, in the order of ONNX's definition, so that a ratio at the threshold compares
as there.
"""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import describe, get_float, get_int
from ge.errors import GeError

from .base import Compute, Implementation, Prepared


@Prepared
def non_max_suppression(op: ops.NonMaxSuppressionOp) -> Compute:
    max_per_class = get_int(op, "max_output_boxes_per_class", 0)
    iou_threshold = get_float(op, "iou_threshold", 0.0)
    score_threshold = None if op.score_threshold is None else get_float(op, "score_threshold", 0.0)
    center_point_box = get_int(op, "center_point_box", 0)
    count = get_int(op, "count")

    def suppressed(boxes: np.ndarray, scores: np.ndarray) -> np.ndarray:
        selected = select_boxes(
            boxes, scores, max_per_class, iou_threshold, score_threshold, center_point_box
        )
        if selected.shape[0] != count:
            raise GeError(
                f"{describe(op)}: {selected.shape[0]} boxes are selected, but the graph was specialized "
                f"on {count}: specialize it again on these boxes and scores"
            )
        return selected

    return suppressed


def select_boxes(
    boxes: np.ndarray,
    scores: np.ndarray,
    max_per_class: int,
    iou_threshold: float,
    score_threshold: float | None,
    center_point_box: int,
) -> np.ndarray:
    """The (count, 3) int64 rows [batch, class, box] NonMaxSuppression selects, batch by batch,
    class by class, each class's boxes in the order taken."""
    batches, classes, count = scores.shape
    dtype = boxes.dtype.type
    suppresses = _overlaps(boxes, center_point_box, dtype(iou_threshold))  # B, S, S
    candidate = np.ones(scores.shape, bool) if score_threshold is None else scores > dtype(score_threshold)
    batch = np.arange(batches)[:, None]
    klass = np.arange(classes)[None, :]
    taken = []
    for _ in range(min(max(max_per_class, 0), count)):
        best = np.argmax(np.where(candidate, scores, -np.inf), axis=-1)  # the lowest index among ties
        found = candidate[batch, klass, best]
        taken.append(np.where(found, best, -1))
        candidate = candidate & ~suppresses[batch, best] & found[..., None]
        candidate[batch, klass, best] = False
    if not taken:
        return np.zeros((0, 3), np.int64)
    order = np.stack(taken, axis=-1)  # B, C, steps
    b, c, step = np.nonzero(order >= 0)
    return np.stack([b, c, order[b, c, step]], axis=1).astype(np.int64)


def _overlaps(boxes: np.ndarray, center_point_box: int, threshold: np.floating) -> np.ndarray:
    """(B, S, S): whether box i's intersection over union with box j exceeds the threshold."""
    if center_point_box:
        half_w, half_h = boxes[..., 2] / 2, boxes[..., 3] / 2
        x_min, x_max = boxes[..., 0] - half_w, boxes[..., 0] + half_w
        y_min, y_max = boxes[..., 1] - half_h, boxes[..., 1] + half_h
    else:
        x_min, x_max = np.minimum(boxes[..., 1], boxes[..., 3]), np.maximum(boxes[..., 1], boxes[..., 3])
        y_min, y_max = np.minimum(boxes[..., 0], boxes[..., 2]), np.maximum(boxes[..., 0], boxes[..., 2])
    left = np.maximum(x_min[:, :, None], x_min[:, None, :])
    right = np.minimum(x_max[:, :, None], x_max[:, None, :])
    bottom = np.maximum(y_min[:, :, None], y_min[:, None, :])
    top = np.minimum(y_max[:, :, None], y_max[:, None, :])
    meets = (right > left) & (top > bottom)
    intersection = (right - left) * (top - bottom)
    area = (x_max - x_min) * (y_max - y_min)
    union = area[:, :, None] + area[:, None, :] - intersection
    valid = meets & (intersection > 0) & (area[:, :, None] > 0) & (area[:, None, :] > 0) & (union > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = intersection / np.where(valid, union, 1)
    return valid & (ratio > threshold)


IMPLEMENTATIONS: dict[type, Implementation] = {ops.NonMaxSuppressionOp: non_max_suppression}
