"""NC1HWC0 blocks read as contiguous channel planes, and back: for the vector ops whose sums run
over whole channel planes (group norm, summed pairwise as the reference sums a contiguous
plane) or whose windows cross C0 blocks (LRN)."""

from __future__ import annotations

import numpy as np

from ge.layout import to_device


def planes(x: np.ndarray, dtype: np.dtype | None = None, channels: int | None = None) -> np.ndarray:
    """The (N, C1 x C0, H, W) channel planes of NC1HWC0 blocks `x` (N, C1, H, W, C0): a contiguous
    copy, in `dtype` (x's by default); with `channels`, the padded ones past it set to zero,
    whatever the stored lanes hold."""
    n, c1, h, w, c0 = x.shape
    copy = np.array(x.transpose(0, 1, 4, 2, 3), x.dtype if dtype is None else dtype, order="C")
    out = copy.reshape(n, c1 * c0, h, w)
    if channels is not None:
        out[:, channels:] = 0
    return out


def blocks(y: np.ndarray, c0: int) -> np.ndarray:
    """The NC1HWC0 blocks (N, C1, H, W, C0) of channel planes `y` (N, C, H, W): a view when C is
    whole blocks, else the padded copy `to_device` makes (the padded channels zero)."""
    n, channels, h, w = y.shape
    if channels % c0:
        return to_device(y, "NC1HWC0", c0)
    return y.reshape(n, channels // c0, c0, h, w).transpose(0, 1, 3, 4, 2)
