"""Reductions and the ops built on them: reductions over axes, arg-reductions, scans, top-k and
the softmax family. Normalizations, which reduce and then rescale, live in `normalization`.

Every reduction shares one shape rule: `axes` (normalized and sorted; empty reduces nothing)
become 1, or disappear with `keepdims = false`.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import AnyFloat, DenseArrayBase, IntegerAttr, TensorType, i1, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def

from ..common import IntArray
from .base import DYN, GraphOp, Shape, flag_def, normalize_axis, prop_flag, prop_int
from .samples import Samplewise, outside
from .traits import (
    ExactInStoredType,
    KeepsPrecision,
    ReducesPlane,
    Reduction,
    Transcendental,
    VectorSweeps,
)

# --------------------------------------------------------------------------------------------
# Reductions over a set of axes
# --------------------------------------------------------------------------------------------


class ReduceOp(GraphOp, ABC):
    """Reduces the `axes` of its input; `keepdims` (default true) keeps them as size 1."""

    traits = traits_def(Reduction(), KeepsPrecision(), ReducesPlane(), Samplewise(outside("axes")))

    input = operand_def(TensorType)
    result = result_def(TensorType)

    axes = prop_def(IntArray)
    keepdims = flag_def(True)

    TAKES_BOOL: ClassVar[bool] = False

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0]
        if x.element_type == i1 and not cls.TAKES_BOOL:
            raise ValueError("i1 (bool) input is only reducible by max and min")
        shape = x.get_shape()
        axes = read_axes(props, "axes", len(shape))
        return TensorType(x.element_type, reduced_shape(shape, axes, prop_flag(cls, props, "keepdims")))


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """```
    %y = ascend.graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false}
        : (tensor<2x3xf32>) -> tensor<2xf32>
    ```
    """

    name = "ascend.graph.reduce_sum"

    traits = traits_def(VectorSweeps(1))


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean; integer means truncate toward zero.

    `%y = ascend.graph.reduce_mean %x {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<1x1xf32>`
    """

    name = "ascend.graph.reduce_mean"

    traits = traits_def(VectorSweeps(1))


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Max; over an empty set: -inf, the dtype's lowest value, or false.

    `%y = ascend.graph.reduce_max %x {axes = array<i64: 1>} : (tensor<2x3xi1>) -> tensor<2x1xi1>`
    """

    name = "ascend.graph.reduce_max"

    traits = traits_def(VectorSweeps(1), ExactInStoredType())
    TAKES_BOOL: ClassVar[bool] = True


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Min; over an empty set: +inf, the dtype's highest value, or true.

    `%y = ascend.graph.reduce_min %x {axes = array<i64: 0>} : (tensor<2x3xi32>) -> tensor<1x3xi32>`
    """

    name = "ascend.graph.reduce_min"

    traits = traits_def(VectorSweeps(1), ExactInStoredType())
    TAKES_BOOL: ClassVar[bool] = True


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """`%y = ascend.graph.reduce_prod %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>`"""

    name = "ascend.graph.reduce_prod"

    traits = traits_def(VectorSweeps(1))


@irdl_op_definition
class ReduceL1Op(ReduceOp):
    """Sum of absolute values.

    `%y = ascend.graph.reduce_l1 %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>`
    """

    name = "ascend.graph.reduce_l1"

    traits = traits_def(VectorSweeps(2))


@irdl_op_definition
class ReduceL2Op(ReduceOp):
    """Square root of the sum of squares.

    `%y = ascend.graph.reduce_l2 %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>`
    """

    name = "ascend.graph.reduce_l2"

    traits = traits_def(VectorSweeps(2))


@irdl_op_definition
class ReduceLogSumOp(ReduceOp):
    """Natural log of the sum.

    `%y = ascend.graph.reduce_log_sum %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>`
    """

    name = "ascend.graph.reduce_log_sum"

    traits = traits_def(VectorSweeps(1))


@irdl_op_definition
class ReduceLogSumExpOp(ReduceOp):
    """`log(sum(exp(x)))`, computed stably (the max is taken out first).

    ```
    %y = ascend.graph.reduce_log_sum_exp %x {axes = array<i64: 1>}
        : (tensor<2x3xf32>) -> tensor<2x1xf32>
    ```
    """

    name = "ascend.graph.reduce_log_sum_exp"

    traits = traits_def(VectorSweeps(3, 1))


