"""The BLAS the emulated cube multiplies with: numpy's bundled OpenBLAS, reached directly where
numpy cannot say what the cube does.

The cube adds each k-step's product into L0C. numpy's `matmul` can only write a product into a
fresh or given array, so accumulating takes a second pass over the accumulator per step, which
costs as much as the product itself for the compiler's k-steps (64 to 256 elements of K).
OpenBLAS's `sgemm` with beta = 1 adds the product into C as L0C does, in the same pass.
`KSteps` calls it through ctypes, one call per k-step, for fp32 matrices whose rows or columns
are contiguous, with the operands' layouts and addresses read once per product; it is not
planned when the library or the layout does not allow it, so the caller uses numpy instead. Both
give the fp32 sums of the same products.

`kernel_set` names the kernels OpenBLAS chose when it loaded (from the CPU, or from
`OPENBLAS_CORETYPE`): "Haswell" runs AVX2, "SkylakeX" AVX-512, at about twice the sgemm
throughput on a CPU that has it. `columns_alike` says whether those kernels round equal columns
of a product alike.
"""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Callable
from functools import cache

import numpy as np

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_FLOAT32 = np.dtype(np.float32)


class KSteps:
    """The k-steps of one product `a` (M, K) @ `b` (K, N) into `c` (M, N), each one sgemm call on
    a K range of both operands: the operands' layouts and addresses are read once (`plan`, which
    builds it after checking them), so a step costs the call alone. A step writes `c` (beta = 0)
    or adds into it (beta = 1)."""

    def __init__(
        self,
        sgemm: Callable[..., None],
        a: np.ndarray,
        b: np.ndarray,
        c: np.ndarray,
        layout_a: tuple[int, int],
        layout_b: tuple[int, int],
    ):
        (m, _), n = a.shape, b.shape[1]
        self._call, self._arrays = sgemm, (a, b, c)  # the arrays outlive the addresses kept
        self._fixed = (_ROW_MAJOR, layout_a[0], layout_b[0], m, n)
        self._a, self._lda, self._a_stride = a.ctypes.data, layout_a[1], a.strides[1]
        self._b, self._ldb, self._b_stride = b.ctypes.data, layout_b[1], b.strides[0]
        self._c, self._ldc = c.ctypes.data, n

    @classmethod
    def plan(cls, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> KSteps | None:
        """The k-steps of a @ b into `c` for fp32 2-D `a` (M, K) and `b` (K, N), each with a unit
        row or column stride, and a C-contiguous `c` (M, N); None for other operands (another
        dtype, a batch, no unit stride, nothing to contract) or without a bundled OpenBLAS;
        ValueError for shapes that do not agree. A step's K range must lie within K."""
        sgemm = _sgemm()
        if sgemm is None or not a.ndim == b.ndim == c.ndim == 2 or not c.flags.c_contiguous:
            return None
        if a.dtype != _FLOAT32 or b.dtype != _FLOAT32 or c.dtype != _FLOAT32 or 0 in (*a.shape, *b.shape):
            return None
        if a.shape[1] != b.shape[0] or c.shape != (a.shape[0], b.shape[1]):
            raise ValueError(f"KSteps: {a.shape} @ {b.shape} cannot be written into {c.shape}")
        layout_a, layout_b = _layout(a), _layout(b)
        if layout_a is None or layout_b is None:
            return None
        return cls(sgemm, a, b, c, layout_a, layout_b)

    def __call__(self, start: int, width: int, add: bool) -> None:
        """c = a[:, start : start + width] @ b[start : start + width], or c += it when `add`."""
        self._call(
            *self._fixed,
            width,
            1.0,
            self._a + start * self._a_stride,
            self._lda,
            self._b + start * self._b_stride,
            self._ldb,
            1.0 if add else 0.0,
            self._c,
            self._ldc,
        )


@cache
def columns_alike() -> bool:
    """Whether numpy's BLAS rounds equal columns of a product alike, as the cube computes every
    n-tile alike, for the probe's 64 x 64 x 64 product whose right operand's columns are all
    equal. OpenBLAS's AVX2 ("Haswell") sgemm kernels sum the first and last 8 columns of a block
    in another order than the rest, so this is False there; other kernel sets may still round a
    column tail past a multiple of their vector width differently, which the probe does not see."""
    rows = np.sin(np.arange(64 * 64, dtype=np.float32)).reshape(64, 64) * np.float32(100)
    product = rows @ np.full((64, 64), 0.02, np.float32)
    return bool((product == product[:, :1]).all())


def kernel_set() -> str | None:
    """The name of the kernel set numpy's OpenBLAS runs ("Haswell", "SkylakeX", ...); None when
    numpy's BLAS is not an OpenBLAS that says."""
    library = _library()
    for name in ("scipy_openblas_get_corename64_", "openblas_get_corename"):
        function = None if library is None else getattr(library, name, None)
        if function is not None:
            function.argtypes, function.restype = [], ctypes.c_char_p
            name = function()
            return None if name is None else name.decode("ascii", "replace").strip()
    return None


# --------------------------------------------------------------------------------------------


def _layout(matrix: np.ndarray) -> tuple[int, int] | None:
    """(transpose flag, leading dimension) of a row-major view of `matrix`, or None."""
    rows, columns = matrix.strides
    size = matrix.itemsize
    if columns == size and rows % size == 0 and rows // size >= max(1, matrix.shape[1]):
        return _NO_TRANS, rows // size
    if rows == size and columns % size == 0 and columns // size >= max(1, matrix.shape[0]):
        return _TRANS, columns // size
    return None


@cache
def _library() -> ctypes.CDLL | None:
    for path in glob.glob(os.path.join(os.path.dirname(np.__file__) + ".libs", "lib*openblas*.so*")):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


@cache
def _sgemm() -> Callable[..., None] | None:
    """`cblas_sgemm` of the bundled OpenBLAS (its 64-bit-integer build names it
    `scipy_cblas_sgemm64_`), with its argument types declared."""
    library = _library()
    if library is None:
        return None
    for name, integer in (("scipy_cblas_sgemm64_", ctypes.c_int64), ("cblas_sgemm", ctypes.c_int)):
        function = getattr(library, name, None)
        if function is not None:
            pointer, scalar = ctypes.c_void_p, ctypes.c_float
            function.argtypes = [
                ctypes.c_int,
                ctypes.c_int,
                ctypes.c_int,
                integer,
                integer,
                integer,
                scalar,
                pointer,
                integer,
                pointer,
                integer,
                scalar,
                pointer,
                integer,
            ]
            function.restype = None
            return function
    return None
