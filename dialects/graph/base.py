"""Base classes and shape-inference helpers shared by every `ascend.graph` op family."""

from __future__ import annotations

import math
from abc import ABC
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f32,
)
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrConstraint,
    IntConstraint,
    IRDLOperation,
    VerificationContext,
    prop_def,
    traits_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from ..common import bool_attr, describe, fail, is_flag
from ..formats import FormatAttr
from ..verify import LocalVerifier, check_result_dims

Shape = tuple[int, ...]
DYN = DYNAMIC_INDEX

# --------------------------------------------------------------------------------------------
# Base classes
# --------------------------------------------------------------------------------------------

if TYPE_CHECKING:
    # xDSL's constraints name typing_extensions' TypeVar in their signatures.
    from typing_extensions import TypeVar


class Reinfers:
    """An op whose result types can be inferred again when its operands change type (a pass
    that lowers precision, a specialized or re-batched graph): every `ascend.graph` op.

    `factors` say how a change of element count splits over the dimensions a reshape makes of
    one (the factors the batch and then the positions per sample grew by, outermost first);
    every op but a reshape ignores them."""

    def reinfer(
        self, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
    ) -> list[TensorType]:
        """The result types on operands of `operand_types`; ValueError if the op rejects them."""
        raise NotImplementedError

    def reinfer_values(
        self, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
    ) -> dict[SSAValue, TensorType]:
        """The type of every value the op defines (its results, and the values of its regions)
        on operands of `operand_types`; ValueError if the op rejects them."""
        assert isinstance(self, Operation)
        return dict(zip(self.results, self.reinfer(operand_types, factors), strict=True))


def reinfer(
    op: Operation, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
) -> list[TensorType]:
    """The result types of `op` on operands of `operand_types`, by the op's own rule (see
    `Reinfers`); ValueError if it rejects them or has no rule."""
    return _reinferring(op).reinfer(operand_types, factors)


def reinfer_values(
    op: Operation, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
) -> dict[SSAValue, TensorType]:
    """The type of every value `op` defines, its regions' included, on operands of
    `operand_types` (see `Reinfers.reinfer_values`)."""
    return _reinferring(op).reinfer_values(operand_types, factors)


def _reinferring(op: Operation) -> Reinfers:
    if not isinstance(op, Reinfers):
        raise ValueError(f"{describe(op)} has no type inference")
    return op


class GraphOp(Reinfers, LocalVerifier, IRDLOperation, ABC):
    """A framework-level tensor op: pure, with a result type inferred from operands and properties."""

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(
        cls, operand_types: Sequence[TensorType], props: Mapping[str, Attribute], where: str
    ) -> TensorType | list[TensorType]:
        """The result type (a list for an op with several results) for these operand types and
        properties; raises ValueError if they are invalid."""
        raise NotImplementedError

    def reinfer(
        self, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
    ) -> list[TensorType]:
        inferred = self.infer(operand_types, self.properties, describe(self))
        return list(inferred) if isinstance(inferred, list) else [inferred]

    @classmethod
    def build_inferred(
        cls, operands: Sequence[SSAValue], properties: Mapping[str, Attribute | bool] | None = None
    ) -> Operation:
        """The op on `operands` with its inferred result types; a yes/no property may be given as
        a Python bool (`{"keepdims": False}`)."""
        props = {k: bool_attr(v) if isinstance(v, bool) else v for k, v in (properties or {}).items()}
        types = [tensor_type(v.type) for v in operands]
        inferred = cls.infer(types, props, f"'{cls.name}'")
        results = inferred if isinstance(inferred, list) else [inferred]
        if any(is_variadic(d) for _, d in cls.get_irdl_definition().results):
            results = [results]
        return cls.build(operands=operand_segments(cls, operands), properties=props, result_types=results)

    def verify(self, verify_nested_ops: bool = True) -> None:
        check_flags(self)
        check_result_dims(self)
        super().verify(verify_nested_ops)

    def verify_(self) -> None:
        operand_types = []
        for index, operand in enumerate(self.operands):
            if not isinstance(operand.type, TensorType):
                raise fail(self, f"operand #{index} must be a tensor, got {operand.type}")
            if isinstance(operand.type.encoding, FormatAttr):
                raise fail(self, f"operand #{index} is {operand.type}: {FRAMEWORK_LEVEL}")
            operand_types.append(operand.type)
        try:
            inferred = self.infer(operand_types, self.properties, describe(self))
        except ValueError as error:
            raise fail(self, str(error)) from None
        expected = inferred if isinstance(inferred, list) else [inferred]
        if len(expected) != len(self.results):
            raise fail(self, f"{len(self.results)} results, but the op computes {len(expected)}")
        for index, (result, want) in enumerate(zip(self.results, expected, strict=True)):
            if (error := shape_error(result.type)) is not None:
                raise fail(self, error)
            if isinstance(result.type, TensorType) and isinstance(result.type.encoding, FormatAttr):
                raise fail(self, f"result #{index} is {result.type}: {FRAMEWORK_LEVEL}")
            if not compatible(result.type, want):
                raise fail(self, f"result type {result.type} does not match the inferred type {want}")


