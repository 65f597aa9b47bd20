"""`ge-tile-kernels`: tile sizes and core counts (`block_dim`) for every kernel.

A cube kernel is its op's (first) matrix product (`graph.matrix_product`), M x K by K x N (a
convolution as implicit GEMM: M = output pixels, K = input channels per group, padded to whole
C0 blocks as NC1HWC0 stores them, x window, N = output channels per group, once per group); its
tiles start at 256 x 256 x 256 (clamped to the problem, in multiples of 16) and the largest
side halves until L0A, L0B, L0C and the epilogue's UB tile fit twice (double buffering), or
once if twice never fits. A vector kernel streams the largest power-of-two tile of its
operands that fits the UB twice. `block_dim` is min(cores of the unit, tiles): a kernel never
claims cores it cannot feed. AI CPU kernels run on one core, untiled. Each kernel is tiled on
its own, by the patterns `TileKernel` and `TileTransData`.

```
%y = ascend.kernel.vector(%x) : (tensor<1024xf32>) -> tensor<1024xf32> { ... }
```
becomes
```
%y = ascend.kernel.vector(%x) {block_dim = 1 : i64,
    tiling = #ascend.vector_tiling<tile = 1024, db = 2, tiles = 1>}
    : (tensor<1024xf32>) -> tensor<1024xf32> { ... }
```
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from ge.dialects import graph
from ge.dialects.common import TARGET_ATTR_NAME, TargetAttr
from ge.dialects.formats import bitwidth_of, c0_of
from ge.dialects.kernel import AiCpuKernelOp, CubeKernelOp, KernelOp, TransDataOp
from ge.dialects.tiling import CubeTilingAttr, TilingAttr, VectorTilingAttr, tiling_error
from ge.dtypes import tensor_type
from ge.errors import CompileError

from ..driver import RewritesOnly, rewrite
from ..session import current

START = 256
"""The first tile side tried for a cube kernel (elements)."""


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _round16(n: int) -> int:
    return max(16, _ceil(n, 16) * 16)


def _width(t) -> int:
    return max(1, t.element_type.bitwidth // 8)


def cube_op(kernel: KernelOp) -> Operation | None:
    """The cube op of a cube kernel's body (a matrix product, plain or fused)."""
    for op in kernel.body.block.ops:
        if graph.matrix_product(op) is not None:
            return op
    return None


def gemm_dims(op: Operation) -> tuple[int, int, int, int]:
    """(batch, M, K, N) of a cube op's (first) matrix product, with K as the cube reads it from
    the device formats (a convolution's channels padded to whole C0 blocks at each kernel
    position)."""
    product = graph.matrix_product(op)
    assert product is not None, f"{op.name} is a cube kernel's matrix product (`cube_op`)"
    element = tensor_type(op.operands[0]).element_type
    return product.batch, product.m, product.device_k(c0_of(bitwidth_of(element))), product.n


