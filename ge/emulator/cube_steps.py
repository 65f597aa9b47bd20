"""The cube's steps in a prepared kernel: a matrix product read from the kernel's slots, run on the
emulated cube, its result written to a slot.

A convolution over a 4-D input, a matmul and a gemm give their accumulator (a convolution's in
NC1HWC0, `ConvolutionStep`; a matrix product's logical, `MatrixStep`); everything about them is
decided when the kernel is prepared (`ge.emulator.convolution.plan_conv2d`, the matrix sizes and
formats), so a launch only multiplies. Other products (attention, recurrent layers, transposed and
3-D convolutions) run through `ge.emulator.products` in `CubeStep`. The kernel runs a fused op's
epilogue after its product's step as its own ops.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from functools import cache
from typing import Any, NamedTuple

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge.dialects import graph
from ge.dialects.common import describe, get_flag, get_int, get_ints
from ge.dialects.formats import bitwidth_of, c0_of, device_shape
from ge.dtypes import bfloat16, numpy_dtype, tensor_type
from ge.errors import GeError
from ge.layout import from_device, to_device
from ge.semantics import IMPLEMENTATIONS, evaluator, widen
from ge.semantics.base import prepare
from ge.semantics.nn import gemm_scale

from . import cube, products
from .convolution import plan_conv2d

CUBE_DTYPES = (np.dtype(np.float16), bfloat16, np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.uint8))
FRAMEWORK = ("ND", "NCHW")


class Operand(NamedTuple):
    """A kernel value as a step reads it, its type read once: its slot, stored format, logical
    type, weight groups, and the type's shape and channel block (C0)."""

    slot: int
    format: str
    type: TensorType
    groups: int
    shape: tuple[int, ...]
    c0: int

    @staticmethod
    def of(slot: int, fmt: str, t: TensorType, groups: int) -> Operand:
        return Operand(slot, fmt, t, groups, tuple(t.get_shape()), c0_of(bitwidth_of(t.element_type)))


class Stored:
    """A kernel operand as stored (its array, as `operand` says it is kept), decoded to its
    logical value on demand."""

    def __init__(self, array: np.ndarray, operand: Operand):
        self.array, self.operand = array, operand
        self._logical: np.ndarray | None = None

    def logical(self) -> np.ndarray:
        if self._logical is None:
            operand = self.operand
            if operand.format in FRAMEWORK:
                self._logical = self.array
            else:
                self._logical = from_device(self.array, operand.format, operand.shape, operand.groups)
        return self._logical

    def stored(self, fmt: str, groups: int = 1) -> np.ndarray:
        """The data in `fmt` (converted while loading when it is kept otherwise)."""
        kept, kept_groups = self.operand.format, self.operand.groups
        if (kept == fmt and kept_groups == groups) or (kept in FRAMEWORK and fmt in FRAMEWORK):
            return self.array
        return to_device(self.logical(), fmt, self.operand.c0, groups)


def base(op: Operation) -> type[Operation]:
    """The op class whose product `op` computes (a fused op's base)."""
    return op.BASE if isinstance(op, graph.FusedOp) else type(op)


def cube_ready(op: Operation, inputs: Container[SSAValue]) -> bool:
    """A matrix product the emulated cube implements (`ON_CUBE`), plain or fused, whose base
    operands are kernel `inputs` of types the cube takes."""
    if graph.matrix_product(op) is None or base(op) not in ON_CUBE:
        return False
    operands = op.base_operands if isinstance(op, graph.FusedOp) else op.operands
    if not all(v in inputs for v in operands):
        return False
    types = [tensor_type(v) for v in operands[:2]]
    if any(numpy_dtype(t.element_type) not in CUBE_DTYPES for t in types):
        return False
    if types[0].element_type != types[1].element_type:
        return False
    return all(len(t.get_shape()) >= 2 for t in types)


def accumulates(op: Operation) -> bool:
    """Whether the cube gives `op`'s product as an accumulator (`ACCUMULATORS`), plain or fused."""
    applies = ACCUMULATORS.get(base(op))
    return applies is not None and applies(op)


def accumulator_step(
    op: Operation, operands: Mapping[SSAValue, Operand], k_step: int | None, target: int, dtype: np.dtype
) -> ConvolutionStep | MatrixStep:
    """The step writing `op`'s accumulator, rounded to `dtype`, into slot `target` (`op` is one
    `accumulates` holds for)."""
    if base(op) is graph.Conv2DOp:
        return ConvolutionStep(op, operands, k_step, target, dtype)
    return MatrixStep(op, operands, k_step, target, dtype)


