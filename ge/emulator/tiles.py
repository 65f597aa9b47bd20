"""What a cube kernel's runs take from its compiled tiling, prepared once per kernel.

The compiler tiles a cube kernel's matrix product (`ge-tile-kernels`): `#ascend.cube_tiling<m, n,
k, db, tiles>` says each step contracts `k` elements of K (the device K, channels padded to whole
C0 blocks), so the product takes ceil(K / k) steps. `prepare_cube` reads that once, checks that
the tiling's L0A, L0B, L0C and UB claims (`ge.dialects.tiling.cube_claims`, the tiler's own byte
formula) fit the target's buffers, and returns the `CubeSchedule` every run of the kernel uses.
A tiling that does not fit (a module edited after compilation, or never verified) is an error
here, before any number is computed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from ge.dialects import graph
from ge.dialects.formats import bitwidth_of
from ge.dialects.kernel import target_of
from ge.dialects.stream import KernelFuncOp
from ge.dialects.tiling import CubeTilingAttr, cube_claims
from ge.dtypes import tensor_type
from ge.errors import VerificationError

BUFFERS = ("l0a_bytes", "l0b_bytes", "l0c_bytes", "ub_bytes")
"""The buffers a cube tiling claims, as the SoC profile names their capacities."""


@dataclass(frozen=True)
class CubeSchedule:
    """How the cube runs one kernel's matrix products: `k_step` elements of K per step (None: all of
    K in one step, for a kernel without a cube tiling), and the bytes each buffer holds per step."""

    k_step: int | None
    claims: dict[str, int]


UNTILED = CubeSchedule(None, {})
"""The schedule of a kernel the compiler did not tile for the cube."""


def prepare_cube(kernel: KernelFuncOp) -> CubeSchedule:
    """The cube schedule of `kernel`, checked against its target's buffers (the module's
    `#ascend.target`, else the default SoC profile, as `ge-tile-kernels` reads it).

    Raises VerificationError naming the kernel, the buffer and its bytes against the capacity when
    the tiling claims more than the target has."""
    tiling = kernel.tiling
    product = _first_product(kernel)
    if not isinstance(tiling, CubeTilingAttr) or product is None:
        return UNTILED
    element = tensor_type(product.operands[0]).element_type
    claims = cube_claims(tiling, max(1, bitwidth_of(element) // 8))
    target = target_of(kernel)
    if target is None:
        from ge.soc import load_profile

        target = load_profile().target_attr()
    for buffer in BUFFERS:
        try:
            have = int(target.figure(buffer))
        except VerifyException as error:  # a target written by hand, naming only some figures
            raise VerificationError(f"kernel @{kernel.sym_name.data}: {error}") from None
        if claims[buffer] > have:
            name = buffer.removesuffix("_bytes").upper()
            raise VerificationError(
                f"kernel @{kernel.sym_name.data}: its tiling {tiling.sizes()} needs {claims[buffer]} "
                f"bytes of {name} per step, the {target.soc.data} has {have}; recompile the model "
                "so ge-tile-kernels chooses tiles that fit"
            )
    return CubeSchedule(tiling.k.data, claims)


def _first_product(kernel: KernelFuncOp) -> Operation | None:
    """The matrix product the kernel's tiling was chosen for: the first in its body, as the tiler
    (`ge-tile-kernels`, through `cube_op`) takes it."""
    for op in kernel.body.block.ops:
        if graph.matrix_product(op) is not None:
            return op
    return None
