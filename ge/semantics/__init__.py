"""What every `ascend.graph` op computes: one numpy implementation per op.

This is the only definition of an op's meaning. The reference interpreter and constant folding
call `evaluate` (one op) or `run_block` (a whole graph); the emulator's kernels prepare each op
once at load (`base.prepare`, and `evaluator` for `evaluate`'s checks) and call only the prepared
functions at a run.
`core` holds the dispatch table and the tensor ops; `nn` holds convolution, pooling and
normalization.
"""

from .core import IMPLEMENTATIONS, Implementation, constant_array, evaluate, evaluator, run_block, widen

__all__ = [
    "IMPLEMENTATIONS",
    "Implementation",
    "constant_array",
    "evaluate",
    "evaluator",
    "run_block",
    "widen",
]
