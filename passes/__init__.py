"""The pass registry: every `ge` pass by its flag, with a one-line description.

Factories import lazily so that `ge-opt --help` stays fast and a pass module is loaded only when
it runs.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _lower_graph_to_kernel() -> type[ModulePass]:
    from .conversion.lower_graph_to_kernel import LowerGraphToKernelPass

    return LowerGraphToKernelPass


def _lower_kernel_to_stream() -> type[ModulePass]:
    from .conversion.lower_kernel_to_stream import LowerKernelToStreamPass

    return LowerKernelToStreamPass


def _constant_fold() -> type[ModulePass]:
    from .graph.constant_fold import ConstantFoldPass

    return ConstantFoldPass


def _simplify() -> type[ModulePass]:
    from .graph.simplify import SimplifyPass

    return SimplifyPass


PASSES: dict[str, tuple[Callable[[], type[ModulePass]], str]] = {
    "ge-constant-fold": (
        _constant_fold,
        "compute every graph op whose operands are constants, with the shared semantics",
    ),
    "ge-simplify": (
        _simplify,
        "remove no-op reshapes/transposes/casts and x*1, x+0; collapse reshape, transpose, cast chains",
    ),
    "ge-lower-graph-to-kernel": (
        _lower_graph_to_kernel,
        "wrap each ascend.graph op in an ascend.kernel (cube for conv2d/matmul/gemm, else vector)",
    ),
    "ge-lower-kernel-to-stream": (
        _lower_kernel_to_stream,
        "outline kernels and place every tensor and weight at an offset in one ascend.stream.model",
    ),
}


def get_pass(name: str) -> type[ModulePass]:
    return PASSES[name][0]()


__all__ = ["PASSES", "get_pass"]
