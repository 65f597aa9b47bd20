"""The `ascend.graph` dialect: framework-level tensor ops, the level frontends build.

Ops live in a `func.func` graph container. Every op is `Pure`, verifies its operands and
properties, and infers its result type (`infer`), which the verifier compares with the result
type the IR states. Dimensions may be dynamic (`?`) at this level.
"""

from __future__ import annotations

import math
from abc import ABC
from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f32,
)
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
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
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure

from .common import describe, fail, get_float, get_int, get_ints, int_attr, ints_attr

Shape = tuple[int, ...]
DYN = DYNAMIC_INDEX

# --------------------------------------------------------------------------------------------
# Base classes
# --------------------------------------------------------------------------------------------


class GraphOp(IRDLOperation, ABC):
    """A framework-level tensor op: pure, with a result type inferred from operands and properties."""

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(
        cls, operand_types: Sequence[TensorType], props: Mapping[str, Attribute], where: str
    ) -> TensorType:
        """The result type for these operand types and properties; raises ValueError if invalid."""
        raise NotImplementedError

    @classmethod
    def build_inferred(
        cls, operands: Sequence[SSAValue], properties: Mapping[str, Attribute] | None = None
    ) -> Operation:
        props = dict(properties or {})
        types = [_tensor(v.type) for v in operands]
        result = cls.infer(types, props, f"'{cls.name}'")
        return cls.build(operands=_segments(cls, operands), properties=props, result_types=[result])

    def verify_(self) -> None:
        operand_types = []
        for index, operand in enumerate(self.operands):
            if not isinstance(operand.type, TensorType):
                raise fail(self, f"operand #{index} must be a tensor, got {operand.type}")
            operand_types.append(operand.type)
        try:
            inferred = self.infer(operand_types, self.properties, describe(self))
        except ValueError as error:
            raise fail(self, str(error)) from None
        actual = self.results[0].type
        if not _compatible(actual, inferred):
            raise fail(self, f"result type {actual} does not match the inferred type {inferred}")


def _segments(cls: type[IRDLOperation], operands: Sequence[SSAValue]) -> list:
    """Operands grouped per definition, as `build` expects (optional ones may be absent)."""
    defs = cls.get_irdl_definition().operands
    if len(defs) == 1:
        return [list(operands)] if _is_variadic(defs[0][1]) else list(operands)
    grouped: list = []
    for index, (_, definition) in enumerate(defs):
        if _is_variadic(definition):
            grouped.append([operands[index]] if index < len(operands) else [])
        else:
            grouped.append(operands[index])
    return grouped


def _is_variadic(definition: object) -> bool:
    from xdsl.irdl import VariadicDef

    return isinstance(definition, VariadicDef)


