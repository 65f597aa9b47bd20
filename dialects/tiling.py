"""Tiles of a kernel as typed attributes, and the on-chip bytes they claim.

A cube kernel is tiled as a matrix product: `m` rows (output pixels or matrix rows) by `n` columns
(output channels) per tile, contracting `k` at a time, all multiples of 16 (one fractal). Its
left tile lives in L0A, its right tile in L0B, the fp32 accumulator in L0C, and the epilogue works
on the accumulator tile in the Unified Buffer. A vector kernel streams `tile` elements of every
operand through the UB at once. `db = 2` (double buffering) doubles every claim, so the next tile
loads while this one computes. `tiles` is how many tiles the kernel has in all.

```
ascend.kernel.cube(...) {block_dim = 24 : i64,
    tiling = #ascend.cube_tiling<m = 256, n = 64, k = 64, db = 2, tiles = 49>, ...}
ascend.kernel.vector(...) {tiling = #ascend.vector_tiling<tile = 4096, db = 2, tiles = 8>, ...}
```

Each attribute checks its own sizes when built or parsed; whether the tiles fit a target's
buffers depends on the target and the kernel's element types, so the kernel ops check that
(`tiling_error`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import IntAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

TILED_UNITS = ("cube", "vector")
ACCUMULATOR_BYTES = 4


class _TilingAttr(ParametrizedAttribute):
    """Named integer sizes printed as `<key = value, ...>` in the order of `KEYS`."""

    KEYS: ClassVar[tuple[str, ...]] = ()

    def sizes(self) -> dict[str, int]:
        """The sizes by name, in the attribute's order."""
        return {key: getattr(self, key).data for key in self.KEYS}

    @property
    def tile_count(self) -> int:
        """How many tiles the kernel has in all."""
        return self.sizes()["tiles"]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: list[Attribute] = []
        start = parser.pos
        with parser.in_angle_brackets():
            for index, key in enumerate(cls.KEYS):
                if index:
                    parser.parse_punctuation(",")
                parser.parse_keyword(key, f" (#{cls.name} lists {', '.join(cls.KEYS)} in this order)")
                parser.parse_punctuation("=")
                values.append(IntAttr(parser.parse_integer(allow_boolean=False)))
        try:  # checked here too, so a bad size is an error at its place in the text
            cls.new(values).verify()
        except VerifyException as error:
            parser.raise_error(str(error), start, parser.pos)
        return values

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(", ".join(f"{key} = {value}" for key, value in self.sizes().items()))

    def verify(self) -> None:
        sizes = self.sizes()
        if any(value < 1 for value in sizes.values()):
            raise VerifyException(f"{self.name}: tile sizes must be positive, got {sizes}")
        if sizes["db"] not in (1, 2):
            raise VerifyException(f"{self.name}: db (double buffering) must be 1 or 2, got {sizes['db']}")


@irdl_attr_definition
class CubeTilingAttr(_TilingAttr):
    """Tiles of a cube kernel's matrix product: `#ascend.cube_tiling<m = 256, n = 64, k = 64,
    db = 2, tiles = 49>`; `m`, `n` and `k` are multiples of 16 (one fractal)."""

    name = "ascend.cube_tiling"
    KEYS: ClassVar[tuple[str, ...]] = ("m", "n", "k", "db", "tiles")

    m: IntAttr = param_def()
    n: IntAttr = param_def()
    k: IntAttr = param_def()
    db: IntAttr = param_def()
    tiles: IntAttr = param_def()

    def __init__(self, m: int, n: int, k: int, db: int, tiles: int):
        super().__init__(IntAttr(m), IntAttr(n), IntAttr(k), IntAttr(db), IntAttr(tiles))

    def verify(self) -> None:
        super().verify()
        bad = [key for key in ("m", "n", "k") if self.sizes()[key] % 16]
        if bad:
            raise VerifyException(
                f"{self.name}: cube tile sizes {', '.join(bad)} must be multiples of 16 (one fractal), "
                f"got {self.sizes()}"
            )


@irdl_attr_definition
class VectorTilingAttr(_TilingAttr):
    """Tiles of a vector kernel: `#ascend.vector_tiling<tile = 4096, db = 2, tiles = 8>`, `tile`
    elements of every operand and result in the Unified Buffer at once."""

    name = "ascend.vector_tiling"
    KEYS: ClassVar[tuple[str, ...]] = ("tile", "db", "tiles")

    tile: IntAttr = param_def()
    db: IntAttr = param_def()
    tiles: IntAttr = param_def()

    def __init__(self, tile: int, db: int, tiles: int):
        super().__init__(IntAttr(tile), IntAttr(db), IntAttr(tiles))


TilingAttr = CubeTilingAttr | VectorTilingAttr
"""Either tiling; a kernel op's `tiling` property holds one."""

TILING_OF_UNIT: dict[str, type[CubeTilingAttr] | type[VectorTilingAttr]] = {
    "cube": CubeTilingAttr,
    "vector": VectorTilingAttr,
}
"""The tiling a kernel on each tiled unit takes."""


def cube_claims(tiling: CubeTilingAttr, input_bytes: int) -> dict[str, int]:
    """Bytes of L0A, L0B, L0C and UB a cube tiling claims."""
    sizes = tiling.sizes()
    m, n, k, db = sizes["m"], sizes["n"], sizes["k"], sizes["db"]
    return {
        "l0a_bytes": m * k * input_bytes * db,
        "l0b_bytes": k * n * input_bytes * db,
        "l0c_bytes": m * n * ACCUMULATOR_BYTES * db,
        "ub_bytes": m * n * ACCUMULATOR_BYTES * db,
    }


def vector_claims(tiling: VectorTilingAttr, operand_bytes: Sequence[int]) -> dict[str, int]:
    """Bytes of UB a vector tiling claims: one tile of every operand and result."""
    sizes = tiling.sizes()
    return {"ub_bytes": sizes["tile"] * sum(operand_bytes) * sizes["db"]}


def tiling_error(
    unit: str, tiling: TilingAttr, operand_bytes: Sequence[int], figure: Callable[[str], int | float]
) -> str | None:
    """Why `tiling` cannot run on `unit` of the target whose figures `figure` reads, or None if
    it fits. `operand_bytes` are the element widths of the kernel's inputs, then its results."""
    expected = TILING_OF_UNIT[unit]
    if not isinstance(tiling, expected):
        return f"a {unit} kernel takes a #{expected.name}, not {tiling}"
    if isinstance(tiling, CubeTilingAttr):
        claims = cube_claims(tiling, max(operand_bytes[:2], default=2))
    else:
        claims = vector_claims(tiling, operand_bytes)
    for buffer, need in claims.items():
        have = int(figure(buffer))
        if need > have:
            name = buffer.removesuffix("_bytes").upper()
            return f"tiles {tiling.sizes()} need {need} bytes of {name}, the target has {have}"
    return None
