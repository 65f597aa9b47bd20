"""Normalizations: ops that reduce statistics over some axes and rescale the input by them.

All take float tensors and compute their statistics in float32 at least (16-bit floats are
widened, as the hardware accumulates). Batch normalization, a per-channel affine map at
inference, lives with the other NCHW ops in `nn`.
"""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType, f32
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)

from ..common import IntArray
from .base import DYN, GraphOp, broadcast_shapes, normalize_axis, prop_int, same_dims, same_elements
from .reduction import read_axes, require_float
from .samples import Samplewise, from_axis, leading, outside
from .traits import ChannelGroups, ChannelWindow, KeepsPrecision, PerChannel, Reduction, VectorSweeps


class TrailingAxesNormOp(GraphOp, ABC):
    """An op that normalizes over the axes from `axis` (default -1) to the last, then scales by
    `scale` (and shifts by a bias), which broadcast to the input. Operands are declared by each
    op, since IRDL orders a subclass's operands before its base's."""

    traits = traits_def(Reduction(), KeepsPrecision(), Samplewise(from_axis))

    axis = opt_prop_def(IntegerAttr)
    epsilon = opt_prop_def(FloatAttr)

    @classmethod
    def check(cls, operand_types, props) -> int:
        """Checks dtypes, epsilon and that the parameters broadcast to the input; returns `axis`."""
        same_elements(operand_types, "operands")
        x = operand_types[0]
        require_float(x, "input")
        shape = x.get_shape()
        axis = normalize_axis(prop_int(props, "axis", -1), len(shape))
        for name, t in zip(("scale", "bias"), operand_types[1:], strict=False):
            if not _broadcasts_to(t.get_shape(), shape):
                given = list(t.get_shape())
                raise ValueError(f"'{name}' of shape {given} does not broadcast to {list(shape)}")
        check_epsilon(props)
        return axis


@irdl_op_definition
class LayerNormOp(TrailingAxesNormOp):
    """`(x - mean) * inv_std_dev * scale + bias` over the axes from `axis` on, as ONNX
    LayerNormalization; also yields `mean` and `inv_std_dev` (f32, the reduced axes kept as 1).

    ```
    %y, %mean, %inv_std_dev = ascend.graph.layer_norm %x, %scale, %bias {axis = -1 : i64,
        epsilon = 1.000000e-05 : f32} : (tensor<2x8xf16>, tensor<8xf16>, tensor<8xf16>)
        -> (tensor<2x8xf16>, tensor<2x1xf32>, tensor<2x1xf32>)
    ```
    """

    name = "ascend.graph.layer_norm"

    traits = traits_def(VectorSweeps(5))

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    mean = result_def(TensorType)
    inv_std_dev = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        axis = cls.check(operand_types, props)
        x = operand_types[0]
        shape = x.get_shape()
        stats = TensorType(f32, shape[:axis] + (1,) * (len(shape) - axis))
        return [x, stats, stats]


@irdl_op_definition
class RMSNormOp(TrailingAxesNormOp):
    """`x / sqrt(mean(x * x) + epsilon) * scale` over the axes from `axis` on (ONNX RMSNormalization).

    ```
    %y = ascend.graph.rms_norm %x, %scale {axis = -1 : i64, epsilon = 1.000000e-05 : f32}
        : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    ```
    """

    name = "ascend.graph.rms_norm"

    traits = traits_def(VectorSweeps(3))

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        cls.check(operand_types, props)
        return operand_types[0]


