"""The kernels of a compiled (`ascend.stream`) model as the cost model sees them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from ge.dialects.common import TARGET_ATTR_NAME, TargetAttr
from ge.dialects.stream import KernelFuncOp, LaunchOp, WeightOp, model_of, root_buffer

from .model import KernelInfo, Operand


def soc_figures(module: ModuleOp) -> Mapping[str, Any]:
    """The figures of the SoC a module is compiled for (its `#ascend.target`)."""
    target = module.attributes.get(TARGET_ATTR_NAME)
    if not isinstance(target, TargetAttr):
        raise ValueError("the module names no target: compile it for a SoC first")
    return target.as_dict()


def launch_info(launch: LaunchOp, kernel: KernelFuncOp) -> KernelInfo:
    """What the cost model needs of one launch: the kernel's ops, operands, formats and schedule."""
    inputs = tuple(
        Operand(t, f, weight=isinstance(root_buffer(b).owner, WeightOp))
        for t, f, b in zip(kernel.input_types, kernel.in_formats, launch.inputs, strict=True)
    )
    outputs = tuple(Operand(t, f) for t, f in zip(kernel.output_types, kernel.out_formats, strict=True))
    block = kernel.body.block
    ops = tuple(op for op in block.ops if op is not block.last_op)
    tiling = kernel.tiling.sizes() if kernel.tiling is not None else {}
    return KernelInfo(
        name=kernel.sym_name.data,
        kind=kernel.kernel_kind,
        ops=ops,
        inputs=inputs,
        outputs=outputs,
        block_dim=kernel.block_dim.value.data if kernel.block_dim is not None else 1,
        tiling=tiling,
    )


def launches(module: ModuleOp) -> list[tuple[LaunchOp, KernelInfo]]:
    """Every launch of the module's model, in task order, with its kernel's cost description."""
    model = model_of(module)
    kernels = model.kernels()  # the symbol table read once, not a lookup per launch
    return [
        (op, launch_info(op, kernels[op.kernel.root_reference.data]))
        for op in model.body.block.ops
        if isinstance(op, LaunchOp)
    ]