class ConvolutionStep:
    """A 2-D convolution's accumulator (NC1HWC0, bias added), planned when the kernel is prepared."""

    def __init__(
        self,
        op: Operation,
        operands: Mapping[SSAValue, Operand],
        k_step: int | None,
        target: int,
        dtype: np.dtype,
    ):
        x, w, *bias = op.base_operands if isinstance(op, graph.FusedOp) else op.operands
        self.x, self.w, self.bias = operands[x], operands[w], operands[bias[0]] if bias else None
        self.target, self.dtype = target, dtype
        self.destination: int | None = None
        """The slot of the array to store the accumulator into (the kernel's output), if any."""
        parameters = conv_parameters(op, tensor_type(x), tensor_type(w))
        self.groups = parameters["groups"]
        c0 = c0_of(bitwidth_of(tensor_type(x).element_type))
        try:
            self.convolution = plan_conv2d(
                device_shape(tuple(tensor_type(x).get_shape()), "NC1HWC0", c0),
                numpy_dtype(tensor_type(x).element_type),
                device_shape(tuple(tensor_type(w).get_shape()), "FRACTAL_Z", c0, self.groups),
                numpy_dtype(tensor_type(w).element_type),
                k_step=k_step,
                **parameters,
            )
        except ValueError as error:
            raise GeError(f"{describe(op)}: {error}") from None

    @property
    def writes_into(self) -> bool:
        """Whether the accumulator is stored as it is, so it may go straight into an output."""
        return self.dtype == self.convolution.accumulator

    def __call__(self, slots: list[Any]) -> None:
        x = _stored(slots, self.x, "NC1HWC0", 1)
        w = _stored(slots, self.w, "FRACTAL_Z", self.groups)
        bias = None if self.bias is None else widen(_logical(slots, self.bias))
        into = None if self.destination is None else slots[self.destination]
        # Rounding past a 16-bit type's range gives inf, as stored.
        slots[self.target] = self.convolution(x, w, bias, into=into).astype(self.dtype, copy=False)


class MatrixStep:
    """A matmul's or gemm's accumulator (a gemm's alpha, beta and C applied), its sizes, formats
    and transpositions read when the kernel is prepared. The accumulator is left logical (..., M,
    N), or, with `fractal` set, stored as FRACTAL_NZ tiles: the form a product chained into other
    products' left operands is kept in, which its epilogue then computes on."""

    def __init__(
        self,
        op: Operation,
        operands: Mapping[SSAValue, Operand],
        k_step: int | None,
        target: int,
        dtype: np.dtype,
    ):
        values = op.base_operands if isinstance(op, graph.FusedOp) else op.operands
        self.op, self.target, self.dtype = op, target, dtype
        self.a, self.b = operands[values[0]], operands[values[1]]
        self.gemm = base(op) is graph.GemmOp
        self.c = operands[values[2]] if self.gemm and len(values) > 2 else None
        self.scale = gemm_scale(op) if self.gemm else None
        trans_a, trans_b = self.gemm and get_flag(op, "trans_a"), self.gemm and get_flag(op, "trans_b")
        a_shape, b_shape = self.a.type.get_shape(), self.b.type.get_shape()
        self.cube = cube.MatrixProduct(
            numpy_dtype(self.a.type.element_type),
            numpy_dtype(self.b.type.element_type),
            a_format="FRACTAL_NZ" if self.a.format == "FRACTAL_NZ" else "ND",
            b_format="FRACTAL_NZ" if self.b.format == "FRACTAL_NZ" else "ND",
            m=a_shape[-1] if trans_a else a_shape[-2],
            k=a_shape[-2] if trans_a else a_shape[-1],
            n=b_shape[-2] if trans_b else b_shape[-1],
            trans_a=trans_a,
            trans_b=trans_b,
            k_step=k_step,
        )
        self.writes_into = not self.gemm and dtype == self.cube.accumulator
        """Whether the accumulator is the result as it is, so it may go straight into an output."""
        self.destination: int | None = None
        """The slot of the array to accumulate into (the kernel's output), if any."""
        self.fractal = False
        """Whether the accumulator is stored as FRACTAL_NZ tiles."""

    def __call__(self, slots: list[Any]) -> None:
        into = None if self.destination is None else slots[self.destination]
        if into is not None and not into.flags.c_contiguous:  # a slice of a concat's buffer
            into = None  # summed apart, then copied: the cube's products write whole rows
        accumulator = None if self.fractal else into
        product = self.cube(slots[self.a.slot], slots[self.b.slot], accumulator)  # fp32, int32 for 8-bit
        if self.scale is not None:
            c = None if self.c is None else widen(_logical(slots, self.c))
            product = self.scale(product, c)
        if self.fractal:  # `into`, if any, is the output's tiles, of the accumulator's dtype
            product = cube.store_fractal_nz(product, into)
        slots[self.target] = product.astype(self.dtype, copy=False)  # past fp16's range: inf


