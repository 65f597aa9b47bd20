"""Fixtures of the cost model tests: graph ops parsed from MLIR text, and kernels built from them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation
from xdsl.parser import Parser

from ge.context import make_context
from ge.cost import KernelInfo, Operand


def _function(body: str) -> FuncOp:
    module = Parser(make_context(), body).parse_module()
    return next(op for op in module.body.block.ops if isinstance(op, FuncOp))


@pytest.fixture
def parse_ops() -> Callable[[str], tuple[Operation, ...]]:
    """The graph ops of the one function in an MLIR text, in order (without its return)."""

    def parse(text: str) -> tuple[Operation, ...]:
        return tuple(op for op in _function(text).body.block.ops if not isinstance(op, ReturnOp))

    return parse


@pytest.fixture
def kernel() -> Callable[..., KernelInfo]:
    """A kernel of the ops of one function: its arguments are the inputs, in `in_formats`, and
    its returned values the outputs, in `out_formats`; `weights` lists the weight inputs."""

    def build(
        text: str,
        kind: str,
        in_formats: Sequence[str],
        out_formats: Sequence[str],
        weights: Sequence[int] = (),
        block_dim: int = 1,
        tiling: dict[str, int] | None = None,
    ) -> KernelInfo:
        func = _function(text)
        block = func.body.block
        ops = tuple(op for op in block.ops if not isinstance(op, ReturnOp))
        returned = block.last_op
        assert isinstance(returned, ReturnOp)
        inputs = tuple(
            Operand(arg.type, fmt, index in weights)  # type: ignore[arg-type]
            for index, (arg, fmt) in enumerate(zip(block.args, in_formats, strict=True))
        )
        outputs = tuple(
            Operand(v.type, fmt)  # type: ignore[arg-type]
            for v, fmt in zip(returned.operands, out_formats, strict=True)
        )
        return KernelInfo("k", kind, ops, inputs, outputs, block_dim, tiling or {})

    return build
