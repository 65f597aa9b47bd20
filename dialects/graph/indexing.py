"""Indexing: gathers and scatters by index tensors, one_hot, trilu, reverse_sequence, and the
ops whose output shape depends on values (non_zero, unique).

Index operands are integer tensors (i32 or i64 in practice); negative indices count from the
end of their axis. A value-dependent size (non_zero's and unique's `count`) is a property the
frontend reads from the value the op was specialized on, so every result shape stays static.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType, i64
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from .base import DYN, GraphOp, flag_def, normalize_axis, product, prop_int, same_dims
from .samples import Samplewise, gathered
from .tensor import MoveOp, dims, index_type, prop_str
from .traits import ExactInStoredType, NeedsAiCpu, Reorders, ValueShaped

REDUCTIONS = ("none", "add", "mul", "max", "min")


# --------------------------------------------------------------------------------------------
# Gathers
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class GatherOp(MoveOp):
    """Takes the slices of `data` along `axis` that `indices` name (ONNX Gather, numpy `take`).

    ```
    %y = ascend.graph.gather %data, %indices {axis = 0 : i64}
        : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    ```
    """

    name = "ascend.graph.gather"

    traits = traits_def(Reorders(), Samplewise(gathered))

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        data, indices = operand_types
        index_type(indices, "indices")
        x = dims(data)
        axis = normalize_axis(prop_int(props, "axis", 0), len(x))
        return TensorType(data.element_type, x[:axis] + dims(indices) + x[axis + 1 :])


@irdl_op_definition
class GatherElementsOp(MoveOp):
    """`result[i][j] = data[indices[i][j]][j]` for axis 0, and likewise along any `axis`
    (numpy `take_along_axis`); the result has the shape of `indices`.

    ```
    %y = ascend.graph.gather_elements %data, %indices {axis = 1 : i64}
        : (tensor<2x2xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
    ```
    """

    name = "ascend.graph.gather_elements"

    traits = traits_def(Reorders())

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        data, indices = operand_types
        index_type(indices, "indices")
        x, i = dims(data), dims(indices)
        if len(x) != len(i):
            raise ValueError(f"indices of rank {len(i)} cannot index data of rank {len(x)}")
        axis = normalize_axis(prop_int(props, "axis", 0), len(x))
        for d, (size, count) in enumerate(zip(x, i, strict=True)):
            if d != axis and DYN not in (size, count) and count > size:  # onnxruntime's bound too
                raise ValueError(
                    f"indices {list(i)} exceed data {list(x)} along axis {d}, which is not the gathered one"
                )
        return TensorType(data.element_type, i)


@irdl_op_definition
class GatherNDOp(MoveOp):
    """Gathers the slices of `data` that the last dimension of `indices` addresses, after
    `batch_dims` leading dimensions shared by both (ONNX GatherND).

    ```
    %y = ascend.graph.gather_nd %data, %indices {batch_dims = 1 : i64}
        : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
    ```
    """

    name = "ascend.graph.gather_nd"

    traits = traits_def(Reorders())

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    batch_dims = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        data, indices = operand_types
        index_type(indices, "indices")
        x, i = dims(data), dims(indices)
        batch = prop_int(props, "batch_dims", 0)
        depth = i[-1] if i else DYN
        if depth == DYN:
            raise ValueError("the last dimension of the indices must be static")
        if not 0 <= batch < min(len(x), len(i)) or batch + depth > len(x):
            raise ValueError(f"indices {list(i)} with batch_dims {batch} cannot address data {list(x)}")
        if not same_dims(x[:batch], i[:batch]):
            raise ValueError(f"batch dimensions of data {list(x)} and indices {list(i)} differ")
        return TensorType(data.element_type, i[:-1] + x[batch + depth :])


# --------------------------------------------------------------------------------------------
# Scatters: they combine elements when `reduction` is not "none", so they do not just move data
# --------------------------------------------------------------------------------------------


class ScatterOp(GraphOp):
    """A copy of `data` with `updates` written at `indices`, or combined with what is there by
    `reduction` (add, mul, max or min), in the order of the updates."""

    traits = traits_def(Reorders())

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    reduction = opt_prop_def(StringAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        data, indices, updates = operand_types
        index_type(indices, "indices")
        if updates.element_type != data.element_type:
            raise ValueError(f"updates of {updates.element_type} cannot go into data of {data.element_type}")
        reduction = prop_str(props, "reduction", "none")
        if reduction not in REDUCTIONS:
            raise ValueError(f"unknown reduction '{reduction}' (known: {', '.join(REDUCTIONS)})")
        cls.check_indices(dims(data), dims(indices), dims(updates), props)
        return data

    @classmethod
    def check_indices(
        cls, data: tuple[int, ...], indices: tuple[int, ...], updates: tuple[int, ...], props
    ) -> None:
        raise NotImplementedError


@irdl_op_definition
class ScatterElementsOp(ScatterOp):
    """The inverse of gather_elements: `result[indices[i][j]][j] = updates[i][j]` for axis 0.

    ```
    %y = ascend.graph.scatter_elements %data, %indices, %updates {axis = 1 : i64, reduction = "add"}
        : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
    ```
    """

    name = "ascend.graph.scatter_elements"

    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def check_indices(cls, data, indices, updates, props):
        normalize_axis(prop_int(props, "axis", 0), len(data))
        if len(indices) != len(data) or not same_dims(indices, updates):
            raise ValueError(
                f"indices {list(indices)} and updates {list(updates)} must have one shape of rank {len(data)}"
            )


@irdl_op_definition
class ScatterNDOp(ScatterOp):
    """The inverse of gather_nd: writes each slice of `updates` at the position of `data` that
    the last dimension of `indices` addresses.

    ```
    %y = ascend.graph.scatter_nd %data, %indices, %updates
        : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
    ```
    """

    name = "ascend.graph.scatter_nd"

    @classmethod
    def check_indices(cls, data, indices, updates, props):
        depth = indices[-1] if indices else DYN
        if depth == DYN or depth > len(data):
            raise ValueError(f"indices {list(indices)} cannot address data {list(data)}")
        if not same_dims(updates, indices[:-1] + data[depth:]):
            raise ValueError(
                f"updates must have shape {list(indices[:-1] + data[depth:])}, got {list(updates)}"
            )


# --------------------------------------------------------------------------------------------
# Patterns of positions
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class OneHotOp(MoveOp):
    """`values[1]` where an index names the position along the new axis `axis` (of size
    `depth`), `values[0]` elsewhere; indices in [-depth, depth) count, others give no hit.

    ```
    %y = ascend.graph.one_hot %indices, %values {depth = 4 : i64, axis = -1 : i64}
        : (tensor<3xi64>, tensor<2xf32>) -> tensor<3x4xf32>
    ```
    """

    name = "ascend.graph.one_hot"

    traits = traits_def(Reorders())

    indices = operand_def(TensorType)
    values = operand_def(TensorType)
    result = result_def(TensorType)
    depth = prop_def(IntegerAttr)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        indices, values = operand_types
        if not same_dims(dims(values), (2,)):
            raise ValueError(f"values must be [off, on], got {values}")
        depth = prop_int(props, "depth", 0)
        if depth < 1:
            raise ValueError(f"'depth' must be positive, got {depth}")
        shape = dims(indices)
        axis = normalize_axis(prop_int(props, "axis", -1), len(shape) + 1)
        return TensorType(values.element_type, shape[:axis] + (depth,) + shape[axis:])


@irdl_op_definition
class TriluOp(MoveOp):
    """Keeps the upper (`upper = true`, the default) or lower triangle of the last two dimensions, from
    diagonal `k` (positive above the main diagonal), and zeroes the rest.

    `%y = ascend.graph.trilu %x {upper = false, k = -1 : i64} : (tensor<4x5xf32>) -> tensor<4x5xf32>`
    """

    name = "ascend.graph.trilu"

    traits = traits_def(Reorders())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    upper = flag_def(True)
    k = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        if len(dims(operand_types[0])) < 2:
            raise ValueError(f"trilu needs a rank of at least 2, got {operand_types[0]}")
        return operand_types[0]


@irdl_op_definition
class ReverseSequenceOp(MoveOp):
    """Reverses the first `sequence_lens[b]` elements along `time_axis` of each batch entry b
    along `batch_axis`; the rest stays in place.

    ```
    %y = ascend.graph.reverse_sequence %x, %lens {batch_axis = 1 : i64, time_axis = 0 : i64}
        : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
    ```
    """

    name = "ascend.graph.reverse_sequence"

    traits = traits_def(Reorders())

    input = operand_def(TensorType)
    sequence_lens = operand_def(TensorType)
    result = result_def(TensorType)
    batch_axis = opt_prop_def(IntegerAttr)
    time_axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        x, lens = operand_types
        index_type(lens, "sequence_lens")
        shape = dims(x)
        if len(shape) < 2:
            raise ValueError(f"reverse_sequence needs a rank of at least 2, got {x}")
        batch = normalize_axis(prop_int(props, "batch_axis", 1), len(shape))
        time = normalize_axis(prop_int(props, "time_axis", 0), len(shape))
        if batch == time:
            raise ValueError("'batch_axis' and 'time_axis' must differ")
        if not same_dims(dims(lens), (shape[batch],)):
            raise ValueError(f"sequence_lens must have shape [{shape[batch]}], got {lens}")
        return x


# --------------------------------------------------------------------------------------------
# Value-dependent shapes (run on the AI CPU)
# --------------------------------------------------------------------------------------------


class ValueShapedOp(GraphOp):
    """An op whose output size (`count`) is what its input values were specialized on."""

    traits = traits_def(Pure(), NeedsAiCpu(), ValueShaped())


@irdl_op_definition
class NonZeroOp(ValueShapedOp):
    """The indices of the `count` non-zero elements, one row per dimension, in row-major order.

    `%i = ascend.graph.non_zero %x {count = 3 : i64} : (tensor<2x2xi1>) -> tensor<2x3xi64>`
    """

    name = "ascend.graph.non_zero"

    traits = traits_def(ExactInStoredType())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    count = prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        count = prop_int(props, "count", -1)
        if count < 0:
            raise ValueError(f"'count' must be non-negative, got {count}")
        return TensorType(i64, (len(dims(operand_types[0])), count))


@irdl_op_definition
class UniqueOp(ValueShapedOp):
    """The `count` distinct elements (or slices along `axis`), sorted or in order of first
    occurrence; with the index of each one's first occurrence, the index into the result of
    every input element (or slice), and how often each occurs.

    ```
    %y, %first, %inverse, %counts = ascend.graph.unique %x {count = 4 : i64, sorted = 0 : i64}
        : (tensor<6xf32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<6xi64>, tensor<4xi64>)
    ```
    """

    name = "ascend.graph.unique"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    first_indices = result_def(TensorType)
    inverse_indices = result_def(TensorType)
    counts = result_def(TensorType)
    count = prop_def(IntegerAttr)
    sorted = flag_def(True)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = dims(operand_types[0])
        count = prop_int(props, "count", -1)
        if count < 0:
            raise ValueError(f"'count' must be non-negative, got {count}")
        if "axis" in props:
            axis = normalize_axis(prop_int(props, "axis", 0), len(x))
            shape, length = x[:axis] + (count,) + x[axis + 1 :], x[axis]
        else:
            shape, length = (count,), product(x)
        element = operand_types[0].element_type
        return [
            TensorType(element, shape),
            TensorType(i64, (count,)),
            TensorType(i64, (length,)),
            TensorType(i64, (count,)),
        ]


OPS = (
    GatherOp,
    GatherElementsOp,
    GatherNDOp,
    ScatterElementsOp,
    ScatterNDOp,
    OneHotOp,
    TriluOp,
    ReverseSequenceOp,
    NonZeroOp,
    UniqueOp,
)
