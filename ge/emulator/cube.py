"""The cube unit's arithmetic: convolution and matrix product on fractal tiles, accumulated as in L0C.

A second implementation beside `ge.semantics`, working on device-format data: the left operand is cut
into 16 x C0 fractals (L0A), the right one into C0 x 16 fractals (L0B), and the products are summed
k-step by k-step, as the compiled tiling contracts K (`k_step` elements at a time, `ceil(K / k_step)`
steps; the whole K in one step without a tiling). Each step is one BLAS product over every (m, n) tile
and block at once, as the kernel's tiles and cores compute it in parallel, added into an fp32
accumulator (int32 for 8-bit integer inputs). fp16 and bf16 inputs are widened to fp32 first, which is
exact; fp32 inputs stay fp32. 8-bit integers multiply in fp32 too: a step's partial sums are exact
integers while k_step x max|a| x max|b| < 2**24, and are then added into the int32 accumulator.
How many threads a step's product runs on is BLAS's choice per call (numpy's bundled OpenBLAS
runs a small product, up to about 2**18 multiply-adds, on one thread, a larger one on more).
Like BLAS's blocking, the thread count may change the order a step's K terms are added in (within
that step's fp32 rounding), never which terms are summed or the order of the steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ge.dialects.formats import FRACTAL
from ge.dtypes import bfloat16

from . import blas

_FLOAT_INPUTS = (np.dtype(np.float16), bfloat16, np.dtype(np.float32))
_INTEGER_INPUTS = (np.dtype(np.int8), np.dtype(np.uint8))
FLOAT32 = np.dtype(np.float32)
EXACT_FP32_INTEGER = 2**24
"""Integers up to this magnitude are exact in fp32, so are the sums of a k-step that stay below it."""
DIRECT_PRODUCTS = 2**16
"""Multiply-adds in a product's first k-step from which its steps (two or more, fp32, 2-D, K
ranges) are sgemm calls writing and adding into L0C (`ge.emulator.blas.KSteps`); below, OpenBLAS's
fixed cost per call (2 to 3 us) exceeds numpy's product and add (a 1 x 64 x 256 LSTM step takes
3.5 us in numpy, 6.7 us in sgemm)."""


def matmul(a: np.ndarray, b: np.ndarray, **planning: Any) -> np.ndarray:
    """The accumulator of the product (..., M, K) x (..., K, N) run on the cube: a
    `MatrixProduct` planned for `a`'s and `b`'s dtypes and `planning` (its keywords), run once."""
    return MatrixProduct(a.dtype, b.dtype, **planning)(a, b)


class MatrixProduct:
    """A matrix product (..., M, K) x (..., K, N) on the cube, planned once for its operands'
    dtypes, formats and sizes: the compute and accumulator dtypes, the operands' matrices, each
    read-only operand's loaded form (`LoadedForm`) and the k-steps (`k_step` elements of K each, the
    kernel's `tiling` k; None: all of K at once). Calling it runs them.

    `a` is logical (..., M, K), or (..., K, M) when `trans_a`, if `a_format` is "ND", else the
    FRACTAL_NZ form of that matrix; `b` likewise with (..., K, N) / (..., N, K) when `trans_b`. Batch
    dims broadcast as in numpy."""

    def __init__(
        self,
        a_dtype: np.dtype,
        b_dtype: np.dtype,
        *,
        a_format: str,
        b_format: str,
        m: int,
        k: int,
        n: int,
        trans_a: bool = False,
        trans_b: bool = False,
        k_step: int | None = None,
    ):
        self.compute, self.accumulator = accumulation_dtypes(np.dtype(a_dtype), np.dtype(b_dtype))
        self.largest = largest_product(a_dtype, b_dtype) if self.accumulator == np.int32 else 1
        self.trans_a, self.trans_b = trans_a, trans_b
        self.a = (a_format, (k, m) if trans_a else (m, k), LoadedForm())
        self.b = (b_format, (n, k) if trans_b else (k, n), LoadedForm())
        self.steps = [slice(start, start + width) for start, width in k_steps(k, k_step)]

    def __call__(self, a: np.ndarray, b: np.ndarray, into: np.ndarray | None = None) -> np.ndarray:
        """The logical accumulator (..., M, N) in float32 (int32 for 8-bit integers), summed in
        `into` if given (a C-contiguous array of that shape and dtype)."""
        left = _logical_operand(a, *self.a, "a")
        right = _logical_operand(b, *self.b, "b")
        if self.trans_a:
            left = left.swapaxes(-1, -2)
        if self.trans_b:
            right = right.swapaxes(-1, -2)
        # The fractals' padded rows and columns hold zeros whose products the store drops, so the
        # accumulator's real (M, N) is computed from the real rows and columns alone.
        rows, columns = left.astype(self.compute, copy=False), right.astype(self.compute, copy=False)
        return accumulate(rows, columns, self.steps, self.accumulator, self.largest, into=into)


def k_steps(k_total: int, k_step: int | None) -> list[tuple[int, int]]:
    """(first K element, K elements) of each step contracting `k_total` elements `k_step` at a time:
    ceil(k_total / k_step) steps, the last one short; one step of everything when `k_step` is None."""
    if k_step is not None and k_step < 1:
        raise ValueError(f"a k-step must contract at least one element, got {k_step}")
    if k_step is None or k_step >= k_total:
        return [(0, k_total)]
    return [(start, min(k_step, k_total - start)) for start in range(0, k_total, k_step)]


def accumulate(
    rows: np.ndarray,
    columns: np.ndarray,
    steps: Sequence[slice | np.ndarray],
    accumulator: np.dtype,
    largest_product: int = 1,
    into: np.ndarray | None = None,
) -> np.ndarray:
    """sum over `steps` of rows[..., step] @ columns[..., step, :]: one BLAS product per k-step over
    the whole (..., M, N) (`step_product`), each added into the `accumulator` (float32 or int32) in
    step order.

    `rows` and `columns` hold fp32 values (8-bit integers widened exactly); a step selects its K
    columns of `rows` and rows of `columns`. An integer step's fp32 sums are exact while its K times
    `largest_product` (2**14 for int8, 255**2 for uint8) stays below 2**24, which every tiling
    the compiler chooses (k <= 256) satisfies; a wider step (an untiled kernel) is contracted in
    exact pieces, which gives the same integers. The int32 accumulator wraps as the hardware's does.
    `into`, if given, is the accumulator: a C-contiguous array of the product's shape and the
    accumulator dtype.
    """
    if (
        into is None
        and rows.ndim == 2 == columns.ndim
        and accumulator == FLOAT32 == rows.dtype == columns.dtype
    ):
        if steps and not _sgemm_steps(rows, columns, steps):
            # numpy's matmul, step by step, with none of the checks below, which cost more than
            # such a product (an LSTM's time step): the first step's product is the accumulator.
            total = step_product(rows, columns, steps[0], None, False)
            for step in steps[1:]:
                step_product(rows, columns, step, total, True)
            return total
    if accumulator == np.int32:
        exact = max(1, (EXACT_FP32_INTEGER - 1) // largest_product)
        steps = [piece for step in steps for piece in _pieces(step, exact)]
    batch = rows.shape[:-2]
    if columns.ndim > 2 and columns.shape[:-2] != batch:
        batch = np.broadcast_shapes(batch, columns.shape[:-2])
    m, n, count = rows.shape[-2], columns.shape[-1], math.prod(batch) if batch else 1
    if into is not None and (
        into.shape != (*batch, m, n) or into.dtype != accumulator or not into.flags.c_contiguous
    ):
        layout = "C-contiguous" if into.flags.c_contiguous else "strided"
        raise ValueError(
            f"accumulate: a C-contiguous {accumulator} accumulator of {(*batch, m, n)}, "
            f"not a {layout} {into.dtype} {into.shape}"
        )
    total = np.empty((*batch, m, n), accumulator) if into is None else into
    if not steps:
        total[...] = 0
        return total
    out = total
    if count == 1 and batch:  # one matrix: the 2-D product BLAS adds into L0C in place
        rows, columns = rows.reshape(rows.shape[-2:]), columns.reshape(columns.shape[-2:])
        out = out.reshape(m, n)
    direct = None
    if out.ndim == 2 and accumulator == FLOAT32 and _sgemm_steps(rows, columns, steps):
        direct = blas.KSteps.plan(rows, columns, out)
    for number, step in enumerate(steps):  # the first step writes L0C, the next ones add into it
        step_product(rows, columns, step, out, number > 0, direct)
    return total


def _sgemm_steps(rows: np.ndarray, columns: np.ndarray, steps: Sequence[slice | np.ndarray]) -> bool:
    """Whether the steps of a 2-D fp32 product pay as sgemm calls into L0C (`blas.KSteps`): two
    or more K ranges within K, the first of `DIRECT_PRODUCTS` multiply-adds or more. One step is
    numpy's matmul for less than planning the calls; a smaller step, for less than sgemm's call."""
    first = steps[0]
    if len(steps) < 2 or not isinstance(first, slice):
        return False
    large = rows.shape[-2] * columns.shape[-1] * (first.stop - first.start) >= DIRECT_PRODUCTS
    return large and _k_ranges(steps, rows.shape[-1])


def step_product(
    rows: np.ndarray,
    columns: np.ndarray,
    step: slice | np.ndarray,
    out: np.ndarray | None,
    add: bool,
    direct: blas.KSteps | None = None,
) -> np.ndarray:
    """One k-step's product on the cube, `out` = a @ b, or `out` += a @ b when `add`, where a and
    b are the step's K range of `rows` and `columns`: one BLAS call. Returns the accumulator:
    `out`, or without one (a first fp32 step), the product itself. With `direct` (fp32 2-D
    operands, a K range that is a slice), OpenBLAS's sgemm writes or adds into `out` in place
    (`ge.emulator.blas.KSteps`). Otherwise the first step is numpy's matmul writing `out`, a later
    one numpy's matmul and an add (and for int32 accumulators, the product converted, then
    added)."""
    if out is None:
        return np.matmul(rows[..., step], columns[..., step, :])
    if direct is not None and isinstance(step, slice):
        direct(step.start, step.stop - step.start, add)
        return out
    a, b = rows[..., step], columns[..., step, :]
    if out.dtype == np.int32:  # exact: the step's sums are integers below 2**24
        product = np.matmul(a, b).astype(np.int32)
        if add:
            np.add(out, product, out=out)
        else:
            out[...] = product
    elif not add:
        np.matmul(a, b, out=out)
    else:
        np.add(out, np.matmul(a, b), out=out)
    return out


class LoadedForm:
    """The form the cube reads one operand in (an L0B matrix, a FRACTAL_NZ operand's matrix),
    laid out at the first call and kept while the same array in read-only memory comes back: a
    model's weights, which the run plan binds read-only, once, and no kernel writes. A writable
    array's bytes may change between runs, so its form is laid out at every call. One is kept per
    operand of a planned product, so a launch checks the array's identity, nothing more."""

    def __init__(self) -> None:
        self._array: np.ndarray | None = None
        self._form: np.ndarray | None = None

    def __call__(self, array: np.ndarray, build: Callable[[], np.ndarray]) -> np.ndarray:
        if array.flags.writeable:
            return build()
        if array is not self._array or self._form is None:
            self._array, self._form = array, build()
        return self._form


def accumulation_dtypes(a: np.dtype, b: np.dtype) -> tuple[np.dtype, np.dtype]:
    """(dtype the products are computed in, accumulator dtype) for cube inputs of dtypes `a` and `b`."""
    if a in _FLOAT_INPUTS and b in _FLOAT_INPUTS:
        return np.dtype(np.float32), np.dtype(np.float32)
    if a in _INTEGER_INPUTS and b in _INTEGER_INPUTS:
        # fp32 holds every 8-bit value exactly and multiplies through BLAS; a step's sums stay exact
        # (see `accumulate`).
        return np.dtype(np.float32), np.dtype(np.int32)
    raise ValueError(f"the cube takes float16, bfloat16, float32, int8 or uint8 inputs, got {a} and {b}")


def largest_product(a: np.dtype, b: np.dtype) -> int:
    """The largest |x * y| of integers x of dtype `a` and y of dtype `b` (2**14 for int8)."""
    return max(abs(int(np.iinfo(a).min)), int(np.iinfo(a).max)) * max(
        abs(int(np.iinfo(b).min)), int(np.iinfo(b).max)
    )


def _k_ranges(steps: Sequence[slice | np.ndarray], k: int) -> bool:
    """Whether every step is a contiguous range of K's `k` elements (not an index array)."""
    return all(
        isinstance(step, slice) and step.step in (None, 1) and 0 <= step.start <= step.stop <= k
        for step in steps
    )


def _pieces(step: slice | np.ndarray, width: int) -> list[slice | np.ndarray]:
    """`step` cut into runs of at most `width` K elements."""
    if isinstance(step, slice):
        return [slice(start, min(start + width, step.stop)) for start in range(step.start, step.stop, width)]
    return [step[start : start + width] for start in range(0, len(step), width)]


def _logical_operand(
    array: np.ndarray, fmt: str, matrix: tuple[int, int], form: LoadedForm, name: str
) -> np.ndarray:
    """The stored matrix (..., rows, cols) of a matmul operand given in ND or FRACTAL_NZ."""
    if fmt == "ND":
        if array.ndim < 2 or array.shape[-2:] != matrix:
            raise ValueError(f"matmul: ND operand {name} must end in {matrix}, got shape {array.shape}")
        return array
    if fmt == "FRACTAL_NZ":
        if array.ndim < 4:
            raise ValueError(
                f"matmul: FRACTAL_NZ operand {name} must have rank >= 4, got shape {array.shape}"
            )
        return form(array, lambda: _fractal_nz_load(array, matrix, name))
    raise ValueError(f"matmul: operand {name} must be ND or FRACTAL_NZ, got {fmt!r}")


def store_fractal_nz(matrix: np.ndarray, into: np.ndarray | None = None) -> np.ndarray:
    """An L0C accumulator (..., M, N) stored as FRACTAL_NZ tiles (..., N / 16, M / 16, 16, 16),
    its padded rows and columns zero, written fractal row by fractal row as the cube's store to a
    chained product's operand does (a second writing of the layout beside `ge.layout.to_device`,
    read back by `_fractal_nz_load`); into `into` if given (a C-contiguous array of that shape
    and the accumulator's dtype)."""
    *batch, m, n = matrix.shape
    m1, n1 = -(-m // FRACTAL), -(-n // FRACTAL)
    shape = (*batch, n1, m1, FRACTAL, FRACTAL)
    if into is None:
        into = np.empty(shape, matrix.dtype)
    elif into.shape != shape or into.dtype != matrix.dtype or not into.flags.c_contiguous:
        raise ValueError(
            f"store: FRACTAL_NZ tiles of a {matrix.dtype} {(m, n)} are {shape}, not {into.shape}"
        )
    if (m, n) != (m1 * FRACTAL, n1 * FRACTAL) or not matrix.flags.c_contiguous:
        padded = np.zeros((*batch, m1 * FRACTAL, n1 * FRACTAL), matrix.dtype)
        padded[..., :m, :n] = matrix
        matrix = padded
    # A fractal row (16 elements) moves as one element: (..., M1 x 16, N1) of them to (..., N1,
    # M1 x 16), 2.4 times as fast as 16-element runs.
    row = _fractal_row(matrix.dtype)
    np.copyto(into.view(row).reshape(*batch, n1, m1 * FRACTAL).swapaxes(-1, -2), matrix.view(row))
    return into


def _fractal_nz_load(array: np.ndarray, matrix: tuple[int, int], name: str) -> np.ndarray:
    """The (..., rows, cols) matrix held by FRACTAL_NZ tiles (..., cols / 16, rows / 16, 16, 16), read
    fractal row by fractal row as the cube's tile load does (a second reading of the layout beside
    `ge.layout.from_device`, so a wrong layout does not cancel out)."""
    rows, cols = matrix
    tiles = (-(-cols // FRACTAL), -(-rows // FRACTAL), FRACTAL, FRACTAL)
    if array.shape[-4:] != tiles:
        raise ValueError(
            f"matmul: FRACTAL_NZ operand {name} of {matrix} must end in {tiles}, got {array.shape}"
        )
    batch = array.shape[:-4]
    if array.flags.c_contiguous:  # each fractal row one element, as `store_fractal_nz` moves them
        row = _fractal_row(array.dtype)
        blocks = array.view(row).reshape(*batch, tiles[0], tiles[1] * FRACTAL)  # (..., N1, M1 x 16)
        padded = np.ascontiguousarray(blocks.swapaxes(-1, -2)).view(array.dtype)
    else:
        fractals = array.swapaxes(-4, -3)  # (..., row block, column block, 16 rows, 16 columns)
        padded = fractals.swapaxes(-3, -2).reshape(*batch, tiles[1] * FRACTAL, tiles[0] * FRACTAL)
    return padded[..., :rows, :cols]


def _fractal_row(dtype: np.dtype) -> np.dtype:
    """One row of a fractal (16 elements of `dtype`) as a single element."""
    return np.dtype((np.void, FRACTAL * dtype.itemsize))
