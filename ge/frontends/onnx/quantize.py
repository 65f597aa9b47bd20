"""Converters of the quantization operators: QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear and QLinearMatMul, each lowered to graph ops (div, round, add, max, min,
cast, sub, mul, matmul_integer).

```
QuantizeLinear:   y = cast(min(max(round(x / scale) + zero_point, qmin), qmax))   (integer y)
                  y = cast(x / scale + zero_point, saturate)                        (float8, float4 y)
DequantizeLinear: y = (x - zero_point) * scale
```
Scales and zero points are scalars (per tensor), vectors along `axis` (per axis) or, from opset
21, blocks of `block_size` elements along `axis` (blocked).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.dtypes import SATURABLE, element_type, numpy_dtype
from ge.errors import UnsupportedOperatorError
from ge.graph import Tensor

from .importer import Converter, Importer, Node, dtype_name

INTEGER_RANGES = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "uint16": (0, 65535),
    "int16": (-32768, 32767),
    "uint4": (0, 15),
    "int4": (-8, 7),
    "uint2": (0, 3),
    "int2": (-2, 1),
}
"""The integer types values are quantized to, and the range each saturates to."""

FLOAT_TARGETS = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn")
"""The float types values are quantized to (rounded to nearest even)."""

FLOATS = ("float16", "bfloat16", "float32", "float64")
"""The types a quantizing division may run in, and dequantized values may take."""


def _quantize_linear(imp: Importer, node: Node) -> list[Tensor]:
    """Per-tensor, per-axis and blocked scales; the division runs in the type `precision` names
    (opset 23), else in the scale's (float32 for an integer or float8e8m0 scale). Integers round
    halves to even and saturate; float8 saturates as `saturate` says."""
    b = _Builder(imp, node)
    x, scale = node.input(0), node.input(1)
    zero = node.optional_input(2)
    target = _quantized_dtype(node, zero)
    precision = int(node.attr("precision", 0))
    compute = dtype_name(precision, "the precision of QuantizeLinear") if precision else scale.dtype
    if compute not in FLOATS:
        compute = "float32"
    scaled = b(ops.DivOp, b.cast(x, compute), b.cast(_along(b, scale, x), compute))
    if target in FLOAT_TARGETS:
        if zero is not None and not _is_zero(node, 2):
            scaled = b(ops.AddOp, scaled, b.cast(_along(b, zero, x), compute))
        result = imp.g.add_cast(scaled, target, node.name)
        if target in SATURABLE and node.attr("saturate", 1):
            cast = result.value.owner
            assert isinstance(cast, ops.CastOp)
            cast.properties["saturate"] = bool_attr(True)
        return [result]
    # Saturation happens in float32 (float64 for float64 division): every quantized value and
    # zero point is exact there, and anything beyond the target's range stays beyond it.
    wide = "float64" if compute == "float64" else "float32"
    rounded = b.cast(b(ops.RoundOp, scaled), wide)
    if zero is not None:
        rounded = b(ops.AddOp, rounded, b.cast(_along(b, zero, x), wide))
    return [_saturate(b, rounded, target)]


def _dequantize_linear(imp: Importer, node: Node) -> list[Tensor]:
    """Per-tensor, per-axis and blocked scales; computed in float32, the result then cast to
    `output_dtype` (opset 23) or the scale's type."""
    b = _Builder(imp, node)
    x, scale = node.input(0), node.input(1)
    output = int(node.attr("output_dtype", 0))
    target = dtype_name(output, "the output_dtype of DequantizeLinear") if output else scale.dtype
    if target not in FLOATS:
        raise _dtype_error(node, f"a {target} output is not supported (give output_dtype)")
    if x.dtype == "bool" or x.dtype in FLOATS:
        raise _dtype_error(node, f"{x.dtype} inputs are not supported")
    # float32 holds every quantized value and their differences (16 bits and narrower) exactly.
    shifted = b.cast(x, "float32")
    if node.has_input(2) and not _is_zero(node, 2):
        shifted = b(ops.SubOp, shifted, b.cast(_along(b, node.input(2), x), "float32"))
    return [b.cast(b(ops.MulOp, shifted, b.cast(_along(b, scale, x), "float32")), target)]


def _dynamic_quantize_linear(imp: Importer, node: Node) -> list[Tensor]:
    """To uint8 over the range of the input widened to hold 0; an input of zeros alone takes the
    scale 1, as onnxruntime does (the formula would divide 0 by 0)."""
    b = _Builder(imp, node)
    x = node.input(0)
    if x.dtype != "float32":
        raise _dtype_error(node, f"{x.dtype} inputs are not supported")
    every_axis = {"axes": ints_attr(list(range(len(x.shape)))), "keepdims": bool_attr(False)}
    zero, qmax = (b.scalar(value, "float32") for value in (0.0, 255.0))
    low = b(ops.MinOp, b(ops.ReduceMinOp, x, props=every_axis), zero)
    high = b(ops.MaxOp, b(ops.ReduceMaxOp, x, props=every_axis), zero)
    span = b(ops.SubOp, high, low)
    span = b(ops.WhereOp, b(ops.EqualOp, span, zero), qmax, span)
    scale = b(ops.DivOp, span, qmax)
    start = b(ops.SubOp, zero, b(ops.DivOp, low, scale))
    zero_point = b(ops.RoundOp, b(ops.MinOp, b(ops.MaxOp, start, zero), qmax))
    y = b(ops.AddOp, b(ops.RoundOp, b(ops.DivOp, x, scale)), zero_point)
    return [_saturate(b, y, "uint8"), scale, b.cast(zero_point, "uint8")]


