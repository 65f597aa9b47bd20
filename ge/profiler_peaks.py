"""The peak rates a profiled kernel is measured against, from a SoC profile's figures: FLOP/s of
the cube per input type, of the vector unit per lane width, of the AI CPU. HARDWARE.md gives the
figures and which are assumptions (`fp32_cube_rate`, `aicpu_gflops`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType
from xdsl.ir import Attribute

from ge.cost.model import KernelInfo
from ge.cost.ops import op_work


def peak_flops(kind: str, dtype: str, cores: int, figures: Mapping[str, Any]) -> tuple[str, float]:
    """(name, FLOP/s) of the peak `cores` cores of a `kind` kernel (`cube`, `vector`,
    `trans_data`, `aicpu`) reach at `dtype`, from the SoC's `figures`: a cube core does 2 FLOPs
    per multiply-add, `cube_fp16_macs_per_cycle` (fp16, bf16), `cube_int8_macs_per_cycle` (int8),
    or the fp16 rate x `fp32_cube_rate` (fp32, where `fp32_cube`); a vector core one FLOP per lane
    per cycle, `vector_bytes_per_cycle` / the type's bytes lanes, and so does a cube kernel's type
    the cube does not take (fp32 on Ascend910A); the AI CPU `aicpu_gflops`."""
    clock_hz = float(figures["clock_mhz"]) * 1e6
    if kind == "aicpu":
        return "aicpu", float(figures["aicpu_gflops"]) * 1e9
    if kind == "cube":
        macs = _cube_macs_per_cycle(dtype, figures)
        if macs is not None:
            return f"cube {dtype}", cores * 2 * macs * clock_hz
    lanes = float(figures["vector_bytes_per_cycle"]) / _dtype_bytes(dtype)
    return f"vector {dtype}", cores * lanes * clock_hz


def kernel_dtype(info: KernelInfo) -> str:
    """A cube kernel's matrix products' input type, else the narrowest type it reads or writes
    (the most lanes: the peak it is measured against is then the highest its cores reach)."""
    if info.kind == "cube":
        for op in info.ops:
            for product in op_work(op).products:
                return dtype_name(product.element)
    elements = [o.type.element_type for o in (*info.inputs, *info.outputs)]
    return min((dtype_name(e) for e in elements), key=_dtype_bytes, default="fp32")


def dtype_name(element: Attribute) -> str:
    """`fp32`, `fp16`, `bf16`, `fp64`, `int8`, `int32`, ... as SoC figures name types."""
    if isinstance(element, BFloat16Type):
        return "bf16"
    if isinstance(element, Float16Type | Float32Type | Float64Type):
        return f"fp{element.bitwidth}"
    if isinstance(element, IntegerType):
        return "bool" if element.bitwidth == 1 else f"int{element.bitwidth}"
    return str(element)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _dtype_bytes(dtype: str) -> int:
    bits = re.sub(r"\D", "", dtype)
    return max(1, int(bits) // 8) if bits else 1


def _cube_macs_per_cycle(dtype: str, figures: Mapping[str, Any]) -> float | None:
    fp16 = float(figures["cube_fp16_macs_per_cycle"])
    if dtype in ("fp16", "bf16"):
        return fp16
    if dtype == "int8":
        return float(figures["cube_int8_macs_per_cycle"])
    if dtype == "fp32" and figures["fp32_cube"] and float(figures["fp32_cube_rate"]) > 0:
        return fp16 * float(figures["fp32_cube_rate"])
    return None
