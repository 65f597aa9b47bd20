"""The kernel cost model: how long one kernel runs on the AI Cores of a SoC profile.

A kernel's work (`ge.cost.ops`) becomes busy time per unit: the cube in fractal tile products,
the vector unit in bytes swept, MTE2 and MTE3 in bytes over HBM. With double buffering the units
overlap, so a kernel takes its slowest unit's time plus the pipeline fill of one tile; without,
the sum. MTE2 and MTE3 share the HBM bandwidth, so they count as one memory stream. Every figure
comes from the profile (`soc`, as `load_profile(name).figures`), none from this code.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType, TensorType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from ge.dialects.formats import FORMATS, FRACTAL, FRAMEWORK_FORMATS, device_shape, plain_type
from ge.dialects.kernel import KernelKind
from ge.dtypes import shaped_type
from ge.errors import CompileError

from .ops import op_flops, op_work
from .work import OpWork, element_bytes

VECTOR_BLOCK_BYTES = 32 * 1024
"""Output bytes one vector core is given at least, for `default_block_dim`: smaller shares would
spend more time starting up than computing."""

TOLERANCE_US = 1e-9


@dataclass(frozen=True)
class Operand:
    """A kernel input or output: its logical type, its data format, and whether it is a weight."""

    type: TensorType
    format: str
    weight: bool = False


@dataclass(frozen=True)
class KernelInfo:
    """What the cost model needs of a kernel. `ops` are the graph ops of its body in order (empty
    for trans_data); `tiling` may hold `db` (1 or 2, default 2) and `tiles` (default 1)."""

    name: str
    kind: str
    ops: tuple[Operation, ...]
    inputs: tuple[Operand, ...]
    outputs: tuple[Operand, ...]
    block_dim: int = 1
    tiling: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class KernelCost:
    """Busy time of each unit, HBM traffic, and the kernel's modelled duration (microseconds).

    `latency_us` is the core time (units overlapped as the tiling allows) plus `launch_us`;
    `roofline_us` is the fastest any kernel moving these bytes and doing these matrix products
    could run, plus `launch_us`; `bound` names what dominates: "cube", "vector", "memory",
    "launch", or "aicpu" for AI CPU kernels.
    """

    cube_us: float
    vector_us: float
    scalar_us: float
    mte2_us: float
    mte3_us: float
    mte2_bytes: int
    mte3_bytes: int
    flops: int
    launch_us: float
    latency_us: float
    roofline_us: float
    bound: str


def kernel_cost(
    info: KernelInfo,
    soc: Mapping[str, Any],
    *,
    sunk: bool = True,
    work: Callable[[Operation], OpWork] = op_work,
    works: Sequence[OpWork] | None = None,
) -> KernelCost:
    """The modelled cost of `info` on the SoC whose figures `soc` holds; `sunk` says whether the
    model is sunk to the device (per-task scheduling) or launched kernel by kernel from the host.
    `work` gives each op's work (a caller costing many groups of the same ops passes a cache);
    `works`, when given, is the work of the whole kernel instead of its ops'."""
    _check(info)
    mte2_bytes = sum(physical_bytes(o, soc, info) for o in info.inputs)
    mte3_bytes = sum(physical_bytes(o, soc, info) for o in info.outputs)
    hbm_bytes_per_us = float(soc["hbm_gbps"]) * 1e3
    memory = _Memory(mte2_bytes, mte3_bytes, mte2_bytes / hbm_bytes_per_us, mte3_bytes / hbm_bytes_per_us)
    launch_us = float(soc["sunk_task_us"] if sunk else soc["host_launch_us"])
    if works is None:
        works = [work(op) for op in info.ops] if info.kind != "trans_data" else []
    flops = sum(w.flops for w in works)
    if info.kind == "aicpu":
        return _aicpu_cost(info, soc, memory, flops, launch_us)
    return _core_cost(info, soc, works, memory, flops, launch_us)


