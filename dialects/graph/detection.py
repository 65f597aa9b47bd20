"""Object detection: `non_max_suppression` (ONNX NonMaxSuppression).

Which boxes survive decides the result's length, so the frontend specializes the op on the
boxes and scores of the run: `count` holds the number selected, and the op runs on the AI CPU
(greedy suppression is sequential work the AI Core has no unit for).
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from .base import DYN, GraphOp, prop_int, same_dims
from .tensor import dims
from .traits import NeedsAiCpu


@irdl_op_definition
class NonMaxSuppressionOp(GraphOp):
    """For each batch entry and class, takes boxes in order of decreasing score (ties: the lower
    index first), skipping those whose intersection over union with a box already taken exceeds
    `iou_threshold`, until `max_output_boxes_per_class` are taken. Only scores above
    `score_threshold` (when given) are candidates. `boxes` (B, S, 4) hold corners [y1, x1, y2,
    x2] in either order, or [x_center, y_center, width, height] with `center_point_box = 1`;
    `scores` are (B, C, S). The result lists the `count` selections as rows [batch, class, box].

    ```
    %i = ascend.graph.non_max_suppression %boxes, %scores {count = 3 : i64,
        max_output_boxes_per_class = 2 : i64, iou_threshold = 5.0e-01 : f32}
        : (tensor<1x6x4xf32>, tensor<1x2x6xf32>) -> tensor<3x3xi64>
    ```
    """

    name = "ascend.graph.non_max_suppression"
    traits = traits_def(Pure(), NeedsAiCpu())

    boxes = operand_def(TensorType)
    scores = operand_def(TensorType)
    result = result_def(TensorType)
    count = prop_def(IntegerAttr)
    max_output_boxes_per_class = opt_prop_def(IntegerAttr)
    iou_threshold = opt_prop_def(FloatAttr)
    score_threshold = opt_prop_def(FloatAttr)
    center_point_box = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        boxes, scores = operand_types
        b, s = dims(boxes), dims(scores)
        if not isinstance(boxes.element_type, AnyFloat) or boxes.element_type != scores.element_type:
            raise ValueError(
                f"boxes and scores must share a float type, got {boxes.element_type}, {scores.element_type}"
            )
        if len(b) != 3 or b[2] not in (4, DYN) or len(s) != 3 or not same_dims((b[0], b[1]), (s[0], s[2])):
            raise ValueError(f"boxes {list(b)} must be (B, S, 4) and scores {list(s)} (B, C, S)")
        count = prop_int(props, "count", -1)
        if count < 0 or prop_int(props, "max_output_boxes_per_class", 0) < 0:
            raise ValueError("'count' and 'max_output_boxes_per_class' must be non-negative")
        if prop_int(props, "center_point_box", 0) not in (0, 1):
            raise ValueError("'center_point_box' must be 0 or 1")
        return TensorType(i64, (count, 3))


OPS = (NonMaxSuppressionOp,)
