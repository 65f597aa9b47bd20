"""The `ascend.stream` dialect: one model, as a task list over planned buffers.

Kernels are outlined into `ascend.stream.kernel` symbols (as `gpu.func`, `kernel.py`); an
`ascend.stream.model` (`model.py`) holds the arena and weight-blob sizes, every buffer and weight
at its offset (`buffers.py`) and the views of their bytes (`views.py`), and the launches of
kernels on streams, with events to order work across streams (`tasks.py`).

A buffer's type is the tensor's type as a memref: the logical shape, with the device format as its
layout, `memref<1x3x8x8xf32, #ascend.format<NC1HWC0>>` (no layout: the framework's contiguous
NCHW/ND bytes). A kernel's `function_type` has the same tensor types as the kernel op it was
outlined from, formats as encodings, so a launch's buffer holds a kernel operand exactly when the
two types agree in shape, element type and format: `holds` compares, it does not recompute a stored
shape. The stored shape and byte size follow from the type (`ge.dialects.formats.storage_shape`,
`byte_size`); only a FRACTAL_Z weight adds its convolution's group count (`WeightOp.groups`).
A subview slices the logical shape (for NC1HWC0, channels in whole C0 blocks).
"""

from __future__ import annotations

from xdsl.ir import Dialect

from .buffers import SPACES, BufferOp, WeightOp, byte_size
from .kernel import KernelFuncOp, ReturnOp
from .model import ModelOp, OutputsOp, model_of
from .tasks import EventRecordOp, EventWaitOp, LaunchOp, holds
from .views import SubviewOp, ViewOp, root_buffer

STREAM_OPS = (
    KernelFuncOp,
    ReturnOp,
    ModelOp,
    BufferOp,
    WeightOp,
    LaunchOp,
    EventRecordOp,
    EventWaitOp,
    OutputsOp,
    ViewOp,
    SubviewOp,
)

Stream = Dialect("ascend.stream", list(STREAM_OPS), [])

__all__ = [
    "SPACES",
    "STREAM_OPS",
    "BufferOp",
    "EventRecordOp",
    "EventWaitOp",
    "KernelFuncOp",
    "LaunchOp",
    "ModelOp",
    "OutputsOp",
    "ReturnOp",
    "Stream",
    "SubviewOp",
    "ViewOp",
    "WeightOp",
    "byte_size",
    "holds",
    "model_of",
    "root_buffer",
]
