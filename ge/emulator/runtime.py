"""Emulator v0: executes an `ascend.stream` model over a real byte arena and the weight blob.

Every buffer is a view at its planned offset in one `uint8` arena, so a wrong offset shows up as
a wrong answer; views and concat slices are numpy views of their buffer. Each launch reads its
input buffers in their device formats, computes its kernel (`ge.emulator.kernels`: cube work on
fractal tiles, the rest with the shared op semantics), and writes its output buffers. Launches
run in task order, which respects every event (a wait follows its record). Before the first run
the race detector (`ge.emulator.timeline.find_races`) checks the bytes each launch really touches
against the streams' happens-before order, so a missing event or a memory plan that reuses bytes
too early is an error, not a silently right answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import SSAValue

from ge.dialects.common import describe
from ge.dialects.formats import storage_shape
from ge.dialects.stream import (
    BufferOp,
    EventRecordOp,
    EventWaitOp,
    LaunchOp,
    ModelOp,
    OutputsOp,
    SubviewOp,
    ViewOp,
    WeightOp,
    model_of,
    root_buffer,
)
from ge.dtypes import numpy_dtype
from ge.errors import GeError
from ge.layout import byte_runs

from .kernels import run_kernel
from .timeline import Access, find_races


class Emulator:
    """Runs one compiled model; `run` may be called many times. `check_races` (on by default: it
    costs milliseconds, once per emulator) runs the race detector before the first run."""

    def __init__(self, module: ModuleOp, weight_blob: bytes, check_races: bool = True):
        self.model = model_of(module)
        self.kernels = self.model.kernels()
        size = self.model.weight_size.value.data
        if len(weight_blob) != size:
            raise GeError(f"the weight blob has {len(weight_blob)} bytes, the model expects {size}")
        self.blob = np.frombuffer(weight_blob, np.uint8)
        self.launches = 0
        self.check_races = check_races
        self._race_free = False

    def run(self, inputs: Sequence[np.ndarray], launch_times: list[float] | None = None) -> list[np.ndarray]:
        """Runs the model on `inputs` (in the model's input order) and returns its outputs. Given a
        list, `launch_times` receives the wall time in seconds of each launch, in task order (the
        profiler's measured column); without one, nothing is timed."""
        size = self.model.arena_size.value.data
        try:
            arena = np.zeros(size, np.uint8)
        except MemoryError:
            raise GeError(
                f"the model's arena of {size:,} bytes does not fit in this machine's memory"
            ) from None
        user = self._user_memory(inputs)
        views = bind(self.model, arena, self.blob, user)
        if self.check_races and not self._race_free:
            find_races(self.model, accesses(self.model, views, arena))
            self._race_free = True
        recorded: set[int] = set()
        for op in self.model.body.block.ops:
            if isinstance(op, LaunchOp):
                if launch_times is None:
                    self._launch(op, views)
                else:
                    began = time.perf_counter()
                    self._launch(op, views)
                    launch_times.append(time.perf_counter() - began)
            elif isinstance(op, EventRecordOp):
                recorded.add(op.event.value.data)
            elif isinstance(op, EventWaitOp):
                if op.event.value.data not in recorded:
                    raise GeError(f"{describe(op)}: event {op.event.value.data} was never recorded")
            elif isinstance(op, OutputsOp):
                # Outputs bound to the caller's memory are handed over as they are; others
                # (an input, a weight, a value returned twice) are copied out of the device.
                handed = {b.buffer for b in user if b.output is not None}
                results = []
                for v in op.values:
                    keep = root_buffer(v) in handed
                    handed.discard(root_buffer(v))
                    results.append(views[v] if keep else views[v].copy())
                return results
        raise GeError("the model has no 'ascend.stream.outputs'")

    def _user_memory(self, inputs: Sequence[np.ndarray]) -> dict[BufferOp, np.ndarray]:
        """The caller's arrays for the buffers bound to inputs (read in place: a kernel never
        writes an input) and fresh arrays for those bound to outputs."""
        memory: dict[BufferOp, np.ndarray] = {}
        for op in self.model.body.block.ops:
            if isinstance(op, BufferOp) and op.bound:
                t = op.buffer.type
                dtype, shape = numpy_dtype(t.element_type), storage_shape(t)
                if op.input is not None:
                    given = np.asarray(inputs[op.input.value.data])
                    if given.dtype != dtype or given.shape != shape:
                        raise GeError(
                            f"input {op.input.value.data} must be {dtype} {list(shape)}, "
                            f"got {given.dtype} {list(given.shape)}"
                        )
                    memory[op] = np.require(given, requirements="C")  # keeps 0-d arrays 0-d
                else:
                    memory[op] = np.zeros(shape, dtype)
        return memory

    def _launch(self, op: LaunchOp, views: dict[SSAValue, np.ndarray]) -> None:
        kernel = self.kernels[op.kernel.root_reference.data]
        results = run_kernel(kernel, [views[b] for b in op.inputs])
        for buffer, value in zip(op.outputs, results, strict=True):
            np.copyto(views[buffer], value)
        self.launches += 1


def bind(
    model: ModelOp,
    arena: np.ndarray,
    blob: np.ndarray,
    user: dict[BufferOp, np.ndarray] | None = None,
) -> dict[SSAValue, np.ndarray]:
    """Every buffer, weight, view and subview of `model` as a numpy view of `arena` or `blob`, or
    of the caller's array (`user`) for a buffer bound to an input or output."""
    views: dict[SSAValue, np.ndarray] = {}
    for op in model.body.block.ops:
        if isinstance(op, BufferOp) and op.bound:
            if user is None or op not in user:
                t = op.buffer.type
                views[op.buffer] = np.zeros(storage_shape(t), numpy_dtype(t.element_type))
            else:
                views[op.buffer] = user[op]
        elif isinstance(op, BufferOp):
            views[op.buffer] = _view(arena, op.offset.value.data, op.buffer.type)
        elif isinstance(op, WeightOp):
            views[op.buffer] = _view(blob, op.offset.value.data, op.buffer.type, op.group_count)
        elif isinstance(op, ViewOp):
            view = views[op.source].view()
            view.shape = storage_shape(op.buffer.type)  # raises rather than copy
            views[op.buffer] = view
        elif isinstance(op, SubviewOp):
            axis, start, length = op.stored_slice()
            index = (slice(None),) * axis + (slice(start, start + length),)
            views[op.buffer] = views[op.source][index]
    return views


def accesses(model: ModelOp, views: dict[SSAValue, np.ndarray], arena: np.ndarray) -> list[Access]:
    """The arena bytes each launch reads and writes, from the views it is given (weights are
    read-only and left out)."""
    base = arena.__array_interface__["data"][0]
    found = []
    launches = (op for op in model.body.block.ops if isinstance(op, LaunchOp))
    for index, op in enumerate(launches):
        for values, write in ((op.inputs, False), (op.outputs, True)):
            for value in values:
                root = root_buffer(value)
                if isinstance(root.owner, BufferOp):
                    name = root.name_hint or "?"
                    found.append(Access(index, byte_runs(views[value], base), write, name))
    return found


def _view(memory: np.ndarray, offset: int, t: MemRefType, groups: int = 1) -> np.ndarray:
    """The bytes of a buffer of type `t` at `offset`, in its stored shape."""
    dtype = numpy_dtype(t.element_type)
    shape = storage_shape(t, groups)
    count = int(np.prod(shape))
    return memory[offset : offset + count * dtype.itemsize].view(dtype).reshape(shape)