def default_block_dim(info: KernelInfo, soc: Mapping[str, Any]) -> int:
    """How many cores `info` should claim: never more than the unit has, nor more than the kernel
    has independent output tiles (cube: 16 x 16 result tiles of its largest product; vector and
    trans_data: `VECTOR_BLOCK_BYTES` of output each); at least 1. AI CPU kernels run on one core."""
    _check(info)
    if info.kind == "aicpu":
        return 1
    tiles = 0
    if info.kind == "cube":
        tiles = max((p.output_tiles() for op in info.ops for p in op_work(op).products), default=0)
    if not tiles:
        tiles = math.ceil(sum(physical_bytes(o, soc, info) for o in info.outputs) / VECTOR_BLOCK_BYTES)
    return max(1, min(unit_cores(info.kind, soc), tiles))


def model_latency_us(kernels: Sequence[KernelInfo], soc: Mapping[str, Any], *, sunk: bool) -> float:
    """Latency of `kernels` run in order on one stream: the sum of their latencies."""
    return sum(kernel_cost(k, soc, sunk=sunk).latency_us for k in kernels)


def roofline_check(info: KernelInfo, soc: Mapping[str, Any]) -> float:
    """How many times its roofline the modelled latency of `info` is, at the worse of sunk and not
    sunk; raises AssertionError if the model is ever faster than the roofline."""
    ratios = []
    for sunk in (True, False):
        cost = kernel_cost(info, soc, sunk=sunk)
        assert cost.latency_us >= cost.roofline_us - TOLERANCE_US, (info.name, cost)
        ratios.append(cost.latency_us / cost.roofline_us)
    return min(ratios)


def unit_cores(kind: str, soc: Mapping[str, Any]) -> int:
    """The cores a kernel of `kind` can run on."""
    if kind == "cube":
        return int(soc["cube_cores"])
    if kind == "aicpu":
        return 1
    return int(soc["vector_cores"])


def physical_bytes(operand: Operand, soc: Mapping[str, Any], info: KernelInfo | None = None) -> int:
    """Bytes `operand` takes in its format, padding included (C0 from the profile)."""
    element = operand.type.element_type
    width = element_bytes(element)
    # 8-bit types, and the narrower ones stored a byte each, fill a 32-byte row with 32 elements.
    c0 = int(soc["c0_int8"] if 1 < getattr(element, "bitwidth", 0) <= 8 else soc["c0_fp16"])
    groups = _weight_groups(info, operand) if info is not None and operand.format == "FRACTAL_Z" else 1
    try:
        shape = device_shape(operand.type.get_shape(), operand.format, c0, groups)
    except ValueError as error:
        where = f"kernel '{info.name}'" if info is not None else "operand"
        raise CompileError(f"{where}: {error}") from None
    return math.prod(shape) * width


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Memory:
    mte2_bytes: int
    mte3_bytes: int
    mte2_us: float
    mte3_us: float

    @property
    def us(self) -> float:
        """MTE2 and MTE3 share the HBM bandwidth: together they are one stream."""
        return self.mte2_us + self.mte3_us


def _aicpu_cost(
    info: KernelInfo, soc: Mapping[str, Any], memory: _Memory, flops: int, launch_us: float
) -> KernelCost:
    """The AI CPU runs the ops one after the other, reading and writing HBM as it goes."""
    counted = max(1, sum(_aicpu_flops(op) for op in info.ops))
    compute_us = counted / (float(soc["aicpu_gflops"]) * 1e3)
    scalar_us = compute_us + float(soc["aicpu_launch_us"])
    latency_us = scalar_us + memory.us + launch_us
    roofline_us = max(compute_us, memory.us) + launch_us
    return _finish("aicpu", 0.0, 0.0, scalar_us, memory, flops, launch_us, latency_us, roofline_us)