def _tensor(t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        raise ValueError(f"expected a tensor, got {t}")
    return t


def _compatible(actual: Attribute, inferred: TensorType) -> bool:
    if not isinstance(actual, TensorType) or actual.element_type != inferred.element_type:
        return False
    return _same_dims(actual.get_shape(), inferred.get_shape())


def _same_dims(a: Shape, b: Shape) -> bool:
    """Equal ranks and equal dimensions, where `?` equals anything."""
    return len(a) == len(b) and all(x == y or DYN in (x, y) for x, y in zip(a, b, strict=True))


def _same_elements(types: Sequence[TensorType], what: str) -> Attribute:
    element = types[0].element_type
    for t in types[1:]:
        if t.element_type != element:
            raise ValueError(f"{what} must share one element type, got {element} and {t.element_type}")
    return element


def broadcast_shapes(a: Shape, b: Shape) -> Shape:
    """numpy broadcasting, with `?` dimensions."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b, strict=True):
        if x == y:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif DYN in (x, y):
            out.append(y if x == DYN else x)
        else:
            raise ValueError(f"shapes {list(a)} and {list(b)} do not broadcast")
    return tuple(out)


def _window_out(size: int, kernel: int, stride: int, pads: tuple[int, int], dilation: int, ceil: bool) -> int:
    """Output length of a sliding window (conv or pool) along one axis."""
    if DYN in (size, kernel):
        return DYN
    span = dilation * (kernel - 1) + 1
    padded = size + pads[0] + pads[1]
    if padded < span:
        raise ValueError(f"a window of {span} does not fit an input of {size} with pads {pads}")
    if not ceil:
        return (padded - span) // stride + 1
    out = -(-(padded - span) // stride) + 1
    # The last window may not start in the trailing padding (ONNX and PyTorch agree).
    if (out - 1) * stride >= size + pads[0]:
        out -= 1
    return out


def _check_WINDOW_PROPS(
    props: Mapping[str, Attribute], spatial: int, names: Sequence[str]
) -> dict[str, tuple[int, ...]]:
    """Read and check the per-axis window properties (kernel, strides, pads, dilations)."""
    values: dict[str, tuple[int, ...]] = {}
    for name in names:
        attr = props.get(name)
        if attr is None:
            default = {"pads": (0,) * 2 * spatial}.get(name, (1,) * spatial)
            values[name] = default
            continue
        assert isinstance(attr, DenseArrayBase)
        values[name] = tuple(int(v) for v in attr.get_values())
        want = 2 * spatial if name == "pads" else spatial
        if len(values[name]) != want:
            raise ValueError(f"'{name}' needs {want} values, got {len(values[name])}")
        if name == "pads" and min(values[name]) < 0:
            raise ValueError("'pads' must be non-negative")
        if name != "pads" and min(values[name]) < 1:
            raise ValueError(f"'{name}' must be positive")
    return values


# --------------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------------

ConstValue = DenseIntOrFPElementsAttr | DenseResourceAttr | FloatAttr | IntegerAttr


@irdl_op_definition
class ConstOp(IRDLOperation, HasFolderInterface):
    """A constant tensor: inline `dense` data (small), a `dense_resource` key into the weight
    store (weights), or a `splat` scalar repeated over the shape (never materialized).

    ```
    %b = ascend.graph.const dense<[1.0, 2.0]> : tensor<2xf32>
    %w = ascend.graph.const dense_resource<conv1.weight> : tensor<64x3x7x7xf32>
    %z = ascend.graph.const splat<2.000000e-02 : f32> : tensor<64x3x7x7xf32>
    ```
    """

    name = "ascend.graph.const"

    value = prop_def(ConstValue)
    result = result_def(TensorType)

    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: Attribute, result_type: TensorType | None = None):
        if result_type is None:
            assert isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr)
            result_type = value.type  # type: ignore[assignment]
        super().__init__(result_types=[result_type], properties={"value": value})

    @property
    def is_splat(self) -> bool:
        return isinstance(self.value, FloatAttr | IntegerAttr)

    def fold(self) -> Sequence[SSAValue | Attribute]:
        return (self.value,)

    def verify_(self) -> None:
        result = self.result.type
        if DYN in result.get_shape():
            raise fail(self, f"a constant needs a static shape, got {result}")
        if isinstance(self.value, FloatAttr | IntegerAttr):
            if self.value.type != result.element_type:
                raise fail(
                    self,
                    f"splat of {self.value.type} cannot fill a tensor of {result.element_type}",
                )
        elif self.value.type != result:
            raise fail(self, f"value of type {self.value.type} does not match result {result}")

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        if isinstance(self.value, FloatAttr | IntegerAttr):
            printer.print_string("splat<")
            printer.print_attribute(self.value)
            printer.print_string("> : ")
            printer.print_attribute(self.result.type)
        else:
            printer.print_attribute(self.value)

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        attributes = parser.parse_optional_attr_dict()
        if parser.parse_optional_keyword("splat") is not None:
            parser.parse_punctuation("<")
            scalar = parser.parse_attribute()
            parser.parse_punctuation(">")
            parser.parse_punctuation(":")
            result_type = parser.parse_type()
            if not isinstance(scalar, FloatAttr | IntegerAttr):
                parser.raise_error("splat needs a typed scalar such as '1.0 : f32'")
            if not isinstance(result_type, TensorType):
                parser.raise_error("a constant's type must be a tensor")
            op = cls(scalar, result_type)
        else:
            value = parser.parse_attribute()
            if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
                parser.raise_error("expected dense<...>, dense_resource<...> or splat<...>")
            if not isinstance(value.type, TensorType):
                parser.raise_error("a constant's type must be a tensor")
            op = cls(value)
        op.attributes.update(attributes)
        return op


# --------------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------------


class BinaryElementwiseOp(GraphOp, ABC):
    """Elementwise op on two tensors of one element type, with numpy broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        element = _same_elements(operand_types, "operands")
        shape = broadcast_shapes(operand_types[0].get_shape(), operand_types[1].get_shape())
        return TensorType(element, shape)


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    """`%c = ascend.graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.add"


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    """`%c = ascend.graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.sub"


@irdl_op_definition
class MulOp(BinaryElementwiseOp):
    """`%c = ascend.graph.mul %a, %b : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.mul"


@irdl_op_definition
class DivOp(BinaryElementwiseOp):
    """`%c = ascend.graph.div %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`"""

    name = "ascend.graph.div"


class UnaryElementwiseOp(GraphOp, ABC):
    """Elementwise op on one tensor; the result has the operand's type."""

    input = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types, props, where):
        return operand_types[0]


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    """`%y = ascend.graph.relu %x : (tensor<1x64xf32>) -> tensor<1x64xf32>`"""

    name = "ascend.graph.relu"


