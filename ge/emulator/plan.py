"""The run plan of a stream-level model: everything a run needs, decided once when it is loaded.

`RunPlan` allocates (and zeroes) the arena once and binds every buffer, weight, view and subview
as a numpy view of the arena or the weight blob. Each launch becomes a prepared callable over
those views (`ge.emulator.kernels.PreparedKernel`: the kernel body as a list of steps), so a run
binds only the model's inputs and outputs and calls the launches in task order: no IR is walked
and no value is looked up by its SSA name.

A buffer bound to a model input is the caller's array, read in place (no kernel may write it:
checked here). A buffer bound to a model output is a fresh array per run that the kernels write
into and that is handed to the caller as it is, so outputs never alias the arena the next run
overwrites and cost no copy at the end. Views of bound buffers are rebuilt per run from a
prepared function of the bound array. Task order respects every event (checked here: a wait
follows its record), so launches run one after the other; a buffer the memory planner reuses
across launches is therefore written only after its last reader ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import SSAValue

from ge.dialects.common import describe
from ge.dialects.formats import storage_shape
from ge.dialects.stream import (
    BufferOp,
    EventRecordOp,
    EventWaitOp,
    KernelFuncOp,
    LaunchOp,
    ModelOp,
    OutputsOp,
    SubviewOp,
    ViewOp,
    WeightOp,
    root_buffer,
)
from ge.dtypes import numpy_dtype
from ge.errors import GeError
from ge.layout import byte_runs, reshaped_view

from .kernels import PreparedKernel
from .timeline import Access

Derive = Callable[[np.ndarray], np.ndarray]
"""A view of a bound buffer (a model input or output) computed from that buffer's array."""


class RunPlan:
    """One model's arena, bound views and prepared launches. `run` may be called many times,
    one call at a time: runs share the arena, and the convolutions their kept loads
    (`ge.emulator.cube_loads.Kept`); separate plans share nothing. `arena` may be given to share
    one arena among models that never run at once (the gears of one model); it must hold
    `model.arena_size`."""

    def __init__(
        self,
        model: ModelOp,
        blob: np.ndarray,
        kernels: dict[str, KernelFuncOp],
        arena: np.ndarray | None = None,
    ):
        self.model = model
        size = model.arena_size.value.data
        if arena is None:
            try:
                arena = np.zeros(size, np.uint8)
            except MemoryError:
                raise GeError(
                    f"the model's arena of {size:,} bytes does not fit in this machine's memory"
                ) from None
        elif arena.size < size:
            raise GeError(f"an arena of {arena.size:,} bytes is given, the model needs {size:,}")
        self.arena = arena
        self.views = bind(model, arena, blob)
        """Every value's array (bound buffers as placeholders): the race detector reads it."""
        self.kernels = {name: PreparedKernel(kernel) for name, kernel in kernels.items()}
        self._inputs: list[tuple[int, np.dtype, tuple[int, ...]]] = []
        self._outputs: list[tuple[np.dtype, tuple[int, ...]]] = []
        self._derived: dict[SSAValue, tuple[int, Derive]] = {}
        self._patches: list[tuple[list[np.ndarray], int, int, Derive]] = []
        self._launches: list[Callable[[], None]] = []
        self._results: list[Callable[[list[np.ndarray]], np.ndarray]] = []
        self._prepare(model)

    @property
    def launch_count(self) -> int:
        return len(self._launches)

    def run(self, inputs: Sequence[np.ndarray], launch_times: list[float] | None = None) -> list[np.ndarray]:
        """The model's outputs on `inputs` (in the model's input order); `launch_times`, if given,
        receives each launch's wall time in seconds, in task order."""
        bound = [_input(inputs, *spec) for spec in self._inputs]
        bound += [np.zeros(shape, dtype) for dtype, shape in self._outputs]
        for target, index, root, derive in self._patches:
            target[index] = derive(bound[root])
        # The device raises no floating-point error (an overflow is inf, 0 / 0 NaN, as stored):
        # numpy's error state is set once for the run: no cube step or ufunc op sets it again.
        with np.errstate(all="ignore"):
            if launch_times is None:
                for launch in self._launches:
                    launch()
            else:
                clock = time.perf_counter
                for launch in self._launches:
                    began = clock()
                    launch()
                    launch_times.append(clock() - began)
        return [result(bound) for result in self._results]

    def accesses(self) -> list[Access]:
        """The arena bytes each launch reads and writes (for `find_races`)."""
        return accesses(self.model, self.views, self.arena)

    # ----------------------------------------------------------------------------------------

    def _prepare(self, model: ModelOp) -> None:
        recorded: set[int] = set()
        for op in model.body.block.ops:
            if isinstance(op, BufferOp) and op.bound:
                t = op.buffer.type
                spec = (numpy_dtype(t.element_type), storage_shape(t))
                root = len(self._inputs) + len(self._outputs)
                if op.input is not None:
                    self._inputs.append((op.input.value.data, *spec))
                else:
                    self._outputs.append(spec)
                self._derived[op.buffer] = (root, _same)
            elif isinstance(op, ViewOp | SubviewOp) and op.source in self._derived:
                root, parent = self._derived[op.source]
                self._derived[op.buffer] = (root, _derive(op, parent))
            elif isinstance(op, LaunchOp):
                self._prepare_launch(op)
            elif isinstance(op, EventRecordOp):
                recorded.add(op.event.value.data)
            elif isinstance(op, EventWaitOp) and op.event.value.data not in recorded:
                raise GeError(f"{describe(op)}: event {op.event.value.data} was never recorded")
            elif isinstance(op, OutputsOp):
                self._prepare_outputs(op)
                return
        raise GeError("the model has no 'ascend.stream.outputs'")

    def _prepare_launch(self, op: LaunchOp) -> None:
        name = op.kernel.root_reference.data
        kernel = self.kernels.get(name)
        if kernel is None:
            raise GeError(f"{describe(op)} launches @{name}, which the model does not define")
        for value in op.outputs:
            owner = root_buffer(value).owner
            if isinstance(owner, BufferOp) and owner.input is not None:
                raise GeError(
                    f"{describe(op)} writes model input {owner.input.value.data}, the caller's memory"
                )
        arrays: list[list[np.ndarray]] = []
        for values in (op.inputs, op.outputs):
            arrays.append([self.views[v] for v in values])
            for index, value in enumerate(values):
                if value in self._derived:
                    self._patches.append((arrays[-1], index, *self._derived[value]))
        self._launches.append(partial(kernel, arrays[0], arrays[1], self._apart(op)))

    def _apart(self, op: LaunchOp) -> tuple[bool, ...]:
        """For each output of launch `op`, whether it shares no byte with any of its inputs, so a
        kernel may write it while still reading them. A buffer bound to a model input or output
        is the caller's array or a fresh one per run, apart from every other buffer."""

        def separate(value: SSAValue, output: SSAValue) -> bool:
            if root_buffer(value) is root_buffer(output):
                return False
            if _bound(value) or _bound(output):
                return True
            return not np.may_share_memory(self.views[value], self.views[output])

        return tuple(all(separate(value, output) for value in op.inputs) for output in op.outputs)

    def _prepare_outputs(self, op: OutputsOp) -> None:
        # Outputs bound to the caller's memory are handed over as they are; the others (an input,
        # a weight, an arena value, a value returned twice) are copied out.
        handed: set[SSAValue] = set()
        for value in op.values:
            root = root_buffer(value)
            owner = root.owner
            if value in self._derived:
                index, derive = self._derived[value]
                keep = isinstance(owner, BufferOp) and owner.input is None and root not in handed
                handed.add(root)
                self._results.append(partial(_bound_result, index, derive, keep))
            else:
                self._results.append(partial(_copied_result, self.views[value]))


