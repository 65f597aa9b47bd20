"""The reference interpreter: runs an `ascend.graph` function with the shared op semantics, and a
kernel-level function (after `ge-lower-graph-to-kernel`) by the same semantics on logical values.

It is the meaning of a graph before any lowering; passes are checked against it and the emulator
is checked against it and against ONNX Runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation

from ge.dialects.kernel import (
    AiCpuKernelOp,
    ConcatViewOp,
    CubeKernelOp,
    KernelOp,
    TransDataOp,
    VectorKernelOp,
    ViewOp,
)

from .errors import GeError
from .semantics import evaluate, run_block
from .weights import WeightStore


def run_function(
    module: ModuleOp, inputs: Sequence[np.ndarray], weights: WeightStore | None = None
) -> list[np.ndarray]:
    """Runs the module's one graph function on `inputs` (in argument order)."""
    return run_block(_function_block(module, inputs), list(inputs), weights)


def run_kernels(
    module: ModuleOp, inputs: Sequence[np.ndarray], weights: WeightStore | None = None
) -> list[np.ndarray]:
    """Runs the module's one kernel-level function on `inputs` (in argument order): each kernel
    runs its body, a format conversion is the identity (types stay logical), a view reshapes and
    a concat view concatenates. Graph ops outside kernels (constants) run as in `run_function`."""
    return run_block(_function_block(module, inputs), list(inputs), weights, _run_kernel_level_op)


def _function_block(module: ModuleOp, inputs: Sequence[np.ndarray]) -> Block:
    funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    if len(funcs) != 1:
        raise GeError(f"expected one graph function in the module, found {len(funcs)}")
    block = funcs[0].body.block
    if len(inputs) != len(block.args):
        raise GeError(f"the graph takes {len(block.args)} inputs, {len(inputs)} given")
    return block


def _run_kernel(
    op: KernelOp, operands: Sequence[np.ndarray], weights: WeightStore | None
) -> list[np.ndarray]:
    return run_block(op.body.block, operands, weights)


def _trans_data(op: TransDataOp, operands: Sequence[np.ndarray], _: WeightStore | None) -> list[np.ndarray]:
    return [operands[0]]


def _view(op: ViewOp, operands: Sequence[np.ndarray], _: WeightStore | None) -> list[np.ndarray]:
    assert isinstance(op.output.type, TensorType)
    return [operands[0].reshape(op.output.type.get_shape())]


def _concat_view(op: ConcatViewOp, operands: Sequence[np.ndarray], _: WeightStore | None) -> list[np.ndarray]:
    return [np.concatenate(operands, axis=op.axis.value.data)]


_KERNEL_LEVEL: dict[type[Operation], Callable[..., list[np.ndarray]]] = {
    CubeKernelOp: _run_kernel,
    VectorKernelOp: _run_kernel,
    AiCpuKernelOp: _run_kernel,
    TransDataOp: _trans_data,
    ViewOp: _view,
    ConcatViewOp: _concat_view,
}
"""The kernel-level ops that hold or move graph values, and how each computes."""


def _run_kernel_level_op(
    op: Operation, operands: Sequence[np.ndarray], weights: WeightStore | None
) -> list[np.ndarray]:
    run = _KERNEL_LEVEL.get(type(op), evaluate)
    return run(op, operands, weights)
