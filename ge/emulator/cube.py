"""The cube unit's arithmetic: convolution and matrix product on fractal tiles, accumulated as in L0C.

A second implementation beside `ge.semantics`, working on device-format data: the left operand is cut
into 16 x C0 fractals (L0A), the right one into C0 x 16 fractals (L0B), and the tile products are summed
over the K tiles into an fp32 accumulator (int32 for 8-bit integer inputs). fp16 and bf16 inputs are
widened to fp32 first, which is exact, so results are fp32-accumulated products.
"""

from __future__ import annotations

import numpy as np

from ge.dialects.formats import FRACTAL, c0_of, device_shape
from ge.dtypes import bfloat16
from ge.layout import from_device

_FLOAT_INPUTS = (np.dtype(np.float16), bfloat16, np.dtype(np.float32))
_INTEGER_INPUTS = (np.dtype(np.int8), np.dtype(np.uint8))


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    *,
    out_channels: int,
    in_channels: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    groups: int,
    bias: np.ndarray | None = None,
) -> np.ndarray:
    """The accumulator of a 2-D convolution (cross-correlation, as ONNX Conv) run on the cube.

    `x` is NC1HWC0 (N, C1, H, W, c0) holding `in_channels` channels; `w` is FRACTAL_Z of the logical
    weights (out_channels, in_channels // groups, kh, kw) with the same c0; `pads` are (top, left, bottom,
    right); `bias`, logical (out_channels,), is added to the accumulator. Returns NC1HWC0
    (N, ceil(out_channels / c0), Ho, Wo, c0) in float32 (int32 for 8-bit integer inputs), padded channels
    zero. Groups are a batch of independent products; narrow groups (depthwise convolutions) sum over
    their real channels only, which gives the same sums without the fractals' zero padding.
    """
    compute, accumulator = _accumulation_dtypes(x.dtype, w.dtype)
    if x.ndim != 5:
        raise ValueError(f"conv2d: x must be NC1HWC0 (N, C1, H, W, C0), got shape {x.shape}")
    n, c1, h, width, c0 = x.shape
    kh, kw = kernel
    if groups <= 0 or in_channels % groups or out_channels % groups:
        raise ValueError(
            f"conv2d: {in_channels} -> {out_channels} channels do not split into {groups} groups"
        )
    if c1 != -(-in_channels // c0):
        raise ValueError(
            f"conv2d: x of shape {x.shape} does not hold {in_channels} channels in blocks of {c0}"
        )
    cin_group, cout_group = in_channels // groups, out_channels // groups
    expected_w = device_shape((out_channels, cin_group, kh, kw), "FRACTAL_Z", c0, groups)
    if w.shape != expected_w:
        raise ValueError(f"conv2d: FRACTAL_Z weights must have shape {expected_w}, got {w.shape}")
    (sh, sw), (dh, dw), (top, left, bottom, right) = strides, dilations, pads
    if min(sh, sw, dh, dw) <= 0 or min(pads) < 0:
        raise ValueError(
            f"conv2d: strides {strides} and dilations {dilations} must be positive, pads {pads} >= 0"
        )
    span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    ho, wo = (h + top + bottom - span_h) // sh + 1, (width + left + right - span_w) // sw + 1
    if ho <= 0 or wo <= 0:
        raise ValueError(f"conv2d: a {kh}x{kw} kernel (dilations {dilations}) does not fit the padded input")

    if groups > 1 and cin_group * cout_group < c0 * FRACTAL:
        # Narrow groups (depthwise convolutions above all): the padded fractals would be mostly
        # zeros, so the products are summed over the real channels only; the sums are the same.
        out = _narrow_groups(
            x, w, in_channels, out_channels, groups, kernel, strides, pads, dilations, (ho, wo)
        )
        out = out.astype(accumulator) if accumulator == np.float32 else out.astype(np.int64).astype(np.int32)
    else:
        left_tiles = _im2col_tiles(
            x, in_channels, groups, kernel, strides, pads, dilations, (ho, wo), compute
        )
        m, m1, k1 = n * ho * wo, left_tiles.shape[1], left_tiles.shape[2]
        n1 = w.shape[1]
        right_tiles = (
            w.reshape(groups, k1, n1, FRACTAL, c0).swapaxes(3, 4).astype(compute)
        )  # (g, K1, N1, c0, 16)
        out_tiles = _cube(left_tiles, right_tiles, accumulator)  # (g, M1, N1, 16, 16)
        out = out_tiles.swapaxes(2, 3).reshape(groups, m1 * FRACTAL, n1 * FRACTAL)[:, :m, :cout_group]
        out = (
            out.reshape(groups, n, ho, wo, cout_group)
            .transpose(1, 2, 3, 0, 4)
            .reshape(n, ho, wo, out_channels)
        )
    result = np.zeros((n, ho, wo, -(-out_channels // c0) * c0), accumulator)
    result[..., :out_channels] = out
    if bias is not None:
        result[..., :out_channels] += np.asarray(bias).astype(accumulator).reshape(out_channels)
    return np.ascontiguousarray(result.reshape(n, ho, wo, -1, c0).transpose(0, 3, 1, 2, 4))


def matmul(
    a: np.ndarray,
    b: np.ndarray,
    *,
    a_format: str,
    b_format: str,
    m: int,
    k: int,
    n: int,
    trans_a: bool = False,
    trans_b: bool = False,
) -> np.ndarray:
    """The accumulator of the product (..., M, K) x (..., K, N) run on the cube.

    `a` is logical (..., M, K), or (..., K, M) when `trans_a`, if `a_format` is "ND", else the
    FRACTAL_NZ form of that matrix; `b` likewise with (..., K, N) / (..., N, K) when `trans_b`. Batch
    dims broadcast as in numpy. Returns the logical (..., M, N) in float32 (int32 for 8-bit integers).
    """
    compute, accumulator = _accumulation_dtypes(a.dtype, b.dtype)
    c0 = c0_of(a.dtype.itemsize * 8)
    left = _logical_operand(a, a_format, (k, m) if trans_a else (m, k), "a")
    right = _logical_operand(b, b_format, (n, k) if trans_b else (k, n), "b")
    if trans_a:
        left = left.swapaxes(-1, -2)
    if trans_b:
        right = right.swapaxes(-1, -2)
    m1, k1, n1 = -(-m // FRACTAL), -(-k // c0), -(-n // FRACTAL)
    if accumulator == np.float32:
        compute = np.dtype(np.float64)  # widened once, as `_cube` sums floats (see there)
    # Laying ND data out as fractals while loading, as MTE2 does; the widening happens on the way.
    left_rows = np.zeros((*left.shape[:-2], m1 * FRACTAL, k1 * c0), compute)
    left_rows[..., :m, :k] = left
    right_columns = np.zeros((*right.shape[:-2], k1 * c0, n1 * FRACTAL), compute)
    right_columns[..., :k, :n] = right
    left_tiles = left_rows.reshape(*left.shape[:-2], m1, FRACTAL, k1, c0).swapaxes(-3, -2)
    right_tiles = right_columns.reshape(*right.shape[:-2], k1, c0, n1, FRACTAL).swapaxes(-3, -2)
    out = _cube(left_tiles, right_tiles, accumulator).swapaxes(-3, -2)
    return np.ascontiguousarray(out.reshape(*out.shape[:-4], m1 * FRACTAL, n1 * FRACTAL)[..., :m, :n])


def _cube(left: np.ndarray, right: np.ndarray, accumulator: np.dtype) -> np.ndarray:
    """L0C[..., m1, n1] = sum over k1 of L0A[..., m1, k1] @ L0B[..., k1, n1] for fractals
    L0A (..., M1, K1, 16, c0) and L0B (..., K1, N1, c0, 16); returns (..., M1, N1, 16, 16).

    The sum over K1 and k0 is one matrix product over the tile axes; integer inputs (held as float64)
    are exact there for any K below 2**37, and wrap to int32 as the accumulator does. Float products
    are summed in float64 and rounded once into the fp32 accumulator, so equal rows and columns give
    bit-equal results whichever BLAS kernel (and summation order) handles their tile.
    """
    m1, k1, c0 = left.shape[-4], left.shape[-3], left.shape[-1]
    n1 = right.shape[-3]
    rows = left.swapaxes(-3, -2).reshape(*left.shape[:-4], m1 * FRACTAL, k1 * c0)
    columns = right.swapaxes(-3, -2).reshape(*right.shape[:-4], k1 * c0, n1 * FRACTAL)
    if accumulator == np.float32:
        wide = np.dtype(np.float64)
        product = np.matmul(rows.astype(wide, copy=False), columns.astype(wide, copy=False))
        product = product.astype(np.float32)
    else:
        product = np.matmul(rows, columns)
    if accumulator == np.int32:
        product = product.astype(np.int64).astype(np.int32)
    out = product.reshape(*product.shape[:-2], m1, FRACTAL, n1, FRACTAL)
    return out.swapaxes(-3, -2)


def _im2col_tiles(
    x: np.ndarray,
    in_channels: int,
    groups: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    out_size: tuple[int, int],
    compute: np.dtype,
) -> np.ndarray:
    """The L0A fractals (groups, M1, K1, 16, c0) of the im2col matrix of NC1HWC0 `x`: one row per output
    pixel (n, ho, wo), columns ordered (c1, i, j, k0) as the rows of FRACTAL_Z, zero rows up to M1 * 16."""
    n, c1, h, width, c0 = x.shape
    (kh, kw), (sh, sw), (dh, dw), (top, left, bottom, right) = kernel, strides, dilations, pads
    ho, wo = out_size
    cin_group = in_channels // groups
    k1_channels = -(-cin_group // c0)
    # Each group's channels start a new c0 block, as the im2col load reads them; widened and padded here.
    padded = np.zeros((n, h + top + bottom, width + left + right, groups, k1_channels * c0), compute)
    channels = x.transpose(0, 2, 3, 1, 4).reshape(n, h, width, c1 * c0)[..., :in_channels]
    padded[:, top : top + h, left : left + width, :, :cin_group] = channels.reshape(n, h, width, groups, -1)

    windows = np.lib.stride_tricks.sliding_window_view(padded, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), (1, 2))
    windows = windows[:, : (ho - 1) * sh + 1 : sh, : (wo - 1) * sw + 1 : sw, :, :, ::dh, ::dw]
    m, k1 = n * ho * wo, k1_channels * kh * kw
    m1 = -(-m // FRACTAL)
    rows = np.zeros((groups, m1 * FRACTAL, k1 * c0), compute)
    pixels = np.reshape(rows[:, :m], (groups, n, ho, wo, k1_channels, kh, kw, c0), copy=False)
    pixels[...] = windows.reshape(n, ho, wo, groups, k1_channels, c0, kh, kw).transpose(
        3, 0, 1, 2, 4, 6, 7, 5
    )
    return rows.reshape(groups, m1, FRACTAL, k1, c0).swapaxes(2, 3)


def _narrow_groups(
    x: np.ndarray,
    w: np.ndarray,
    in_channels: int,
    out_channels: int,
    groups: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    out_size: tuple[int, int],
) -> np.ndarray:
    """The grouped products (N, Ho, Wo, out_channels) in float64, over each group's real channels."""
    n, _, h, width, _ = x.shape
    kh, kw = kernel
    cin_group, cout_group = in_channels // groups, out_channels // groups
    (sh, sw), (dh, dw), (top, left, bottom, right), (ho, wo) = strides, dilations, pads, out_size
    data = from_device(x, "NC1HWC0", (n, in_channels, h, width)).astype(np.float64)
    weights = from_device(w, "FRACTAL_Z", (out_channels, cin_group, kh, kw), groups).astype(np.float64)
    padded = np.zeros((n, in_channels, h + top + bottom, width + left + right))
    padded[:, :, top : top + h, left : left + width] = data
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    windows = np.lib.stride_tricks.sliding_window_view(padded, span, axis=(2, 3))
    windows = windows[:, :, : sh * ho : sh, : sw * wo : sw, ::dh, ::dw]  # (N, C, Ho, Wo, kh, kw)
    taps = windows.reshape(n, groups, cin_group, ho, wo, kh, kw)
    out = np.einsum("ngchwij,gocij->nhwgo", taps, weights.reshape(groups, cout_group, cin_group, kh, kw))
    return out.reshape(n, ho, wo, out_channels)


def _accumulation_dtypes(a: np.dtype, b: np.dtype) -> tuple[np.dtype, np.dtype]:
    """(dtype the products are computed in, accumulator dtype) for cube inputs of dtypes `a` and `b`."""
    if a in _FLOAT_INPUTS and b in _FLOAT_INPUTS:
        return np.dtype(np.float32), np.dtype(np.float32)
    if a in _INTEGER_INPUTS and b in _INTEGER_INPUTS:
        # float64 holds every int8 x int8 sum exactly and multiplies through BLAS.
        return np.dtype(np.float64), np.dtype(np.int32)
    raise ValueError(f"the cube takes float16, bfloat16, float32, int8 or uint8 inputs, got {a} and {b}")


def _logical_operand(array: np.ndarray, fmt: str, matrix: tuple[int, int], name: str) -> np.ndarray:
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
        return from_device(array, fmt, (*array.shape[:-4], *matrix))
    raise ValueError(f"matmul: operand {name} must be ND or FRACTAL_NZ, got {fmt!r}")