def bind(model: ModelOp, arena: np.ndarray, blob: np.ndarray) -> dict[SSAValue, np.ndarray]:
    """Every buffer, weight, view and subview of `model` as a numpy view of `arena` or `blob`
    (a buffer bound to an input or output as a zero placeholder of its shape); weights read-only."""
    views: dict[SSAValue, np.ndarray] = {}
    for op in model.body.block.ops:
        if isinstance(op, BufferOp) and op.bound:
            t = op.buffer.type
            views[op.buffer] = np.zeros(storage_shape(t), numpy_dtype(t.element_type))
        elif isinstance(op, BufferOp):
            views[op.buffer] = _view(arena, op.offset.value.data, op.buffer.type)
        elif isinstance(op, WeightOp):
            weight = _view(blob, op.offset.value.data, op.buffer.type, op.group_count)
            weight.flags.writeable = False  # no kernel writes a weight; the cube keeps its loaded form
            views[op.buffer] = weight
        elif isinstance(op, ViewOp | SubviewOp):
            views[op.buffer] = _derive(op, _same)(views[op.source])
    return views


def accesses(model: ModelOp, views: dict[SSAValue, np.ndarray], arena: np.ndarray) -> list[Access]:
    """The arena bytes each launch reads and writes, from the views it is given (weights are
    read-only and left out; a bound buffer's placeholder stands for the caller's memory)."""
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


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _same(array: np.ndarray) -> np.ndarray:
    return array


def _bound(value: SSAValue) -> bool:
    """Whether `value` is (a view of) a buffer bound to a model input or output."""
    owner = root_buffer(value).owner
    return isinstance(owner, BufferOp) and owner.bound


def _derive(op: ViewOp | SubviewOp, parent: Derive) -> Derive:
    """The function giving `op`'s view from its root's array, through `parent` (the source's)."""
    if isinstance(op, ViewOp):
        shape = storage_shape(op.buffer.type)

        def view(array: np.ndarray) -> np.ndarray:
            return reshaped_view(parent(array), shape)  # raises rather than copy

        return view
    axis, start, length = op.stored_slice()
    index = (slice(None),) * axis + (slice(start, start + length),)
    return lambda array: parent(array)[index]


def _bound_result(index: int, derive: Derive, keep: bool, bound: list[np.ndarray]) -> np.ndarray:
    array = derive(bound[index])
    return array if keep else array.copy()


def _copied_result(array: np.ndarray, bound: list[np.ndarray]) -> np.ndarray:
    return array.copy()


def _view(memory: np.ndarray, offset: int, t: MemRefType, groups: int = 1) -> np.ndarray:
    """The bytes of a buffer of type `t` at `offset`, in its stored shape."""
    dtype = numpy_dtype(t.element_type)
    shape = storage_shape(t, groups)
    count = int(np.prod(shape))
    return memory[offset : offset + count * dtype.itemsize].view(dtype).reshape(shape)


def _input(
    inputs: Sequence[np.ndarray], position: int, dtype: np.dtype, shape: tuple[int, ...]
) -> np.ndarray:
    given = np.asarray(inputs[position])
    if given.dtype != dtype or given.shape != shape:
        raise GeError(
            f"input {position} must be {dtype} {list(shape)}, got {given.dtype} {list(given.shape)}"
        )
    array = np.require(given, requirements="C")  # read in place; keeps 0-d arrays 0-d
    # A read-only array of the caller's may change between runs (through another view of its
    # memory): a new view object per run, so no layout kept for a read-only weight (known by
    # its identity: `LoadedForm`) is taken for it.
    return array if array.flags.writeable else array.view()
