"""Neural-network ops: matrix products, convolution, normalization, pooling, softmax."""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)

from .base import (
    DYN,
    GraphOp,
    broadcast_shapes,
    check_window_props,
    prop_int,
    same_dims,
    same_elements,
    window_out,
)

# --------------------------------------------------------------------------------------------
# Matrix products and convolution (cube ops)
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class MatMulOp(GraphOp):
    """numpy `matmul`: batched over leading dimensions, 1-D operands promoted and squeezed.

    `%c = ascend.graph.matmul %a, %b : (tensor<4x8x16xf32>, tensor<16x32xf32>) -> tensor<4x8x32xf32>`
    """

    name = "ascend.graph.matmul"

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        element = same_elements(operand_types, "operands")
        a, b = operand_types[0].get_shape(), operand_types[1].get_shape()
        if not a or not b:
            raise ValueError("matmul operands must have rank >= 1")
        a2 = (1,) + a if len(a) == 1 else a
        b2 = b + (1,) if len(b) == 1 else b
        if DYN not in (a2[-1], b2[-2]) and a2[-1] != b2[-2]:
            raise ValueError(f"contracting dimensions differ: {a2[-1]} and {b2[-2]}")
        batch = broadcast_shapes(a2[:-2], b2[:-2])
        shape = batch + (a2[-2], b2[-1])
        if len(a) == 1:
            shape = shape[:-2] + shape[-1:]
        if len(b) == 1:
            shape = shape[:-1]
        return TensorType(element, shape)


@irdl_op_definition
class GemmOp(GraphOp):
    """`alpha * op(A) @ op(B) + beta * C`, with op() an optional transpose, as ONNX Gemm.

    ```
    %y = ascend.graph.gemm %a, %b, %c {trans_b = 1 : i64}
        : (tensor<1x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    ```
    """

    name = "ascend.graph.gemm"

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = opt_operand_def(TensorType)
    result = result_def(TensorType)

    alpha = opt_prop_def(FloatAttr)
    beta = opt_prop_def(FloatAttr)
    trans_a = opt_prop_def(IntegerAttr)
    trans_b = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        element = same_elements(operand_types, "operands")
        a, b = operand_types[0].get_shape(), operand_types[1].get_shape()
        if len(a) != 2 or len(b) != 2:
            raise ValueError(f"gemm operands must be matrices, got ranks {len(a)} and {len(b)}")
        if prop_int(props, "trans_a", 0):
            a = a[::-1]
        if prop_int(props, "trans_b", 0):
            b = b[::-1]
        if DYN not in (a[1], b[0]) and a[1] != b[0]:
            raise ValueError(f"contracting dimensions differ: {a[1]} and {b[0]}")
        shape = (a[0], b[1])
        if len(operand_types) == 3:
            c = operand_types[2].get_shape()
            if broadcast_shapes(c, shape) != shape:
                raise ValueError(f"bias of shape {list(c)} does not broadcast to {list(shape)}")
        return TensorType(element, shape)


@irdl_op_definition
class Conv2DOp(GraphOp):
    """2-D convolution over NCHW input with OIHW weights (O = out channels, I = C / groups).

    `pads` are [top, left, bottom, right], as ONNX orders them.
    ```
    %y = ascend.graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>,
        dilations = array<i64: 1, 1>, groups = 1 : i64}
        : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    ```
    """

    name = "ascend.graph.conv2d"

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)

    strides = opt_prop_def(DenseArrayBase)
    pads = opt_prop_def(DenseArrayBase)
    dilations = opt_prop_def(DenseArrayBase)
    groups = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        element = same_elements(operand_types, "operands")
        x, w = operand_types[0].get_shape(), operand_types[1].get_shape()
        if len(x) != 4 or len(w) != 4:
            raise ValueError(f"conv2d needs a 4-D input and weight, got ranks {len(x)} and {len(w)}")
        groups = prop_int(props, "groups", 1)
        if groups < 1:
            raise ValueError("'groups' must be positive")
        if DYN not in (x[1], w[1]) and x[1] != w[1] * groups:
            raise ValueError(f"input has {x[1]} channels but the weight expects {w[1]} x {groups} groups")
        if w[0] != DYN and w[0] % groups:
            raise ValueError(f"{w[0]} output channels do not divide into {groups} groups")
        if len(operand_types) == 3 and not same_dims(operand_types[2].get_shape(), (w[0],)):
            raise ValueError(f"bias must have shape [{w[0]}], got {list(operand_types[2].get_shape())}")
        p = check_window_props(props, 2, ("strides", "pads", "dilations"))
        pads = p["pads"]
        out_h = window_out(x[2], w[2], p["strides"][0], (pads[0], pads[2]), p["dilations"][0], False)
        out_w = window_out(x[3], w[3], p["strides"][1], (pads[1], pads[3]), p["dilations"][1], False)
        return TensorType(element, (x[0], w[0], out_h, out_w))


