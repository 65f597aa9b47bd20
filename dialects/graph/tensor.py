"""Data movement that changes shapes: reshape, flatten, transpose, concat, expand, tile, slice,
split, pad, and `shape`, which reads a tensor's dimensions at run time.

Every op here only copies elements (`MovesData`), so it runs on any unit for any element type.
Indexing ops (gather, scatter, one_hot, ...) live in `indexing.py`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure

from ..common import IntArray, fail, get_ints
from ..verify import check_result_dims
from .base import (
    DYN,
    GraphOp,
    Reinfers,
    ShapeFoldMixin,
    broadcast_shapes,
    normalize_axis,
    product,
    prop_int,
    same_elements,
    shape_error,
    tensor_type,
)
from .reshaping import reshaped
from .samples import Samplewise, joined, outside, permuted, rows_kept
from .traits import (
    ComputesNothing,
    CopiedByDataMovers,
    IsView,
    JoinsChannelBlocks,
    MovesData,
    NoOpWhenTypeKept,
    Permutes,
    Reorders,
)

PAD_MODES = ("constant", "reflect", "edge", "wrap")


@irdl_op_definition
class ReshapeOp(Reinfers, ShapeFoldMixin, IRDLOperation):
    """A new shape over the same elements in the same (row-major) order; the result type says it.

    `%y = ascend.graph.reshape %x : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>`
    """

    name = "ascend.graph.reshape"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(
        Pure(),
        MovesData(),
        IsView(),
        Permutes(),
        CopiedByDataMovers(),
        NoOpWhenTypeKept(),
        Samplewise(rows_kept),
    )
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        element = tensor_type(input.type).element_type
        super().__init__(operands=[input], result_types=[TensorType(element, shape)])

    def reinfer(
        self, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
    ) -> list[TensorType]:
        """The result type once the input is `operand_types[0]` (see `reshaped`)."""
        before = dims(tensor_type(self.input.type))
        shape = reshaped(before, dims(operand_types[0]), dims(tensor_type(self.result.type)), factors)
        return [TensorType(operand_types[0].element_type, shape)]

    def verify_(self) -> None:
        check_result_dims(self)
        source, result = self.input.type, self.result.type
        assert isinstance(source, TensorType) and isinstance(result, TensorType), "operand constraints hold"
        if (error := shape_error(result)) is not None:
            raise fail(self, error)
        if source.element_type != result.element_type:
            raise fail(self, f"cannot reshape {source.element_type} into {result.element_type}")
        a, b = dims(source), dims(result)
        if DYN not in a + b and math.prod(a) != math.prod(b):
            raise fail(
                self,
                f"cannot reshape {math.prod(a)} elements {list(a)} into {math.prod(b)} {list(b)}",
            )


class MoveOp(GraphOp):
    """A graph op that only moves or copies elements."""

    traits = traits_def(Pure(), MovesData())


@irdl_op_definition
class FlattenOp(ShapeFoldMixin, MoveOp):
    """Collapses dimensions before `axis` into one and the rest into another (ONNX Flatten).

    `%y = ascend.graph.flatten %x {axis = 1 : i64} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>`
    """

    name = "ascend.graph.flatten"

    traits = traits_def(IsView(), Permutes(), CopiedByDataMovers(), NoOpWhenTypeKept(), Samplewise(rows_kept))

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = dims(operand_types[0])
        given = prop_int(props, "axis", 1)
        axis = given + len(x) if given < 0 else given
        if not 0 <= axis <= len(x):
            raise ValueError(f"axis {given} is out of range for rank {len(x)}")
        return TensorType(operand_types[0].element_type, (product(x[:axis]), product(x[axis:])))


@irdl_op_definition
class TransposeOp(ShapeFoldMixin, MoveOp):
    """Permutes dimensions: result dimension i is input dimension perm[i].

    `%y = ascend.graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>`
    """

    name = "ascend.graph.transpose"

    traits = traits_def(Reorders(), Permutes(), NoOpWhenTypeKept(), Samplewise(permuted))

    input = operand_def(TensorType)
    result = result_def(TensorType)
    perm = prop_def(IntArray)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = dims(operand_types[0])
        order = prop_ints(props, "perm")
        if sorted(order) != list(range(len(x))):
            raise ValueError(f"perm {list(order)} is not a permutation of {len(x)} dimensions")
        return TensorType(operand_types[0].element_type, tuple(x[i] for i in order))

    def is_identity(self) -> bool:
        return list(get_ints(self, "perm")) == list(range(len(get_ints(self, "perm"))))


@irdl_op_definition
class ConcatOp(MoveOp):
    """Joins tensors along `axis`; all other dimensions must agree.

    ```
    %y = ascend.graph.concat %a, %b {axis = 1 : i64}
        : (tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x48x8x8xf32>
    ```
    """

    name = "ascend.graph.concat"

    traits = traits_def(CopiedByDataMovers(), JoinsChannelBlocks(), Samplewise(joined))

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        if not operand_types:
            raise ValueError("concat needs at least one input")
        element = same_elements(operand_types, "inputs")
        first = dims(operand_types[0])
        axis = normalize_axis(prop_int(props, "axis", 0), len(first))
        total = 0
        for t in operand_types:
            shape = dims(t)
            if len(shape) != len(first) or any(
                i != axis and DYN not in (a, b) and a != b
                for i, (a, b) in enumerate(zip(shape, first, strict=True))
            ):
                raise ValueError(f"input shape {list(shape)} does not match {list(first)} off axis {axis}")
            total = DYN if DYN in (total, shape[axis]) else total + shape[axis]
        return TensorType(element, first[:axis] + (total,) + first[axis + 1 :])


@irdl_op_definition
class ExpandOp(ShapeFoldMixin, MoveOp):
    """Broadcasts the input to `shape` with numpy's rules in both directions (ONNX Expand): a
    dimension of 1 in `shape` keeps the input's dimension.

    `%y = ascend.graph.expand %x {shape = array<i64: 2, 1, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>`
    """

    name = "ascend.graph.expand"

    traits = traits_def(CopiedByDataMovers(), NoOpWhenTypeKept())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    shape = prop_def(IntArray)

    @classmethod
    def infer(cls, operand_types, props, where):
        target = prop_ints(props, "shape")
        if any(d < 0 for d in target):
            raise ValueError(f"'shape' {list(target)} has a negative dimension")
        shape = broadcast_shapes(dims(operand_types[0]), target)
        return TensorType(operand_types[0].element_type, shape)


@irdl_op_definition
class TileOp(ShapeFoldMixin, MoveOp):
    """Repeats the input `repeats[i]` times along each axis i (numpy `tile`).

    `%y = ascend.graph.tile %x {repeats = array<i64: 2, 3>} : (tensor<2x2xf32>) -> tensor<4x6xf32>`
    """

    name = "ascend.graph.tile"

    traits = traits_def(CopiedByDataMovers())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    repeats = prop_def(IntArray)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = dims(operand_types[0])
        repeats = prop_ints(props, "repeats")
        if len(repeats) != len(x) or min(repeats, default=0) < 0:
            raise ValueError(f"'repeats' needs {len(x)} non-negative values, got {list(repeats)}")
        shape = tuple(0 if r == 0 else DYN if d == DYN else d * r for d, r in zip(x, repeats, strict=True))
        return TensorType(operand_types[0].element_type, shape)

    def is_identity(self) -> bool:
        return all(r == 1 for r in get_ints(self, "repeats"))


@irdl_op_definition
class SliceOp(ShapeFoldMixin, MoveOp):
    """Strided slices along `axes` (all axes in order by default), with ONNX Slice's rules:
    negative `starts` and `ends` count from the end, then both are clamped to the axis, so
    `ends` may be INT64_MAX; a negative step walks backwards.

    ```
    %y = ascend.graph.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 2, 3>,
        axes = array<i64: 0, 1>, steps = array<i64: 1, 2>} : (tensor<2x4xf32>) -> tensor<1x2xf32>
    ```
    """

    name = "ascend.graph.slice"

    traits = traits_def(CopiedByDataMovers())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    starts = prop_def(IntArray)
    ends = prop_def(IntArray)
    axes = opt_prop_def(IntArray)
    steps = opt_prop_def(IntArray)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = dims(operand_types[0])
        shape = list(x)
        for axis, start, end, step in slice_spec(props, len(x)):
            shape[axis] = DYN if x[axis] == DYN else slice_bounds(x[axis], start, end, step)[1]
        return TensorType(operand_types[0].element_type, tuple(shape))

    def is_identity(self) -> bool:
        shape = dims(tensor_type(self.input.type))
        spec = slice_spec(self.properties, len(shape))
        return all(step == 1 and shape[axis] != DYN for axis, _, _, step in spec)


@irdl_op_definition
class SplitOp(MoveOp):
    """Cuts the input along `axis` into consecutive pieces of `sizes` (which may be 0).

    ```
    %a, %b = ascend.graph.split %x {axis = 0 : i64, sizes = array<i64: 2, 4>}
        : (tensor<6xf32>) -> (tensor<2xf32>, tensor<4xf32>)
    ```
    """

    name = "ascend.graph.split"

    traits = traits_def(CopiedByDataMovers(), Samplewise(outside("axis", 0)))

    input = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axis = opt_prop_def(IntegerAttr)
    sizes = prop_def(IntArray)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = dims(operand_types[0])
        axis = normalize_axis(prop_int(props, "axis", 0), len(x))
        sizes = prop_ints(props, "sizes")
        if not sizes or min(sizes) < 0:
            raise ValueError(f"'sizes' must be one or more non-negative sizes, got {list(sizes)}")
        if x[axis] != DYN and sum(sizes) != x[axis]:
            raise ValueError(f"sizes {list(sizes)} do not add up to dimension {axis} of {list(x)}")
        element = operand_types[0].element_type
        return [TensorType(element, x[:axis] + (size,) + x[axis + 1 :]) for size in sizes]


@irdl_op_definition
class PadOp(MoveOp):
    """Pads (or, with negative pads, crops) each axis. `pads` lists the amounts before each axis,
    then after each axis, as ONNX orders them; `mode` is constant (with the optional scalar
    operand, default 0), reflect, edge or wrap.

    ```
    %y = ascend.graph.pad %x, %v {pads = array<i64: 0, 1, 0, 2>, mode = "constant"}
        : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x6xf32>
    ```
    """

    name = "ascend.graph.pad"

    traits = traits_def(Reorders())

    input = operand_def(TensorType)
    value = opt_operand_def(TensorType)
    result = result_def(TensorType)
    pads = prop_def(IntArray)
    mode = opt_prop_def(StringAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = dims(operand_types[0])
        pads = prop_ints(props, "pads")
        mode = prop_str(props, "mode", "constant")
        if mode not in PAD_MODES:
            raise ValueError(f"unknown mode '{mode}' (known: {', '.join(PAD_MODES)})")
        if len(pads) != 2 * len(x):
            raise ValueError(f"'pads' needs {2 * len(x)} values for rank {len(x)}, got {len(pads)}")
        if len(operand_types) == 2:
            if mode != "constant":
                raise ValueError(f"a padding value needs mode 'constant', not '{mode}'")
            same_elements(operand_types, "input and padding value")
            if product(dims(operand_types[1])) not in (1, DYN):
                raise ValueError(f"the padding value must be one element, got {operand_types[1]}")
        shape = []
        for axis, size in enumerate(x):
            before, after = pads[axis], pads[axis + len(x)]
            if size == DYN:
                shape.append(DYN)
                continue
            kept = size + min(before, 0) + min(after, 0)
            if kept < 0:
                raise ValueError(f"pads {list(pads)} crop more than dimension {axis} of {list(x)}")
            if mode != "constant" and kept == 0 and max(before, after) > 0:
                raise ValueError(f"mode '{mode}' cannot pad the empty dimension {axis}")
            if mode == "reflect" and max(before, after) >= size:
                # Each side reflects about the edge element, so it has at most size - 1 others.
                raise ValueError(
                    f"mode 'reflect' pads dimension {axis} of {list(x)} by {before} and {after}: "
                    f"each must be below its size {size}"
                )
            shape.append(kept + max(before, 0) + max(after, 0))
        return TensorType(operand_types[0].element_type, tuple(shape))


@irdl_op_definition
class ShapeOp(GraphOp):
    """The dimensions `start` to `end` (Python slice rules, default all) of the input, as i64.

    `%s = ascend.graph.shape %x {start = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64>`
    """

    name = "ascend.graph.shape"

    traits = traits_def(CopiedByDataMovers(), ComputesNothing())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    start = opt_prop_def(IntegerAttr)
    end = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        rank = len(dims(operand_types[0]))
        return TensorType(i64, (len(range(rank)[shape_range(props, rank)]),))


# --------------------------------------------------------------------------------------------
# Helpers (the semantics use them too)
# --------------------------------------------------------------------------------------------


def dims(t: TensorType) -> tuple[int, ...]:
    """The shape of `t`, with every dynamic dimension as `DYN` (the verifiers refuse any other
    negative dimension)."""
    return tuple(DYN if d < 0 else d for d in t.get_shape())


def prop_ints(
    props: Mapping[str, Attribute], name: str, default: Sequence[int] | None = None
) -> tuple[int, ...]:
    attr = props.get(name)
    if attr is None:
        if default is None:
            raise ValueError(f"missing '{name}'")
        return tuple(default)
    if not isinstance(attr, DenseArrayBase):
        raise ValueError(f"'{name}' must be an array of integers")
    return tuple(int(v) for v in attr.get_values())


def prop_str(props: Mapping[str, Attribute], name: str, default: str) -> str:
    attr = props.get(name)
    if attr is None:
        return default
    if not isinstance(attr, StringAttr):
        raise ValueError(f"'{name}' must be a string")
    return attr.data


def index_type(t: TensorType, what: str) -> None:
    """Checks that `t` holds integer indices (i1 is a bool, not an index)."""
    element = t.element_type
    if not isinstance(element, IntegerType) or element.width.data == 1:
        raise ValueError(f"{what} must be integers, got {element}")


def slice_spec(props: Mapping[str, Attribute], rank: int) -> list[tuple[int, int, int, int]]:
    """(axis, start, end, step) per sliced axis, with axes made non-negative."""
    starts, ends = prop_ints(props, "starts"), prop_ints(props, "ends")
    axes = prop_ints(props, "axes", range(len(starts)))
    steps = prop_ints(props, "steps", (1,) * len(starts))
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ValueError("'starts', 'ends', 'axes' and 'steps' must have one length")
    axes = tuple(normalize_axis(a, rank) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"'axes' {list(axes)} repeats an axis")
    if 0 in steps:
        raise ValueError("'steps' must not be 0")
    return list(zip(axes, starts, ends, steps, strict=True))


def slice_bounds(size: int, start: int, end: int, step: int) -> tuple[int, int]:
    """The first index and the element count of ONNX's slice of an axis of `size`."""
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), size), min(max(end, 0), size)
        return start, max(0, -(-(end - start) // step))
    start, end = min(max(start, 0), size - 1), min(max(end, -1), size - 1)
    return max(start, 0), max(0, -(-(start - end) // -step))


def shape_range(props: Mapping[str, Attribute], rank: int) -> slice:
    """The dimensions `shape` returns: ONNX clamps `start` and `end` as Python slices do."""
    end = prop_int(props, "end", rank) if "end" in props else None
    return slice(prop_int(props, "start", 0), end)


OPS = (
    ReshapeOp,
    FlattenOp,
    TransposeOp,
    ConcatOp,
    ExpandOp,
    TileOp,
    SliceOp,
    SplitOp,
    PadOp,
    ShapeOp,
)
