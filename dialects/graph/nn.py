"""Neural-network ops: matrix products, convolutions and batch normalization.

Convolutions come in 2-D (NCHW) and 3-D (NCDHW) forms that share one base class per kind;
`pads` list every spatial axis's leading padding, then every trailing one, as ONNX orders them.
Pooling, resize and the recurrent layers have modules of their own.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i32,
)
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)

from ..common import IntArray
from .base import (
    DYN,
    GraphOp,
    broadcast_shapes,
    check_window_props,
    flag_def,
    prop_flag,
    prop_int,
    same_dims,
    same_elements,
    window_out,
)
from .products import (
    ConvProduct,
    ConvTransposeProduct,
    EinsumProduct,
    GemmProduct,
    MatMulProduct,
    parse_einsum,
)
from .samples import Samplewise, gemm_rows, leading, matrix_rows
from .traits import ChannelOperands, Elementwise, PerChannel, ProductOperands, VectorSweeps

# --------------------------------------------------------------------------------------------
# Matrix products (cube ops)
# --------------------------------------------------------------------------------------------


def matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The result shape of numpy `matmul` (1-D operands promoted, then squeezed)."""
    if not a or not b:
        raise ValueError("matmul operands must have rank >= 1")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if DYN not in (a2[-1], b2[-2]) and a2[-1] != b2[-2]:
        raise ValueError(f"contracting dimensions differ: {a2[-1]} and {b2[-2]}")
    shape = broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return shape


@irdl_op_definition
class MatMulOp(GraphOp):
    """numpy `matmul`: batched over leading dimensions, 1-D operands promoted and squeezed.

    `%c = ascend.graph.matmul %a, %b : (tensor<4x8x16xf32>, tensor<16x32xf32>) -> tensor<4x8x32xf32>`
    """

    name = "ascend.graph.matmul"

    traits = traits_def(MatMulProduct(), Samplewise(matrix_rows))

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        element = same_elements(operand_types, "operands")
        return TensorType(element, matmul_shape(operand_types[0].get_shape(), operand_types[1].get_shape()))


@irdl_op_definition
class MatMulIntegerOp(GraphOp):
    """`(a - a_zero_point) @ (b - b_zero_point)` over 8-bit integers, accumulated in i32.

    Each zero point broadcasts against its matrix (a per-row zero point of `a` is a column).
    ```
    %c = ascend.graph.matmul_integer %a, %b, %za, %zb
        : (tensor<4x3xui8>, tensor<3x2xui8>, tensor<ui8>, tensor<ui8>) -> tensor<4x2xi32>
    ```
    """

    name = "ascend.graph.matmul_integer"

    traits = traits_def(MatMulProduct(ProductOperands.GATHERED))

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_zero_point = operand_def(TensorType)
    rhs_zero_point = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        a, b, za, zb = operand_types
        for what, t in (("lhs", a), ("rhs", b)):
            element = t.element_type
            if not isinstance(element, IntegerType) or element.width.data != 8:
                raise ValueError(f"{what} must hold 8-bit integers, got {element}")
        same_elements([a, za], "lhs and its zero point")
        same_elements([b, zb], "rhs and its zero point")
        for what, zero, t in (("lhs", za, a), ("rhs", zb, b)):
            try:
                fits = broadcast_shapes(zero.get_shape(), t.get_shape()) == t.get_shape()
            except ValueError:
                fits = False
            if not fits:
                raise ValueError(
                    f"{what} zero point of shape {list(zero.get_shape())} does not broadcast "
                    f"to {list(t.get_shape())}"
                )
        return TensorType(i32, matmul_shape(a.get_shape(), b.get_shape()))


