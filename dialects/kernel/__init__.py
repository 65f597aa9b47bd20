"""The `ascend.kernel` dialect: graph ops grouped into kernels placed on an AI Core unit.

A kernel op holds the graph op(s) it computes in its region (as IREE's dispatch regions do), so
its meaning stays visible and executable; its op name says on which unit it runs. The data format
each operand and result lives in is part of its type (`ge.dialects.formats`):
`tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>`. Kernel bodies compute on the plain logical types,
so a body argument is its operand's type without the format; `trans_data` is the one op that
changes a value's format, and a producer and a consumer cannot disagree about it.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from ..tiling import CubeTilingAttr, VectorTilingAttr
from .kernels import AiCpuKernelOp, CubeKernelOp, KernelOp, VectorKernelOp, YieldOp, weight_groups
from .movement import ConcatViewOp, TransDataOp, ViewOp
from .units import UNITS, KernelKind, KernelKindAttr, KernelUnitAttr, Unit
from .verifiers import target_of

KERNEL_OPS = (CubeKernelOp, VectorKernelOp, AiCpuKernelOp, YieldOp, TransDataOp, ViewOp, ConcatViewOp)
KERNEL_BY_UNIT: dict[str, type[KernelOp]] = {
    kernel.UNIT: kernel for kernel in (CubeKernelOp, VectorKernelOp, AiCpuKernelOp)
}

KERNEL_ATTRIBUTES = (KernelUnitAttr, KernelKindAttr, CubeTilingAttr, VectorTilingAttr)

Kernel = Dialect("ascend.kernel", list(KERNEL_OPS), list(KERNEL_ATTRIBUTES))

__all__ = [
    "KERNEL_ATTRIBUTES",
    "KERNEL_BY_UNIT",
    "KERNEL_OPS",
    "UNITS",
    "AiCpuKernelOp",
    "ConcatViewOp",
    "CubeKernelOp",
    "CubeTilingAttr",
    "Kernel",
    "KernelKind",
    "KernelKindAttr",
    "KernelOp",
    "KernelUnitAttr",
    "TransDataOp",
    "Unit",
    "VectorKernelOp",
    "VectorTilingAttr",
    "ViewOp",
    "YieldOp",
    "target_of",
    "weight_groups",
]
