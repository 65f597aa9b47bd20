"""Pooling: max, average and Lp pools over sliding windows (2-D and 3-D), a max pool that also
yields its argmax, and the global pools.

`pads` list every spatial axis's leading padding, then every trailing one, as ONNX orders them;
ceil mode never starts a window in the trailing padding.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, TensorType, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def

from ..common import IntArray
from .base import GraphOp, check_window_props, flag_def, prop_flag, prop_int, window_out
from .samples import Samplewise, leading
from .traits import (
    ExactInStoredType,
    KeepsPrecision,
    PerChannel,
    PrefersLowPrecision,
    Reduction,
    Transcendental,
    WithinPlane,
)


class PoolOp(GraphOp, ABC):
    """A sliding-window pool over N, C, spatial... input; one window per channel."""

    traits = traits_def(Samplewise(leading))

    SPATIAL: ClassVar[int]

    input = operand_def(TensorType)
    result = result_def(TensorType)

    kernel_shape = prop_def(IntArray)
    strides = opt_prop_def(IntArray)
    pads = opt_prop_def(IntArray)
    dilations = opt_prop_def(IntArray)
    ceil_mode = flag_def(False)

    @classmethod
    def infer(
        cls, operand_types: Sequence[TensorType], props: Mapping[str, Attribute], where: str
    ) -> TensorType | list[TensorType]:
        return TensorType(
            operand_types[0].element_type, pool_shape(cls, cls.SPATIAL, operand_types[0], props)
        )


def pool_shape(cls: type[PoolOp], n: int, input: TensorType, props) -> tuple[int, ...]:
    """The output shape of an `n`-D pool with these window properties."""
    x = input.get_shape()
    if len(x) != n + 2:
        raise ValueError(f"a {n}-D pool needs a rank-{n + 2} input, got rank {len(x)}")
    if "kernel_shape" not in props:
        raise ValueError("missing 'kernel_shape'")
    p = check_window_props(props, n, ("kernel_shape", "strides", "pads", "dilations"))
    pads, k, s, d = p["pads"], p["kernel_shape"], p["strides"], p["dilations"]
    if any(pads[i] >= k[i % n] for i in range(2 * n)):
        raise ValueError("padding must be smaller than the window")
    ceil = prop_flag(cls, props, "ceil_mode")
    out = tuple(window_out(x[2 + i], k[i], s[i], (pads[i], pads[i + n]), d[i], ceil) for i in range(n))
    return (x[0], x[1], *out)


class Pool2DOp(PoolOp, ABC):
    """A 2-D sliding-window pool over NCHW input; `pads` are [top, left, bottom, right]."""

    traits = traits_def(WithinPlane())

    SPATIAL: ClassVar[int] = 2


class Pool3DOp(PoolOp, ABC):
    """A 3-D sliding-window pool over NCDHW input."""

    SPATIAL: ClassVar[int] = 3


class AveragingPool:
    """Average pools: `count_include_pad = true` divides by the whole window, explicit pads included."""

    count_include_pad = flag_def(False)


class LpPool(GraphOp, ABC):
    """Lp pools: `(sum |x|^p) ^ (1/p)` over each window, padding counting as zeros; p is at
    least 1 (2 when not given)."""

    p = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(
        cls, operand_types: Sequence[TensorType], props: Mapping[str, Attribute], where: str
    ) -> TensorType:
        if (p := prop_int(props, "p", 2)) < 1:
            raise ValueError(f"'p' must be at least 1, got {p}")
        result = super().infer(operand_types, props, where)
        assert isinstance(result, TensorType), "a pool has one result"
        return result


@irdl_op_definition
class MaxPoolOp(Pool2DOp):
    """```
    %y = ascend.graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
        pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    ```
    """

    name = "ascend.graph.max_pool"

    traits = traits_def(PerChannel(), PrefersLowPrecision(), ExactInStoredType())


@irdl_op_definition
class AvgPoolOp(AveragingPool, Pool2DOp):
    """Average pool; cells added only for a ceil-mode last window are never counted.

    ```
    %y = ascend.graph.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
    ```
    """

    name = "ascend.graph.avg_pool"

    traits = traits_def(PerChannel(), PrefersLowPrecision())


@irdl_op_definition
class LpPoolOp(LpPool, Pool2DOp):
    """```
    %y = ascend.graph.lp_pool %x {kernel_shape = array<i64: 2, 2>, p = 3 : i64}
        : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
    ```
    """

    name = "ascend.graph.lp_pool"

    traits = traits_def(KeepsPrecision(), Transcendental())


@irdl_op_definition
class MaxPool3DOp(Pool3DOp):
    """```
    %y = ascend.graph.max_pool3d %x {kernel_shape = array<i64: 2, 2, 2>}
        : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x3x3x3xf32>
    ```
    """

    name = "ascend.graph.max_pool3d"

    traits = traits_def(PrefersLowPrecision(), ExactInStoredType())


@irdl_op_definition
class AvgPool3DOp(AveragingPool, Pool3DOp):
    """```
    %y = ascend.graph.avg_pool3d %x {kernel_shape = array<i64: 2, 2, 2>, count_include_pad = true}
        : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x3x3x3xf32>
    ```
    """

    name = "ascend.graph.avg_pool3d"

    traits = traits_def(PrefersLowPrecision())


@irdl_op_definition
class LpPool3DOp(LpPool, Pool3DOp):
    """```
    %y = ascend.graph.lp_pool3d %x {kernel_shape = array<i64: 2, 2, 2>}
        : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x3x3x3xf32>
    ```
    """

    name = "ascend.graph.lp_pool3d"

    traits = traits_def(KeepsPrecision(), Transcendental())


@irdl_op_definition
class MaxPoolWithArgmaxOp(Pool2DOp):
    """A 2-D max pool that also yields where each maximum came from: its row-major index in the
    whole input (N, C, H, W flattened; padding never wins), the first of equal maxima.

    ```
    %y, %i = ascend.graph.max_pool_with_argmax %x {kernel_shape = array<i64: 2, 2>}
        : (tensor<1x1x3x3xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
    ```
    """

    name = "ascend.graph.max_pool_with_argmax"

    traits = traits_def(ExactInStoredType())

    result = result_def(TensorType)
    indices = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        shape = pool_shape(cls, 2, operand_types[0], props)
        return [TensorType(operand_types[0].element_type, shape), TensorType(i64, shape)]


class GlobalPoolOp(GraphOp, ABC):
    """A pool over every axis after the first two, kept as size 1."""

    traits = traits_def(PerChannel(), Reduction(), Samplewise(leading), WithinPlane())

    input = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0].get_shape()
        if len(x) < 3:
            raise ValueError(f"{cls.name.split('.')[-1]} needs an input of rank >= 3, got {len(x)}")
        if 0 in x[2:]:  # onnxruntime refuses it too: no identity for max, a mean of nothing
            raise ValueError(f"{cls.name.split('.')[-1]} pools over an empty plane: input shape {list(x)}")
        return TensorType(operand_types[0].element_type, x[:2] + (1,) * (len(x) - 2))


@irdl_op_definition
class GlobalAvgPoolOp(GlobalPoolOp):
    """Mean over every axis after the first two, kept as size 1.

    `%y = ascend.graph.global_avg_pool %x : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>`
    """

    name = "ascend.graph.global_avg_pool"

    traits = traits_def(KeepsPrecision())


@irdl_op_definition
class GlobalMaxPoolOp(GlobalPoolOp):
    """`%y = ascend.graph.global_max_pool %x : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>`"""

    name = "ascend.graph.global_max_pool"

    traits = traits_def(ExactInStoredType())


@irdl_op_definition
class GlobalLpPoolOp(LpPool, GlobalPoolOp):
    """```
    %y = ascend.graph.global_lp_pool %x {p = 2 : i64} : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
    ```
    """

    name = "ascend.graph.global_lp_pool"

    traits = traits_def(KeepsPrecision(), Transcendental())


OPS = (
    MaxPoolOp,
    AvgPoolOp,
    LpPoolOp,
    MaxPool3DOp,
    AvgPool3DOp,
    LpPool3DOp,
    MaxPoolWithArgmaxOp,
    GlobalAvgPoolOp,
    GlobalMaxPoolOp,
    GlobalLpPoolOp,
)