@irdl_op_definition
class GemmOp(GraphOp):
    """`alpha * op(A) @ op(B) + beta * C`, with op() an optional transpose, as ONNX Gemm.

    ```
    %y = ascend.graph.gemm %a, %b, %c {trans_b = true}
        : (tensor<1x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    ```
    """

    name = "ascend.graph.gemm"

    traits = traits_def(GemmProduct(), Samplewise(gemm_rows))

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = opt_operand_def(TensorType)
    result = result_def(TensorType)

    alpha = opt_prop_def(FloatAttr)
    beta = opt_prop_def(FloatAttr)
    trans_a = flag_def(False)
    trans_b = flag_def(False)

    @classmethod
    def infer(cls, operand_types, props, where):
        element = same_elements(operand_types, "operands")
        a, b = operand_types[0].get_shape(), operand_types[1].get_shape()
        if len(a) != 2 or len(b) != 2:
            raise ValueError(f"gemm operands must be matrices, got ranks {len(a)} and {len(b)}")
        if prop_flag(cls, props, "trans_a"):
            a = a[::-1]
        if prop_flag(cls, props, "trans_b"):
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
class EinsumOp(GraphOp):
    """numpy `einsum` of its inputs by `equation` (explicit `->` or implicit output, `...`).

    ```
    %y = ascend.graph.einsum %a, %b {equation = "bij,bjk->bik"}
        : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    ```
    """

    name = "ascend.graph.einsum"

    traits = traits_def(EinsumProduct())

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)

    equation = prop_def(StringAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        if not operand_types:
            raise ValueError("einsum needs at least one input")
        element = same_elements(operand_types, "inputs")
        equation = props.get("equation")
        if not isinstance(equation, StringAttr):
            raise ValueError("missing 'equation'")
        return TensorType(element, einsum_shape(equation.data, [t.get_shape() for t in operand_types]))


def einsum_shape(equation: str, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The result shape of `equation` over operands of these shapes (numpy's rules)."""
    inputs, output = parse_einsum(equation, len(shapes))
    sizes: dict[str, int] = {}
    ellipsis: tuple[int, ...] = ()
    for term, shape in zip(inputs, shapes, strict=True):
        letters = term.replace("...", "")
        if len(letters) > len(shape) or ("..." not in term and len(letters) != len(shape)):
            raise ValueError(f"'{term}' does not fit an operand of rank {len(shape)}")
        before = term.index("...") if "..." in term else len(term)
        broadcast = len(shape) - len(letters)
        dims = list(shape[:before]) + list(shape[before + broadcast :])
        ellipsis = broadcast_shapes(ellipsis, shape[before : before + broadcast])
        for letter, dim in zip(letters, dims, strict=True):
            known = sizes.setdefault(letter, dim)
            if DYN not in (known, dim) and known != dim:
                raise ValueError(f"'{letter}' is {known} in one place and {dim} in another")
            if known == DYN:
                sizes[letter] = dim
    result: list[int] = []
    for index, part in enumerate(output.split("...")):
        result += list(ellipsis) if index else []
        result += [sizes[letter] for letter in part]
    return tuple(result)


# --------------------------------------------------------------------------------------------
# Convolutions (cube ops)
# --------------------------------------------------------------------------------------------


def _spatial_operands(
    cls: type[GraphOp], spatial: int, operand_types: Sequence[TensorType]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The input and weight shapes of a convolution, which must both have rank `spatial` + 2."""
    x, w = operand_types[0].get_shape(), operand_types[1].get_shape()
    rank = spatial + 2
    if len(x) != rank or len(w) != rank:
        raise ValueError(
            f"{cls.name.split('.')[-1]} needs a {rank}-D input and weight, got ranks {len(x)} and {len(w)}"
        )
    if 0 in w[2:]:
        raise ValueError(f"the kernel's spatial sizes must be positive, got {list(w[2:])}")
    return x, w


class ConvOp(GraphOp, ABC):
    """Cross-correlation of N, C, spatial... input with O, C / groups, kernel... weights."""

    traits = traits_def(ConvProduct(), Samplewise(leading))

    SPATIAL: ClassVar[int]

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)

    strides = opt_prop_def(IntArray)
    pads = opt_prop_def(IntArray)
    dilations = opt_prop_def(IntArray)
    groups = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        element = same_elements(operand_types, "operands")
        n = cls.SPATIAL
        x, w = _spatial_operands(cls, cls.SPATIAL, operand_types)
        groups = _groups(props)
        if DYN not in (x[1], w[1]) and x[1] != w[1] * groups:
            raise ValueError(f"input has {x[1]} channels but the weight expects {w[1]} x {groups} groups")
        if w[0] != DYN and w[0] % groups:
            raise ValueError(f"{w[0]} output channels do not divide into {groups} groups")
        _check_bias(operand_types, w[0])
        p = check_window_props(props, n, ("strides", "pads", "dilations"))
        pads = p["pads"]
        out = tuple(
            window_out(x[2 + i], w[2 + i], p["strides"][i], (pads[i], pads[i + n]), p["dilations"][i], False)
            for i in range(n)
        )
        return TensorType(element, (x[0], w[0], *out))


@irdl_op_definition
class Conv2DOp(ConvOp):
    """2-D convolution over NCHW input with OIHW weights (O = out channels, I = C / groups).

    `pads` are [top, left, bottom, right], as ONNX orders them.
    ```
    %y = ascend.graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>,
        dilations = array<i64: 1, 1>, groups = 1 : i64}
        : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    ```
    """

    name = "ascend.graph.conv2d"
    SPATIAL: ClassVar[int] = 2


@irdl_op_definition
class Conv3DOp(ConvOp):
    """3-D convolution over NCDHW input with OIDHW weights.

    ```
    %y = ascend.graph.conv3d %x, %w {pads = array<i64: 1, 1, 1, 1, 1, 1>}
        : (tensor<1x2x4x4x4xf32>, tensor<3x2x3x3x3xf32>) -> tensor<1x3x4x4x4xf32>
    ```
    """

    name = "ascend.graph.conv3d"
    SPATIAL: ClassVar[int] = 3


class ConvTransposeOp(GraphOp, ABC):
    """The gradient of a convolution: input N, C, spatial...; weights C, O / groups, kernel....

    Output length per axis: `stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1
    - pad_begin - pad_end`; `output_padding` cells at the end receive only the bias.
    """

    traits = traits_def(ConvTransposeProduct(), Samplewise(leading))

    SPATIAL: ClassVar[int]

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)

    strides = opt_prop_def(IntArray)
    pads = opt_prop_def(IntArray)
    dilations = opt_prop_def(IntArray)
    output_padding = opt_prop_def(IntArray)
    groups = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        element = same_elements(operand_types, "operands")
        n = cls.SPATIAL
        x, w = _spatial_operands(cls, cls.SPATIAL, operand_types)
        groups = _groups(props)
        if DYN not in (x[1], w[0]) and x[1] != w[0]:
            raise ValueError(f"input has {x[1]} channels but the weight expects {w[0]}")
        if x[1] != DYN and x[1] % groups:
            raise ValueError(f"{x[1]} input channels do not divide into {groups} groups")
        channels = DYN if w[1] == DYN else w[1] * groups
        _check_bias(operand_types, channels)
        p = check_window_props(props, n, ("strides", "pads", "dilations"))
        extra = props.get("output_padding")
        if not isinstance(extra, DenseArrayBase | None):
            raise ValueError(f"'output_padding' must be an array of integers, got {extra}")
        extra = (0,) * n if extra is None else tuple(int(v) for v in extra.get_values())
        if len(extra) != n or min(extra) < 0:
            raise ValueError(f"'output_padding' needs {n} non-negative values, got {list(extra)}")
        out = []
        for i in range(n):
            if DYN in (x[2 + i], w[2 + i]):
                out.append(DYN)
                continue
            span = p["dilations"][i] * (w[2 + i] - 1) + 1
            size = p["strides"][i] * (x[2 + i] - 1) + extra[i] + span - p["pads"][i] - p["pads"][i + n]
            if size < 1:
                raise ValueError(f"the pads leave no output along spatial axis {i}")
            out.append(size)
        return TensorType(element, (x[0], channels, *out))


@irdl_op_definition
class ConvTranspose2DOp(ConvTransposeOp):
    """2-D transposed convolution over NCHW input with C x (O / groups) x KH x KW weights.

    ```
    %y = ascend.graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>}
        : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x7x7xf32>
    ```
    """

    name = "ascend.graph.conv_transpose2d"
    SPATIAL: ClassVar[int] = 2


@irdl_op_definition
class ConvTranspose3DOp(ConvTransposeOp):
    """3-D transposed convolution over NCDHW input.

    ```
    %y = ascend.graph.conv_transpose3d %x, %w
        : (tensor<1x1x3x4x5xf32>, tensor<1x2x3x3x3xf32>) -> tensor<1x2x5x6x7xf32>
    ```
    """

    name = "ascend.graph.conv_transpose3d"
    SPATIAL: ClassVar[int] = 3


def _groups(props) -> int:
    groups = prop_int(props, "groups", 1)
    if groups < 1:
        raise ValueError("'groups' must be positive")
    return groups


def _check_bias(operand_types, channels: int) -> None:
    if len(operand_types) == 3 and not same_dims(operand_types[2].get_shape(), (channels,)):
        raise ValueError(f"bias must have shape [{channels}], got {list(operand_types[2].get_shape())}")


# --------------------------------------------------------------------------------------------
# Normalization
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

    traits = traits_def(Elementwise(), PerChannel(), ChannelOperands(), VectorSweeps(2), Samplewise(leading))

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


OPS = (
    MatMulOp,
    MatMulIntegerOp,
    GemmOp,
    EinsumOp,
    Conv2DOp,
    Conv3DOp,
    ConvTranspose2DOp,
    ConvTranspose3DOp,
    BatchNormOp,
)
