"""What a graph op asks of an AI Core, as records: matrix products for the cube, sweeps for the
vector unit, and the view of an op they are computed from (a fused op is viewed as its base op).

The records depend only on the op (shapes, element types, properties), never on a SoC; the kernel
model (`ge.cost.model`) prices them with a profile's figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation

from ge.dialects import graph
from ge.dialects.common import describe, is_flag
from ge.dialects.formats import FRACTAL
from ge.errors import CompileError


@dataclass(frozen=True)
class MatrixProduct:
    """`batch` products of an (m x k) by (k x n) matrix on the cube, k = `k_channels` at each of
    `positions` kernel positions (1 for a plain matmul), each position's channels padded to the
    fractal depth on its own; `macs` counts the useful multiply-adds; `element` is the input type.
    `steps` repeats the whole one after the other (the time steps of a recurrence)."""

    batch: int
    m: int
    k_channels: int
    positions: int
    n: int
    macs: int
    element: Attribute
    steps: int = 1

    def tiles(self, k0: int) -> int:
        """Fractal tile products: 16 x k0 by k0 x 16 each."""
        k_tiles = _ceil(self.k_channels, k0) * self.positions
        return self.steps * self.output_tiles() * k_tiles

    def output_tiles(self) -> int:
        """Independent 16 x 16 tiles of the result, which cores can share out."""
        return self.batch * _ceil(self.m, FRACTAL) * _ceil(self.n, FRACTAL)


@dataclass(frozen=True)
class Sweep:
    """`simple` plain and `transcendental` slow vector instructions over `elements` elements of
    `element_bytes` bytes; `arithmetic` sweeps count one FLOP per element and instruction."""

    elements: int
    element_bytes: int
    simple: float
    transcendental: float = 0.0
    arithmetic: bool = True

    @property
    def flops(self) -> int:
        return round(self.elements * (self.simple + self.transcendental)) if self.arithmetic else 0


@dataclass(frozen=True)
class OpWork:
    """The work of one op. `matrix_operands` are the values the cube reads as fractal tiles (a
    conv's activation then weight), `groups` the conv groups of that weight, `accumulator` the
    layout the cube accumulates the result in (None for vector-only work)."""

    products: tuple[MatrixProduct, ...] = ()
    sweeps: tuple[Sweep, ...] = ()
    matrix_operands: tuple[SSAValue, ...] = ()
    groups: int = 1
    accumulator: str | None = None

    @property
    def flops(self) -> int:
        return 2 * sum(p.macs for p in self.products) + sum(s.flops for s in self.sweeps)


def elements(t: TensorType) -> int:
    """Elements of a statically shaped tensor."""
    return math.prod(t.get_shape())


def element_bytes(element: Attribute) -> int:
    """Bytes of one element as stored (i1 takes a byte)."""
    width = getattr(element, "bitwidth", None)
    if not isinstance(width, int):
        raise CompileError(f"the cost model does not know the size of {element}")
    return max(1, width // 8)


# --------------------------------------------------------------------------------------------
# Op views: a fused op is costed as its base op, over the base operands
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpView:
    """An op as the cost model reads it: class, operand and result types, operand values, properties."""

    cls: type[Operation]
    operands: tuple[TensorType, ...]
    values: tuple[SSAValue, ...]
    results: tuple[TensorType, ...]
    props: Mapping[str, Attribute] = field(default_factory=dict)

    @staticmethod
    def of(op: Operation) -> OpView:
        operands = tuple(_static(v.type, op) for v in op.operands)
        results = tuple(_static(r.type, op) for r in op.results)
        return OpView(type(op), operands, tuple(op.operands), results, dict(op.properties))

    @staticmethod
    def of_fused(op: graph.FusedOp) -> OpView:
        values = tuple(op.base_operands)
        operands = tuple(_static(v.type, op) for v in values)
        props = graph.fused.base_properties(op.properties)
        try:
            accumulator = op.accumulator_type(list(operands), props, describe(op))
        except ValueError as error:
            raise CompileError(f"{describe(op)}: {error}") from None
        return OpView(op.BASE, operands, values, (accumulator,), props)

    def is_a(self, *classes: type[Operation]) -> bool:
        return issubclass(self.cls, classes)

    def shape(self, index: int) -> tuple[int, ...]:
        return self.operands[index].get_shape()

    def int_prop(self, name: str, default: int) -> int:
        attr = self.props.get(name)
        return attr.value.data if isinstance(attr, IntegerAttr) else default

    def flag(self, name: str) -> bool:
        """A yes/no property, or its default in the op's definition."""
        attr = self.props.get(name)
        if attr is None and issubclass(self.cls, IRDLOperation):
            attr = self.cls.get_irdl_definition().properties[name].default_value
        return is_flag(attr) and bool(attr.value.data)

    def float_prop(self, name: str, default: float) -> float:
        attr = self.props.get(name)
        return attr.value.data if isinstance(attr, FloatAttr) else default


def _static(t: Attribute, op: Operation) -> TensorType:
    if not isinstance(t, TensorType):
        raise CompileError(f"{describe(op)}: the cost model needs tensors, got {t}")
    if any(d < 0 for d in t.get_shape()):
        raise CompileError(f"{describe(op)}: the cost model needs static shapes, got {t}")
    return t


def widest(view: OpView, inputs_only: bool = False) -> int:
    """Bytes of the widest element among the op's operands (and its first result)."""
    types = view.operands if inputs_only else (*view.operands, *view.results[:1])
    return max((element_bytes(t.element_type) for t in types), default=1)


def result_sweep(view: OpView, passes: int) -> Sweep:
    """`passes` arithmetic sweeps over the op's first result."""
    return Sweep(elements(view.results[0]), widest(view), passes)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)