def cube_tiling(
    batch: int, m: int, k: int, n: int, input_bytes: int, figure: Callable[[str], int | float]
) -> CubeTilingAttr:
    sides = {"m": min(START, _round16(m)), "n": min(START, _round16(n)), "k": min(START, _round16(k))}
    for db in (2, 1):
        tiles = dict(sides)
        while True:
            candidate = CubeTilingAttr(tiles["m"], tiles["n"], tiles["k"], db, 1)
            if tiling_error("cube", candidate, [input_bytes, input_bytes], figure) is None:
                # An empty product (a zero dimension) still launches: one tile of nothing.
                count = max(1, batch * _ceil(m, tiles["m"]) * _ceil(n, tiles["n"]))
                return CubeTilingAttr(tiles["m"], tiles["n"], tiles["k"], db, count)
            largest = max(tiles, key=lambda key: tiles[key])
            if tiles[largest] == 16:
                break
            tiles[largest] = max(16, tiles[largest] // 2 // 16 * 16)
    raise CompileError(f"no cube tiling of {m}x{k}x{n} fits the target's buffers")


def cube_kernel_tiling(kernel: CubeKernelOp, figure: Callable[[str], int | float]) -> CubeTilingAttr:
    """The tiling of a cube kernel's (first) matrix product: it depends on the product's sizes and
    input width alone, not on the operands' formats."""
    inner = cube_op(kernel)
    assert inner is not None, f"{kernel.name} has a matrix product"
    batch, m, k, n = gemm_dims(inner)
    return cube_tiling(batch, m, k, n, _width(inner.operands[0].type), figure)


def block_dim(tiling: TilingAttr, cores: int) -> int:
    """The cores a kernel of `tiling` claims: one per tile, at most the unit's `cores`."""
    return max(1, min(cores, tiling.tile_count))


def vector_tiling(elements: int, widths: list[int], figure: Callable[[str], int | float]) -> VectorTilingAttr:
    ub = int(figure("ub_bytes"))
    per_element = max(1, sum(widths))
    for db in (2, 1):
        tile = 1 << max(0, (ub // (per_element * db)).bit_length() - 1)
        tile = min(tile, 1 << max(0, (elements - 1).bit_length()))
        if tile >= 1 and tile * per_element * db <= ub:
            return VectorTilingAttr(tile, db, _ceil(max(elements, 1), tile))
    raise CompileError(f"no vector tile of {per_element} bytes per element fits the {ub}-byte Unified Buffer")


@dataclass(frozen=True)
class TileKernelsPass(RewritesOnly, ModulePass):
    """Gives every kernel its `block_dim` and `tiling` for the module's target."""

    name = "ge-tile-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = op.attributes.get(TARGET_ATTR_NAME)
        if not isinstance(target, TargetAttr):
            from ge.soc import load_profile

            target = load_profile().target_attr()
        rewrite(op, [TileKernel(target), TileTransData(target)], current())


class TileKernel(RewritePattern):
    """Tiles one cube, vector or AI CPU kernel for the target."""

    def __init__(self, target: TargetAttr):
        self.target = target

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: KernelOp, rewriter: PatternRewriter) -> None:
        figure = self.target.figure
        if isinstance(op, AiCpuKernelOp):
            _schedule(op, 1, None, rewriter)
            return
        if isinstance(op, CubeKernelOp) and cube_op(op) is not None:
            tiling: TilingAttr = cube_kernel_tiling(op, figure)
            cores = int(figure("cube_cores"))
        else:
            tiling = _streamed(op, figure)
            cores = int(figure("vector_cores"))
        _schedule(op, block_dim(tiling, cores), tiling, rewriter)


class TileTransData(RewritePattern):
    """Tiles one format conversion as a vector kernel streaming its input and output."""

    def __init__(self, target: TargetAttr):
        self.target = target

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransDataOp, rewriter: PatternRewriter) -> None:
        tiling = _streamed(op, self.target.figure)
        cores = int(self.target.figure("vector_cores"))
        _schedule(op, block_dim(tiling, cores), tiling, rewriter)


def _streamed(op: Operation, figure: Callable[[str], int | float]) -> VectorTilingAttr:
    """The vector tiling of a kernel that streams all its operands and results."""
    types = [v.type for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
    elements = max((math.prod(t.get_shape()) for t in types), default=1)
    return vector_tiling(elements, [_width(t) for t in types], figure)


def _schedule(
    op: KernelOp | TransDataOp, block_dim: int, tiling: TilingAttr | None, rewriter: PatternRewriter
) -> None:
    """Sets `op`'s schedule, telling the rewriter only of a real change (so the walker stops)."""
    cores = IntegerAttr(block_dim, i64)
    if op.block_dim == cores and (tiling is None or op.tiling == tiling):
        return
    if tiling is not None:
        op.tiling = tiling
    op.block_dim = cores
    rewriter.notify_op_modified(op)
