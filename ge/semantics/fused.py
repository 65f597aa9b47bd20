"""Fused ops: the base op's semantics, then the epilogue region run with `run_block`.

Nothing is computed here that is not computed by the base op's and the epilogue ops' own
semantics; the accumulator is rounded to its stored type before the epilogue, as the unfused
graph stores it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ge.dialects import graph as ops
from ge.dtypes import bfloat16, numpy_dtype

from .base import Implementation

_NARROW = (np.dtype(np.float16), bfloat16)


def _fused(op: ops.FusedOp, *operands: np.ndarray) -> np.ndarray:
    from .core import IMPLEMENTATIONS  # core gathers this module's table

    split = len(operands) - op.num_extras
    accumulator = IMPLEMENTATIONS[op.BASE](op, *operands[:split])
    return epilogue(op, accumulator, operands[split:])


def epilogue(op: ops.FusedOp, accumulator: np.ndarray, extras: Sequence[np.ndarray]) -> np.ndarray:
    """The fused op's result from its base op's `accumulator` and its `extras`."""
    from .core import run_block

    block = op.epilogue.block
    args = [accumulator, *extras]
    stored = [
        a.astype(numpy_dtype(arg.type.element_type), copy=False)
        for a, arg in zip(args, block.args, strict=True)
    ]
    (result,) = run_block(block, stored)
    return result.astype(np.float32) if result.dtype in _NARROW else result


IMPLEMENTATIONS: dict[type, Implementation] = {fused: _fused for fused in ops.FUSED_BY_BASE.values()}

IN_STORED_DTYPE: tuple[type, ...] = ()