FRAMEWORK_LEVEL = (
    "a graph op computes on framework-level types; a device format lives on kernel operands only"
)
"""Why a graph op or constant refuses a type with an `#ascend.format` encoding."""


def operand_segments(cls: type[IRDLOperation], operands: Sequence[SSAValue]) -> list:
    """Operands grouped per definition, as `build` expects (optional ones may be absent)."""
    defs = cls.get_irdl_definition().operands
    if len(defs) == 1:
        return [list(operands)] if is_variadic(defs[0][1]) else list(operands)
    grouped: list = []
    for index, (_, definition) in enumerate(defs):
        if is_variadic(definition):
            grouped.append([operands[index]] if index < len(operands) else [])
        else:
            grouped.append(operands[index])
    return grouped


def is_variadic(definition: object) -> bool:
    from xdsl.irdl import VariadicDef

    return isinstance(definition, VariadicDef)


MAX_ELEMENTS = (1 << 63) - 1
"""The most elements a tensor may hold: its element count is an int64 everywhere."""


def shape_error(t: Attribute) -> str | None:
    """What is wrong with a tensor type's shape: a negative static dimension (a dynamic one is
    DYN, the only negative dimension) or more elements than an int64 counts; None if nothing."""
    if not isinstance(t, TensorType):
        return None
    shape = t.get_shape()
    if any(d < 0 and d != DYN for d in shape):
        return f"{t} has a negative dimension: a dimension is >= 0, or dynamic ('?')"
    if math.prod(d for d in shape if d != DYN) > MAX_ELEMENTS:
        return f"{t} has more elements than an int64 counts"
    return None


def tensor_type(t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        raise ValueError(f"expected a tensor, got {t}")
    return t


def compatible(actual: Attribute, inferred: TensorType) -> bool:
    if not isinstance(actual, TensorType) or actual.element_type != inferred.element_type:
        return False
    return same_dims(actual.get_shape(), inferred.get_shape())


def same_dims(a: Shape, b: Shape) -> bool:
    """Equal ranks and equal dimensions, where `?` equals anything."""
    return len(a) == len(b) and all(x == y or DYN in (x, y) for x, y in zip(a, b, strict=True))


def same_elements(types: Sequence[TensorType], what: str) -> Attribute:
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


def window_out(size: int, kernel: int, stride: int, pads: tuple[int, int], dilation: int, ceil: bool) -> int:
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


def check_window_props(
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


class ShapeFoldMixin(HasFolderInterface):
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


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlagConstraint(AttrConstraint[BoolAttr]):
    """A yes/no property: `true` or `false` (an i1 `IntegerAttr`, xDSL's `BoolAttr`). Its error
    says so where the parser checks it, which knows neither the op nor the property."""

    def verify(self, attr: Attribute, constraint_context: VerificationContext) -> None:
        if not is_flag(attr):
            raise VerifyException(f"a yes/no property must be true or false, got {attr}")

    def get_bases(self) -> set[type[Attribute]] | None:
        return {IntegerAttr}

    def mapping_type_vars(
        self, type_var_mapping: Mapping[TypeVar, AttrConstraint | IntConstraint]
    ) -> FlagConstraint:
        return self


FLAG = FlagConstraint()


def flag_def(default: bool) -> BoolAttr:
    """A yes/no property, `default` when absent: the op's one statement of that default. The
    parser fills it in and the printer leaves it out."""
    return prop_def(FLAG, default_value=bool_attr(default))


def check_flags(op: IRDLOperation) -> None:
    """Raises a verification error naming `op` and the property if a yes/no property holds
    anything but `true` or `false` (xDSL's own check names neither)."""
    for name, definition in op.get_irdl_definition().properties.items():
        attr = op.properties.get(name)
        if attr is not None and definition.constr == FLAG and not is_flag(attr):
            raise fail(op, f"property '{name}' must be true or false, got {attr}")


def prop_flag(cls: type[IRDLOperation], props: Mapping[str, Attribute], name: str) -> bool:
    """A yes/no property of `cls` in `props` (properties not yet on an op), or its default."""
    attr = props.get(name)
    if attr is None:
        attr = cls.get_irdl_definition().properties[name].default_value
    if not is_flag(attr):
        raise ValueError(f"property '{name}' must be true or false, got {attr}")
    return bool(attr.value.data)


def prop_int(props: Mapping[str, Attribute], name: str, default: int) -> int:
    attr = props.get(name)
    if attr is None:
        return default
    if not isinstance(attr, IntegerAttr):
        raise ValueError(f"'{name}' must be an integer")
    return attr.value.data


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def product(dims: Sequence[int]) -> int:
    return DYN if DYN in dims else math.prod(dims)


def float_attr(value: float) -> FloatAttr:
    return FloatAttr(float(value), f32)
