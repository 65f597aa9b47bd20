"""Whether a graph computes each sample of a batch from that sample alone: the proof that lets a
batch gear serve a smaller batch by padding.

A model compiled with batch gears 1, 4 and 8 can run a batch of 5 on gear 8: the inputs are
padded with 3 zero samples and the outputs cut back to 5, which is exact only when no op lets a
padded sample reach a real one. `sample_independence` follows the sample axis from the inputs
through every op, asking each op (`ascend.graph`'s `sample_axes`, from the op's `Samplewise`
trait or its elementwise broadcasting) where its results keep it. One op that may mix samples,
or that nothing describes, ends the proof and is named. It reads each op once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import SSAValue

from ge.dialects.common import describe
from ge.dialects.graph.samples import sample_axes


@dataclass(frozen=True)
class SampleIndependence:
    """The answer for one function: `output_axes` holds each output's sample axis (None for an
    output the same for every sample) when the proof holds; otherwise `blocker` names the first
    op that may mix samples."""

    output_axes: tuple[int | None, ...] | None
    blocker: str | None = None

    @property
    def proven(self) -> bool:
        return self.output_axes is not None


def sample_independence(function: FuncOp, input_axes: Sequence[int | None]) -> SampleIndependence:
    """Follows the sample axis from the function's arguments (`input_axes[i]` for argument i,
    None for an input that does not vary with the sample) to its results. Every value that
    varies with the sample keeps the batch's extent along its sample axis."""
    args = function.body.block.args
    if len(input_axes) != len(args):
        raise ValueError(f"{len(input_axes)} input axes for {len(args)} inputs")
    axes: dict[SSAValue, int | None] = {}
    batch: int | None = None
    for arg, axis in zip(args, input_axes, strict=True):
        axes[arg] = axis
        if axis is not None:
            batch = _extent(arg, axis)
    for op in function.body.block.ops:
        operand_axes = [axes.get(operand) for operand in op.operands]
        if isinstance(op, ReturnOp):
            return SampleIndependence(tuple(operand_axes))
        results = sample_axes(op, operand_axes)
        if results is None or any(
            axis is not None and _extent(result, axis) != batch
            for result, axis in zip(op.results, results, strict=True)
        ):
            return SampleIndependence(None, describe(op))
        axes.update(zip(op.results, results, strict=True))
    return SampleIndependence(None, "the function has no return")


def _extent(value: SSAValue, axis: int) -> int | None:
    shape = value.type.get_shape() if isinstance(value.type, TensorType) else ()
    return shape[axis] if 0 <= axis < len(shape) else None