@irdl_op_definition
class ReduceSumSquareOp(ReduceOp):
    """Sum of squares.

    ```
    %y = ascend.graph.reduce_sum_square %x {axes = array<i64: 1>}
        : (tensor<2x3xf32>) -> tensor<2x1xf32>
    ```
    """

    name = "ascend.graph.reduce_sum_square"

    traits = traits_def(VectorSweeps(2))


# --------------------------------------------------------------------------------------------
# Ops along one axis
# --------------------------------------------------------------------------------------------


class ArgReduceOp(GraphOp, ABC):
    """The i64 index of the extreme along `axis`; ties pick the first index, or the last one
    with `select_last_index = true`."""

    traits = traits_def(VectorSweeps(1), ExactInStoredType(), Samplewise(outside("axis")))

    input = operand_def(TensorType)
    result = result_def(TensorType)

    axis = prop_def(IntegerAttr)
    keepdims = flag_def(True)
    select_last_index = flag_def(False)

    @classmethod
    def infer(cls, operand_types, props, where):
        shape = operand_types[0].get_shape()
        axis = normalize_axis(prop_int(props, "axis", 0), len(shape))
        if shape[axis] == 0:
            raise ValueError(f"axis {axis} is empty: it has no extreme")
        return TensorType(i64, reduced_shape(shape, (axis,), prop_flag(cls, props, "keepdims")))


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    """```
    %i = ascend.graph.arg_max %x {axis = 1 : i64, keepdims = false}
        : (tensor<2x3xf32>) -> tensor<2xi64>
    ```
    """

    name = "ascend.graph.arg_max"


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    """`%i = ascend.graph.arg_min %x {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<1x3xi64>`"""

    name = "ascend.graph.arg_min"


class ScanOp(GraphOp, ABC):
    """A running reduction along `axis`: `exclusive = true` leaves the current element
    out, `reverse = true` runs from the end."""

    traits = traits_def(KeepsPrecision(), VectorSweeps(1), Samplewise(outside("axis")))

    input = operand_def(TensorType)
    result = result_def(TensorType)

    axis = prop_def(IntegerAttr)
    exclusive = flag_def(False)
    reverse = flag_def(False)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0]
        if x.element_type == i1:
            raise ValueError("i1 (bool) input cannot be accumulated")
        normalize_axis(prop_int(props, "axis", 0), len(x.get_shape()))
        return x


@irdl_op_definition
class CumSumOp(ScanOp):
    """```
    %y = ascend.graph.cum_sum %x {axis = 0 : i64, exclusive = true}
        : (tensor<5xf32>) -> tensor<5xf32>
    ```
    """

    name = "ascend.graph.cum_sum"


@irdl_op_definition
class CumProdOp(ScanOp):
    """```
    %y = ascend.graph.cum_prod %x {axis = 1 : i64, reverse = true}
        : (tensor<2x3xi32>) -> tensor<2x3xi32>
    ```
    """

    name = "ascend.graph.cum_prod"


@irdl_op_definition
class CumMaxOp(ScanOp):
    """The running largest element; a NaN stays from where it occurs.

    `%y = ascend.graph.cum_max %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>`
    """

    name = "ascend.graph.cum_max"

    traits = traits_def(ExactInStoredType())


@irdl_op_definition
class CumMinOp(ScanOp):
    """The running smallest element; a NaN stays from where it occurs.

    `%y = ascend.graph.cum_min %x {axis = 1 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>`
    """

    name = "ascend.graph.cum_min"

    traits = traits_def(ExactInStoredType())


@irdl_op_definition
class LogCumSumExpOp(ScanOp):
    """`log(cumsum(exp(x)))` without overflow or underflow: each step is a log-add-exp, so
    large and very negative inputs keep their value (ONNX has no such operator).

    `%y = ascend.graph.log_cum_sum_exp %x {axis = 0 : i64} : (tensor<5xf32>) -> tensor<5xf32>`
    """

    name = "ascend.graph.log_cum_sum_exp"

    traits = traits_def(Transcendental())

    @classmethod
    def infer(cls, operand_types, props, where):
        if not isinstance(operand_types[0].element_type, AnyFloat):
            raise ValueError(f"the operand must be floating-point, got {operand_types[0].element_type}")
        return super().infer(operand_types, props, where)


