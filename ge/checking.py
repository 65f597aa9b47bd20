"""Numeric checks between passes (the `check_each` compile option): an instrument of the pass
manager that runs every stage of a compilation on its own executor and stops at the first pass
whose outputs leave the tolerance, naming the pass, the output, the worst difference and the ops
the pass changed.

```
check = NumericCheck(precision_mode="must_keep_origin_dtype")
PassManager(pipeline(3), instruments=[check]).run(module, CompileSession(weights))
```
Each stage runs where it can: a graph on the reference interpreter, a kernel-level function with
`run_kernels`, a stream-level model on the emulator over its packed weight blob. Every stage is
compared with the input's outputs on the same seeded inputs, and a pass that left the IR and the
weights as they were is not run again. Bisection (`ge.tools.bisect`) builds on it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import SupportsFloat

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import AnyFloat, MemRefType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation
from xdsl.passes import ModulePass
from xdsl.traits import ConstantLike, IsTerminator

from ge.dialects.common import describe, value_names
from ge.dialects.kernel import KERNEL_OPS
from ge.dialects.stream import BufferOp, ModelOp, OutputsOp
from ge.passes.session import current

from .dtypes import numpy_dtype, tensor_type
from .emulator import Emulator
from .errors import CheckError, CheckFailure, CompileError, GeError, OpChanges
from .interpreter import run_function, run_kernels
from .options import PRECISION_MODES
from .weight_blob import pack_weights
from .weights import WeightStore

SEED = 0
"""The seed of the generated inputs: every compilation checks the same numbers."""

TIGHT = {64: (1e-4, 1e-5), 32: (1e-4, 1e-5), 16: (1e-2, 1e-2)}
"""(rtol, atol) of a float output by its bit width, when the precision mode keeps dtypes."""
NARROW = (0.25, 0.25)
"""(rtol, atol) of float8 and float4 outputs, a few units in the last place."""
LOOSE = 5e-2
"""rtol and atol of float outputs under a precision mode that changes dtypes on purpose."""


@dataclass
class NumericCheck:
    """The `check_each` instrument; see the module doc.

    `inputs` fixes some inputs by name (the others are seeded: floats uniform in [-1, 1], other
    dtypes zeros). With `at`, only the output of the pass at that pipeline position is checked,
    against `reference` when given (bisection runs the same pipeline many times)."""

    inputs: Mapping[str, np.ndarray] = field(default_factory=dict)
    precision_mode: str = PRECISION_MODES[0]
    at: int | None = None
    reference: list[np.ndarray] | None = None
    arguments: list[np.ndarray] = field(init=False, default_factory=list)
    """The inputs every stage runs on, in argument order (set before the first pass)."""
    checked: list[str] = field(init=False, default_factory=list)
    """The passes whose output was run and compared (a pass that changed nothing is not)."""
    _tolerances: list[tuple[float, float] | None] = field(init=False, default_factory=list)
    _names: list[str] = field(init=False, default_factory=list)
    _snapshot: _Snapshot | None = field(init=False, default=None)
    _position: int = field(init=False, default=0)
    _actions: int = field(init=False, default=0)

    def __call__(self, previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
        session = current()
        if previous is None:
            self._start(module, session.weights)
        else:
            index = self._position
            self._position += 1
            if self.at is None or index == self.at:
                self._check(previous.name, index, module, session.weights, session.actions)
        if following is not None and (self.at is None or self._position == self.at):
            self._snapshot = _Snapshot.take(module, session.weights)
        self._actions = session.actions

    def _start(self, module: ModuleOp, weights: WeightStore) -> None:
        self._position, self.checked = 0, []
        specs, outputs = _signature(module)
        self.arguments = _arguments(specs, self.inputs)
        self._names = [name for name, _ in outputs]
        self._tolerances = [tolerance(element, self.precision_mode) for _, element in outputs]
        if self.reference is None:
            try:
                self.reference = _run(module, self.arguments, weights)
            except (GeError, ValueError) as error:
                raise CompileError(f"check_each cannot run the input: {error}") from None

    def _check(self, name: str, index: int, module: ModuleOp, weights: WeightStore, actions: int) -> None:
        changes = OpChanges()
        if self._snapshot is not None:
            added, removed, modified = self._snapshot.changes(module)
            if not (added or removed or modified) and self._snapshot.same_weights(weights):
                return
            changes = _described(added, removed, modified)
        self.checked.append(name)

        def fail(problem: str, output: str | None = None, worst: float | None = None) -> CheckError:
            span = (self._actions, actions)
            return CheckError(CheckFailure(name, index, problem, output, worst, changes, span))

        assert self.reference is not None
        try:
            outputs = _run(module, self.arguments, weights)
        except (GeError, ValueError) as error:
            raise fail(f"its output does not run: {' '.join(str(error).split())}") from None
        if len(outputs) != len(self.reference):
            raise fail(f"it returns {len(outputs)} outputs, the input {len(self.reference)}")
        for output, expected, got, allowed in zip(
            self._names, self.reference, outputs, self._tolerances, strict=True
        ):
            difference = compare(expected, got, allowed)
            if difference is not None:
                problem, worst = difference
                raise fail(f"output '{output}' {problem}", output, worst)


def seeded_inputs(
    specs: Sequence[tuple[str, Sequence[int], np.dtype]], seed: int = SEED
) -> dict[str, np.ndarray]:
    """Values for inputs nobody gave, by name: floats (of any width) uniform in [-1, 1] from one
    generator of `seed`, drawn in the order of `specs`; every other dtype zeros."""
    rng = np.random.default_rng(seed)
    return {
        name: rng.uniform(-1.0, 1.0, shape).astype(dtype) if _is_float(dtype) else np.zeros(shape, dtype)
        for name, shape, dtype in specs
    }


def _is_float(dtype: np.dtype) -> bool:
    try:
        ml_dtypes.finfo(dtype)
    except ValueError:
        return False
    return True


def compare(
    expected: np.ndarray, got: np.ndarray, tolerance: tuple[float, float] | None
) -> tuple[str, float] | None:
    """None when `got` is `expected` within `tolerance` ((rtol, atol); None: exactly), else what
    differs and the largest difference. NaNs compare equal; a NaN against a number differs, and
    an infinity equals only itself."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        shown = f"{got.dtype} {list(got.shape)}, the reference {expected.dtype} {list(expected.shape)}"
        return f"is {shown}", math.inf
    if expected.dtype.kind in "USO":
        same = expected == got
        difference = np.where(same, 0.0, np.inf)
    else:
        e, g = expected.astype(np.float64), got.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            difference = np.abs(e - g)
            same = (e == g) | (np.isnan(e) & np.isnan(g))
            if tolerance is not None:
                rtol, atol = tolerance
                same |= np.isfinite(difference) & (difference <= atol + rtol * np.abs(e))
    if same.all():
        return None
    difference = np.where(same, -1.0, np.nan_to_num(difference, nan=np.inf, posinf=np.inf))
    where = np.unravel_index(int(np.argmax(difference)), difference.shape)
    worst = float(difference[where])
    within = "exactly" if tolerance is None else f"rtol {tolerance[0]:g}, atol {tolerance[1]:g}"
    return (
        f"differs: max |diff| {worst:.3g} at {[int(i) for i in where]} (expected {_shown(expected[where])}, "
        f"got {_shown(got[where])}; {int((~same).sum())} of {expected.size} elements beyond {within})",
        worst,
    )


