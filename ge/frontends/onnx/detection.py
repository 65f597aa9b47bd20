"""Converter of NonMaxSuppression, whose output length depends on the boxes and scores.

As NonZero does, it reads the values that decide the shape with `node.value` (constants, or the
data the graph is specialized on, or values an earlier segment produced) and counts the
selection with the op's own semantics; the graph op checks the count again when it runs.
"""

from __future__ import annotations

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import int_attr
from ge.graph import Tensor
from ge.semantics import widen
from ge.semantics.detection import select_boxes

from .composite import Composer
from .importer import Converter, Importer, Node


def _non_max_suppression(imp: Importer, node: Node) -> list[Tensor]:
    """The thresholds are known scalars; without max_output_boxes_per_class nothing is selected."""
    c = Composer(imp, node)
    boxes, scores = c.input(0, "boxes"), c.input(1, "scores")
    b, s = list(boxes.shape), list(scores.shape)
    if len(b) != 3 or b[2] != 4 or len(s) != 3 or (s[0], s[2]) != (b[0], b[1]):
        raise node.invalid(
            f"boxes of shape {b} and scores of shape {s}: they must be [batch, boxes, 4] and "
            "[batch, classes, boxes]"
        )
    max_per_class = _scalar(node, 2)
    iou = _scalar(node, 3)
    score = _scalar(node, 4)
    center = int(node.attr("center_point_box", 0))
    if center not in (0, 1):
        raise node.invalid(f"center_point_box must be 0 or 1, got {center}")
    selected = select_boxes(
        widen(node.value(0)),
        widen(node.value(1)),
        0 if max_per_class is None else max(int(max_per_class), 0),
        0.0 if iou is None else float(iou),
        None if score is None else float(score),
        center,
    )
    props = {
        "count": int_attr(int(selected.shape[0])),
        "max_output_boxes_per_class": int_attr(0 if max_per_class is None else max(int(max_per_class), 0)),
        "iou_threshold": ops.float_attr(0.0 if iou is None else float(iou)),
        "center_point_box": int_attr(center),
    }
    if score is not None:
        props["score_threshold"] = ops.float_attr(float(score))
    return [c.op(ops.NonMaxSuppressionOp, [boxes, scores], "", props)]


def _scalar(node: Node, index: int) -> np.generic | None:
    """The one value of optional input `index`, or None if it is absent or empty."""
    if not node.has_input(index):
        return None
    value = node.value(index).reshape(-1)
    if value.size > 1:
        raise node.invalid(f"input #{index} must hold one value, got {value.size}")
    return value[0] if value.size else None


CONVERTERS: dict[str, Converter] = {"NonMaxSuppression": _non_max_suppression}