class CubeStep:
    """A product `ON_CUBE` computes with its results: a call reads the operands' slots and writes
    every result's. For a fused op it writes its base op's result alone, rounded to `dtype` (the
    epilogue argument's type); the kernel runs the epilogue as its own ops after it. The operands'
    slots and formats and the product's plan are resolved here, so a call reads a list."""

    def __init__(
        self,
        op: Operation,
        operands: Mapping[SSAValue, Operand],
        k_step: int | None,
        targets: tuple[int, ...],
        dtype: np.dtype | None = None,
    ):
        self.op, self.targets = op, targets
        self.fused = isinstance(op, graph.FusedOp)
        inputs = op.base_operands if isinstance(op, graph.FusedOp) else op.operands
        self.reads = [operands[v] for v in inputs]
        self.result_type = tensor_type(op.results[0])
        self.dtype = dtype if dtype is not None else numpy_dtype(self.result_type.element_type)
        self.product = ON_CUBE[base(op)](op, k_step)
        # Where the cube does not take the operands: the base op's semantics (prepared at their
        # first use), or the op's.
        if isinstance(op, graph.FusedOp):
            implementation = IMPLEMENTATIONS[op.BASE]
            self.base_implementation = cache(lambda: prepare(implementation, op))
        else:
            self.base_implementation = None
        self.reference = None if self.fused else evaluator(op)

    def __call__(self, slots: list[Any]) -> None:
        stored = [Stored(slots[operand.slot], operand) for operand in self.reads]
        result = self.product(stored)
        if result is None and self.base_implementation is not None:  # not on the cube: the semantics
            result = self.base_implementation()(*(widen(s.logical()) for s in stored))
        elif result is None:
            assert self.reference is not None
            result = tuple(self.reference([s.logical() for s in stored]))
        if isinstance(result, tuple):  # a layer's several results, already in their types
            for target, value in zip(self.targets, result, strict=True):
                slots[target] = value
            return
        slots[self.targets[0]] = np.asarray(result).astype(self.dtype, copy=False)  # past fp16's range: inf


def conv_parameters(op: Operation, x: TensorType, w: TensorType) -> dict[str, Any]:
    """`plan_conv2d`'s keywords for convolution `op` over `x` with weights `w`."""
    cout, _, kh, kw = w.get_shape()
    return {
        "out_channels": cout,
        "in_channels": x.get_shape()[1],
        "kernel": (kh, kw),
        "strides": tuple(get_ints(op, "strides", (1, 1))),
        "pads": tuple(get_ints(op, "pads", (0, 0, 0, 0))),
        "dilations": tuple(get_ints(op, "dilations", (1, 1))),
        "groups": get_int(op, "groups", 1),
    }


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

PreparedProduct = Callable[[list[Stored]], np.ndarray | tuple[np.ndarray, ...] | None]
"""A product prepared for one op: its product's operands as stored -> its results, or None when
the cube does not take them (the semantics run instead)."""


def _accumulated(op: Operation, k_step: int | None) -> PreparedProduct:
    """A 2-D convolution, matmul or gemm: `accumulator_step` computes it whenever `ACCUMULATORS`
    holds, so a `CubeStep` meets only a convolution over an input of another rank (a 1-D one),
    which the cube's NC1HWC0 path does not take: its semantics run."""
    return _not_on_cube


def _not_on_cube(operands: list[Stored]) -> None:
    return None


def _products_on_cube(op: Operation, k_step: int | None) -> PreparedProduct:
    on_cube = products.OnCube(op, k_step)  # its plans kept from launch to launch

    def run(operands: list[Stored]) -> np.ndarray | tuple[np.ndarray, ...] | None:
        return on_cube([s.logical() for s in operands])

    return run


ON_CUBE: dict[type[Operation], Callable[[Operation, int | None], PreparedProduct]] = {
    graph.Conv2DOp: _accumulated,
    graph.MatMulOp: _accumulated,
    graph.GemmOp: _accumulated,
    graph.AttentionOp: _products_on_cube,
    graph.RNNOp: _products_on_cube,
    graph.GRUOp: _products_on_cube,
    graph.LSTMOp: _products_on_cube,
    graph.ConvTranspose2DOp: _products_on_cube,
    graph.ConvTranspose3DOp: _products_on_cube,
    graph.Conv3DOp: _products_on_cube,
}
"""The matrix products the emulated cube computes, `k_step` elements of K at a time, each entry
preparing one op's `PreparedProduct` when its kernel is prepared: conv2d, matmul and gemm as
fractal tile products (`accumulator_step`; a fused op's epilogue follows), the others' products
through `ge.emulator.products` (every result, in its type). Other ops run on the shared
semantics."""

ACCUMULATORS: dict[type[Operation], Callable[[Operation], bool]] = {
    graph.Conv2DOp: lambda op: len(tensor_type(op.operands[0]).get_shape()) == 4,  # NC1HWC0 in and out
    graph.MatMulOp: lambda op: True,
    graph.GemmOp: lambda op: True,
}
"""The products whose step gives the accumulator (a convolution's in NC1HWC0) when the rule holds."""

FLOAT32 = np.dtype(np.float32)


def _stored(slots: list[Any], operand: Operand, fmt: str, groups: int) -> np.ndarray:
    """An operand's array in `fmt` (laid out on the way in, as the cube's load would, when the
    kernel holds it in another format)."""
    if operand.format == fmt and operand.groups == groups:
        return slots[operand.slot]
    return Stored(slots[operand.slot], operand).stored(fmt, groups)


def _logical(slots: list[Any], operand: Operand) -> np.ndarray:
    return Stored(slots[operand.slot], operand).logical()
