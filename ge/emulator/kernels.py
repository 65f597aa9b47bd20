"""One kernel launch: stored buffers in, stored buffers out, in the formats the kernel names.

Matrix products and 2-D convolutions run on the emulated cube (`ge.emulator.cube`): fractal tile
products over NC1HWC0 / FRACTAL_Z / FRACTAL_NZ data, contracted k-step by k-step as the kernel's
compiled tiling says (`ge.emulator.tiles`) and accumulated in fp32, a second implementation beside
the reference semantics. Attention, recurrent layers, transposed and 3-D convolutions run their
products the same way (`ge.emulator.products`) and the work between them on the vector unit. An
operand that arrives in a framework format is laid out as fractal tiles on the way in, as the
kernel's MTE2 load would. Vector ops over NC1HWC0 or FRACTAL_NZ operands run on the stored arrays
(`ge.emulator.vector`); every other op computes with the shared semantics on the logical values. A
fused op's epilogue ops are the kernel's own ops, run after its product. A result is stored in the
kernel's output format with zero padding.

`PreparedKernel` turns a kernel body into a list of steps once, when a model is loaded, so a
launch runs those steps instead of interpreting the body's IR.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge.dialects import graph
from ge.dialects.common import describe
from ge.dialects.formats import bitwidth_of, c0_of
from ge.dialects.kernel import weight_groups
from ge.dialects.stream import KernelFuncOp
from ge.dtypes import bfloat16, numpy_dtype, tensor_type
from ge.errors import GeError
from ge.layout import from_device, to_device
from ge.semantics import evaluate, evaluator
from ge.semantics.base import Ufunc
from ge.semantics.core import _computes_in_stored_type as computes_in_stored_type  # pyright: ignore[reportPrivateUsage] the rule evaluate follows

from . import vector
from .cube_steps import (
    FRAMEWORK,
    CubeStep,
    MatrixStep,
    Operand,
    accumulates,
    accumulator_step,
    base,
    cube_ready,
)
from .functions import vector_compute, vector_implementation
from .tiles import prepare_cube

NARROW = (np.dtype(np.float16), bfloat16)
"""The float types ops compute in float32 (`ge.semantics.widen`)."""


class PreparedKernel:
    """A kernel body prepared once as a list of steps over a small list of slots (the kernel's
    stored inputs, their logical values where an op needs them, each op's results); calling it
    with stored input arrays writes the stored results into the output arrays given.

    Each op's implementation (prepared: its properties read, `ge.semantics.base.Prepared`),
    operand slots, widening and result dtypes are resolved here, and constants computed once, so
    a call reads no IR. The first call checks every vector op's answer against its result type
    (`ge.semantics.evaluator`); later calls skip the checks."""

    def __init__(self, kernel: KernelFuncOp):
        self.name = kernel.sym_name.data
        self._schedule = prepare_cube(kernel)  # the k-steps, its L0 claims checked once, here
        block = kernel.body.block
        self._slots: dict[SSAValue, int] = {arg: i for i, arg in enumerate(block.args)}
        self._logical: dict[SSAValue, int] = {}
        self._template: list[Any] = [None] * len(block.args)  # arrays once a call fills them
        self._arity = len(block.args)
        self._stored: dict[SSAValue, tuple[str, TensorType, int]] = {
            arg: (fmt, tensor_type(arg), weight_groups(arg) if fmt == "FRACTAL_Z" else 1)
            for arg, fmt in zip(block.args, kernel.in_formats, strict=True)
        }
        checked: list[Step] = []
        fast: list[Step] = []
        ops = list(block.ops)
        # A value the kernel returns (first return only), with its output's index and format; a
        # step computing it as stored may write it straight into the output (`_claim`).
        self._returned: dict[SSAValue, tuple[int, str]] = {}
        for index, (value, fmt) in enumerate(zip(ops[-1].operands, kernel.out_formats, strict=True)):
            self._returned.setdefault(value, (index, fmt))
        self._destinations: list[tuple[int, int]] = []  # (output index, slot its writer reads)
        for op in ops[:-1]:
            self._prepare_op(op, checked, fast)
        self._encodes = [
            (self._slots[value], fmt, 0)  # computed in its stored format: stored as it is
            if fmt in vector.DEVICE_FORMATS and self._stored.get(value, ("",))[0] == fmt
            else (
                self._logical_slot(value, checked, fast),
                fmt,
                c0_of(bitwidth_of(tensor_type(value).element_type)),
            )
            for value, fmt in zip(ops[-1].operands, kernel.out_formats, strict=True)
        ]
        self._steps, self._fast_steps = checked, fast

    def __call__(
        self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], apart: Sequence[bool] = ()
    ) -> None:
        """Runs the kernel on `inputs`, storing its results in `outputs`. An output whose
        `apart` entry is True shares no byte with any input: the step computing it writes it
        there directly. Every other result is computed before any is stored, as an output may
        share an input's bytes."""
        slots = self._template.copy()
        slots[: self._arity] = inputs
        for index, slot in self._destinations:
            if index < len(apart) and apart[index]:
                slots[slot] = outputs[index]
        for step in self._steps:
            step(slots)
        results = [
            slots[i] if fmt in FRAMEWORK or not c0 else to_device(slots[i], fmt, c0)
            for i, fmt, c0 in self._encodes
        ]
        for output, result in zip(outputs, results, strict=True):
            if result is not output:  # not written in place by its step
                np.copyto(output, result)
        self._steps = self._fast_steps

    # ----------------------------------------------------------------------------------------

    def _new_slot(self, value: SSAValue) -> int:
        self._slots[value] = len(self._template)
        self._template.append(None)
        return self._slots[value]

    def _claim(self, value: SSAValue, stored_format: str) -> int | None:
        """The slot that holds, at a call, the output array `value` is returned in (None when the
        output shares bytes with an input), for a step that computes `value` in `stored_format`
        to write into; None when `value` is not returned in that format."""
        returned = self._returned.get(value)
        if returned is None:
            return None
        index, fmt = returned
        if fmt != stored_format and not (fmt in FRAMEWORK and stored_format in FRAMEWORK):
            return None
        del self._returned[value]  # one writer per output
        slot = len(self._template)
        self._template.append(None)
        self._destinations.append((index, slot))
        return slot

    def _logical_slot(self, value: SSAValue, checked: list[Step], fast: list[Step]) -> int:
        """The slot of `value`'s logical array: a kernel input in a device format is decoded once
        per call, by a step added before its first reader."""
        if value not in self._stored or self._stored[value][0] in FRAMEWORK:
            return self._slots[value]
        if value not in self._logical:
            fmt, t, groups = self._stored[value]
            source, target = self._slots[value], len(self._template)
            self._template.append(None)
            self._logical[value] = target
            step = partial(_decode, source, target, fmt, tuple(t.get_shape()), groups)
            checked.append(step)
            fast.append(step)
        return self._logical[value]

    def _prepare_op(self, op: Operation, checked: list[Step], fast: list[Step]) -> None:
        if isinstance(op, graph.ConstOp):
            (value,) = evaluate(op, [])  # a constant is computed once
            self._template[self._new_slot(op.results[0])] = value
            return
        if cube_ready(op, self._stored):
            self._prepare_cube(op, checked, fast)
            return
        on_device = vector.on_device(
            op, self._stored, self._slots, self._template, partial(self._claim, op.results[0])
        )
        if on_device is not None:  # computed on the stored arrays; read by later ops as stored
            result_format, step, checked_step = on_device
            target = self._new_slot(op.results[0])
            if result_format is not None:
                self._stored[op.results[0]] = (result_format, tensor_type(op.results[0]), 1)
            checked.append(partial(checked_step, target))
            fast.append(partial(step, target))
            return
        implementation = vector_implementation(op)
        if implementation is None:
            raise GeError(f"{describe(op)} has no semantics: it is not an ascend.graph op")
        operands = tuple(self._logical_slot(v, checked, fast) for v in op.operands)
        results = tuple(self._new_slot(r) for r in op.results)
        compute = vector_compute(implementation, op)
        checks = evaluator(op, implementation=implementation, compute=compute)
        checked.append(partial(_checked_step, checks, operands, results))
        stored_only = computes_in_stored_type(op)
        narrow = tuple(
            not stored_only and numpy_dtype(tensor_type(v).element_type) in NARROW for v in op.operands
        )
        dtypes = tuple(numpy_dtype(tensor_type(r).element_type) for r in op.results)
        if len(results) == 1 and not any(narrow):
            into, destination = None, None
            if vector.writes_into(implementation, op):
                into, destination = cast(Ufunc, implementation).into, self._claim(op.results[0], "ND")
            step = partial(_single_step, compute, into, operands, results[0], dtypes[0], destination)
            fast.append(step)
        else:
            fast.append(partial(_vector_step, compute, operands, narrow, results, dtypes))

    def _prepare_cube(self, op: Operation, checked: list[Step], fast: list[Step]) -> None:
        """A product on the cube. A convolution, matmul or gemm leaves its accumulator (a
        convolution's in NC1HWC0) in a slot, other products their results; a fused op's base
        result is rounded to its epilogue argument's type, and the epilogue's ops are prepared
        after it as the kernel's own ops, on the format the product left."""
        kept = {v: self._stored[v] if v in self._stored else ("ND", tensor_type(v), 1) for v in op.operands}
        operands = {v: Operand.of(self._slots[v], *kept[v]) for v in op.operands}
        k_step = self._schedule.k_step
        epilogue = op.epilogue.block if isinstance(op, graph.FusedOp) else None
        product = op.results[0] if epilogue is None else epilogue.args[0]
        dtype = numpy_dtype(tensor_type(product).element_type)
        step: Step
        if accumulates(op):
            # A product the kernel returns as FRACTAL_NZ (chained into another product) is stored
            # so, and its epilogue computes on the tiles.
            step = accumulator_step(op, operands, k_step, self._new_slot(product), dtype)
            if base(op) is graph.Conv2DOp:
                self._stored[product] = ("NC1HWC0", tensor_type(product), 1)
            elif self._returned.get(op.results[0], (0, ""))[1] == "FRACTAL_NZ":
                assert isinstance(step, MatrixStep)
                step.fractal = True
                self._stored[product] = ("FRACTAL_NZ", tensor_type(product), 1)
            if epilogue is None and step.writes_into:
                step.destination = self._claim(product, self._stored.get(product, ("ND",))[0])
        elif epilogue is not None:
            step = CubeStep(op, operands, k_step, (self._new_slot(product),), dtype)
        else:
            step = CubeStep(op, operands, k_step, tuple(self._new_slot(r) for r in op.results))
        checked.append(step)
        fast.append(step)
        if epilogue is None:
            return
        assert isinstance(op, graph.FusedOp)
        for arg, extra in zip(epilogue.args[1:], op.extra_operands, strict=True):
            self._bind(arg, extra, checked, fast)
        inner = list(epilogue.ops)
        (returned,) = inner[-1].operands
        if op.results[0] in self._returned and returned.type == op.results[0].type:
            self._returned[returned] = self._returned.pop(op.results[0])  # computed by the epilogue
        for inner_op in inner[:-1]:
            self._prepare_op(inner_op, checked, fast)
        self._bind(op.results[0], returned, checked, fast)

    def _bind(self, value: SSAValue, source: SSAValue, checked: list[Step], fast: list[Step]) -> None:
        """`value` reads `source`'s slot (and stored format); when their types differ, a step casts
        `source`'s logical value to `value`'s element type."""
        if value.type == source.type:
            self._slots[value] = self._slots[source]
            if source in self._stored:
                self._stored[value] = (self._stored[source][0], tensor_type(value), self._stored[source][2])
            return
        step = partial(
            _cast,
            self._logical_slot(source, checked, fast),
            self._new_slot(value),
            numpy_dtype(tensor_type(value).element_type),
        )
        checked.append(step)
        fast.append(step)


Step = Callable[[list[Any]], None]
"""One prepared op of a kernel body: reads its operands' slots, writes its results' slots."""


def _cast(source: int, target: int, dtype: np.dtype, slots: list) -> None:
    slots[target] = slots[source].astype(dtype)  # past a 16-bit type's range: inf, as stored


def _decode(source: int, target: int, fmt: str, shape: tuple[int, ...], groups: int, slots: list) -> None:
    slots[target] = from_device(slots[source], fmt, shape, groups)


def _checked_step(
    evaluate: Callable[[list], list[np.ndarray]],
    operands: tuple[int, ...],
    results: tuple[int, ...],
    slots: list,
) -> None:
    values = evaluate([slots[i] for i in operands])
    for index, value in zip(results, values, strict=True):
        slots[index] = value


def _single_step(
    compute: Callable,
    into: Callable | None,
    operands: tuple[int, ...],
    result: int,
    dtype: np.dtype,
    destination: int | None,
    slots: list,
) -> None:
    """`compute` (the op prepared) on its operands' slots; with a `destination` holding an array,
    its ufunc's `into` writes the result there instead."""
    if destination is not None and slots[destination] is not None:
        assert into is not None
        into(slots[destination], *[slots[i] for i in operands])
        slots[result] = slots[destination]
        return
    value = compute(*[slots[i] for i in operands])
    if isinstance(value, tuple | list):
        (value,) = value
    slots[result] = np.asarray(value.astype(dtype, copy=False))


def _vector_step(
    compute: Callable,
    operands: tuple[int, ...],
    narrow: tuple[bool, ...],
    results: tuple[int, ...],
    dtypes: tuple[np.dtype, ...],
    slots: list,
) -> None:
    arrays = [slots[i].astype(np.float32) if n else slots[i] for i, n in zip(operands, narrow, strict=True)]
    values = compute(*arrays)
    values = values if isinstance(values, tuple | list) else (values,)
    for index, value, dtype in zip(results, values, dtypes, strict=True):
        slots[index] = np.asarray(value.astype(dtype, copy=False))
