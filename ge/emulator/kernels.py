"""One kernel launch: stored buffers in, stored buffers out, in the formats the kernel names.

Matrix products and 2-D convolutions run on the emulated cube (`ge.emulator.cube`): fractal tile
products over NC1HWC0 / FRACTAL_Z / FRACTAL_NZ data, contracted k-step by k-step as the kernel's
compiled tiling says (`ge.emulator.tiles`) and accumulated in fp32, a second implementation beside
the reference semantics. An operand that arrives in a framework format is laid out as
fractal tiles on the way in, as the kernel's MTE2 load would. Every other op (the epilogue of a
fused op included) computes with the shared semantics on the logical values; a result is stored
in the kernel's output format with zero padding.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge.dialects import graph
from ge.dialects.common import get_flag, get_int, get_ints
from ge.dialects.formats import bitwidth_of, c0_of
from ge.dialects.kernel import weight_groups
from ge.dialects.stream import KernelFuncOp
from ge.dtypes import bfloat16, numpy_dtype, tensor_type
from ge.layout import from_device, to_device
from ge.semantics import evaluate, widen
from ge.semantics.core import epilogue
from ge.semantics.nn import gemm_scale

from . import cube
from .tiles import CubeSchedule, prepare_cube

CUBE_DTYPES = (np.dtype(np.float16), bfloat16, np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.uint8))
FRAMEWORK = ("ND", "NCHW")


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


def run_kernel(kernel: KernelFuncOp, buffers: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The stored results of `kernel` on stored `buffers` (one per input, in its input format)."""
    block = kernel.body.block
    formats = kernel.in_formats
    env: dict[SSAValue, _Stored] = {}
    values: dict[SSAValue, np.ndarray] = {}
    for arg, array, fmt in zip(block.args, buffers, formats, strict=True):
        env[arg] = _Stored(array, fmt, tensor_type(arg), weight_groups(arg))
    ops = list(block.ops)
    for op in ops[:-1]:
        result = _on_cube(op, env) if _cube_ready(op, env) else None
        if result is None:
            results = evaluate(op, [values[v] if v in values else env[v].logical() for v in op.operands])
        else:
            results = [result]
        values.update(zip(op.results, results, strict=True))
    outputs = []
    for value, fmt in zip(ops[-1].operands, kernel.out_formats, strict=True):
        array = values[value] if value in values else env[value].logical()
        if fmt not in FRAMEWORK:
            array = to_device(array, fmt, c0_of(bitwidth_of(tensor_type(value).element_type)))
        outputs.append(array)
    return outputs


def _base(op: Operation) -> type[Operation]:
    return op.BASE if isinstance(op, graph.FusedOp) else type(op)


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


def _on_cube(
    op: Operation, env: dict[SSAValue, _Stored], schedule: CubeSchedule | None = None
) -> np.ndarray | None:
    """`op`'s result computed on the cube with the k-steps of `schedule` (`prepare_cube` of its
    kernel; when not given, the one prepared at the kernel's first run)."""
    if schedule is None:
        schedule = _prepared(op)
    base = _base(op)
    if isinstance(op, graph.FusedOp):
        operands, extras = list(op.base_operands), list(op.extra_operands)
    else:
        operands, extras = list(op.operands), []
    result_type = op.results[0].type
    assert isinstance(result_type, TensorType)
    accumulator = _ON_CUBE[base](op, operands, env, result_type, schedule.k_step)
    if accumulator is None:
        return None
    if isinstance(op, graph.FusedOp):
        rest = [env[v].logical() for v in extras]
        return epilogue(op, accumulator, rest).astype(numpy_dtype(result_type.element_type))
    return accumulator.astype(numpy_dtype(result_type.element_type))


def _prepared(op: Operation) -> CubeSchedule:
    """The cube schedule of the kernel holding `op`, prepared once per kernel."""
    kernel = op.parent_op()
    assert isinstance(kernel, KernelFuncOp), f"{op.name} runs inside an outlined kernel"
    schedule = _SCHEDULES.get(kernel)
    if schedule is None:
        schedule = _SCHEDULES[kernel] = prepare_cube(kernel)
    return schedule


_SCHEDULES: weakref.WeakKeyDictionary[KernelFuncOp, CubeSchedule] = weakref.WeakKeyDictionary()
"""Each kernel's cube schedule, kept as long as the kernel lives."""


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


_ON_CUBE: dict[
    type[Operation],
    Callable[[Operation, list[SSAValue], dict[SSAValue, _Stored], TensorType, int | None], np.ndarray | None],
] = {
    graph.Conv2DOp: _conv2d_on_cube,
    graph.MatMulOp: _matmul_on_cube,
    graph.GemmOp: _gemm_on_cube,
}
"""The matrix products the emulated cube computes as fractal tile products, `k_step` elements of K
at a time; the others run on the shared semantics."""


def _conv2d(
    op: Operation,
    stored: list[_Stored],
    bias: list[SSAValue],
    env: dict[SSAValue, _Stored],
    result_type: TensorType,
    k_step: int | None,
) -> np.ndarray | None:
    x, w = stored
    if len(x.type.get_shape()) != 4:
        return None
    n, cin, _, _ = x.type.get_shape()
    cout, _, kh, kw = w.type.get_shape()
    groups = get_int(op, "groups", 1)
    stride_h, stride_w = get_ints(op, "strides", (1, 1))
    top, left, bottom, right = get_ints(op, "pads", (0, 0, 0, 0))
    dilation_h, dilation_w = get_ints(op, "dilations", (1, 1))
    accumulator = cube.conv2d(
        x.stored("NC1HWC0"),
        w.stored("FRACTAL_Z", groups),
        out_channels=cout,
        in_channels=cin,
        kernel=(kh, kw),
        strides=(stride_h, stride_w),
        pads=(top, left, bottom, right),
        dilations=(dilation_h, dilation_w),
        groups=groups,
        bias=widen(env[bias[0]].logical()) if bias else None,
        k_step=k_step,
    )
    return from_device(accumulator, "NC1HWC0", result_type.get_shape())


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
