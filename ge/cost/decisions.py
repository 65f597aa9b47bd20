"""The cost model's verdicts for the compiler's choices: is one kernel cheaper than its parts, is a
product's result cheaper kept in fractals for the products reading it?"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge.dialects.common import TargetAttr
from ge.dialects.formats import framework_format
from ge.dialects.graph import ConstOp
from ge.dtypes import tensor_type
from ge.errors import CompileError

from .model import KernelInfo, Operand, default_block_dim, kernel_cost
from .ops import op_work
from .work import OpWork, Sweep


def group_info(ops: Sequence[Operation], unit: str) -> KernelInfo:
    """The kernel `ops` would form: their external operands in, the last op's results out."""
    members = set(ops)
    inputs: dict[SSAValue, Operand] = {}
    for op in ops:
        for value in op.operands:
            if value.owner not in members and value not in inputs:
                inputs[value] = _input(value)
    return KernelInfo(
        name="group", kind=unit, ops=tuple(ops), inputs=tuple(inputs.values()), outputs=_outputs(ops[-1])
    )


def group_latency(
    ops: Sequence[Operation], unit: str, target: TargetAttr, work: Callable[[Operation], OpWork] = op_work
) -> float:
    """Modelled latency (sunk) of `ops` as one kernel on `unit`, on its default number of cores."""
    soc = _Figures(target)
    info = group_info(ops, unit)
    info = replace(info, block_dim=default_block_dim(info, soc))
    return kernel_cost(info, soc, sunk=True, work=work).latency_us


def kernel_latency(
    ops: Sequence[Operation],
    unit: str,
    inputs: Sequence[Operand],
    outputs: Sequence[Operand],
    target: TargetAttr,
    tiling: Mapping[str, int],
    block_dim: int,
) -> float:
    """Modelled latency (sunk) of a kernel of `ops` (a body whose arguments are its `inputs`) on
    `unit`, its operands in the formats `inputs` and `outputs` give, scheduled as `ge-tile-kernels`
    schedules it: `tiling` (its sizes) on `block_dim` cores."""
    info = KernelInfo("kernel", unit, tuple(ops), tuple(inputs), tuple(outputs), block_dim, tiling)
    return kernel_cost(info, _Figures(target), sunk=True).latency_us


class VectorSummary:
    """What the cost model needs of a group of vector ops, kept as groups merge so that costing
    a merged group does not walk its ops: its inputs from outside (each once, first use first),
    its results, and its sweeps summed (vector cycles are linear in each sweep's bytes times
    its instructions)."""

    def __init__(
        self, inputs: dict[SSAValue, Operand], outputs: tuple[Operand, ...], simple: float, slow: float
    ):
        self.inputs, self.outputs, self.simple, self.slow = inputs, outputs, simple, slow

    @staticmethod
    def of(op: Operation, work: OpWork) -> VectorSummary | None:
        """One op's summary; None for an op with matrix products (the full model costs those)."""
        if work.products:
            return None
        inputs = {value: _input(value) for value in op.operands}
        return VectorSummary(inputs, _outputs(op), *_sweep_bytes(work.sweeps))

    def merge(self, consumer: VectorSummary, producer_root: Operation) -> VectorSummary:
        """This (producer) group followed by `consumer`, which reads the producer's root result."""
        produced = set(producer_root.results)
        inputs = dict(self.inputs)
        for value, operand in consumer.inputs.items():
            if value not in produced:
                inputs.setdefault(value, operand)
        return VectorSummary(
            inputs, consumer.outputs, self.simple + consumer.simple, self.slow + consumer.slow
        )

    def latency(self, target: TargetAttr) -> float:
        """Modelled latency (sunk) of the group as one vector kernel on its default cores."""
        soc = _Figures(target)
        info = KernelInfo(
            name="group", kind="vector", ops=(), inputs=tuple(self.inputs.values()), outputs=self.outputs
        )
        info = replace(info, block_dim=default_block_dim(info, soc))
        sweep = Sweep(elements=1, element_bytes=1, simple=self.simple, transcendental=self.slow)
        return kernel_cost(info, soc, sunk=True, works=[OpWork(sweeps=(sweep,))]).latency_us


def _input(value: SSAValue) -> Operand:
    """A kernel input in its framework format; a constant's is a weight."""
    t = value.type
    assert isinstance(t, TensorType)
    return Operand(t, framework_format(t.get_shape()), weight=isinstance(value.owner, ConstOp))


def _outputs(op: Operation) -> tuple[Operand, ...]:
    types = [tensor_type(r) for r in op.results]
    return tuple(Operand(t, framework_format(t.get_shape())) for t in types)


def _sweep_bytes(sweeps: Sequence[Sweep]) -> tuple[float, float]:
    """Bytes swept times plain instructions, and times transcendental ones."""
    simple = sum(s.elements * s.element_bytes * s.simple for s in sweeps)
    slow = sum(s.elements * s.element_bytes * s.transcendental for s in sweeps)
    return simple, slow


class _Figures(dict[str, int | float]):
    """A target's figures; one the cost model reads and the target lacks is a CompileError."""

    def __init__(self, target: TargetAttr):
        super().__init__(target.as_dict())
        self.soc = target.soc.data

    def __missing__(self, key: str) -> int | float:
        raise CompileError(f"target {self.soc} has no figure '{key}', which the cost model reads")
