"""Resampling: `resize`, ONNX Resize (and Upsample) with every axis's scale and size resolved.

Frontends turn the `scales` or `sizes` inputs, `axes` and `keep_aspect_ratio_policy` into one
scale and one output length per axis, so the op's meaning depends on properties only.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, StringAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def

from ..common import FloatArray, IntArray
from .base import GraphOp, flag_def, prop_flag
from .traits import ExactInStoredType

MODES = ("nearest", "linear", "cubic")
COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


@irdl_op_definition
class ResizeOp(GraphOp):
    """Resamples every axis to `sizes` (-1 keeps an axis whose scale is 1 as it is), mapping an
    output coordinate to the input by `coordinate_transformation_mode` and `scales`, then taking
    the nearest cell (`nearest_mode`) or interpolating (n-linear or n-cubic, separable, edge cells
    repeated). `antialias` widens the linear and cubic filters when downsampling; `roi` holds the
    crop box ([starts..., ends...]) of `tf_crop_and_resize`, whose outside reads
    `extrapolation_value`. The ONNX Resize attributes of the same names mean the same.

    ```
    %y = ascend.graph.resize %x {mode = "linear", coordinate_transformation_mode = "half_pixel",
        scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 3, 8, 8>}
        : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
    ```
    """

    name = "ascend.graph.resize"

    traits = traits_def(ExactInStoredType())

    input = operand_def(TensorType)
    result = result_def(TensorType)

    scales = prop_def(FloatArray)
    sizes = prop_def(IntArray)
    mode = opt_prop_def(StringAttr)
    coordinate_transformation_mode = opt_prop_def(StringAttr)
    nearest_mode = opt_prop_def(StringAttr)
    cubic_coeff_a = opt_prop_def(FloatAttr)
    exclude_outside = flag_def(False)
    extrapolation_value = opt_prop_def(FloatAttr)
    antialias = flag_def(False)
    roi = opt_prop_def(FloatArray)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0].get_shape()
        scales, sizes = _floats(props, "scales"), _floats(props, "sizes")
        if len(scales) != len(x) or len(sizes) != len(x):
            raise ValueError(f"'scales' and 'sizes' need {len(x)} values, got {len(scales)} and {len(sizes)}")
        if min(scales, default=1.0) <= 0:
            raise ValueError(f"'scales' must be positive, got {scales}")
        mode = _choice(props, "mode", MODES)
        coordinates = _choice(props, "coordinate_transformation_mode", COORDINATE_MODES)
        _choice(props, "nearest_mode", NEAREST_MODES)
        if prop_flag(cls, props, "antialias") and mode == "nearest":
            raise ValueError("'antialias' applies to the linear and cubic modes only")
        roi = _floats(props, "roi")
        if coordinates == "tf_crop_and_resize" and len(roi) != 2 * len(x):
            raise ValueError(f"tf_crop_and_resize needs a 'roi' of {2 * len(x)} values, got {len(roi)}")
        shape = []
        for axis, (size, scale) in enumerate(zip(sizes, scales, strict=True)):
            if size < 0:
                if scale != 1.0:
                    raise ValueError(f"axis {axis} is resized, so its output size must be given")
                shape.append(x[axis])
            else:
                shape.append(int(size))
        return TensorType(operand_types[0].element_type, shape)


def _floats(props, name: str) -> list[float]:
    attr = props.get(name)
    if attr is None:
        return []
    if not isinstance(attr, DenseArrayBase):
        raise ValueError(f"'{name}' must be an array")
    return list(attr.get_values())


def _choice(props, name: str, choices: tuple[str, ...]) -> str:
    attr = props.get(name)
    value = choices[0] if attr is None else attr.data
    if value not in choices:
        raise ValueError(f"'{name}' must be one of {', '.join(choices)}; got '{value}'")
    return value


OPS = (ResizeOp,)