@irdl_op_definition
class GroupNormOp(GraphOp):
    """Normalizes each of `num_groups` groups of channels (axis 1) of each instance, then scales
    and shifts each channel: `scale[c] * (x - mean) / sqrt(var + epsilon) + bias[c]`.

    InstanceNormalization is the case `num_groups = C`.
    ```
    %y = ascend.graph.group_norm %x, %scale, %bias {num_groups = 2 : i64, epsilon = 1.000000e-05 : f32}
        : (tensor<3x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4x2x2xf32>
    ```
    """

    name = "ascend.graph.group_norm"

    traits = traits_def(KeepsPrecision(), VectorSweeps(5), Samplewise(leading), ChannelGroups())

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)

    num_groups = prop_def(IntegerAttr)
    epsilon = opt_prop_def(FloatAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        same_elements(operand_types, "operands")
        x = operand_types[0]
        require_float(x, "input")
        shape = x.get_shape()
        if len(shape) < 2:
            raise ValueError(f"group_norm needs an input of rank >= 2 (N, C, ...), got rank {len(shape)}")
        groups = prop_int(props, "num_groups", 0)
        if groups < 1:
            raise ValueError(f"'num_groups' must be positive, got {groups}")
        if shape[1] != DYN and shape[1] % groups:
            raise ValueError(f"{shape[1]} channels do not divide into {groups} groups")
        for name, t in zip(("scale", "bias"), operand_types[1:], strict=True):
            if not same_dims(t.get_shape(), (shape[1],)):
                raise ValueError(f"'{name}' must have shape [{shape[1]}], got {list(t.get_shape())}")
        check_epsilon(props)
        return x


@irdl_op_definition
class MeanVarianceNormOp(GraphOp):
    """`(x - mean) / (std + 1e-9)` with mean and (population) std over `axes`, as ONNX
    MeanVarianceNormalization.

    ```
    %y = ascend.graph.mean_variance_norm %x {axes = array<i64: 0, 2, 3>}
        : (tensor<3x3x3x1xf32>) -> tensor<3x3x3x1xf32>
    ```
    """

    name = "ascend.graph.mean_variance_norm"

    traits = traits_def(KeepsPrecision(), VectorSweeps(4), Samplewise(outside("axes")))

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axes = prop_def(IntArray)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0]
        require_float(x, "input")
        read_axes(props, "axes", len(x.get_shape()))
        return x


@irdl_op_definition
class LpNormOp(GraphOp):
    """`x / norm_p(x)` along `axis` (default -1) for `p` 1 or 2 (default 2); 0 where the norm is 0.

    `%y = ascend.graph.lp_norm %x {axis = 1 : i64, p = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>`
    """

    name = "ascend.graph.lp_norm"

    traits = traits_def(KeepsPrecision(), VectorSweeps(2), Samplewise(outside("axis", -1)))

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr)
    p = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0]
        require_float(x, "input")
        normalize_axis(prop_int(props, "axis", -1), len(x.get_shape()))
        if prop_int(props, "p", 2) not in (1, 2):
            raise ValueError(f"'p' must be 1 or 2, got {prop_int(props, 'p', 2)}")
        return x


@irdl_op_definition
class LRNOp(GraphOp):
    """Local response normalization across channels (axis 1), as ONNX LRN:
    `x / (bias + alpha / size * sum of x^2 over a window of size channels) ^ beta`.

    ```
    %y = ascend.graph.lrn %x {size = 3 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32,
        bias = 1.000000e+00 : f32} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    ```
    """

    name = "ascend.graph.lrn"

    traits = traits_def(
        PerChannel(), ChannelWindow(), KeepsPrecision(), VectorSweeps(3, 1), Samplewise(leading)
    )

    input = operand_def(TensorType)
    result = result_def(TensorType)

    size = prop_def(IntegerAttr)
    alpha = opt_prop_def(FloatAttr)
    beta = opt_prop_def(FloatAttr)
    bias = opt_prop_def(FloatAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0]
        require_float(x, "input")
        rank = len(x.get_shape())
        if rank < 3:
            raise ValueError(f"lrn needs an input of rank >= 3 (N, C, D1, ...), got rank {rank}")
        if prop_int(props, "size", 0) < 1:
            raise ValueError(f"'size' must be positive, got {prop_int(props, 'size', 0)}")
        return x


OPS = (LayerNormOp, RMSNormOp, GroupNormOp, MeanVarianceNormOp, LpNormOp, LRNOp)


def check_epsilon(props) -> None:
    epsilon = props.get("epsilon")
    if isinstance(epsilon, FloatAttr) and not epsilon.value.data >= 0:
        raise ValueError(f"'epsilon' must be non-negative, got {epsilon.value.data}")


def _broadcasts_to(shape, target) -> bool:
    """Whether `shape` broadcasts to `target` without growing it (unidirectional broadcasting)."""
    try:
        return len(shape) <= len(target) and same_dims(broadcast_shapes(shape, target), target)
    except ValueError:
        return False
