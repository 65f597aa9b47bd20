"""One kernel launch: stored buffers in, stored buffers out, in the formats the kernel names.

Matrix products and 2-D convolutions run on the emulated cube (`ge.emulator.cube`): fractal tile
products over NC1HWC0 / FRACTAL_Z / FRACTAL_NZ data, contracted k-step by k-step as the kernel's
compiled tiling says (`ge.emulator.tiles`) and accumulated in fp32, a second implementation beside
the reference semantics. Attention, recurrent layers, transposed and 3-D convolutions run their
products the same way (`ge.emulator.products`) and the work between them on the vector unit. An
operand that arrives in a framework format is laid out as fractal tiles on the way in, as the
kernel's MTE2 load would. Vector ops over NC1HWC0 or FRACTAL_NZ operands run on the stored arrays
(`ge.emulator.vector`); every other op (the epilogue of a fused op included) computes with the
shared semantics on the logical values; a result is stored in the kernel's output format with
zero padding.

`PreparedKernel` turns a kernel body into a list of steps once, when a model is loaded, so a
launch runs those steps instead of interpreting the body's IR.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue

from ge.dialects import graph
from ge.dialects.common import describe, get_flag, get_int, get_ints
from ge.dialects.formats import bitwidth_of, c0_of
from ge.dialects.kernel import weight_groups
from ge.dialects.stream import KernelFuncOp
from ge.dtypes import bfloat16, numpy_dtype, tensor_type
from ge.errors import GeError
from ge.layout import from_device, to_device
from ge.semantics import evaluate, widen
from ge.semantics.core import _computes_in_stored_type as computes_in_stored_type  # pyright: ignore[reportPrivateUsage] the rule evaluate follows
from ge.semantics.nn import gemm_scale

from . import cube, products, vector
from .epilogue import PreparedEpilogue
from .functions import vector_implementation
from .tiles import CubeSchedule, prepare_cube

CUBE_DTYPES = (np.dtype(np.float16), bfloat16, np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.uint8))
FRAMEWORK = ("ND", "NCHW")
NARROW = (np.dtype(np.float16), bfloat16)
"""The float types ops compute in float32 (`ge.semantics.widen`)."""


class _Stored:
    """A kernel operand as stored (array and format), decoded to its logical value on demand."""

    def __init__(self, array: np.ndarray, fmt: str, t: TensorType, groups: int = 1):
        self.array, self.format, self.type, self.groups = array, fmt, t, groups
        self._logical: np.ndarray | None = None

    def logical(self) -> np.ndarray:
        if self._logical is None:
            if self.format in FRAMEWORK:
                self._logical = self.array
            else:
                self._logical = from_device(self.array, self.format, self.type.get_shape(), self.groups)
        return self._logical

    def stored(self, fmt: str, groups: int = 1) -> np.ndarray:
        """The data in `fmt` (converted while loading when it is kept otherwise)."""
        if self.format == fmt or (self.format in FRAMEWORK and fmt in FRAMEWORK):
            return self.array
        c0 = c0_of(bitwidth_of(self.type.element_type))
        return to_device(self.logical(), fmt, c0, groups)


class PreparedKernel:
    """A kernel body prepared once as a list of steps over a small list of slots (the kernel's
    stored inputs, their logical values where an op needs them, each op's results); calling it
    with stored input arrays writes the stored results into the output arrays given.

    Each op's implementation, operand slots, widening and result dtypes are resolved here, and
    constants computed once. The first call checks every vector op's answer against its result
    type (`ge.semantics.evaluate`); later calls skip the checks."""

    def __init__(self, kernel: KernelFuncOp):
        self.name = kernel.sym_name.data
        self._schedule = prepare_cube(kernel)  # the k-steps, its L0 claims checked once, here
        block = kernel.body.block
        self._slots: dict[SSAValue, int] = {arg: i for i, arg in enumerate(block.args)}
        self._logical: dict[SSAValue, int] = {}
        self._template: list[Any] = [None] * len(block.args)  # arrays once a call fills them
        self._arity = len(block.args)
        self._stored: dict[SSAValue, tuple[str, TensorType, int]] = {
            arg: (fmt, tensor_type(arg), weight_groups(arg))
            for arg, fmt in zip(block.args, kernel.in_formats, strict=True)
        }
        checked: list[Step] = []
        fast: list[Step] = []
        ops = list(block.ops)
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

    def __call__(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> None:
        slots = self._template.copy()
        slots[: self._arity] = inputs
        for step in self._steps:
            step(slots)
        # Every result is computed before any is stored, as an output may share an input's bytes.
        results = [
            slots[i] if fmt in FRAMEWORK or not c0 else to_device(slots[i], fmt, c0)
            for i, fmt, c0 in self._encodes
        ]
        for output, result in zip(outputs, results, strict=True):
            np.copyto(output, result)
        self._steps = self._fast_steps

    # ----------------------------------------------------------------------------------------

    def _new_slot(self, value: SSAValue) -> int:
        self._slots[value] = len(self._template)
        self._template.append(None)
        return self._slots[value]

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
        placeholders = {v: _Stored(np.empty(0), *self._stored[v]) for v in self._stored}
        if _cube_ready(op, placeholders):
            self._prepare_cube(op, checked, fast)
            return
        on_device = vector.on_device(op, self._stored, self._slots, self._template)
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
        checked.append(partial(_checked_step, op, implementation, operands, results))
        stored_only = computes_in_stored_type(op)
        narrow = tuple(
            not stored_only and numpy_dtype(tensor_type(v).element_type) in NARROW for v in op.operands
        )
        dtypes = tuple(numpy_dtype(tensor_type(r).element_type) for r in op.results)
        if len(results) == 1 and not any(narrow):
            fast.append(partial(_single_step, implementation, op, operands, results[0], dtypes[0]))
        else:
            fast.append(partial(_vector_step, implementation, op, operands, narrow, results, dtypes))

    def _prepare_cube(self, op: Operation, checked: list[Step], fast: list[Step]) -> None:
        """A product on the cube. A convolution, matmul or gemm leaves its accumulator (a
        convolution's in NC1HWC0) in a slot, and a fused op's epilogue ops are prepared after it as
        the kernel's own vector ops, on the accumulator's format; other products give their
        results (a fused op's through its prepared epilogue)."""
        spec = tuple(
            (v, self._slots[v], *(self._stored[v] if v in self._stored else ("ND", tensor_type(v), 1)))
            for v in dict.fromkeys(op.operands)
        )
        accumulates = _accumulates(op)
        epilogue = op.epilogue.block if isinstance(op, graph.FusedOp) and accumulates else None
        if epilogue is not None and not _inlinable(op, epilogue):
            accumulates, epilogue = False, None
        if not accumulates:
            step = _CubeStep(op, spec, self._schedule, tuple(self._new_slot(r) for r in op.results))
            checked.append(step)
            fast.append(step)
            return
        accumulator = op.results[0] if epilogue is None else epilogue.args[0]
        fmt = "NC1HWC0" if _base(op) is graph.Conv2DOp else None
        dtype = numpy_dtype(tensor_type(accumulator).element_type)
        step = _CubeStep(op, spec, self._schedule, (self._new_slot(accumulator),), accumulator=dtype)
        checked.append(step)
        fast.append(step)
        if fmt is not None:
            self._stored[accumulator] = (fmt, tensor_type(accumulator), 1)
        if epilogue is None:
            return
        assert isinstance(op, graph.FusedOp)
        for arg, extra in zip(epilogue.args[1:], op.extra_operands, strict=True):
            self._slots[arg] = self._slots[extra]
            if extra in self._stored:
                self._stored[arg] = self._stored[extra]
        inner = list(epilogue.ops)
        for inner_op in inner[:-1]:
            self._prepare_op(inner_op, checked, fast)
        (returned,) = inner[-1].operands
        result = op.results[0]
        self._slots[result] = self._slots[returned]
        if returned in self._stored:
            self._stored[result] = (self._stored[returned][0], tensor_type(result), 1)


Step = Callable[[list[Any]], None]
"""One prepared op of a kernel body: reads its operands' slots, writes its results' slots."""


def _decode(source: int, target: int, fmt: str, shape: tuple[int, ...], groups: int, slots: list) -> None:
    slots[target] = from_device(slots[source], fmt, shape, groups)


class _CubeStep:
    """A matrix product on the cube and its fused epilogue, resolved once when the kernel is
    prepared: a call reads the operands' slots and writes the result's. Given an `accumulator`
    dtype, the step writes the accumulator alone, rounded to that dtype (its epilogue, if any, is
    prepared as later steps)."""

    def __init__(
        self,
        op: Operation,
        spec: tuple,
        schedule: CubeSchedule,
        targets: tuple[int, ...],
        accumulator: np.dtype | None = None,
    ):
        self.op, self.spec, self.schedule, self.targets = op, spec, schedule, targets
        self.accumulator = accumulator
        if accumulator is not None:
            self.operands = list(op.base_operands if isinstance(op, graph.FusedOp) else op.operands)
            self.extras, self.epilogue = [], None
        elif isinstance(op, graph.FusedOp):
            self.operands, self.extras = list(op.base_operands), list(op.extra_operands)
            self.epilogue: PreparedEpilogue | None = PreparedEpilogue(op)
        else:
            self.operands, self.extras, self.epilogue = list(op.operands), [], None
        result_type = op.results[0].type
        assert isinstance(result_type, TensorType)
        self.result_type, self.dtype = result_type, numpy_dtype(result_type.element_type)
        self.product = _ON_CUBE[_base(op)]

    def __call__(self, slots: list) -> None:
        env = {v: _Stored(slots[i], fmt, t, groups) for v, i, fmt, t, groups in self.spec}
        accumulator = self.product(self.op, self.operands, env, self.result_type, self.schedule.k_step)
        if self.accumulator is not None:
            assert isinstance(accumulator, np.ndarray)
            with np.errstate(over="ignore"):  # rounding past a 16-bit type's range gives inf, as stored
                slots[self.targets[0]] = accumulator.astype(self.accumulator, copy=False)
            return
        if _base(self.op) is graph.Conv2DOp and isinstance(accumulator, np.ndarray):
            accumulator = from_device(accumulator, "NC1HWC0", self.result_type.get_shape())
        if accumulator is None:
            results = evaluate(self.op, [env[v].logical() for v in self.op.operands])
        elif isinstance(accumulator, tuple):
            results = accumulator  # a layer's several results, already in their types
        elif self.epilogue is not None:
            extras = [env[v].logical() for v in self.extras]
            results = (self.epilogue(accumulator, extras).astype(self.dtype),)
        else:
            results = (accumulator.astype(self.dtype),)
        for target, value in zip(self.targets, results, strict=True):
            slots[target] = value


def _checked_step(
    op: Operation, implementation: Callable, operands: tuple[int, ...], results: tuple[int, ...], slots: list
) -> None:
    values = evaluate(op, [slots[i] for i in operands], implementation=implementation)
    for index, value in zip(results, values, strict=True):
        slots[index] = value


def _single_step(
    implementation: Callable,
    op: Operation,
    operands: tuple[int, ...],
    result: int,
    dtype: np.dtype,
    slots: list,
) -> None:
    value = implementation(op, *[slots[i] for i in operands])
    if isinstance(value, tuple | list):
        (value,) = value
    slots[result] = np.asarray(value.astype(dtype, copy=False))


def _vector_step(
    implementation: Callable,
    op: Operation,
    operands: tuple[int, ...],
    narrow: tuple[bool, ...],
    results: tuple[int, ...],
    dtypes: tuple[np.dtype, ...],
    slots: list,
) -> None:
    arrays = [slots[i].astype(np.float32) if n else slots[i] for i, n in zip(operands, narrow, strict=True)]
    values = implementation(op, *arrays)
    values = values if isinstance(values, tuple | list) else (values,)
    for index, value, dtype in zip(results, values, dtypes, strict=True):
        slots[index] = np.asarray(value.astype(dtype, copy=False))


def _base(op: Operation) -> type[Operation]:
    return op.BASE if isinstance(op, graph.FusedOp) else type(op)


def _accumulates(op: Operation) -> bool:
    """Whether the cube gives `op`'s product as an accumulator (`_ACCUMULATORS`), plain or fused."""
    applies = _ACCUMULATORS.get(_base(op))
    return applies is not None and applies(op)


def _inlinable(op: graph.FusedOp, epilogue: Block) -> bool:
    """Whether `op`'s epilogue runs as the kernel's own ops: its extra arguments have their
    operands' types and its yielded value the op's result type."""
    extras = zip(epilogue.args[1:], op.extra_operands, strict=True)
    if any(arg.type != extra.type for arg, extra in extras):
        return False
    (returned,) = list(epilogue.ops)[-1].operands
    return returned.type == op.results[0].type


def _cube_ready(op: Operation, env: dict[SSAValue, _Stored]) -> bool:
    """A matrix product the emulated cube implements (`_ON_CUBE`: conv2d, matmul, gemm; plain or
    fused) whose base operands are kernel inputs the cube takes."""
    if graph.matrix_product(op) is None or _base(op) not in _ON_CUBE:
        return False
    operands = op.base_operands if isinstance(op, graph.FusedOp) else op.operands
    if not all(v in env for v in operands):
        return False
    types = [tensor_type(v) for v in operands[:2]]
    if any(numpy_dtype(t.element_type) not in CUBE_DTYPES for t in types):
        return False
    if types[0].element_type != types[1].element_type:
        return False
    return all(len(t.get_shape()) >= 2 for t in types)


def _conv2d_on_cube(
    op: Operation,
    operands: list[SSAValue],
    env: dict[SSAValue, _Stored],
    result_type: TensorType,
    k_step: int | None,
) -> np.ndarray | None:
    return _conv2d(op, [env[v] for v in operands[:2]], operands[2:], env, result_type, k_step)


def _matmul_on_cube(
    op: Operation,
    operands: list[SSAValue],
    env: dict[SSAValue, _Stored],
    result_type: TensorType,
    k_step: int | None,
) -> np.ndarray | None:
    return _matmul(op, env[operands[0]], env[operands[1]], False, False, k_step)


def _gemm_on_cube(
    op: Operation,
    operands: list[SSAValue],
    env: dict[SSAValue, _Stored],
    result_type: TensorType,
    k_step: int | None,
) -> np.ndarray | None:
    a, b = env[operands[0]], env[operands[1]]
    product = _matmul(op, a, b, get_flag(op, "trans_a"), get_flag(op, "trans_b"), k_step)
    c = env[operands[2]].logical() if len(operands) > 2 else None
    return gemm_scale(op, product, None if c is None else widen(c))


def _products_on_cube(
    op: Operation,
    operands: list[SSAValue],
    env: dict[SSAValue, _Stored],
    result_type: TensorType,
    k_step: int | None,
) -> np.ndarray | tuple[np.ndarray, ...] | None:
    return products.on_cube(op, [env[v].logical() for v in operands], k_step)


_ON_CUBE: dict[
    type[Operation],
    Callable[
        [Operation, list[SSAValue], dict[SSAValue, _Stored], TensorType, int | None],
        np.ndarray | tuple[np.ndarray, ...] | None,
    ],
] = {
    graph.Conv2DOp: _conv2d_on_cube,
    graph.MatMulOp: _matmul_on_cube,
    graph.GemmOp: _gemm_on_cube,
    graph.AttentionOp: _products_on_cube,
    graph.RNNOp: _products_on_cube,
    graph.GRUOp: _products_on_cube,
    graph.LSTMOp: _products_on_cube,
    graph.ConvTranspose2DOp: _products_on_cube,
    graph.ConvTranspose3DOp: _products_on_cube,
    graph.Conv3DOp: _products_on_cube,
}
"""The matrix products the emulated cube computes, `k_step` elements of K at a time: conv2d,
matmul and gemm as fractal tile products (accumulators; a fused op's epilogue follows), the
others' products through `ge.emulator.products` (every result, in its type). Other ops run on the
shared semantics."""

_ACCUMULATORS: dict[type[Operation], Callable[[Operation], bool]] = {
    graph.Conv2DOp: lambda op: len(tensor_type(op.operands[0]).get_shape()) == 4,  # NC1HWC0 in and out
    graph.MatMulOp: lambda op: True,
    graph.GemmOp: lambda op: True,
}
"""The products whose `_ON_CUBE` entry gives the accumulator (a convolution's in NC1HWC0), when
the rule holds; the others give the op's results."""


def _conv2d(
    op: Operation,
    stored: list[_Stored],
    bias: list[SSAValue],
    env: dict[SSAValue, _Stored],
    result_type: TensorType,
    k_step: int | None,
) -> np.ndarray | None:
    x, w = stored
    parameters = _CONV_PARAMETERS.get(op)
    if parameters is None:
        parameters = _CONV_PARAMETERS[op] = _conv_parameters(op, x.type, w.type)
    if not parameters:
        return None
    accumulator = cube.conv2d(
        x.stored("NC1HWC0"),
        w.stored("FRACTAL_Z", parameters["groups"]),
        bias=widen(env[bias[0]].logical()) if bias else None,
        k_step=k_step,
        **parameters,
    )
    return accumulator


_CONV_PARAMETERS: weakref.WeakKeyDictionary[Operation, dict[str, Any]] = weakref.WeakKeyDictionary()
"""Each convolution's `cube.conv2d` keywords, read from its attributes at its first run."""


def _conv_parameters(op: Operation, x: TensorType, w: TensorType) -> dict[str, Any]:
    """`cube.conv2d`'s keywords for `op` (empty when its input is not 2-D spatial)."""
    if len(x.get_shape()) != 4:
        return {}
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


def _matmul(
    op: Operation, a: _Stored, b: _Stored, trans_a: bool, trans_b: bool, k_step: int | None
) -> np.ndarray:
    a_shape, b_shape = a.type.get_shape(), b.type.get_shape()
    m = a_shape[-1] if trans_a else a_shape[-2]
    k = a_shape[-2] if trans_a else a_shape[-1]
    n = b_shape[-2] if trans_b else b_shape[-1]
    a_format = "FRACTAL_NZ" if a.format == "FRACTAL_NZ" else "ND"
    b_format = "FRACTAL_NZ" if b.format == "FRACTAL_NZ" else "ND"
    return cube.matmul(
        a.array,
        b.array,
        a_format=a_format,
        b_format=b_format,
        m=m,
        k=k,
        n=n,
        trans_a=trans_a,
        trans_b=trans_b,
        k_step=k_step,
    )
