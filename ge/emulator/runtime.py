"""Emulator v0: executes an `ascend.stream` model over a real byte arena and the weight blob.

Every buffer is a view at its planned offset in one `uint8` arena, so a wrong offset shows up as
a wrong answer; views and concat slices are numpy views of their buffer. Each launch reads its
input buffers in their device formats, computes its kernel (`ge.emulator.kernels`: cube work on
fractal tiles, the rest with the shared op semantics), and writes its output buffers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import SSAValue

from ge.dialects.common import describe
from ge.dialects.stream import (
    BufferOp,
    EventRecordOp,
    EventWaitOp,
    KernelFuncOp,
    LaunchOp,
    OutputsOp,
    SubviewOp,
    ViewOp,
    WeightOp,
    model_of,
)
from ge.dtypes import numpy_dtype
from ge.errors import GeError

from .kernels import run_kernel


class Emulator:
    """Runs one compiled model; `run` may be called many times."""

    def __init__(self, module: ModuleOp, weight_blob: bytes):
        self.model = model_of(module)
        self.kernels = {op.sym_name.data: op for op in module.walk() if isinstance(op, KernelFuncOp)}
        size = self.model.weight_size.value.data
        if len(weight_blob) != size:
            raise GeError(f"the weight blob has {len(weight_blob)} bytes, the model expects {size}")
        self.blob = np.frombuffer(weight_blob, np.uint8)
        self.launches = 0

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        arena = np.zeros(self.model.arena_size.value.data, np.uint8)
        views: dict[SSAValue, np.ndarray] = {}
        recorded: set[int] = set()
        for op in self.model.body.block.ops:
            if isinstance(op, BufferOp):
                view = _view(arena, op.offset.value.data, op.buffer.type)
                if op.input is not None:
                    np.copyto(view, inputs[op.input.value.data])
                views[op.buffer] = view
            elif isinstance(op, WeightOp):
                views[op.buffer] = _view(self.blob, op.offset.value.data, op.buffer.type)
            elif isinstance(op, ViewOp):
                view = views[op.source].view()
                view.shape = op.buffer.type.get_shape()  # raises rather than copy
                views[op.buffer] = view
            elif isinstance(op, SubviewOp):
                axis, start = op.axis.value.data, op.start.value.data
                index = (slice(None),) * axis + (slice(start, start + op.length.value.data),)
                views[op.buffer] = views[op.source][index]
            elif isinstance(op, LaunchOp):
                self._launch(op, views)
            elif isinstance(op, EventRecordOp):
                recorded.add(op.event.value.data)
            elif isinstance(op, EventWaitOp):
                if op.event.value.data not in recorded:
                    raise GeError(f"{describe(op)}: event {op.event.value.data} was never recorded")
            elif isinstance(op, OutputsOp):
                return [views[v].copy() for v in op.values]
        raise GeError("the model has no 'ascend.stream.outputs'")

    def _launch(self, op: LaunchOp, views: dict[SSAValue, np.ndarray]) -> None:
        kernel = self.kernels[op.kernel.root_reference.data]
        results = run_kernel(kernel, [views[b] for b in op.inputs])
        for buffer, value in zip(op.outputs, results, strict=True):
            np.copyto(views[buffer], value)
        self.launches += 1


def _view(memory: np.ndarray, offset: int, t: MemRefType) -> np.ndarray:
    dtype = numpy_dtype(t.element_type)
    shape = t.get_shape()
    count = int(np.prod(shape))
    return memory[offset : offset + count * dtype.itemsize].view(dtype).reshape(shape)
