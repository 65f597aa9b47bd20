"""The reference interpreter: runs an `ascend.graph` function with the shared op semantics.

It is the meaning of a graph before any lowering; passes are checked against it and the emulator
is checked against it and against ONNX Runtime.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from .errors import GeError
from .semantics import run_block
from .weights import WeightStore


def run_function(
    module: ModuleOp, inputs: Sequence[np.ndarray], weights: WeightStore | None = None
) -> list[np.ndarray]:
    """Runs the module's one graph function on `inputs` (in argument order)."""
    funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    if len(funcs) != 1:
        raise GeError(f"expected one graph function in the module, found {len(funcs)}")
    block = funcs[0].body.block
    if len(inputs) != len(block.args):
        raise GeError(f"the graph takes {len(block.args)} inputs, {len(inputs)} given")
    return run_block(block, list(inputs), weights)