def _core_cost(
    info: KernelInfo,
    soc: Mapping[str, Any],
    works: Sequence[OpWork],
    memory: _Memory,
    flops: int,
    launch_us: float,
) -> KernelCost:
    """Cube and vector cycles over the kernel's cores, overlapped with MTE traffic."""
    clock = float(soc["clock_mhz"])
    cores = min(info.block_dim, unit_cores(info.kind, soc))
    cube_cores = min(cores, int(soc["cube_cores"]))
    vector_bytes = float(soc["vector_bytes_per_cycle"])
    cube_cycles = vector_cycles = cube_roof_us = vector_roof_us = 0.0
    for work in works:
        for product in work.products:
            rate = _cube_rate(product.element, soc)
            if rate is None:
                # No cube for this type: the vector unit multiplies, lane by lane.
                lanes = vector_bytes / element_bytes(product.element)
                vector_cycles += 2 * product.macs / lanes / cores
                vector_roof_us += 2 * product.macs / (lanes * unit_cores(info.kind, soc)) / clock
            else:
                k0, macs_per_cycle = rate
                # A core computes whole output tiles: more cores than tiles would idle.
                sharing = max(1, min(cube_cores, product.output_tiles()))  # an empty product: none
                cube_cycles += product.tiles(k0) * FRACTAL * k0 * FRACTAL / macs_per_cycle / sharing
                cube_roof_us += product.macs / (macs_per_cycle * int(soc["cube_cores"])) / clock
        for sweep in work.sweeps:
            slow = sweep.transcendental / float(soc["vector_transcendental_rate"])
            vector_cycles += (
                sweep.elements * sweep.element_bytes / vector_bytes * (sweep.simple + slow) / cores
            )
    converted = _conversion_bytes(info, works, soc)
    if info.kind == "trans_data":
        converted += memory.mte2_bytes + memory.mte3_bytes
    vector_cycles += converted / vector_bytes / cores

    cube_us, vector_us = cube_cycles / clock, vector_cycles / clock
    busy = (cube_us, vector_us, memory.us)
    if int(info.tiling.get("db", 2)) == 1:
        core_us = sum(busy)
    else:
        # The slowest unit sets the pace; the others only show while the first tile fills the pipe.
        core_us = max(busy) + (sum(busy) - max(busy)) / max(1, int(info.tiling.get("tiles", 1)))
    roofline_us = max(cube_roof_us, vector_roof_us, memory.us) + launch_us
    return _finish(
        info.kind, cube_us, vector_us, 0.0, memory, flops, launch_us, core_us + launch_us, roofline_us
    )


def _check(info: KernelInfo) -> None:
    kinds = [kind.value for kind in KernelKind]
    if info.kind not in kinds:
        raise CompileError(f"kernel '{info.name}': unknown kind '{info.kind}' (known: {', '.join(kinds)})")
    if info.block_dim < 1:
        raise CompileError(f"kernel '{info.name}': block_dim must be at least 1, got {info.block_dim}")
    if int(info.tiling.get("db", 2)) not in (1, 2):
        raise CompileError(f"kernel '{info.name}': db must be 1 or 2, got {info.tiling['db']}")
    for operand in (*info.inputs, *info.outputs):
        if operand.format not in FORMATS:
            known = ", ".join(FORMATS)
            raise CompileError(f"kernel '{info.name}': unknown format '{operand.format}' (known: {known})")
        if any(d < 0 for d in operand.type.get_shape()):
            raise CompileError(
                f"kernel '{info.name}': the cost model needs static shapes, got {operand.type}"
            )


def _cube_rate(element: Attribute, soc: Mapping[str, Any]) -> tuple[int, float] | None:
    """(fractal depth k0, MACs per cycle) of the cube for inputs of `element`; None if it cannot."""
    fp16_rate = float(soc["cube_fp16_macs_per_cycle"])
    if isinstance(element, Float16Type | BFloat16Type):
        return int(soc["c0_fp16"]), fp16_rate
    if isinstance(element, IntegerType) and element.bitwidth == 8:
        return int(soc["c0_int8"]), float(soc["cube_int8_macs_per_cycle"])
    if isinstance(element, Float32Type) and soc["fp32_cube"] and float(soc["fp32_cube_rate"]) > 0:
        return int(soc["c0_fp16"]), fp16_rate * float(soc["fp32_cube_rate"])
    return None


