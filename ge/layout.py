"""Conversions between logical arrays and their device-format arrays (the data side of TransData).

Pure data movement (zero-filled buffers, reshapes, transposes, slice copies), so every dtype works,
bool and bfloat16 included, and a round trip is exact. Shapes follow `ge.dialects.formats.device_shape`.
"""

from __future__ import annotations

import numpy as np

from ge.dialects.formats import FRACTAL, device_shape
from ge.errors import CompileError


def to_device(array: np.ndarray, fmt: str, c0: int, groups: int = 1) -> np.ndarray:
    """The device-format array of the logical `array`: shape `device_shape(array.shape, fmt, c0, groups)`,
    same dtype, padding zero. Always a new array."""
    array = np.asarray(array)
    shape = device_shape(array.shape, fmt, c0, groups)
    if fmt in ("ND", "NCHW"):
        return array.copy()
    if fmt == "NC1HWC0":
        # One copy: whole C0 blocks through a view that splits C, the last block's real lanes after.
        n, c, h, w = array.shape
        full = c // c0
        device = np.empty(shape, array.dtype)
        device[:, :full] = array[:, : full * c0].reshape(n, full, c0, h, w).transpose(0, 1, 3, 4, 2)
        if full < shape[1]:
            device[:, full] = 0
            device[:, full, :, :, : c - full * c0] = array[:, full * c0 :].transpose(0, 2, 3, 1)
        return device
    if fmt == "FRACTAL_Z":
        cout, cin, kh, kw = array.shape
        cg = cout // groups
        c1 = -(-cin // c0)
        n1 = shape[1]
        padded = np.zeros((groups, n1 * FRACTAL, c1 * c0, kh, kw), array.dtype)
        padded[:, :cg, :cin] = array.reshape(groups, cg, cin, kh, kw)
        # (g, n1, n0, c1, k0, i, j) -> (g, c1, i, j, n1, n0, k0)
        tiles = padded.reshape(groups, n1, FRACTAL, c1, c0, kh, kw).transpose(0, 3, 5, 6, 1, 2, 4)
        return np.ascontiguousarray(tiles).reshape(shape)
    *batch, m, n = array.shape
    n1, m1 = shape[-4], shape[-3]
    padded = np.zeros((*batch, m1 * FRACTAL, n1 * FRACTAL), array.dtype)
    padded[..., :m, :n] = array
    tiles = padded.reshape(*batch, m1, FRACTAL, n1, FRACTAL)
    return np.ascontiguousarray(np.moveaxis(tiles, -2, -4))


def from_device(array: np.ndarray, fmt: str, shape: tuple[int, ...], groups: int = 1) -> np.ndarray:
    """The logical array of `shape` stored in the device-format `array` (padding dropped); C0 is read
    from `array.shape`. Raises ValueError when `array` does not have the device shape of `shape`."""
    array = np.asarray(array)
    shape = tuple(int(d) for d in shape)
    c0 = array.shape[-1] if fmt in ("NC1HWC0", "FRACTAL_Z") and array.ndim else 16
    expected = device_shape(shape, fmt, c0, groups)
    if array.shape != expected:
        raise ValueError(f"a {fmt} array of logical shape {shape} has shape {expected}, got {array.shape}")
    if fmt in ("ND", "NCHW"):
        return array.copy()
    if fmt == "NC1HWC0":
        # One copy: whole C0 blocks into a view that splits C, the last block's real lanes after.
        n, c, h, w = shape
        full = c // c0
        logical = np.empty(shape, array.dtype)
        blocks = np.reshape(logical[:, : full * c0], (n, full, c0, h, w), copy=False)
        blocks[...] = array[:, :full].transpose(0, 1, 4, 2, 3)
        if full * c0 < c:
            logical[:, full * c0 :] = array[:, full, :, :, : c - full * c0].transpose(0, 3, 1, 2)
        return logical
    if fmt == "FRACTAL_Z":
        cout, cin, kh, kw = shape
        cg = cout // groups
        _, n1, _, _ = array.shape
        c1 = -(-cin // c0)
        tiles = array.reshape(groups, c1, kh, kw, n1, FRACTAL, c0).transpose(0, 4, 5, 1, 6, 2, 3)
        padded = tiles.reshape(groups, n1 * FRACTAL, c1 * c0, kh, kw)
        return np.ascontiguousarray(padded[:, :cg, :cin]).reshape(shape)
    *batch, m, n = shape
    tiles = np.moveaxis(array, -4, -2)  # (..., m1, m0, n1, n0)
    padded = tiles.reshape(*batch, tiles.shape[-4] * FRACTAL, tiles.shape[-2] * FRACTAL)
    return np.ascontiguousarray(padded[..., :m, :n])


def reshaped_view(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`array` as `shape`, always a view of its memory: ValueError when the strides do not allow
    one (where `reshape` would copy)."""
    try:
        return np.reshape(array, shape, copy=False)
    except TypeError:  # numpy 2.0: no `copy`; setting `shape` raises rather than copy
        view = array.view()
        try:
            view.shape = shape
        except AttributeError as error:
            raise ValueError(str(error)) from None
        return view


def byte_runs(array: np.ndarray, base: int) -> np.ndarray:
    """The `[start, end)` rows of contiguous bytes a strided view covers, relative to `base`."""
    if array.size == 0:
        return np.zeros((0, 2), np.int64)
    run = array.itemsize
    dims = [(n, s) for n, s in zip(array.shape, array.strides, strict=True) if n != 1]
    while dims and dims[-1][1] == run:
        run *= dims.pop()[0]
    starts = np.array([array.__array_interface__["data"][0] - base], np.int64)
    for n, stride in dims:
        starts = (starts[:, None] + np.arange(n, dtype=np.int64) * stride).ravel()
    return np.stack([starts, starts + run], axis=1)


def address_space(size: int) -> np.ndarray:
    """An array that claims `size` bytes over one real byte: views of it give addresses, strides
    and shapes for layout questions (which bytes a view covers) without allocating an arena.
    Its data must never be read or written."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(max(size, 0),), strides=(1,))


def check_alignment(alignment: int, where: str) -> None:
    """Refuses a buffer alignment that is not a power of two (`where`: the pass that takes it)."""
    if alignment < 1 or alignment & (alignment - 1):
        raise CompileError(f"{where}: alignment must be a power of two, got {alignment}")
