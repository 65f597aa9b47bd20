"""The kernel cost model: per-unit busy time, HBM traffic and latency of kernels on a SoC profile.

`kernel_cost` prices one kernel (`KernelInfo`) with a profile's figures; `op_flops` counts the
useful arithmetic of one graph op; `model_latency_us` adds up the kernels of one stream.
"""

from __future__ import annotations

from .model import (
    KernelCost,
    KernelInfo,
    Operand,
    default_block_dim,
    kernel_cost,
    model_latency_us,
    roofline_check,
)
from .ops import op_flops

__all__ = [
    "KernelCost",
    "KernelInfo",
    "Operand",
    "default_block_dim",
    "kernel_cost",
    "model_latency_us",
    "op_flops",
    "roofline_check",
]
