"""Converters of Resize (opsets 10 to 19) and the deprecated Upsample into `ascend.graph.resize`.

The `scales`, `sizes` and `roi` inputs decide the output shape, so they must be known when the
graph is built; with `axes` and `keep_aspect_ratio_policy` they resolve into one scale and one
output length per axis.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, StringAttr, f64

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, ints_attr
from ge.dialects.graph.resize import COORDINATE_MODES, MODES, NEAREST_MODES
from ge.graph import Tensor

from .importer import Converter, Importer, Node


def _resize(imp: Importer, node: Node) -> list[Tensor]:
    """Resized axes need static lengths. Refused: antialias=1 with mode nearest, linear and cubic
    over booleans, tf_crop_and_resize with `scales` and a crop box other than the whole input
    (the specification and the ONNX reference size that output differently), and before opset
    11, nearest downsampling (its rounding is unspecified).
    """
    x = node.input(0)
    if node.opset < 11:
        return [_legacy(imp, node)]
    rank = len(x.shape)
    axes = _axes(node, rank)
    coordinates = _choice(node, "coordinate_transformation_mode", COORDINATE_MODES)
    mode = _choice(node, "mode", MODES)
    nearest_mode = _choice(node, "nearest_mode", NEAREST_MODES)
    if coordinates == "tf_half_pixel_for_nn" and node.opset >= 13:
        raise node.invalid("coordinate_transformation_mode 'tf_half_pixel_for_nn' ends at opset 12")
    if coordinates == "half_pixel_symmetric" and node.opset < 19:
        raise node.invalid("coordinate_transformation_mode 'half_pixel_symmetric' starts at opset 19")
    scales = _optional(node, 2, np.float32)
    sizes = _optional(node, 3, np.int64)
    if (scales is None) == (sizes is None):
        raise node.invalid("Resize needs exactly one of 'scales' and 'sizes'")
    roi = None
    if coordinates == "tf_crop_and_resize":
        box = _optional(node, 1, np.float64)
        if box is None or box.size != 2 * len(axes):
            raise node.invalid(f"tf_crop_and_resize needs a roi of {2 * len(axes)} values")
        roi = [0.0] * rank + [1.0] * rank
        for i, axis in enumerate(axes):
            roi[axis], roi[rank + axis] = float(box[i]), float(box[len(axes) + i])
        if scales is not None and any(roi[a] != 0.0 or roi[rank + a] != 1.0 for a in axes):
            # The specification sizes the output by the crop box, the ONNX reference does not.
            raise node.fail("tf_crop_and_resize with 'scales' and a crop box is not supported")
    if scales is not None:
        factors, lengths = _from_scales(node, x, axes, scales)
    else:
        assert sizes is not None  # exactly one of the two is given (checked above)
        factors, lengths = _from_sizes(node, x, axes, sizes)
    if node.attr("antialias", 0) and mode == "nearest":
        raise node.fail("antialias=1 with mode 'nearest' is not supported")
    props = {
        "scales": DenseArrayBase.from_list(f64, factors),
        "sizes": ints_attr(lengths),
        "mode": StringAttr(mode),
        "coordinate_transformation_mode": StringAttr(coordinates),
        "nearest_mode": StringAttr(nearest_mode),
        "cubic_coeff_a": ops.float_attr(node.attr("cubic_coeff_a", -0.75)),
        "exclude_outside": bool_attr(node.flag("exclude_outside", False)),
        "extrapolation_value": ops.float_attr(node.attr("extrapolation_value", 0.0)),
        "antialias": bool_attr(node.flag("antialias", False)),
    }
    if roi is not None:
        props["roi"] = DenseArrayBase.from_list(f64, roi)
    _check_dtype(node, x, mode)
    return [imp.g.add_op(ops.ResizeOp, [x], props, node.name)]


def _upsample(imp: Importer, node: Node) -> list[Tensor]:
    """As Resize-10: asymmetric coordinates, nearest cells rounded down; nearest downsampling and
    linear over booleans are refused.
    """
    return [_legacy(imp, node)]


def _legacy(imp: Importer, node: Node) -> Tensor:
    """Upsample and Resize-10: asymmetric coordinates, nearest cells rounded down."""
    x = node.input(0)
    mode = node.attr("mode", "nearest")
    if mode == "bilinear":
        mode = "linear"
    if mode not in ("nearest", "linear"):
        raise node.invalid(f"unknown mode '{mode}'")
    scales = node.value(1).astype(np.float32).reshape(-1)
    factors, lengths = _from_scales(node, x, list(range(len(x.shape))), scales)
    if mode == "nearest" and min(factors) < 1:
        raise node.fail("nearest downsampling before opset 11 is not supported (its rounding is unspecified)")
    _check_dtype(node, x, mode)
    props = {
        "scales": DenseArrayBase.from_list(f64, factors),
        "sizes": ints_attr(lengths),
        "mode": StringAttr(mode),
        "coordinate_transformation_mode": StringAttr("asymmetric"),
        "nearest_mode": StringAttr("floor"),
    }
    return imp.g.add_op(ops.ResizeOp, [x], props, node.name)


def _from_scales(node: Node, x: Tensor, axes: list[int], scales: np.ndarray) -> tuple[list[float], list[int]]:
    """Per-axis scales and lengths: `floor(length * scale)` on the resized axes."""
    if scales.size != len(axes):
        raise node.invalid(f"'scales' needs {len(axes)} values, got {scales.size}")
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    if policy != "stretch":  # as ONNX's shape inference and onnxruntime refuse it
        raise node.invalid(f"keep_aspect_ratio_policy '{policy}' needs 'sizes', not 'scales'")
    factors, lengths = [1.0] * len(x.shape), list(x.shape)
    for axis, scale in zip(axes, scales.tolist(), strict=True):
        if scale <= 0:
            raise node.invalid(f"scales must be positive, got {scales.tolist()}")
        factors[axis] = float(scale)
        if scale != 1.0:
            lengths[axis] = int(np.floor(scale * _static(node, x, axis)))
    return factors, lengths


def _from_sizes(node: Node, x: Tensor, axes: list[int], sizes: np.ndarray) -> tuple[list[float], list[int]]:
    """Per-axis scales and lengths from `sizes`, as `keep_aspect_ratio_policy` reads them."""
    if sizes.size != len(axes):
        raise node.invalid(f"'sizes' needs {len(axes)} values, got {sizes.size}")
    lengths = list(x.shape)
    for axis in axes:
        _static(node, x, axis)
    wanted = [int(s) for s in sizes.tolist()]
    ratios = [size / x.shape[axis] for axis, size in zip(axes, wanted, strict=True)]
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    factors = [1.0] * len(x.shape)
    if policy == "stretch":
        for axis, size, ratio in zip(axes, wanted, ratios, strict=True):
            factors[axis], lengths[axis] = ratio, size
    elif policy in ("not_larger", "not_smaller"):
        scale = min(ratios) if policy == "not_larger" else max(ratios)
        for axis in axes:
            # Rounding halfway cases up, as the specification's round_int does.
            factors[axis], lengths[axis] = scale, int(scale * x.shape[axis] + 0.5)
    else:
        raise node.invalid(f"unknown keep_aspect_ratio_policy '{policy}'")
    return factors, lengths


def _axes(node: Node, rank: int) -> list[int]:
    axes = [int(a) for a in node.attr("axes", range(rank))]
    normalized = [a + rank if a < 0 else a for a in axes]
    if any(not 0 <= a < rank for a in normalized) or len(set(normalized)) != len(normalized):
        raise node.invalid(f"axes {axes} are not distinct axes of a rank-{rank} input")
    return normalized


def _optional(node: Node, index: int, dtype: type) -> np.ndarray | None:
    """The value of an optional input; an absent or empty one is None."""
    if not node.has_input(index):
        return None
    tensor = node.input(index)
    if tensor.shape and tensor.shape[0] == 0:
        return None
    value = np.asarray(node.value(index)).reshape(-1)
    return None if value.size == 0 else value.astype(dtype)


def _choice(node: Node, name: str, choices: tuple[str, ...]) -> str:
    """The attribute's value, one of `choices` (the first is the default)."""
    value = node.attr(name, choices[0])
    if value not in choices:
        raise node.invalid(f"'{name}' must be one of {', '.join(choices)}; got '{value}'")
    return value


def _static(node: Node, x: Tensor, axis: int) -> int:
    if x.shape[axis] < 0:
        raise node.fail(f"resizing the dynamic axis {axis} is not supported")
    return x.shape[axis]


def _check_dtype(node: Node, x: Tensor, mode: str) -> None:
    if mode != "nearest" and x.dtype == "bool":
        raise node.fail(f"mode '{mode}' over booleans is not supported")


CONVERTERS: dict[str, Converter] = {
    "Resize": _resize,
    "Upsample": _upsample,
}
