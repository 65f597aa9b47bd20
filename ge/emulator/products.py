"""Cube ops made of several matrix products, or of one with vector work around it: attention,
recurrent layers (RNN, GRU, LSTM), transposed convolutions and 3-D convolutions.

Each of these ops is written in `ge.semantics` with its matrix products as a parameter
(`ge.semantics.base.Product`). Run on the emulated cube, those products are `CubeProduct`: the
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

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation

from ge.dialects import graph
from ge.dtypes import numpy_dtype, tensor_type
from ge.semantics import IMPLEMENTATIONS, widen
from ge.semantics.base import prepare

from . import cube
from .cube import FLOAT32


class OnCube:
    """One op with its matrix products on the cube, prepared once: its semantics' implementation
    (a fused op's base op's), its results' dtypes and its `CubeProduct` (`k_step` elements of K
    per step; None: all of K in one step).

    Called with the op's logical operand values, it gives the op's results, each in its result
    type's dtype; a fused op's base result in fp32, before its epilogue. None when the products'
    operands are not floats (the cube's integer path takes convolutions and matrix products
    only): the caller runs the reference semantics instead."""

    def __init__(self, op: Operation, k_step: int | None):
        self.op, self.fused = op, isinstance(op, graph.FusedOp)
        self.compute = prepare(IMPLEMENTATIONS[op.BASE if isinstance(op, graph.FusedOp) else type(op)], op)
        self.dtypes = tuple(numpy_dtype(tensor_type(result).element_type) for result in op.results)
        self.product = CubeProduct(k_step)

    def __call__(self, operands: Sequence[np.ndarray]) -> np.ndarray | tuple[np.ndarray, ...] | None:
        arrays = [widen(a) for a in operands]  # fp16 and bf16 as fp32, exactly
        if any(a.dtype.kind != "f" for a in arrays[:2]):
            return None
        values = self.compute(*arrays, product=self.product)
        if self.fused:  # the base op's result in fp32: the kernel applies the epilogue
            return values
        values = values if isinstance(values, tuple | list) else (values,)
        pairs = zip(values, self.dtypes, strict=True)
        return tuple(np.asarray(value).astype(dtype, copy=False) for value, dtype in pairs)


class CubeProduct:
    """The cube's matrix product `(..., M, K) x (..., K, N)` with numpy's batch broadcasting:
    operands as fp32, `k_step` elements of K per step, summed into an fp32 accumulator, as
    `cube.accumulate` sums them."""

    def __init__(self, k_step: int | None):
        self.k_step = k_step
        # The k-steps per K: a recurrent layer asks the same shapes at every time step, and a
        # kernel's step keeps its `CubeProduct` from launch to launch.
        self._steps: dict[int, list[slice]] = {}

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        rows, columns = a.astype(FLOAT32, copy=False), b.astype(FLOAT32, copy=False)
        if rows.ndim > 2 and columns.ndim == 2:  # a stack of matrices times one: one product
            flat = rows.reshape(math.prod(rows.shape[:-1]), rows.shape[-1])
            return self._product(flat, columns).reshape(*rows.shape[:-1], columns.shape[-1])
        return self._product(rows, columns)

    def _product(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        k = rows.shape[-1]
        steps = self._steps.get(k)
        if steps is None:
            steps = [slice(start, start + width) for start, width in cube.k_steps(k, self.k_step)]
            self._steps[k] = steps
        return cube.accumulate(rows, columns, steps, FLOAT32)