def tolerance(element: Attribute, precision_mode: str) -> tuple[float, float] | None:
    """(rtol, atol) for an output of `element` type; None: it must be equal."""
    if not isinstance(element, AnyFloat):
        return None
    rtol, atol = TIGHT.get(element.bitwidth, NARROW)
    if precision_mode != PRECISION_MODES[0]:
        return max(rtol, LOOSE), max(atol, LOOSE)
    return rtol, atol


def _shown(value: object) -> str:
    """An element as a message shows it: numbers in 6 significant digits, strings quoted."""
    if isinstance(value, np.str_ | np.bytes_):
        return repr(value.item())[:40]
    if isinstance(value, np.bool_ | np.integer):
        return str(value.item())
    return f"{float(value):.6g}" if isinstance(value, SupportsFloat) else repr(value)[:40]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


_Fingerprint = tuple[Block | None, str, dict[str, Attribute], dict[str, Attribute], tuple, tuple]


@dataclass
class _Snapshot:
    """What a pass can change, kept by reference (cheap): each op's block, name, properties,
    attributes, operands and result types, and the weight store's arrays."""

    ops: dict[Operation, _Fingerprint]
    weights: dict[str, np.ndarray]

    @staticmethod
    def take(module: ModuleOp, weights: WeightStore) -> _Snapshot:
        ops = {op: _fingerprint(op) for op in module.walk()}
        return _Snapshot(ops, {key: weights.get(key) for key in weights})

    def changes(self, module: ModuleOp) -> tuple[list[Operation], list[Operation], list[Operation]]:
        """The ops that are new since the snapshot, those that are gone, and those modified."""
        walked = list(module.walk())
        present = set(walked)
        added = [op for op in walked if op not in self.ops]
        modified = [op for op in walked if op in self.ops and self.ops[op] != _fingerprint(op)]
        return added, [op for op in self.ops if op not in present], modified

    def same_weights(self, weights: WeightStore) -> bool:
        return len(weights) == len(self.weights) and all(
            key in weights and weights.get(key) is array for key, array in self.weights.items()
        )


