"""Tiles of a kernel and the on-chip bytes they claim, checked against the target's buffers.

A cube kernel is tiled as a matrix product: `m` rows (output pixels or matrix rows) by `n` columns
(output channels) per tile, contracting `k` at a time, all multiples of 16 (one fractal). Its
left tile lives in L0A, its right tile in L0B, the fp32 accumulator in L0C, and the epilogue works
on the accumulator tile in the Unified Buffer. A vector kernel streams `tile` elements of every
operand through the UB at once. `db = 2` (double buffering) doubles every claim, so the next tile
loads while this one computes. `tiles` is how many tiles the kernel has in all.

```
ascend.kernel.cube(...) {block_dim = 24 : i64, tiling = {m = 256 : i64, n = 64 : i64, k = 64 : i64,
    db = 2 : i64, tiles = 49 : i64}, ...}
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

TILED_UNITS = ("cube", "vector")
CUBE_KEYS = ("m", "n", "k", "db", "tiles")
VECTOR_KEYS = ("tile", "db", "tiles")
ACCUMULATOR_BYTES = 4


def cube_claims(tiles: Mapping[str, int], input_bytes: int) -> dict[str, int]:
    """Bytes of L0A, L0B, L0C and UB a cube tiling claims."""
    m, n, k, db = tiles["m"], tiles["n"], tiles["k"], tiles.get("db", 1)
    return {
        "l0a_bytes": m * k * input_bytes * db,
        "l0b_bytes": k * n * input_bytes * db,
        "l0c_bytes": m * n * ACCUMULATOR_BYTES * db,
        "ub_bytes": m * n * ACCUMULATOR_BYTES * db,
    }


def vector_claims(tiles: Mapping[str, int], operand_bytes: Sequence[int]) -> dict[str, int]:
    """Bytes of UB a vector tiling claims: one tile of every operand and result."""
    return {"ub_bytes": tiles["tile"] * sum(operand_bytes) * tiles.get("db", 1)}


def tiling_error(
    unit: str, tiles: Mapping[str, int], operand_bytes: Sequence[int], figure: Callable[[str], int | float]
) -> str | None:
    """Why `tiles` cannot run on the target whose figures `figure` reads, or None if they fit.

    `operand_bytes` are the element widths of the kernel's inputs, then its results."""
    keys = CUBE_KEYS if unit == "cube" else VECTOR_KEYS
    missing = [k for k in keys if k not in tiles]
    if missing:
        return f"tiling lacks {', '.join(missing)}"
    if any(tiles[k] < 1 for k in keys):
        return f"tile sizes must be positive: {dict(tiles)}"
    if tiles["db"] not in (1, 2):
        return f"db (double buffering) must be 1 or 2, got {tiles['db']}"
    if unit == "cube":
        bad = [k for k in ("m", "n", "k") if tiles[k] % 16]
        if bad:
            return f"cube tile sizes {', '.join(bad)} must be multiples of 16 (one fractal)"
        claims = cube_claims(tiles, max(operand_bytes[:2], default=2))
    else:
        claims = vector_claims(tiles, operand_bytes)
    for buffer, need in claims.items():
        have = int(figure(buffer))
        if need > have:
            name = buffer.removesuffix("_bytes").upper()
            return f"tiles {dict(tiles)} need {need} bytes of {name}, the target has {have}"
    return None