def _conversion_bytes(info: KernelInfo, works: Sequence[OpWork], soc: Mapping[str, Any]) -> int:
    """Bytes converted inside a kernel: framework-layout inputs the cube reads (laid out as fractal
    tiles on load) and, without FixPipe, outputs stored in another layout than the accumulator's."""
    on_cube = [w for w in works if any(_cube_rate(p.element, soc) for p in w.products)]
    if not on_cube:
        return 0
    indices = _input_indices(info)
    loaded = {indices[v] for w in on_cube for v in w.matrix_operands if v in indices}
    total = sum(
        physical_bytes(info.inputs[i], soc, info)
        for i in loaded
        if info.inputs[i].format in FRAMEWORK_FORMATS
    )
    if not soc["fixpipe"]:
        accumulators = {w.accumulator for w in on_cube}
        total += sum(physical_bytes(o, soc, info) for o in info.outputs if o.format not in accumulators)
    return total


def _input_indices(info: KernelInfo) -> dict[SSAValue, int]:
    """Which kernel input each value from outside the ops is: by block argument index when the ops
    are a body whose arguments are the inputs, else by order of first use."""
    produced = {r for op in info.ops for r in op.results}
    outside: list[SSAValue] = []
    for op in info.ops:
        for value in op.operands:
            if value not in produced and value not in outside:
                outside.append(value)
    # A kernel's operands carry their formats in their types; its body computes on the plain ones.
    types = [plain_type(o.type) for o in info.inputs]
    args = [v for v in outside if isinstance(v, BlockArgument)]
    if args and len(args) == len(outside):
        block = args[0].owner
        if all(a.owner is block for a in args) and [plain_type(a.type) for a in block.args] == types:
            return {a: a.index for a in args}
    if [plain_type(v.type) for v in outside] == types:
        return {v: i for i, v in enumerate(outside)}
    return {}


def _weight_groups(info: KernelInfo, operand: Operand) -> int:
    """The conv groups of a FRACTAL_Z kernel input (1 if no conv of the kernel reads it)."""
    indices = _input_indices(info)
    for op in info.ops:
        work = op_work(op)
        if len(work.matrix_operands) > 1 and work.groups > 1:
            index = indices.get(work.matrix_operands[1])
            if index is not None and info.inputs[index] is operand:
                return work.groups
    return 1


def _aicpu_flops(op: Operation) -> int:
    """Work the AI CPU does for `op`: its FLOPs, or for ops that only move data, one per element."""
    flops = op_flops(op)
    if flops:
        return flops
    counts = [math.prod(shaped_type(v).get_shape()) for v in (*op.operands[:1], *op.results[:1])]
    return max(counts, default=1)


def _finish(
    kind: str,
    cube_us: float,
    vector_us: float,
    scalar_us: float,
    memory: _Memory,
    flops: int,
    launch_us: float,
    latency_us: float,
    roofline_us: float,
) -> KernelCost:
    if kind == "aicpu":
        bound = "aicpu"
    else:
        busy = {"cube": cube_us, "vector": vector_us, "memory": memory.us, "launch": launch_us}
        bound = max(busy, key=busy.__getitem__)
    # The model is never faster than the roofline.
    assert latency_us >= roofline_us - TOLERANCE_US, (latency_us, roofline_us)
    return KernelCost(
        cube_us=cube_us,
        vector_us=vector_us,
        scalar_us=scalar_us,
        mte2_us=memory.mte2_us,
        mte3_us=memory.mte3_us,
        mte2_bytes=memory.mte2_bytes,
        mte3_bytes=memory.mte3_bytes,
        flops=flops,
        launch_us=launch_us,
        latency_us=latency_us,
        roofline_us=roofline_us,
        bound=bound,
    )
