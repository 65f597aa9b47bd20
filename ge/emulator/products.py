"""Cube ops made of several matrix products, or of one with vector work around it: attention,
recurrent layers (RNN, GRU, LSTM), transposed convolutions and 3-D convolutions.

Each of these ops is written in `ge.semantics` with its matrix products as a parameter
(`ge.semantics.base.Product`). Run on the emulated cube, those products are `cube_product`: the
operands widened to fp32 (exact for fp16 and bf16), K contracted `k_step` elements at a time, each
step's BLAS product added into an fp32 accumulator (`ge.emulator.cube.accumulate`), as
`cube.matmul` does. What lies between the products runs on the vector unit in fp32, as the
semantics write it: attention's scale, soft cap, mask and softmax; a recurrent layer's bias, gates
and state updates; a transposed convolution's col2im scatter-add; a convolution's bias.

The kernel's tiling is chosen for the op's first product (`graph.matrix_product`), so every
product of the op takes that tiling's k per step. These ops keep framework formats (ND, NCHW), so
their K is contracted in its logical order (a convolution's (channel, window) order), not in
FRACTAL_Z's C0-padded one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation

from ge.dialects import graph
from ge.dtypes import numpy_dtype, tensor_type
from ge.semantics import IMPLEMENTATIONS, widen
from ge.semantics.base import Product

from . import cube

FLOAT32 = np.dtype(np.float32)


def on_cube(
    op: Operation, operands: Sequence[np.ndarray], k_step: int | None
) -> np.ndarray | tuple[np.ndarray, ...] | None:
    """`op`'s results, each in its result type's dtype, with the op's matrix products run on the
    cube `k_step` elements of K at a time (None: all of K in one step).

    `operands` are the op's logical operand values. None when the products' operands are not
    floats (the cube's integer path takes convolutions and matrix products only): the caller runs
    the reference semantics instead. A fused op gives its base op's result in fp32, before its
    epilogue."""
    arrays = [widen(a) for a in operands]  # fp16 and bf16 as fp32, exactly
    if any(a.dtype.kind != "f" for a in arrays[:2]):
        return None
    if isinstance(op, graph.FusedOp):  # the base op's result, in fp32: the caller applies the epilogue
        return IMPLEMENTATIONS[op.BASE](op, *arrays, product=cube_product(k_step))
    values = IMPLEMENTATIONS[type(op)](op, *arrays, product=cube_product(k_step))
    values = values if isinstance(values, tuple | list) else (values,)
    return tuple(
        np.asarray(value).astype(numpy_dtype(tensor_type(result).element_type), copy=False)
        for value, result in zip(values, op.results, strict=True)
    )


def cube_product(k_step: int | None) -> Product:
    """The cube's matrix product `(..., M, K) x (..., K, N)` with numpy's batch broadcasting:
    operands as fp32, `k_step` elements of K per step, summed into an fp32 accumulator."""

    def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        rows, columns = a.astype(FLOAT32, copy=False), b.astype(FLOAT32, copy=False)
        steps = [slice(start, start + width) for start, width in cube.k_steps(rows.shape[-1], k_step)]
        return cube.accumulate(rows, columns, steps, FLOAT32)

    return product
