"""The interpreter of `ascend.graph` ops: a dispatch table from op class to a numpy function.

`evaluate` runs one op: it widens float16 and bfloat16 operands to float32 (as the hardware
accumulates in fp32) unless the op is exact in their stored type, calls the op's
implementation, checks the answer against the result type and casts it back to the stored dtype.
`evaluator` is `evaluate` for one op read once, for a caller that runs it many times (the
emulator). `run_block` runs a graph and frees each value after its last use. Implementations take
the op and its operands (`ConstOp` takes the weight store instead); a `Prepared` one reads the op
once and computes over the operands alone (`ge.semantics.base`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from ge.dialects import graph as ops
from ge.dialects.common import describe
from ge.dialects.graph import (
    ConstOp,
)
from ge.dtypes import bfloat16, numpy_dtype, tensor_type
from ge.errors import GeError, InvalidModelError, RuntimeInputError
from ge.weights import WeightStore

from . import (
    attention,
    detection,
    elementwise,
    indexing,
    linalg,
    nn,
    normalization,
    recurrent,
    reduction,
    reinterpret,
    resize,
    sampling,
    strings,
    tensor,
    unary,
)
from .base import Compute, Implementation, Prepared, prepare

_NARROW_FLOATS = (np.dtype(np.float16), bfloat16)


def constant_array(value: Attribute, type: TensorType, weights: WeightStore | None = None) -> np.ndarray:
    """The array of a constant's `value`: `dense<...>`, `dense_resource<key>` or a splat scalar.

    The result is read-only and has `type`'s dtype and shape; a splat is a broadcast view.
    """
    dtype = numpy_dtype(type.element_type)
    shape = tuple(type.get_shape())
    if not type.has_static_shape():
        raise InvalidModelError(f"constant of type {type} must have a static shape")
    if isinstance(value, FloatAttr | IntegerAttr):
        # A wrapping cast, as MLIR stores signless integers such as 255 : i8.
        return np.broadcast_to(np.array(value.value.data).astype(dtype), shape)
    if isinstance(value, DenseIntOrFPElementsAttr):
        raw = value.data.data
        # MLIR stores each i1 in a byte (0xff for true).
        array = np.frombuffer(raw, np.uint8) != 0 if dtype == np.bool_ else np.frombuffer(raw, dtype)
        if array.size == 1 and math.prod(shape) != 1:
            return np.broadcast_to(array.reshape(()), shape)
        if array.size != math.prod(shape):
            raise InvalidModelError(
                f"dense constant has {array.size} elements, {type} needs {math.prod(shape)}"
            )
        return array.reshape(shape)
    if isinstance(value, DenseResourceAttr):
        return _resource_array(value.resource_handle.data, dtype, shape, weights)
    raise InvalidModelError(f"unsupported constant value {value}")


def evaluate(
    op: Operation,
    operands: Sequence[np.ndarray],
    weights: WeightStore | None = None,
    implementation: Implementation | None = None,
) -> list[np.ndarray]:
    """The results of one graph op applied to `operands`; each has its result type's dtype.
    `implementation` computes them instead of the op's semantics (an emulated unit's own form),
    checked the same way."""
    return evaluator(op, weights, implementation)(operands)


def evaluator(
    op: Operation,
    weights: WeightStore | None = None,
    implementation: Implementation | None = None,
    compute: Compute | None = None,
) -> Callable[[Sequence[np.ndarray]], list[np.ndarray]]:
    """`evaluate` for `op`, the op read once: the returned function checks the operands, computes
    and checks the results as `evaluate` does, and reads no IR (the op's declared types are read
    here; its implementation is prepared at the first call, after that call's operand checks, or
    given prepared as `compute`; a constant is computed at the first call and kept)."""
    implementation = implementation or IMPLEMENTATIONS.get(type(op))
    if implementation is None:
        raise GeError(f"{describe(op)} has no semantics: it is not an ascend.graph op")
    name, count = describe(op), len(op.operands)
    operand_types = [
        (index, _Declared.of(operand.type), operand.type)
        for index, operand in enumerate(op.operands)
        if isinstance(operand.type, TensorType)
    ]
    stored_only = _computes_in_stored_type(op)
    result_types = []
    for result in op.results:
        declared = _Declared.of(tensor_type(result))
        wide = (
            np.dtype(np.float32) if declared.dtype in _NARROW_FLOATS and not stored_only else declared.dtype
        )
        result_types.append((declared, wide, result.type))
    if isinstance(op, ConstOp):
        constant = implementation
        compute = cache(lambda: constant(op, weights))

    def checked(operands: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(operands) != count:
            raise GeError(f"{name} takes {count} operands, got {len(operands)}")
        for index, declared, operand_type in operand_types:
            if not declared.fits(operands[index]):
                raise GeError(
                    f"{name}: operand #{index} must be {operand_type}, got {_show(operands[index])}"
                )
        nonlocal compute
        if compute is None:
            compute = prepare(implementation, op)
        values = compute(*operands) if stored_only else compute(*(widen(a) for a in operands))
        # An op with several results returns a tuple of arrays, one per result.
        values = list(values) if isinstance(values, tuple | list) else [values]
        if len(values) != len(result_types):
            raise GeError(f"{name} computed {len(values)} values for {len(result_types)} results")
        results = []
        for value, (declared, wide, result_type) in zip(values, result_types, strict=True):
            if value.dtype != wide or not declared.fits_shape(value.shape):
                raise GeError(
                    f"{name} computed {_show(value)} for a result of type {result_type} "
                    f"(computing in {wide}): the op's semantics and its shape inference disagree"
                )
            results.append(np.asarray(value.astype(declared.dtype, copy=False)))  # numpy scalars: 0-d arrays
        return results

    return checked


def run_block(
    block: Block,
    args: Sequence[np.ndarray],
    weights: WeightStore | None = None,
    run_op: Callable[[Operation, Sequence[np.ndarray], WeightStore | None], list[np.ndarray]] | None = None,
) -> list[np.ndarray]:
    """Runs the ops of `block` in order on `args`; returns the operands of its terminator.

    `run_op` computes one op (default: `evaluate`), so a level whose ops hold graph ops, such as
    kernels, runs with the same loop."""
    run_op = evaluate if run_op is None else run_op
    ops = list(block.ops)
    if not ops or not ops[-1].has_trait(IsTerminator):
        raise GeError("a block to run must end with a terminator such as 'func.return'")
    if len(args) != len(block.args):
        raise RuntimeInputError(f"the graph takes {len(block.args)} inputs, got {len(args)}")
    last_use: dict[SSAValue, int] = {}
    for index, op in enumerate(ops):
        for operand in op.operands:
            last_use[operand] = index
    env: dict[SSAValue, np.ndarray] = {}
    for index, (arg, array) in enumerate(zip(block.args, args, strict=True)):
        if isinstance(arg.type, TensorType) and not _fits(array, arg.type):
            raise RuntimeInputError(f"input #{index} must be {arg.type}, got {_show(array)}")
        if arg in last_use:
            env[arg] = array
    for index, op in enumerate(ops[:-1]):
        values = run_op(op, [env[v] for v in op.operands], weights)
        for result, value in zip(op.results, values, strict=True):
            if result in last_use:
                env[result] = value
        for operand in set(op.operands):
            if last_use[operand] == index:
                del env[operand]
    return [env[v] for v in ops[-1].operands]


def _const(op: ConstOp, weights: WeightStore | None) -> np.ndarray:
    return constant_array(op.value, op.result.type, weights)


@Prepared
def _fused(op: ops.FusedOp) -> Compute:
    """A fused op: its base op's semantics, then its epilogue region (`epilogue`). Nothing is
    computed here that the base op's and the epilogue ops' own semantics do not."""
    extras, base, finish = op.num_extras, prepare(IMPLEMENTATIONS[op.BASE], op), epilogue(op)

    def fused(*operands: np.ndarray) -> np.ndarray:
        split = len(operands) - extras
        accumulator = base(*operands[:split])
        assert isinstance(accumulator, np.ndarray), "a fused op's base op has one result"
        return finish(accumulator, operands[split:])

    return fused


def epilogue(op: ops.FusedOp) -> Callable[[np.ndarray, Sequence[np.ndarray]], np.ndarray]:
    """`f(accumulator, extras)`: the fused op's result from its base op's `accumulator` and its
    `extras`, its epilogue's ops prepared once (`evaluator`). The accumulator is rounded to its
    stored type first, as the unfused graph stores it."""
    block = op.epilogue.block
    stored = [numpy_dtype(tensor_type(arg).element_type) for arg in block.args]
    run = _block_runner(block)

    def finish(accumulator: np.ndarray, extras: Sequence[np.ndarray]) -> np.ndarray:
        with np.errstate(over="ignore"):  # rounding past a 16-bit type's range gives inf, as stored
            args = [a.astype(d, copy=False) for a, d in zip((accumulator, *extras), stored, strict=True)]
        (result,) = run(args)
        return result.astype(np.float32) if result.dtype in _NARROW_FLOATS else result

    return finish


def _block_runner(block: Block) -> Callable[[Sequence[np.ndarray]], list[np.ndarray]]:
    """A small block (an epilogue) prepared once to run many times: its ops' `evaluator`s over
    positions in a list of values (the block's arguments first). `run_block` instead walks its
    block at each call, frees each value after its last use and takes any `run_op`, for the
    interpreter's graphs run once."""
    ops_ = list(block.ops)
    position: dict[SSAValue, int] = {arg: index for index, arg in enumerate(block.args)}
    steps = []
    for op in ops_[:-1]:
        operands = tuple(position[v] for v in op.operands)
        for result in op.results:
            position[result] = len(position)
        steps.append((evaluator(op), operands))
    returned = tuple(position[v] for v in ops_[-1].operands)

    def run(args: Sequence[np.ndarray]) -> list[np.ndarray]:
        values = list(args)
        for evaluate, operands in steps:
            values.extend(evaluate([values[i] for i in operands]))
        return [values[i] for i in returned]

    return run


IMPLEMENTATIONS: dict[type[Operation], Implementation] = {
    ConstOp: _const,
    **{fused_op: _fused for fused_op in ops.FUSED_BY_BASE.values()},
    **attention.IMPLEMENTATIONS,
    **detection.IMPLEMENTATIONS,
    **elementwise.IMPLEMENTATIONS,
    **indexing.IMPLEMENTATIONS,
    **linalg.IMPLEMENTATIONS,
    **nn.IMPLEMENTATIONS,
    **recurrent.IMPLEMENTATIONS,
    **resize.IMPLEMENTATIONS,
    **sampling.IMPLEMENTATIONS,
    **reduction.IMPLEMENTATIONS,
    **reinterpret.IMPLEMENTATIONS,
    **normalization.IMPLEMENTATIONS,
    **strings.IMPLEMENTATIONS,
    **tensor.IMPLEMENTATIONS,
    **unary.IMPLEMENTATIONS,
}
"""Every `ascend.graph` op class and the function that computes it."""


def _computes_in_stored_type(op: Operation) -> bool:
    """Whether `evaluate` runs `op` on its operands' stored type: the op moves data, computes
    nothing, or is exact in that type (`ExactInStoredType`), so widening float16 and bfloat16
    operands to float32 would change nothing but cost. (`bitcast`, which moves data, must even
    see the stored bytes.) Scatters with a reduction and `unique` are widened: they add or sort
    in float32, as numpy cannot sort bfloat16 rows."""
    return any(op.has_trait(trait) for trait in _EXACT_IN_STORED_TYPE)


_EXACT_IN_STORED_TYPE = (ops.MovesData, ops.ComputesNothing, ops.ExactInStoredType)
"""The traits of ops whose reference semantics needs no widening."""


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _resource_array(
    key: str, dtype: np.dtype, shape: tuple[int, ...], weights: WeightStore | None
) -> np.ndarray:
    if weights is None:
        raise InvalidModelError(f"constant 'dense_resource<{key}>' needs a weight store")
    stored = weights.get(key)
    if stored.dtype == dtype and stored.shape == shape:
        return stored
    # The store may keep a dtype numpy lacks as raw bytes (bf16 saved as uint8).
    raw = np.ascontiguousarray(stored).reshape(-1).view(np.uint8)
    if raw.size != math.prod(shape) * dtype.itemsize:
        raise InvalidModelError(
            f"weight '{key}' holds {raw.size} bytes ({stored.dtype} {list(stored.shape)}), "
            f"but its constant of {dtype} {list(shape)} needs {math.prod(shape) * dtype.itemsize}"
        )
    return raw.view(dtype).reshape(shape)


def widen(array: np.ndarray) -> np.ndarray:
    """float16 and bfloat16 as float32, which ops compute in; other arrays as they are."""
    return array.astype(np.float32) if array.dtype in _NARROW_FLOATS else array


@dataclass(frozen=True)
class _Declared:
    """A tensor type's dtype and shape, read once; a dynamic dimension (`?`) is -1."""

    dtype: np.dtype
    shape: tuple[int, ...]

    @staticmethod
    def of(type: TensorType) -> _Declared:
        return _Declared(numpy_dtype(type.element_type), tuple(type.get_shape()))

    def fits(self, array: object) -> bool:
        """Whether `array` has this dtype and shape."""
        return isinstance(array, np.ndarray) and array.dtype == self.dtype and self.fits_shape(array.shape)

    def fits_shape(self, shape: tuple[int, ...]) -> bool:
        """Whether `shape` is this shape; a dynamic dimension matches any size."""
        return len(shape) == len(self.shape) and all(
            want < 0 or want == got for got, want in zip(shape, self.shape, strict=True)
        )


def _fits(array: np.ndarray, type: TensorType) -> bool:
    """Whether `array` has `type`'s element dtype and shape."""
    return _Declared.of(type).fits(array)


def _show(array: object) -> str:
    if isinstance(array, np.ndarray):
        return f"{array.dtype} {list(array.shape)}"
    return type(array).__name__
