"""A fused op's epilogue region prepared once as steps, so a kernel launch walks no IR.

`ge.semantics.epilogue` runs the region with `run_block` (an IR walk and a checked `evaluate` per
op). `PreparedEpilogue` resolves each op's implementation, operand slots, widening and result
dtypes once, when the kernel is prepared; its first call runs the reference `epilogue`, which
checks every op's answer against its result type, and later calls run the prepared steps, which
compute the same values (the same implementations on the same widened operands, rounded to the
same stored types).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from ge.dialects import graph
from ge.dtypes import bfloat16, numpy_dtype, tensor_type
from ge.errors import GeError
from ge.semantics import IMPLEMENTATIONS, evaluate
from ge.semantics.core import _computes_in_stored_type as computes_in_stored_type  # pyright: ignore[reportPrivateUsage] the rule evaluate follows
from ge.semantics.core import epilogue

_NARROW_FLOATS = (np.dtype(np.float16), bfloat16)
"""The float types ops compute in float32 (`ge.semantics.widen`)."""


class PreparedEpilogue:
    """`epilogue(op, accumulator, extras)` of one fused op, prepared once as steps over slots
    (the region's arguments, then each op's results)."""

    def __init__(self, op: graph.FusedOp):
        self._op = op
        block = op.epilogue.block
        ops = list(block.ops)
        self._arg_dtypes = [numpy_dtype(tensor_type(arg).element_type) for arg in block.args]
        slots: dict[SSAValue, int] = {arg: i for i, arg in enumerate(block.args)}
        self._template: list[Any] = [None] * len(block.args)
        self._steps: list[Callable[[list[Any]], None]] = []
        for inner in ops[:-1]:
            if isinstance(inner, graph.ConstOp):
                (value,) = evaluate(inner, [])  # a constant is computed once
                slots[inner.results[0]] = len(self._template)
                self._template.append(value)
                continue
            implementation = IMPLEMENTATIONS.get(type(inner))
            if implementation is None:
                raise GeError(f"{inner.name} in an epilogue has no semantics: it is not an ascend.graph op")
            operands = tuple(slots[v] for v in inner.operands)
            results = []
            for result in inner.results:
                slots[result] = len(self._template)
                self._template.append(None)
                results.append(slots[result])
            stored_only = computes_in_stored_type(inner)
            widened = tuple(
                not stored_only and numpy_dtype(tensor_type(v).element_type) in _NARROW_FLOATS
                for v in inner.operands
            )
            dtypes = tuple(numpy_dtype(tensor_type(r).element_type) for r in inner.results)
            self._steps.append(_Step(implementation, inner, operands, widened, tuple(results), dtypes))
        (returned,) = ops[-1].operands
        self._result = slots[returned]
        self._checked = False

    def __call__(self, accumulator: np.ndarray, extras: Sequence[np.ndarray]) -> np.ndarray:
        if not self._checked:
            self._checked = True
            return epilogue(self._op, accumulator, extras)  # the first call checks every op's answer
        slots = self._template.copy()
        with np.errstate(over="ignore"):  # rounding past a 16-bit type's range gives inf, as stored
            arrays = (accumulator, *extras)
            for index, (array, dtype) in enumerate(zip(arrays, self._arg_dtypes, strict=True)):
                slots[index] = array.astype(dtype, copy=False)
        for step in self._steps:
            step(slots)
        result = slots[self._result]
        return result.astype(np.float32) if result.dtype in _NARROW_FLOATS else result


class _Step:
    """One epilogue op: its implementation on its operands' slots (narrow floats widened to
    float32, as `evaluate` does), each result rounded to its stored dtype."""

    def __init__(
        self,
        implementation: Callable,
        op: Any,
        operands: tuple[int, ...],
        widened: tuple[bool, ...],
        results: tuple[int, ...],
        dtypes: tuple[np.dtype, ...],
    ):
        self.implementation, self.op, self.operands = implementation, op, operands
        self.widened, self.results, self.dtypes = widened, results, dtypes

    def __call__(self, slots: list[Any]) -> None:
        arrays = [
            slots[i].astype(np.float32) if wide else slots[i]
            for i, wide in zip(self.operands, self.widened, strict=True)
        ]
        values = self.implementation(self.op, *arrays)
        values = values if isinstance(values, tuple | list) else (values,)
        for index, value, dtype in zip(self.results, values, self.dtypes, strict=True):
            slots[index] = np.asarray(value.astype(dtype, copy=False))
