"""Types and helpers shared by the semantics modules."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase
from xdsl.ir import Attribute, Operation

from ge.dialects.common import describe
from ge.errors import GeError

AttributeT = TypeVar("AttributeT", bound=Attribute)

Implementation = Callable[..., np.ndarray | tuple[np.ndarray, ...]]
"""`f(op, *operands) -> array` (a tuple of arrays for an op of several results), computed in the
compute dtype (float32 for 16-bit floats)."""

Compute = Callable[..., np.ndarray | tuple[np.ndarray, ...]]
"""An implementation for one op: `compute(*operands) -> array`, the op already read."""


class Prepared:
    """The implementation of an op whose properties or types decide what it computes, written in
    two parts, as an ONNX Runtime kernel reads its attributes when it is built: `prepare(op)`
    reads the op once (its properties, its values' dtypes) and returns the `Compute` over the
    operands alone (decorated `@Prepared`). Shapes and ranks are the operands' own, read at each
    call: the emulator calls a compute on arrays laid out otherwise than the op's types say (an
    op's 4-D window over (N * C1, C0, H, W) planes). Called like any implementation,
    `f(op, *operands)`, it prepares and computes; a caller that runs one op many times (the
    emulator's run plan) prepares it once (`prepare`) and reads no IR per run."""

    def __init__(self, prepare: Callable[[Any], Compute]):
        self.prepare = prepare
        self.__name__, self.__qualname__ = prepare.__name__, prepare.__qualname__
        self.__module__, self.__doc__ = prepare.__module__, prepare.__doc__

    def __call__(self, op: Operation, *operands: np.ndarray | None, **options: Any) -> Any:
        return self.prepare(op)(*operands, **options)


def prepare(implementation: Implementation, op: Operation) -> Compute:
    """`implementation` for `op` alone: a `Prepared` one reads `op` here, once; any other
    (a `Ufunc`, or one that reads nothing of `op` but its class) gets `op` bound."""
    if isinstance(implementation, Prepared):
        return implementation.prepare(op)
    return partial(implementation, op)


SPLATTED = (np.maximum, np.minimum, np.fmax, np.fmin)
"""Ufuncs whose numpy loops are vectorized only over operands that are both contiguous: one value
broadcast over a contiguous array (a ReLU's zero, a Clip's bounds) runs element by element, 3 to
14 times slower (float32, float64, int8, int32 over 2**16 elements) than over a contiguous array of
that value (`splat`)."""
SPLAT_FROM = 8192
"""The fewest elements from which `Ufunc` gives a `SPLATTED` ufunc a contiguous operand in place
of a broadcast value; below, finding the splat costs more than it saves."""
SPLAT_AT_MOST = 2**18
"""The most elements of a splat: a longer run of trailing dimensions keeps numpy's own loop rather
than a buffer of megabytes per value."""
_SPLATS: dict[tuple[np.dtype, bytes], np.ndarray] = {}
_SPLATS_KEPT = 16


def splat(value: np.ndarray | np.generic, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only C-contiguous array of `shape` holding the one element of `value`, in its dtype:
    a view of a buffer kept per (dtype, value) and grown to the largest size asked, so repeated
    calls allocate nothing (at most `_SPLATS_KEPT` values are kept)."""
    value = np.asarray(value)
    key = (value.dtype, value.tobytes())  # the dtype itself: ml_dtypes' 8- and 4-bit types share '<V1'
    size = math.prod(shape)
    buffer = _SPLATS.get(key)
    if buffer is None or buffer.size < size:
        if buffer is None and len(_SPLATS) >= _SPLATS_KEPT:
            del _SPLATS[next(iter(_SPLATS))]
        buffer = np.full(size, value.reshape(()), value.dtype)
        buffer.flags.writeable = False
        _SPLATS[key] = buffer
    return buffer[:size].reshape(shape)


class Ufunc:
    """The implementation of an op that is one numpy ufunc over its operands (ReLU's with a zero
    of its operand's type after it: maximum(x, 0)). Called, it computes a fresh result, as every
    implementation does, with numpy's floating-point errors ignored. `apply` computes the same
    under the caller's error state, and `into` writes the same values into a given array of the
    result's dtype (numpy's `out`): the emulator, which runs a whole model with every error
    ignored (the device raises none), calls them so that no op pays for setting the state again,
    and `into` writes a kernel's result where it is stored.

    A `SPLATTED` ufunc over a large contiguous array and one value of numpy's (an array of one
    element, of no more dimensions) takes that value as a contiguous array of its own dtype,
    shaped as the other's fewest trailing dimensions of `SPLAT_FROM` elements or more
    (`splat`), which numpy broadcasts over the rest: the same pairs and the same type promotion,
    the vectorized loop."""

    def __init__(self, ufunc: np.ufunc, with_zero: bool = False):
        self.ufunc, self.with_zero = ufunc, with_zero
        self.splats = ufunc in SPLATTED

    def __call__(self, op: Operation, *operands: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self.ufunc(*self._inputs(operands))

    def apply(self, *operands: np.ndarray) -> np.ndarray:
        return self.ufunc(*self._inputs(operands))

    def into(self, out: np.ndarray, *operands: np.ndarray) -> None:
        self.ufunc(*self._inputs(operands), out=out)

    def _inputs(self, operands: tuple[np.ndarray, ...]) -> tuple[np.ndarray | np.generic, ...]:
        """The ufunc's inputs, exactly as many as it takes (one more would be taken as its output)."""
        inputs = (*operands, operands[0].dtype.type(0)) if self.with_zero else operands
        if len(inputs) != self.ufunc.nin:
            raise ValueError(f"{self.ufunc.__name__} takes {self.ufunc.nin} inputs, got {len(inputs)}")
        if self.splats:
            return _splatted(*inputs)
        return inputs


def _splatted(a: np.ndarray | np.generic, b: np.ndarray | np.generic) -> tuple[np.ndarray | np.generic, ...]:
    """`a` and `b`, one of them as a `splat` of the other's trailing dimensions (`_trailing_block`,
    at most `SPLAT_AT_MOST` elements) if it is one numpy value and the other a C-contiguous array
    of at least `SPLAT_FROM` elements."""
    for array, value, value_first in ((a, b, False), (b, a, True)):
        if (
            isinstance(array, np.ndarray)
            and isinstance(value, np.ndarray | np.generic)
            and value.size == 1
            and value.ndim <= array.ndim
            and array.size >= SPLAT_FROM
            and array.flags.c_contiguous
        ):
            block = _trailing_block(array.shape)
            if math.prod(block) > SPLAT_AT_MOST:
                break
            full = splat(value, block)  # numpy broadcasts it over the leading dimensions
            return (full, array) if value_first else (array, full)
    return a, b


def _trailing_block(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The fewest trailing dimensions of `shape` holding at least `SPLAT_FROM` elements: a splat
    of that shape gives numpy's loop inner runs that long while it stays small enough to be read
    from cache at each run."""
    size = 1
    for start in range(len(shape) - 1, -1, -1):
        size *= shape[start]
        if size >= SPLAT_FROM:
            return shape[start:]
    return shape


Product = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""How an op's matrix products are computed, `(..., M, K) x (..., K, N) -> (..., M, N)` with numpy's
batch broadcasting: numpy's `matmul` by default; the emulator passes the cube's (k-steps in fp32)."""


def mean_over(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """`np.mean(x, axes, keepdims=True)`, for floats computed as numpy's own does (the sum in x's
    dtype, fp16's in fp32, divided in place by the count as an intp; so bit for bit the same)
    without its Python wrapper: 4.6 against 8.3 us over a 32 x 64 array."""
    axes = tuple(axes)
    try:
        count = math.prod(x.shape[a] for a in axes)
    except IndexError:  # an axis out of range: numpy's own error
        count = 0
    if x.dtype.kind != "f" or count == 0 or x.ndim == 0:
        return np.mean(x, axis=axes, keepdims=True)
    half = x.dtype == np.float16
    total = np.add.reduce(x, axis=axes, dtype=np.float32 if half else None, keepdims=True)
    np.true_divide(total, np.intp(count), out=total, casting="unsafe")
    return total.astype(np.float16) if half else total


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
