"""Converters of the integer convolutions ConvInteger and QLinearConv, lowered to a float
convolution over zero-point-shifted inputs that is exact:

```
ConvInteger: y = cast<i32>(conv(float(x) - x_zero, float(w) - w_zero))
QLinearConv: y = saturate(round((conv(...) + bias) * x_scale * w_scale / y_scale) + y_zero)
```
Shifted 8-bit values lie in [-255, 255], so each product is at most 255^2 and every partial sum
of a window of at most 258 products (input channels per group x kernel size) is an integer float32
holds exactly; larger windows convolve in float64, which holds every sum exactly. The window
attributes are Conv's, read by `nn`'s converter.
"""

from __future__ import annotations

import dataclasses
import math

from ge.dialects import graph as ops
from ge.graph import Tensor

from . import nn
from .composite import Composer
from .importer import Converter, Importer, Node

EXACT_IN_FLOAT32 = (1 << 24) // (255 * 255)
"""The most shifted 8-bit products whose sum float32 holds exactly."""

INTEGER_RANGES = {"uint8": (0, 255), "int8": (-128, 127)}


def _conv_integer(imp: Importer, node: Node) -> list[Tensor]:
    """8-bit inputs; a scalar input zero point, a scalar or per-output-channel weight zero point."""
    c = Composer(imp, node)
    x, w = c.input(0, "x"), c.input(1, "w")
    x_zero, w_zero = (node.optional_input(i) for i in (2, 3))
    return [c.cast(_integer_conv(c, x, x_zero, w, w_zero), "int32", "")]


def _qlinear_conv(imp: Importer, node: Node) -> list[Tensor]:
    """8-bit inputs and output; scales and zero points per tensor, the weight's also per output
    channel; an optional int32 bias (in units of x_scale * w_scale). Requantized in float32."""
    c = Composer(imp, node)
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero = (c.input(i, str(i)) for i in range(8))
    if y_zero.dtype not in INTEGER_RANGES:
        raise _dtype_error(node, f"a {y_zero.dtype} output")
    accumulated = c.cast(_integer_conv(c, x, x_zero, w, w_zero), "float32", "accumulated")
    rank = len(x.shape)
    if node.has_input(8):
        bias = c.cast(_per_channel(c, node.input(8), rank, "bias"), "float32", "bias_f32")
        accumulated = c.op(ops.AddOp, [accumulated, bias], "biased")
    scales = [c.cast(t, "float32", f"{part}_f32") for t, part in ((x_scale, "x_scale"), (y_scale, "y_scale"))]
    w_scale = c.cast(_per_channel(c, w_scale, rank, "w_scale"), "float32", "w_scale_f32")
    scales = [
        c.reshape(s, [], f"{part}_scalar") for s, part in zip(scales, ("x_scale", "y_scale"), strict=True)
    ]
    multiplier = c.op(ops.DivOp, [c.op(ops.MulOp, [scales[0], w_scale], "xw_scale"), scales[1]], "multiplier")
    rounded = c.op(ops.RoundOp, [c.op(ops.MulOp, [accumulated, multiplier], "scaled")], "rounded")
    shifted = c.op(
        ops.AddOp,
        [rounded, c.cast(c.reshape(y_zero, [], "y_zero_scalar"), "float32", "y_zero_f32")],
        "shifted",
    )
    low, high = (
        c.scalar(bound, "float32", part)
        for bound, part in zip(INTEGER_RANGES[y_zero.dtype], ("low", "high"), strict=True)
    )
    clamped = c.op(ops.MinOp, [c.op(ops.MaxOp, [shifted, low], "above_low"), high], "clamped")
    return [c.cast(clamped, y_zero.dtype, "")]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _integer_conv(c: Composer, x: Tensor, x_zero: Tensor | None, w: Tensor, w_zero: Tensor | None) -> Tensor:
    """conv(x - x_zero, w - w_zero) in float32 or float64, whichever holds it exactly."""
    node = c.node
    for tensor in (x, w, x_zero, w_zero):
        if tensor is not None and tensor.dtype not in INTEGER_RANGES:
            raise _dtype_error(node, f"{tensor.dtype} operands (8-bit integers are supported)")
    c.static(w)
    window = math.prod(w.shape[1:])
    compute = "float32" if window <= EXACT_IN_FLOAT32 else "float64"
    x_shifted = c.cast(x, compute, "x_f")
    if x_zero is not None:
        if math.prod(x_zero.shape) != 1:
            raise node.fail("a per-channel input zero point")
        zero = c.cast(c.reshape(x_zero, [], "x_zero_scalar"), compute, "x_zero_f")
        x_shifted = c.op(ops.SubOp, [x_shifted, zero], "x_shifted")
    w_shifted = c.cast(w, compute, "w_f")
    if w_zero is not None:
        zero = c.cast(_per_channel(c, w_zero, len(w.shape), "w_zero", axis=0), compute, "w_zero_f")
        w_shifted = c.op(ops.SubOp, [w_shifted, zero], "w_shifted")
    conv = dataclasses.replace(node, inputs=[x_shifted, w_shifted], known=[None, None], input_names=["", ""])
    result = nn.CONVERTERS["Conv"](c.imp, conv)[0]
    assert isinstance(result, Tensor)  # Conv of graph tensors builds a graph op
    return result


def _per_channel(c: Composer, value: Tensor, rank: int, part: str, axis: int = 1) -> Tensor:
    """A scalar as a scalar, a vector as one value per channel along `axis` of a rank-`rank` tensor."""
    if math.prod(value.shape) == 1:
        return c.reshape(value, [], f"{part}_scalar")
    if len(value.shape) != 1:
        raise c.node.invalid(f"{part} must be a scalar or a vector, got shape {list(value.shape)}")
    return c.reshape(value, [value.shape[0] if a == axis else 1 for a in range(rank)], f"{part}_per_channel")


def _dtype_error(node: Node, what: str):
    error = node.fail(what)
    error.category = "dtype"
    return error


CONVERTERS: dict[str, Converter] = {"ConvInteger": _conv_integer, "QLinearConv": _qlinear_conv}
