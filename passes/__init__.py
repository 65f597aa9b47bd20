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


def _fuse_conv_bn() -> type[ModulePass]:
    from .graph.fuse_conv_bn import FuseConvBatchNormPass

    return FuseConvBatchNormPass


def _fuse_bias_activation() -> type[ModulePass]:
    from .graph.fuse_bias_activation import FuseBiasActivationPass

    return FuseBiasActivationPass


def _mixed_precision() -> type[ModulePass]:
    from .graph.mixed_precision import MixedPrecisionPass

    return MixedPrecisionPass


def _fuse_gelu() -> type[ModulePass]:
    from .graph.fuse_gelu import FuseGeluPass

    return FuseGeluPass


def _fuse_layer_norm() -> type[ModulePass]:
    from .graph.fuse_layer_norm import FuseLayerNormPass

    return FuseLayerNormPass


def _fuse_attention() -> type[ModulePass]:
    from .graph.fuse_attention import FuseAttentionPass

    return FuseAttentionPass


def _annotate_symbols() -> type[ModulePass]:
    from .graph.annotate_symbols import AnnotateSymbolsPass

    return AnnotateSymbolsPass


def _assign_formats() -> type[ModulePass]:
    from .kernel.assign_formats import AssignFormatsPass

    return AssignFormatsPass


def _tile_kernels() -> type[ModulePass]:
    from .kernel.tile_kernels import TileKernelsPass

    return TileKernelsPass


def _assign_streams() -> type[ModulePass]:
    from .stream.assign_streams import AssignStreamsPass

    return AssignStreamsPass


def _plan_memory() -> type[ModulePass]:
    from .stream.plan_memory import PlanMemoryPass

    return PlanMemoryPass


PASSES: dict[str, tuple[Callable[[], type[ModulePass]], str]] = {
    "ge-constant-fold": (
        _constant_fold,
        "compute every graph op whose operands are constants, with the shared semantics",
    ),
    "ge-simplify": (
        _simplify,
        "remove no-op reshapes/transposes/casts and x*1, x+0; collapse reshape, transpose, cast chains",
    ),
    "ge-fuse-conv-bn": (
        _fuse_conv_bn,
        "fold inference batch norm and per-channel scale/shift chains into the preceding conv",
    ),
    "ge-fuse-bias-activation": (
        _fuse_bias_activation,
        "fuse a conv/matmul/gemm with its single-use bias, residual add, activation and clip tail",
    ),
    "ge-lower-graph-to-kernel": (
        _lower_graph_to_kernel,
        "form kernels: cube ops with epilogues, elementwise trees, views (form-kernels=false: one per op)",
    ),
    "ge-assign-formats": (
        _assign_formats,
        "pick NC1HWC0 / FRACTAL_Z / FRACTAL_NZ for kernel operands; insert and cancel trans_data",
    ),
    "ge-tile-kernels": (
        _tile_kernels,
        "give every kernel block_dim and tile sizes that fit the target's L0A/L0B/L0C/UB",
    ),
    "ge-lower-kernel-to-stream": (
        _lower_kernel_to_stream,
        "outline kernels and place every tensor and weight at an offset in one ascend.stream.model",
    ),
    "ge-assign-streams": (
        _assign_streams,
        "spread independent launches over streams (max-streams=4); events on cross-stream dependencies",
    ),
    "ge-plan-memory": (
        _plan_memory,
        "place buffers by lifetime (greedy by size or size-binned, the smaller wins; in-place elementwise)",
    ),
    "ge-mixed-precision": (
        _mixed_precision,
        "run ops in fp16/bf16/fp32 by a GE precision mode; casts only at precision boundaries",
    ),
    "ge-fuse-gelu": (
        _fuse_gelu,
        "replace GELU written out as erf or tanh formulas by one ascend.graph.gelu",
    ),
    "ge-fuse-layer-norm": (
        _fuse_layer_norm,
        "replace decomposed layer norm and RMS norm over the trailing axes by layer_norm / rms_norm",
    ),
    "ge-fuse-attention": (
        _fuse_attention,
        "replace matmul, scale, mask, softmax, matmul chains by one ascend.graph.attention",
    ),
    "ge-annotate-symbols": (
        _annotate_symbols,
        "record each result's symbolic dimensions (batch, 2*seq, ...) as ascend.dims, for reading",
    ),
}


def get_pass(name: str) -> type[ModulePass]:
    return PASSES[name][0]()


__all__ = ["PASSES", "get_pass"]
