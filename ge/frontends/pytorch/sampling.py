"""Converters of the ATen ops that sample an input at computed points: `grid_sampler_2d` and
`grid_sampler_3d` (`F.grid_sample`), which map to the graph's grid_sample, ONNX GridSample's
definition; ATen numbers the modes where the graph op names them.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.graph import Graph, Tensor

from .importer import Converter, Node

_INTERPOLATIONS = ("linear", "nearest", "cubic")
"""ATen's `interpolation_mode` numbers: bilinear (trilinear in 3-D), nearest, bicubic."""
_PADDINGS = ("zeros", "border", "reflection")
"""ATen's `padding_mode` numbers."""


def _grid_sample(g: Graph, node: Node) -> Tensor:
    """`grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)`: torch's
    nearest rounds halves to even and its bicubic is Keys' with a = -0.75, each tap clamped on
    its own at a border, as the graph op's are."""
    x, grid = node.arg(0, "input"), node.arg(1, "grid")
    interpolation, padding = node.arg(2, "interpolation_mode"), node.arg(3, "padding_mode")
    if interpolation not in range(len(_INTERPOLATIONS)) or padding not in range(len(_PADDINGS)):
        raise node.fail(f"interpolation mode {interpolation} with padding mode {padding} is not known")
    props = {
        "mode": StringAttr(_INTERPOLATIONS[interpolation]),
        "padding_mode": StringAttr(_PADDINGS[padding]),
        "align_corners": bool(node.arg(4, "align_corners")),
    }
    return g.add_op(ops.GridSampleOp, [x, grid], props, node.name)


CONVERTERS: dict[str, Converter] = {
    "aten.grid_sampler_2d.default": _grid_sample,
    "aten.grid_sampler_3d.default": _grid_sample,
}
