"""`ge.emulator.channel_planes`: NC1HWC0 blocks as contiguous channel planes, and back."""

from __future__ import annotations

import numpy as np
import pytest

from ge.emulator import channel_planes


@pytest.mark.parametrize("c1", [1, 3])
def test_planes_are_a_contiguous_copy_in_channel_order(c1: int, rng: np.random.Generator) -> None:
    """Channel c of the planes is lane c % C0 of block c // C0, as NC1HWC0 lays it out; a single
    block too gives a contiguous copy (numpy's reshape alone would give a strided view)."""
    x = rng.standard_normal((2, c1, 5, 7, 16)).astype(np.float32)
    planes = channel_planes.planes(x)
    assert planes.shape == (2, c1 * 16, 5, 7) and planes.flags.c_contiguous
    assert not np.shares_memory(planes, x)
    for c in range(c1 * 16):
        np.testing.assert_array_equal(planes[:, c], x[:, c // 16, :, :, c % 16])
    back = channel_planes.blocks(planes, 16)
    assert back.shape == x.shape and np.shares_memory(back, planes)
    np.testing.assert_array_equal(back, x)


def test_planes_past_the_real_channels_are_zero_and_take_the_dtype(rng: np.random.Generator) -> None:
    x = rng.standard_normal((1, 2, 3, 3, 16)).astype(np.float16)
    x[:, 1, :, :, 4:] = np.nan  # padded lanes of 20 channels
    planes = channel_planes.planes(x, np.dtype(np.float32), channels=20)
    assert planes.dtype == np.float32
    np.testing.assert_array_equal(planes[:, 20:], 0)
    np.testing.assert_array_equal(planes[:, :20], channel_planes.planes(x)[:, :20].astype(np.float32))
