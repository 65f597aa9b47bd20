"""The checks every kernel-level op shares: the target it is placed for, the formats in its
operand and result types, and the schedule (tiling, block_dim) its unit takes."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from xdsl.dialects.builtin import (
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Operation, SSAValue

from ..common import TARGET_ATTR_NAME, TargetAttr, fail
from ..formats import (
    bitwidth_of,
    encoding_error,
    format_of,
)
from ..tiling import TILED_UNITS, TilingAttr, tiling_error
from ..verify import LocalVerifier


def target_of(op: Operation) -> TargetAttr | None:
    """The `#ascend.target` of the module around `op`, if it has one."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ModuleOp):
        parent = parent.parent_op()
    while parent is not None:
        target = parent.attributes.get(TARGET_ATTR_NAME)
        if isinstance(target, TargetAttr):
            return target
        parent = parent.parent_op()
    return None


class TargetChecked(LocalVerifier):
    """An op whose verifier reads the target's figures (through `target_of`) beside itself."""

    def verification_context(self) -> Hashable:
        assert isinstance(self, Operation), "a mixin of op classes"
        return target_of(self)


def check_formats(op: Operation) -> None:
    """Each operand's and result's format (its type's encoding) must be a device format that fits
    its rank (`FormatAttr` itself refuses ND and NCHW: the plain type is that layout)."""
    for what, values in (("operand", op.operands), ("result", op.results)):
        for index, value in enumerate(values):
            if (error := encoding_error(value.type)) is not None:
                raise fail(op, f"{what} #{index}: {error}")


def formats_of(values: Sequence[SSAValue]) -> tuple[str, ...]:
    return tuple(format_of(v) for v in values)


def check_schedule(
    op: Operation,
    unit: str,
    values: Sequence[SSAValue],
    block_dim: IntegerAttr | None,
    tiling: TilingAttr | None,
) -> None:
    """`op`'s `block_dim` and `tiling` must be coherent and fit the target's buffers and cores."""
    cores_asked = block_dim.value.data if block_dim is not None else None
    if cores_asked is not None and cores_asked < 1:
        raise fail(op, f"block_dim must be at least 1, got {cores_asked}")
    target = target_of(op)
    if target is None:
        return
    if cores_asked is not None:
        key = {"cube": "cube_cores", "vector": "vector_cores"}.get(unit)
        cores = target.figure(key) if key else 1
        if cores_asked > cores:
            raise fail(op, f"block_dim {cores_asked} exceeds the {cores} {unit} cores of the target")
    if tiling is not None and unit in TILED_UNITS:
        types = [v.type for v in values if isinstance(v.type, TensorType)]
        widths = [max(1, bitwidth_of(t.element_type) // 8) for t in types]
        error = tiling_error(unit, tiling, widths, target.figure)
        if error:
            raise fail(op, error)


def tensor_of(value: SSAValue) -> TensorType:
    """The type of a kernel-level value: a tensor, as the kernel ops' operand constraints say."""
    value_type = value.type
    assert isinstance(value_type, TensorType), f"a kernel value of type {value_type}, not a tensor"
    return value_type