@irdl_op_definition
class TopKOp(GraphOp):
    """The `k` largest (or with `largest = false` smallest) elements along `axis` and their i64
    indices; equal values keep index order. `sorted = false` allows any order of the k.

    ```
    %values, %indices = ascend.graph.top_k %x {k = 2 : i64, axis = -1 : i64}
        : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
    ```
    """

    name = "ascend.graph.top_k"

    traits = traits_def(VectorSweeps(1), ExactInStoredType(), Samplewise(outside("axis", -1)))

    input = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)

    k = prop_def(IntegerAttr)
    axis = opt_prop_def(IntegerAttr)
    largest = flag_def(True)
    sorted = flag_def(True)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0]
        if x.element_type == i1:
            raise ValueError("i1 (bool) input has no order to select by")
        shape = x.get_shape()
        axis = normalize_axis(prop_int(props, "axis", -1), len(shape))
        k = prop_int(props, "k", -1)
        if k < 0:
            raise ValueError(f"'k' must be non-negative, got {k}")
        if shape[axis] != DYN and k > shape[axis]:
            raise ValueError(f"k = {k} exceeds the {shape[axis]} elements of axis {axis}")
        out = shape[:axis] + (k,) + shape[axis + 1 :]
        return [TensorType(x.element_type, out), TensorType(i64, out)]


class SoftmaxFamilyOp(GraphOp, ABC):
    """A float op that normalizes along one `axis` (default -1), as ONNX opset >= 13 defines it."""

    traits = traits_def(Reduction(), KeepsPrecision(), Samplewise(outside("axis", -1)))

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0]
        require_float(x, "input")
        normalize_axis(prop_int(props, "axis", -1), len(x.get_shape()))
        return x


@irdl_op_definition
class SoftmaxOp(SoftmaxFamilyOp):
    """`%y = ascend.graph.softmax %x {axis = -1 : i64} : (tensor<1x10xf32>) -> tensor<1x10xf32>`"""

    name = "ascend.graph.softmax"

    traits = traits_def(VectorSweeps(4, 1))


@irdl_op_definition
class LogSoftmaxOp(SoftmaxFamilyOp):
    """`%y = ascend.graph.log_softmax %x {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>`"""

    name = "ascend.graph.log_softmax"

    traits = traits_def(VectorSweeps(4, 1))


@irdl_op_definition
class HardmaxOp(SoftmaxFamilyOp):
    """1 at the first maximum along `axis`, 0 elsewhere.

    `%y = ascend.graph.hardmax %x {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>`
    """

    name = "ascend.graph.hardmax"

    traits = traits_def(VectorSweeps(2))


OPS = (
    ReduceSumOp,
    ReduceMeanOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReduceProdOp,
    ReduceL1Op,
    ReduceL2Op,
    ReduceLogSumOp,
    ReduceLogSumExpOp,
    ReduceSumSquareOp,
    ArgMaxOp,
    ArgMinOp,
    CumSumOp,
    CumProdOp,
    CumMaxOp,
    CumMinOp,
    LogCumSumExpOp,
    TopKOp,
    SoftmaxOp,
    LogSoftmaxOp,
    HardmaxOp,
)


# --------------------------------------------------------------------------------------------
# Helpers (shared with `normalization`)
# --------------------------------------------------------------------------------------------


def read_axes(props: Mapping[str, Attribute], name: str, rank: int) -> tuple[int, ...]:
    """The axes in property `name`, which must be in [0, rank) and strictly increasing."""
    attr = props.get(name)
    if not isinstance(attr, DenseArrayBase):
        raise ValueError(f"missing '{name}'")
    axes = tuple(int(a) for a in attr.get_values())
    if any(not 0 <= a < rank for a in axes):
        raise ValueError(f"'{name}' {list(axes)} must lie in [0, {rank}) (normalized)")
    if any(a >= b for a, b in zip(axes, axes[1:], strict=False)):
        raise ValueError(f"'{name}' {list(axes)} must be sorted and unique")
    return axes


def reduced_shape(shape: Shape, axes: Sequence[int], keepdims: bool) -> Shape:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def require_float(t: TensorType, what: str) -> None:
    if not isinstance(t.element_type, AnyFloat):
        raise ValueError(f"{what} must have a float element type, got {t.element_type}")