# --------------------------------------------------------------------------------------------
# Normalization and pooling
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference-mode batch normalization over axis 1: `scale * (x - mean) / sqrt(var + eps) + bias`.

    ```
    %y = ascend.graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.000000e-05 : f32}
        : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
        -> tensor<1x64x56x56xf32>
    ```
    """

    name = "ascend.graph.batch_norm"

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    result = result_def(TensorType)

    epsilon = opt_prop_def(FloatAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        same_elements(operand_types, "operands")
        x = operand_types[0].get_shape()
        if len(x) < 2:
            raise ValueError("batch_norm needs an input of rank >= 2")
        for name, t in zip(("scale", "bias", "mean", "var"), operand_types[1:], strict=True):
            if not same_dims(t.get_shape(), (x[1],)):
                raise ValueError(f"'{name}' must have shape [{x[1]}], got {list(t.get_shape())}")
        epsilon = props.get("epsilon")
        if isinstance(epsilon, FloatAttr) and not epsilon.value.data >= 0:
            raise ValueError(f"'epsilon' must be non-negative, got {epsilon.value.data}")
        return operand_types[0]


class Pool2DOp(GraphOp, ABC):
    """A 2-D sliding-window pool over NCHW input; `pads` are [top, left, bottom, right]."""

    input = operand_def(TensorType)
    result = result_def(TensorType)

    kernel_shape = prop_def(DenseArrayBase)
    strides = opt_prop_def(DenseArrayBase)
    pads = opt_prop_def(DenseArrayBase)
    ceil_mode = opt_prop_def(IntegerAttr)

    WINDOW_PROPS: ClassVar[tuple[str, ...]] = ("kernel_shape", "strides", "pads")

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0].get_shape()
        if len(x) != 4:
            raise ValueError(f"pooling needs a 4-D NCHW input, got rank {len(x)}")
        p = check_window_props(props, 2, cls.WINDOW_PROPS)
        if "kernel_shape" not in props:
            raise ValueError("missing 'kernel_shape'")
        dilations = p.get("dilations", (1, 1))
        pads, k, s = p["pads"], p["kernel_shape"], p["strides"]
        if any(pads[i] >= k[i % 2] for i in range(4)):
            raise ValueError("padding must be smaller than the window")
        ceil = bool(prop_int(props, "ceil_mode", 0))
        out_h = window_out(x[2], k[0], s[0], (pads[0], pads[2]), dilations[0], ceil)
        out_w = window_out(x[3], k[1], s[1], (pads[1], pads[3]), dilations[1], ceil)
        return TensorType(operand_types[0].element_type, (x[0], x[1], out_h, out_w))


@irdl_op_definition
class MaxPoolOp(Pool2DOp):
    """```
    %y = ascend.graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
        pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    ```
    """

    name = "ascend.graph.max_pool"

    dilations = opt_prop_def(DenseArrayBase)
    WINDOW_PROPS: ClassVar[tuple[str, ...]] = ("kernel_shape", "strides", "pads", "dilations")


@irdl_op_definition
class AvgPoolOp(Pool2DOp):
    """Average pool; `count_include_pad = 1` divides by the whole window, padding included.

    ```
    %y = ascend.graph.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
    ```
    """

    name = "ascend.graph.avg_pool"

    count_include_pad = opt_prop_def(IntegerAttr)


@irdl_op_definition
class GlobalAvgPoolOp(GraphOp):
    """Mean over every axis after the first two, kept as size 1.

    `%y = ascend.graph.global_avg_pool %x : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>`
    """

    name = "ascend.graph.global_avg_pool"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0].get_shape()
        if len(x) < 3:
            raise ValueError(f"global_avg_pool needs an input of rank >= 3, got {len(x)}")
        return TensorType(operand_types[0].element_type, x[:2] + (1,) * (len(x) - 2))


OPS = (MatMulOp, GemmOp, Conv2DOp, BatchNormOp, MaxPoolOp, AvgPoolOp, GlobalAvgPoolOp)