@irdl_op_definition
class CastOp(IRDLOperation):
    """Converts elements to the result's element type (round to nearest even for floats).

    `%y = ascend.graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf16>`
    """

    name = "ascend.graph.cast"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, element_type: Attribute):
        shape = _tensor(input.type).get_shape()
        super().__init__(operands=[input], result_types=[TensorType(element_type, shape)])

    def verify_(self) -> None:
        if not _compatible(
            self.result.type, TensorType(self.result.type.element_type, self.input.type.get_shape())
        ):
            raise fail(self, f"cast keeps the shape: {self.input.type} cannot become {self.result.type}")


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
        element = _same_elements(operand_types, "operands")
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
        element = _same_elements(operand_types, "operands")
        a, b = operand_types[0].get_shape(), operand_types[1].get_shape()
        if len(a) != 2 or len(b) != 2:
            raise ValueError(f"gemm operands must be matrices, got ranks {len(a)} and {len(b)}")
        if _prop_int(props, "trans_a", 0):
            a = a[::-1]
        if _prop_int(props, "trans_b", 0):
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
        element = _same_elements(operand_types, "operands")
        x, w = operand_types[0].get_shape(), operand_types[1].get_shape()
        if len(x) != 4 or len(w) != 4:
            raise ValueError(f"conv2d needs a 4-D input and weight, got ranks {len(x)} and {len(w)}")
        groups = _prop_int(props, "groups", 1)
        if groups < 1:
            raise ValueError("'groups' must be positive")
        if DYN not in (x[1], w[1]) and x[1] != w[1] * groups:
            raise ValueError(f"input has {x[1]} channels but the weight expects {w[1]} x {groups} groups")
        if w[0] != DYN and w[0] % groups:
            raise ValueError(f"{w[0]} output channels do not divide into {groups} groups")
        if len(operand_types) == 3 and not _same_dims(operand_types[2].get_shape(), (w[0],)):
            raise ValueError(f"bias must have shape [{w[0]}], got {list(operand_types[2].get_shape())}")
        p = _check_WINDOW_PROPS(props, 2, ("strides", "pads", "dilations"))
        pads = p["pads"]
        out_h = _window_out(x[2], w[2], p["strides"][0], (pads[0], pads[2]), p["dilations"][0], False)
        out_w = _window_out(x[3], w[3], p["strides"][1], (pads[1], pads[3]), p["dilations"][1], False)
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
        _same_elements(operand_types, "operands")
        x = operand_types[0].get_shape()
        if len(x) < 2:
            raise ValueError("batch_norm needs an input of rank >= 2")
        for name, t in zip(("scale", "bias", "mean", "var"), operand_types[1:], strict=True):
            if not _same_dims(t.get_shape(), (x[1],)):
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
        p = _check_WINDOW_PROPS(props, 2, cls.WINDOW_PROPS)
        if "kernel_shape" not in props:
            raise ValueError("missing 'kernel_shape'")
        dilations = p.get("dilations", (1, 1))
        pads, k, s = p["pads"], p["kernel_shape"], p["strides"]
        if any(pads[i] >= k[i % 2] for i in range(4)):
            raise ValueError("padding must be smaller than the window")
        ceil = bool(_prop_int(props, "ceil_mode", 0))
        out_h = _window_out(x[2], k[0], s[0], (pads[0], pads[2]), dilations[0], ceil)
        out_w = _window_out(x[3], k[1], s[1], (pads[1], pads[3]), dilations[1], ceil)
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


@irdl_op_definition
class SoftmaxOp(GraphOp):
    """Softmax along one axis (ONNX opset >= 13 semantics).

    `%y = ascend.graph.softmax %x {axis = -1 : i64} : (tensor<1x10xf32>) -> tensor<1x10xf32>`
    """

    name = "ascend.graph.softmax"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        _normalize_axis(_prop_int(props, "axis", -1), len(operand_types[0].get_shape()))
        return operand_types[0]


# --------------------------------------------------------------------------------------------
# Data movement
# --------------------------------------------------------------------------------------------


class _ShapeFoldMixin(HasFolderInterface):
    """Folds a shape-only op whose result equals its input, or whose input is a splat."""

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        source = self.operands[0]
        if source.type == self.results[0].type and self.is_identity():
            return (source,)
        value = ConstantLike.get_constant_value(source)
        if isinstance(value, FloatAttr | IntegerAttr):
            return (value,)
        return None

    def is_identity(self) -> bool:
        return True


