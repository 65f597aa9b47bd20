"""Types and helpers shared by the semantics modules."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase
from xdsl.ir import Attribute, Operation

from ge.dialects.common import describe
from ge.errors import GeError

AttributeT = TypeVar("AttributeT", bound=Attribute)

Implementation = Callable[..., np.ndarray | tuple[np.ndarray, ...]]
"""`f(op, *operands) -> array` (a tuple of arrays for an op of several results), computed in the
compute dtype (float32 for 16-bit floats)."""


class Ufunc:
    """The implementation of an op that is one numpy ufunc over its operands (ReLU's with a zero
    of its operand's type after it: maximum(x, 0)). Called, it computes a fresh result, as every
    implementation does; `into` writes the same values into a given array of the result's dtype
    (numpy's `out`), which lets the emulator write a kernel's result where it is stored."""

    def __init__(self, ufunc: np.ufunc, with_zero: bool = False):
        self.ufunc, self.with_zero = ufunc, with_zero

    def __call__(self, op: Operation, *operands: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self.ufunc(*self._inputs(operands))

    def into(self, out: np.ndarray, *operands: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            self.ufunc(*self._inputs(operands), out=out)

    def _inputs(self, operands: tuple[np.ndarray, ...]) -> tuple[np.ndarray | np.generic, ...]:
        """The ufunc's inputs, exactly as many as it takes (one more would be taken as its output)."""
        inputs = (*operands, operands[0].dtype.type(0)) if self.with_zero else operands
        if len(inputs) != self.ufunc.nin:
            raise ValueError(f"{self.ufunc.__name__} takes {self.ufunc.nin} inputs, got {len(inputs)}")
        return inputs


Product = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""How an op's matrix products are computed, `(..., M, K) x (..., K, N) -> (..., M, N)` with numpy's
batch broadcasting: numpy's `matmul` by default; the emulator passes the cube's (k-steps in fp32)."""


def property_of(op: Operation, name: str, kind: type[AttributeT]) -> AttributeT | None:
    """The op's property `name` (None when absent), of the attribute class its definition gives."""
    value = op.properties.get(name)
    if value is not None and not isinstance(value, kind):
        raise GeError(f"{describe(op)}: property '{name}' is {value}, not a {kind.__name__}")
    return value


def float_values(op: Operation, name: str) -> list[float] | None:
    """The values of the op's dense-array property `name` as floats (None when absent)."""
    array = property_of(op, name, DenseArrayBase)
    if array is None:
        return None
    values = array.get_values()  # pyright: ignore[reportAttributeAccessIssue]  # typed per element kind only
    return [float(v) for v in values]
