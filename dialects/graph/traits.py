"""What an `ascend.graph` op is, as traits and one interface that every pass and model asks.

Kernel formation, format assignment, fusion, mixed precision, the cost model and the emulator
ask `op.has_trait(Elementwise)` or `matrix_product(op)` instead of keeping lists of op classes,
so an op's answers live on its definition and a new op is described in one place. A trait on a
base class (`ElementwiseOp`, `ReduceOp`, ...) covers its whole family: xDSL gathers the traits of
every class an op definition inherits from.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, IntegerAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import OpTrait

# --------------------------------------------------------------------------------------------
# What an op computes
# --------------------------------------------------------------------------------------------


class Elementwise(OpTrait):
    """Each result element is computed from the same elements of the (broadcast) operands, so a
    tree of such ops fuses into one vector kernel."""


class Broadcasts(OpTrait):
    """The op's operands broadcast to its result with numpy's rules (every elementwise op but
    batch_norm, whose parameters are per channel), so an operand can be laid out to the result's
    device format once."""


class ChannelOperands(OpTrait):
    """The op's operands after the first are per-channel vectors [C] of its NCHW first operand
    (batch_norm's scale, bias, mean and var), and its implementation also takes them laid out to
    broadcast against the first operand at its rank: on NC1HWC0 a vector kernel lays them out as
    (1, C1, 1, 1, C0), zero in the padded lanes, and computes lane by lane."""


class ChannelWindow(OpTrait):
    """The op reads a window of neighbouring channels of 4-D data (LRN), zero beyond the real
    channels: on NC1HWC0 a vector kernel runs it on the blocks read as contiguous channel planes,
    their padded channels set to zero first."""


class WithinPlane(OpTrait):
    """The op reads and writes within each (n, c) plane of NCHW data (2-D and global pools): on
    NC1HWC0 it runs on each C0 lane's plane as it is."""


class PerChannel(OpTrait):
    """The op's work stays within a channel or a plane of NCHW data, so a vector kernel runs it
    on NC1HWC0 data as well (LRN reads neighbouring channels, gathered across C0 blocks)."""


class PerChannelWhen(OpTrait, ABC):
    """Some instances of the op work per channel or per plane of NCHW data, as every `PerChannel`
    op does; `holds` says which."""

    @abstractmethod
    def holds(self, op: Operation, c0: int) -> bool:
        """Whether `op` keeps its work within channels on 4-D data whose channel block (C0) is
        `c0` elements."""
        raise NotImplementedError


class ReducesPlane(PerChannelWhen):
    """A reduction over H and W alone (a global pooling written as reduce_mean) keeps every
    channel of 4-D data."""

    def holds(self, op: Operation, c0: int) -> bool:
        axes = op.properties.get("axes")
        if _rank(op.operands[0]) != 4 or _rank(op.results[0]) != 4 or not isinstance(axes, DenseArrayBase):
            return False
        reduced = {int(a) % 4 for a in axes.get_values()}
        return bool(reduced) and reduced <= {2, 3}


class JoinsChannelBlocks(PerChannelWhen):
    """A concat along the channels of 4-D tensors whose channels are whole C0 blocks copies whole
    blocks, so its inputs may have other channel counts than its result."""

    def holds(self, op: Operation, c0: int) -> bool:
        axis = op.properties.get("axis")
        if _rank(op.results[0]) != 4 or not isinstance(axis, IntegerAttr):
            return False
        shapes = [v.type.get_shape() for v in op.operands if isinstance(v.type, TensorType)]
        return axis.value.data % 4 == 1 and all(shape[1] % c0 == 0 for shape in shapes)


class ChannelGroups(PerChannelWhen):
    """A group norm of 4-D data normalizes groups of whole channels' planes (each channel's plane
    alone for ONNX InstanceNormalization) and scales and shifts them by [C] vectors: on NC1HWC0,
    the blocks read as contiguous channel planes, the real channels grouped as on NCHW, the
    vectors laid out by lane. `group_norm` carries it, and reads its `num_groups` property."""

    def holds(self, op: Operation, c0: int) -> bool:
        groups = op.properties.get("num_groups")
        return _rank(op.operands[0]) == 4 == _rank(op.results[0]) and isinstance(groups, IntegerAttr)


class Reduction(OpTrait):
    """The op reduces along axes (reduce_*, softmax, layer and RMS norm, global pooling): a vector
    kernel holds one, with elementwise work around it."""


class Transcendental(OpTrait):
    """The op's vector sweep runs at the transcendental rate: exponentials, logarithms, roots,
    divisions and the functions built on them."""


class MovesData(OpTrait):
    """The op only moves, copies or reorders elements: it runs on any unit for any dtype."""


class CopiedByDataMovers(OpTrait):
    """The data movers (MTE) carry the op out alone, with no vector time: strided or repeated
    block copies (reshape, slice, concat, expand, ...), and `shape`, which reads no element."""


class IsView(OpTrait):
    """The op reinterprets its input's bytes with another shape (reshape, flatten): with static
    shapes kernel formation makes it a view, not a kernel."""


class ExactInStoredType(OpTrait):
    """Computing the op in its operands' stored type gives its exact result: it selects, compares
    or flips the sign of elements (max, comparisons, max pooling, top-k, abs, relu, ...), handles
    no numbers (strings), or rounds its own wider computation once (resize). The reference
    semantics runs it, like the ops that move data or compute nothing, without widening float16
    or bfloat16 operands to float32: widening would change nothing but cost."""


@dataclass(frozen=True)
class Scales(OpTrait):
    """The op multiplies its first operand by its second, or by the second's reciprocal when
    `reciprocal` (mul, div): 1 is its neutral operand, and without `reciprocal` its operands swap.
    Simplification and fusions read a constant scale through it."""

    reciprocal: bool


@dataclass(frozen=True)
class Shifts(OpTrait):
    """The op adds its second operand to its first, or subtracts it when `negated` (add, sub): 0
    is its neutral operand, and without `negated` its operands swap."""

    negated: bool


class Involution(OpTrait):
    """Applied twice, the op gives back its operand (neg, not, bitwise_not)."""


class NoOpWhenTypeKept(OpTrait):
    """When its result has its operand's type, the op returns its operand (reshape, flatten,
    expand, cast; transpose when its permutation is the identity as well)."""


class Permutes(OpTrait):
    """Each result element is one operand element and each operand element appears once: the op
    only renumbers elements (reshape, flatten, transpose). A chain of such ops between 4-D tensors
    whose channels are whole C0 blocks (a channel shuffle) gathers NC1HWC0 data as well as NCHW."""


class Reorders(OpTrait):
    """The op rearranges elements through the vector unit (transpose, pad, gather, where, ...):
    one sweep over its result without arithmetic."""


class ValueShaped(OpTrait):
    """The op's output size is what its input values decide (non_zero, unique): its vector work
    is one sweep that reads every input element and computes nothing."""


class NeedsAiCpu(OpTrait):
    """The AI Core cannot run the op (for example, its output shape depends on values)."""


class EpilogueKind(Enum):
    """How an op joins a cube op's epilogue."""

    UNARY = "unary"
    """An activation applied to the accumulator."""
    BINARY = "binary"
    """A bias or residual add, or a max / min with a constant (relu6, clip)."""


@dataclass(frozen=True)
class Epilogue(OpTrait):
    """The op can be fused into a cube op's epilogue (`ge-fuse-bias-activation`)."""

    kind: EpilogueKind
    constant_operand: bool = False
    """A binary op joins only with a constant other operand (max, min: relu6, clip), never a
    computed one."""


class KeepsPrecision(OpTrait):
    """`allow_mix_precision` keeps the op's type (GE's black list): sums of many terms, norms,
    exp and log, which fp16 would round away or overflow."""


class PrefersLowPrecision(OpTrait):
    """`allow_mix_precision` runs the op in the low-precision type whenever it is fp32 (GE's white
    list): the matrix products have the interface instead, these are the vector ops."""


class ComputesNothing(OpTrait):
    """The op computes nothing in a float type (constants, casts, shapes): precision passes never
    retype it."""


class FusionOnly(OpTrait):
    """No frontend builds the op: fusion passes make it from ops that frontends do build."""


@dataclass(frozen=True)
class VectorSweeps(OpTrait):
    """The op sweeps its input `simple` times with plain vector instructions and `transcendental`
    times at the transcendental rate (softmax: max, subtract, sum, divide, and one exp)."""

    simple: float
    transcendental: float = 0.0


# --------------------------------------------------------------------------------------------
# Matrix products
# --------------------------------------------------------------------------------------------

DYN = DYNAMIC_INDEX


class ProductOperands(Enum):
    """How a product's operands hold its matrices, which decides the device formats the cube
    reads them in."""

    IMAGE = "image"
    """A convolution's implicit GEMM: the left operand is an N, C, spatial... image, the right its
    O, C / groups, kernel... weights. The device blocks their channels by C0 (NC1HWC0 and
    FRACTAL_Z for 2-D images), so each kernel position's channels are padded to whole blocks."""
    MATRICES = "matrices"
    """Each operand's last two dimensions are its matrix (transposed as the op says): a constant
    right-hand side is stored as fractal tiles (FRACTAL_NZ), the rest laid out while loading."""
    GATHERED = "gathered"
    """The op gathers its matrices from its operands its own way (einsum letters, attention
    heads, recurrent gates, integer zero points subtracted first): the kernel reads its operands
    in framework formats and lays them out itself."""


@dataclass(frozen=True)
class MatrixProduct:
    """`batch` independent products of an (m x k) by (k x n) matrix, repeated `steps` times one
    after the other (the time steps of a recurrence). `lhs` and `rhs` are the operand indices of
    the left and right matrix (None: a value the op computes itself, like attention's
    probabilities or a recurrence's state). A convolution's k spans `positions` kernel positions of
    k // positions channels each. `operands` says how the operands hold the matrices. A
    dimension is `DYN` when a shape it comes from is dynamic."""

    m: int
    n: int
    k: int
    batch: int = 1
    lhs: int | None = 0
    rhs: int | None = 1
    positions: int = 1
    steps: int = 1
    operands: ProductOperands = ProductOperands.GATHERED

    def device_k(self, c0: int) -> int:
        """K as the cube reads it from the device formats, for operands whose channel block is
        `c0` (`ge.dialects.formats.c0_of`): an image product pads each kernel position's
        k // positions channels to whole C0 blocks (NC1HWC0, FRACTAL_Z); any other product
        reads K as it is."""
        if self.operands is not ProductOperands.IMAGE or DYN in (self.k, self.positions):
            return self.k
        channels = self.k // self.positions
        return -(-channels // c0) * c0 * self.positions

    @property
    def macs(self) -> int:
        """Useful multiply-adds (`DYN` if a dimension is dynamic)."""
        return _multiply(self.m, self.n, self.k, self.batch, self.steps)

    @property
    def flops(self) -> int:
        """2 * M * N * K * batch (and * steps): a multiply and an add each (`DYN` if dynamic)."""
        macs = self.macs
        return DYN if macs == DYN else 2 * macs


class MatrixProductInterface(OpTrait, ABC):
    """The op is built on matrix products, which the cube computes. An op whose instances may or
    may not be products (einsum: by its equation) answers with no products."""

    @abstractmethod
    def products(
        self, operand_types: Sequence[TensorType], properties: Mapping[str, Attribute]
    ) -> tuple[MatrixProduct, ...]:
        """The op's products for these operand types and properties, largest role first."""
        raise NotImplementedError


def matrix_products(op: Operation) -> tuple[MatrixProduct, ...]:
    """Every matrix product `op` computes (attention: two, a recurrent layer: two); empty when it
    computes none."""
    trait = op.get_trait(MatrixProductInterface)
    if trait is None:
        return ()
    types = [v.type for v in op.operands]
    if not all(isinstance(t, TensorType) for t in types):
        return ()
    return trait.products(types, op.properties)  # pyright: ignore[reportArgumentType] checked above


def matrix_product(op: Operation) -> MatrixProduct | None:
    """The (first) matrix product `op` computes, or None when it is no matrix product: ask this
    for "does the op run on the cube"."""
    products = matrix_products(op)
    return products[0] if products else None


def _rank(value: SSAValue) -> int:
    return len(value.type.get_shape()) if isinstance(value.type, TensorType) else 0


def _multiply(*dims: int) -> int:
    return DYN if DYN in dims else math.prod(dims)


__all__ = [
    "Broadcasts",
    "ChannelGroups",
    "ChannelOperands",
    "ChannelWindow",
    "ComputesNothing",
    "CopiedByDataMovers",
    "Elementwise",
    "Epilogue",
    "EpilogueKind",
    "ExactInStoredType",
    "FusionOnly",
    "Involution",
    "IsView",
    "JoinsChannelBlocks",
    "KeepsPrecision",
    "MatrixProduct",
    "MatrixProductInterface",
    "MovesData",
    "NeedsAiCpu",
    "NoOpWhenTypeKept",
    "PerChannel",
    "PerChannelWhen",
    "Permutes",
    "PrefersLowPrecision",
    "ProductOperands",
    "ReducesPlane",
    "Reduction",
    "Reorders",
    "Scales",
    "Shifts",
    "Transcendental",
    "ValueShaped",
    "WithinPlane",
    "VectorSweeps",
    "matrix_product",
    "matrix_products",
]