@irdl_op_definition
class ReshapeOp(_ShapeFoldMixin, IRDLOperation):
    """A new shape over the same elements in the same (row-major) order; the result type says it.

    `%y = ascend.graph.reshape %x : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>`
    """

    name = "ascend.graph.reshape"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        element = _tensor(input.type).element_type
        super().__init__(operands=[input], result_types=[TensorType(element, shape)])

    def verify_(self) -> None:
        source, result = self.input.type, self.result.type
        if source.element_type != result.element_type:
            raise fail(self, f"cannot reshape {source.element_type} into {result.element_type}")
        a, b = source.get_shape(), result.get_shape()
        if DYN not in a + b and math.prod(a) != math.prod(b):
            raise fail(
                self,
                f"cannot reshape {math.prod(a)} elements {list(a)} into {math.prod(b)} {list(b)}",
            )


@irdl_op_definition
class FlattenOp(_ShapeFoldMixin, GraphOp):
    """Collapses dimensions before `axis` into one and the rest into another (ONNX Flatten).

    `%y = ascend.graph.flatten %x {axis = 1 : i64} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>`
    """

    name = "ascend.graph.flatten"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0].get_shape()
        given = _prop_int(props, "axis", 1)
        axis = given + len(x) if given < 0 else given
        if not 0 <= axis <= len(x):
            raise ValueError(f"axis {given} is out of range for rank {len(x)}")
        return TensorType(operand_types[0].element_type, (_product(x[:axis]), _product(x[axis:])))


@irdl_op_definition
class TransposeOp(_ShapeFoldMixin, GraphOp):
    """Permutes dimensions: result dimension i is input dimension perm[i].

    `%y = ascend.graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>`
    """

    name = "ascend.graph.transpose"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    perm = prop_def(DenseArrayBase)

    @classmethod
    def infer(cls, operand_types, props, where):
        x = operand_types[0].get_shape()
        perm = props.get("perm")
        if not isinstance(perm, DenseArrayBase):
            raise ValueError("missing 'perm'")
        order = tuple(int(v) for v in perm.get_values())
        if sorted(order) != list(range(len(x))):
            raise ValueError(f"perm {list(order)} is not a permutation of {len(x)} dimensions")
        return TensorType(operand_types[0].element_type, tuple(x[i] for i in order))

    def is_identity(self) -> bool:
        return list(get_ints(self, "perm")) == list(range(len(get_ints(self, "perm"))))


@irdl_op_definition
class ConcatOp(GraphOp):
    """Joins tensors along `axis`; all other dimensions must agree.

    ```
    %y = ascend.graph.concat %a, %b {axis = 1 : i64}
        : (tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x48x8x8xf32>
    ```
    """

    name = "ascend.graph.concat"

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr)

    @classmethod
    def infer(cls, operand_types, props, where):
        if not operand_types:
            raise ValueError("concat needs at least one input")
        element = _same_elements(operand_types, "inputs")
        first = operand_types[0].get_shape()
        axis = _normalize_axis(_prop_int(props, "axis", 0), len(first))
        total = 0
        for t in operand_types:
            shape = t.get_shape()
            if len(shape) != len(first) or any(
                i != axis and DYN not in (a, b) and a != b
                for i, (a, b) in enumerate(zip(shape, first, strict=True))
            ):
                raise ValueError(f"input shape {list(shape)} does not match {list(first)} off axis {axis}")
            total = DYN if DYN in (total, shape[axis]) else total + shape[axis]
        return TensorType(element, first[:axis] + (total,) + first[axis + 1 :])


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _prop_int(props: Mapping[str, Attribute], name: str, default: int) -> int:
    attr = props.get(name)
    if attr is None:
        return default
    if not isinstance(attr, IntegerAttr):
        raise ValueError(f"'{name}' must be an integer")
    return attr.value.data


def _normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _product(dims: Sequence[int]) -> int:
    return DYN if DYN in dims else math.prod(dims)


def float_attr(value: float) -> FloatAttr:
    return FloatAttr(float(value), f32)


GRAPH_OPS: tuple[type[Operation], ...] = (
    ConstOp,
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    ReluOp,
    CastOp,
    MatMulOp,
    GemmOp,
    Conv2DOp,
    BatchNormOp,
    MaxPoolOp,
    AvgPoolOp,
    GlobalAvgPoolOp,
    SoftmaxOp,
    ReshapeOp,
    FlattenOp,
    TransposeOp,
    ConcatOp,
)

Graph = Dialect("ascend.graph", list(GRAPH_OPS), [])

__all__ = [
    "GRAPH_OPS",
    "Graph",
    "get_float",
    "get_int",
    "get_ints",
    "int_attr",
    "ints_attr",
    "float_attr",
    *(op.__name__ for op in GRAPH_OPS),
]
