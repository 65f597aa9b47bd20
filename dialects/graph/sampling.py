"""Sampling at computed coordinates: `grid_sample` (ONNX GridSample) and `roi_align` (ONNX
RoiAlign). Both read an image at fractional positions that other tensors give, interpolating
between the cells around each position; a decomposition into gathers would gather 2^n to 4^n
cells per output and lose the structure, so each is one op.
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, StringAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def

from .base import DYN, GraphOp, flag_def, prop_flag, prop_int, same_dims
from .tensor import dims, index_type, prop_str

GRID_SAMPLE_MODES = ("linear", "nearest", "cubic")
PADDING_MODES = ("zeros", "border", "reflection")
ROI_ALIGN_MODES = ("avg", "max")


@irdl_op_definition
class GridSampleOp(GraphOp):
    """Samples `input` (N, C, D1, ..., Dn) at the normalized coordinates of `grid` (N, H1, ...,
    Hn, n), whose last axis lists x first (the last spatial axis), as ONNX GridSample does:
    -1 and 1 are the centres of the edge cells with `align_corners = true`, their outer edges
    otherwise. `mode` is linear, nearest (ties to even) or cubic (Keys, a = -0.75); positions
    outside read zeros, the border cells (for cubic, each tap clamped on its own, as PyTorch
    does), or their reflection (`padding_mode`).

    ```
    %y = ascend.graph.grid_sample %x, %grid {mode = "linear", padding_mode = "zeros"}
        : (tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32>) -> tensor<1x3x4x4xf32>
    ```
    """

    name = "ascend.graph.grid_sample"

    input = operand_def(TensorType)
    grid = operand_def(TensorType)
    result = result_def(TensorType)
    mode = opt_prop_def(StringAttr)
    padding_mode = opt_prop_def(StringAttr)
    align_corners = flag_def(False)

    @classmethod
    def infer(cls, operand_types, props, where):
        x, grid = operand_types
        if not isinstance(x.element_type, AnyFloat) or not isinstance(grid.element_type, AnyFloat):
            raise ValueError(f"input and grid must hold floats, got {x.element_type} and {grid.element_type}")
        shape, points = dims(x), dims(grid)
        spatial = len(shape) - 2
        if spatial < 1 or len(points) != len(shape) or points[-1] not in (spatial, DYN):
            raise ValueError(f"a grid of shape {list(points)} cannot sample an input of shape {list(shape)}")
        if not same_dims(shape[:1], points[:1]):
            raise ValueError(f"input {list(shape)} and grid {list(points)} differ in their batch")
        if 0 in shape[2:]:  # onnxruntime refuses it too
            raise ValueError(f"an input of shape {list(shape)} has no point to sample: a spatial size is 0")
        _choice(props, "mode", GRID_SAMPLE_MODES)
        _choice(props, "padding_mode", PADDING_MODES)
        prop_flag(cls, props, "align_corners")
        batch = shape[0] if shape[0] != DYN else points[0]
        return TensorType(x.element_type, (batch, shape[1], *points[1:-1]))


@irdl_op_definition
class RoiAlignOp(GraphOp):
    """Pools each region of interest of `rois` (R, 4: x1, y1, x2, y2, scaled by `spatial_scale`)
    in image `batch_indices[r]` of `input` (N, C, H, W) into `output_height` x `output_width`
    bins, averaging (or taking the largest of) a grid of bilinear samples per bin:
    `sampling_ratio` per side, or as many as the bin is wide when 0. With `half_pixel = true`
    (the default) the box is shifted by half a cell (ONNX's half_pixel mode); otherwise boxes
    shrink to no less than one cell.

    ```
    %y = ascend.graph.roi_align %x, %rois, %batch {mode = "avg", output_height = 2 : i64,
        output_width = 2 : i64, sampling_ratio = 0 : i64, spatial_scale = 1.0 : f32}
        : (tensor<1x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x2x2xf32>
    ```
    """

    name = "ascend.graph.roi_align"

    input = operand_def(TensorType)
    rois = operand_def(TensorType)
    batch_indices = operand_def(TensorType)
    result = result_def(TensorType)
    mode = opt_prop_def(StringAttr)
    output_height = opt_prop_def(IntegerAttr)
    output_width = opt_prop_def(IntegerAttr)
    sampling_ratio = opt_prop_def(IntegerAttr)
    spatial_scale = opt_prop_def(FloatAttr)
    half_pixel = flag_def(True)

    @classmethod
    def infer(cls, operand_types, props, where):
        x, rois, batch = operand_types
        index_type(batch, "batch_indices")
        shape, boxes = dims(x), dims(rois)
        if len(shape) != 4 or not isinstance(x.element_type, AnyFloat):
            raise ValueError(f"the input must be a 4-D float tensor, got {x}")
        if len(boxes) != 2 or boxes[1] not in (4, DYN) or not same_dims(dims(batch), boxes[:1]):
            raise ValueError(
                f"rois {list(boxes)} must be (R, 4) with R batch indices, got {list(dims(batch))}"
            )
        _choice(props, "mode", ROI_ALIGN_MODES)
        height, width = prop_int(props, "output_height", 1), prop_int(props, "output_width", 1)
        if height < 1 or width < 1 or prop_int(props, "sampling_ratio", 0) < 0:
            raise ValueError("the output sizes must be positive and 'sampling_ratio' non-negative")
        return TensorType(x.element_type, (boxes[0], shape[1], height, width))


def _choice(props, name: str, choices: tuple[str, ...]) -> str:
    value = prop_str(props, name, choices[0])
    if value not in choices:
        raise ValueError(f"'{name}' must be one of {', '.join(choices)}; got '{value}'")
    return value


OPS = (GridSampleOp, RoiAlignOp)