def _described(added: list[Operation], removed: list[Operation], modified: list[Operation]) -> OpChanges:
    """The ops by name and location in program order, constants last (the ops that compute say
    more), terminators only when nothing else changed (they change with what they return)."""
    changed = (added, removed, modified)
    quiet = not any(not op.has_trait(IsTerminator) for ops in changed for op in ops)

    def names(ops: list[Operation]) -> tuple[str, ...]:
        kept = [op for op in ops if quiet or not op.has_trait(IsTerminator)]
        return tuple(describe(op) for op in sorted(kept, key=lambda op: op.has_trait(ConstantLike)))

    return OpChanges(*(names(ops) for ops in changed))


def _fingerprint(op: Operation) -> _Fingerprint:
    return (
        op.parent,
        op.name,
        dict(op.properties),
        dict(op.attributes),
        tuple(op.operands),
        tuple(r.type for r in op.results),
    )


def _run(module: ModuleOp, arguments: Sequence[np.ndarray], weights: WeightStore) -> list[np.ndarray]:
    """The module's outputs on its own level's executor."""
    top = list(module.body.block.ops)
    model = next((op for op in top if isinstance(op, ModelOp)), None)
    if model is not None:
        # With the race detector: a stream or memory-plan bug that task order hides is still one.
        blob = pack_weights(model, weights)
        return Emulator(module, blob, check_races=True).run(list(arguments))
    function = _function(module)
    if any(isinstance(op, KERNEL_OPS) for op in function.body.block.ops):
        return run_kernels(module, arguments, weights)
    return run_function(module, arguments, weights)


def _function(module: ModuleOp) -> FuncOp:
    funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    if len(funcs) != 1:
        raise CompileError(f"check_each runs a module of one function, found {len(funcs)}")
    return funcs[0]


def _signature(
    module: ModuleOp,
) -> tuple[list[tuple[str, tuple[int, ...], Attribute]], list[tuple[str, Attribute]]]:
    """The module's inputs (name, shape, element type) and outputs (name, element type)."""
    model = next((op for op in module.body.block.ops if isinstance(op, ModelOp)), None)
    if model is not None:
        names = [s.data for s in model.input_names.data]
        types: dict[int, MemRefType | TensorType] = {}
        for op in model.body.block.ops:
            if isinstance(op, BufferOp) and op.input is not None:
                buffer_type = op.buffer.type
                assert isinstance(buffer_type, MemRefType), f"a buffer of type {buffer_type}"
                types[op.input.value.data] = buffer_type
        last = model.body.block.last_op
        returned = [v.type for v in last.operands] if isinstance(last, OutputsOp) else []
        output_names = [s.data for s in model.output_names.data]
    else:
        function = _function(module)
        args = function.body.block.args
        names = value_names(function.arg_attrs, len(args), "input")
        types = {index: tensor_type(arg) for index, arg in enumerate(args)}
        returned = list(function.function_type.outputs.data)
        output_names = value_names(function.res_attrs, len(returned), "output")
    inputs = []
    for index, name in enumerate(names):
        t = types[index]
        shape = tuple(t.get_shape())
        if any(d < 0 for d in shape):
            raise CompileError(f"check_each needs static input shapes; input '{name}' is {t}")
        inputs.append((name, shape, t.element_type))
    outputs = []
    for name, t in zip(output_names, returned, strict=True):
        assert isinstance(t, TensorType | MemRefType), f"output '{name}' is a {t}, not a tensor or buffer"
        outputs.append((name, t.element_type))
    return inputs, outputs


def _arguments(
    specs: list[tuple[str, tuple[int, ...], Attribute]], given: Mapping[str, np.ndarray]
) -> list[np.ndarray]:
    """The given inputs, checked, and seeded ones for the others, in argument order."""
    unknown = sorted(set(given) - {name for name, _, _ in specs})
    if unknown:
        raise CompileError(
            f"the checked inputs name what the graph does not take: {', '.join(unknown)} "
            f"(it takes: {', '.join(name for name, _, _ in specs)})"
        )
    seeded = seeded_inputs([(n, shape, numpy_dtype(e)) for n, shape, e in specs if n not in given])
    arguments = []
    for name, shape, element in specs:
        dtype = numpy_dtype(element)
        if name in given:
            array = np.asarray(given[name])
            if array.shape != shape:
                raise CompileError(
                    f"checked input '{name}' has shape {list(array.shape)}, the graph takes {list(shape)}"
                )
            if not np.can_cast(array.dtype, dtype, "same_kind"):
                raise CompileError(f"checked input '{name}' is {array.dtype}, the graph takes {dtype}")
            arguments.append(np.ascontiguousarray(array, dtype))
        else:
            arguments.append(seeded[name])
    return arguments