def _qlinear_matmul(imp: Importer, node: Node) -> list[Tensor]:
    """8-bit integer operands (float8 ones are refused); a scale and zero point are scalars, or
    per row of `a` and per column of `b`. The integer product is requantized in float32."""
    b = _Builder(imp, node)
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero = node.input_tensors(8)
    for tensor in (x, w, y_zero):
        if tensor.dtype not in ("int8", "uint8"):
            raise _dtype_error(node, f"{tensor.dtype} operands are not supported")
    x_zero, x_scale = (_per_row(b, t, x) for t in (x_zero, x_scale))
    product = b(ops.MatMulIntegerOp, x, w, x_zero, w_zero)
    multiplier = b(ops.DivOp, b(ops.MulOp, x_scale, w_scale), y_scale)
    scaled = b(ops.MulOp, b.cast(product, "float32"), b.cast(multiplier, "float32"))
    rounded = b(ops.RoundOp, b(ops.AddOp, scaled, b.cast(y_zero, "float32")))
    return [_saturate(b, rounded, y_zero.dtype)]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Builder:
    """Appends the graph ops of one node's lowering, each located at the node."""

    imp: Importer
    node: Node

    def __call__(self, op_class: type[ops.GraphOp], *operands: Tensor, props: dict | None = None) -> Tensor:
        return self.imp.g.add_op(op_class, operands, props, self.node.name)

    def cast(self, x: Tensor, dtype: str) -> Tensor:
        return x if x.dtype == dtype else self.imp.g.add_cast(x, dtype, self.node.name)

    def reshape(self, x: Tensor, shape: list[int]) -> Tensor:
        return self.imp.g.add_reshape(x, shape, self.node.name)

    def constant(self, array: np.ndarray) -> Tensor:
        return self.imp.g.add_constant(array, f"{self.node.name}_constant")

    def scalar(self, value: float, dtype: str) -> Tensor:
        return self.constant(np.array(value, numpy_dtype(element_type(dtype))))


def _quantized_dtype(node: Node, zero: Tensor | None) -> str:
    """The zero point's type, else `output_dtype`'s, else uint8; one ge can quantize to."""
    output = int(node.attr("output_dtype", 0))
    named = dtype_name(output, "the output_dtype of QuantizeLinear") if output else None
    if zero is not None and named is not None and named != zero.dtype:
        raise node.invalid(f"output_dtype {named} differs from the zero point's type {zero.dtype}")
    target = zero.dtype if zero is not None else named or "uint8"
    if target not in INTEGER_RANGES and target not in FLOAT_TARGETS:
        raise _dtype_error(node, f"quantizing to {target} is not supported")
    return target


def _along(b: _Builder, value: Tensor, x: Tensor) -> Tensor:
    """A scale or zero point shaped to broadcast against `x`: a single value as a scalar, a
    vector along `axis`, or (with `block_size`) each value repeated over its block of `axis`."""
    node = b.node
    if math.prod(value.shape) == 1:
        return value if value.shape == () else b.reshape(value, [])
    rank = len(x.shape)
    axis = int(node.attr("axis", 1))
    if not -rank <= axis < rank:
        raise node.invalid(f"axis {axis} is out of range for an input of rank {rank}")
    axis %= rank
    block = int(node.attr("block_size", 0))
    if block < 0:
        raise node.invalid(f"attribute 'block_size' is {block}: it must be >= 0")
    if not block:
        length = value.shape[0] if len(value.shape) == 1 else None
        if length is None or -1 not in (length, x.shape[axis]) and length != x.shape[axis]:
            raise node.invalid(
                f"a per-axis scale or zero point must be a vector of {x.shape[axis]} values, "
                f"got shape {list(value.shape)}"
            )
        return b.reshape(value, [length if d == axis else 1 for d in range(rank)])
    size = x.shape[axis]
    if size < 0:
        raise node.fail("blocked quantization needs a static size along the axis")
    expected = [-(-size // block) if d == axis else n for d, n in enumerate(x.shape)]
    if len(value.shape) != rank or any(n not in (m, -1) for n, m in zip(value.shape, expected, strict=True)):
        raise node.invalid(
            f"blocks of {block} along axis {axis} need a shape {expected}, not {list(value.shape)}"
        )
    blocks = b.constant(np.arange(size, dtype=np.int64) // block)
    return b(ops.GatherOp, value, blocks, props={"axis": int_attr(axis)})


def _per_row(b: _Builder, value: Tensor, matrix: Tensor) -> Tensor:
    """A vector of one value per row of `matrix` as a column; anything else as given."""
    if len(value.shape) == 1 and value.shape[0] != 1 and len(matrix.shape) >= 2:
        return b.reshape(value, [value.shape[0], 1])
    return value


def _saturate(b: _Builder, x: Tensor, target: str) -> Tensor:
    """`x` (whole numbers) clamped to the range of the integer type `target`, then cast to it."""
    low, high = (b.scalar(bound, x.dtype) for bound in INTEGER_RANGES[target])
    return b.cast(b(ops.MinOp, b(ops.MaxOp, x, low), high), target)


def _is_zero(node: Node, index: int) -> bool:
    """Whether input `index` is known at import time and all zeros."""
    known = node.known[index]
    return known is not None and not np.any(np.asarray(known).astype(np.float32))


def _dtype_error(node: Node, what: str) -> UnsupportedOperatorError:
    error = node.fail(what)
    error.category = "dtype"
    return error


CONVERTERS: dict[str, Converter] = {
    "QuantizeLinear": _quantize_linear,
    "DequantizeLinear": _dequantize_linear,
    "DynamicQuantizeLinear": _dynamic_quantize_linear,
    "QLinearMatMul": _qlinear_matmul,
}
