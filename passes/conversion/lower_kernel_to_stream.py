"""`ge-lower-kernel-to-stream`: outline kernels and place every tensor in one arena.

Each kernel op becomes an `ascend.stream.kernel` symbol and a launch on stream 0; every tensor
(graph inputs included) gets a buffer at its own aligned offset in the arena (no reuse yet), and
every constant a slot at an aligned offset in the one weight blob (identical constants share
one slot). The function is replaced by
one `ascend.stream.model`.

```
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = ascend.kernel.vector(%x) {...} : (tensor<4xf32>) -> tensor<4xf32> { ... }
  func.return %y : tensor<4xf32>
}
```
becomes
```
ascend.stream.kernel @relu_0 {...} : (tensor<4xf32>) -> tensor<4xf32> { ... }
ascend.stream.model @main {arena_size = 1024 : i64, weight_size = 0 : i64, ...} {
  %0 = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
  %1 = ascend.stream.buffer offset 512 size 16 : memref<4xf32>
  ascend.stream.launch @relu_0 (%0) -> (%1) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
  ascend.stream.outputs %1 : memref<4xf32>
}
```
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ge.dialects import stream
from ge.dialects.common import describe
from ge.dialects.graph import ConstOp
from ge.dialects.kernel import KernelOp, YieldOp
from ge.errors import CompileError

NAME_ATTR = "ascend.name"
"""Argument and result attribute of the graph function that holds a tensor's user-facing name."""


@dataclass(frozen=True)
class LowerKernelToStreamPass(ModulePass):
    """Turns each graph function of kernels into an `ascend.stream.model`."""

    name = "ge-lower-kernel-to-stream"

    alignment: int = 512
    """Byte alignment of every buffer and weight offset."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.alignment < 1:
            raise CompileError("ge-lower-kernel-to-stream: alignment must be positive")
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            _StreamBuilder(self.alignment, getattr(ctx, "weights", None)).lower(func)


class _StreamBuilder:
    def __init__(self, alignment: int, weights: object | None):
        self.alignment = alignment
        self.weights = weights
        self.stored: dict[tuple, SSAValue] = {}
        """Weights by content: identical constants share one slot of the blob."""
        self.arena = 0
        self.blob = 0
        self.kernels: list[Operation] = []
        self.tasks: list[Operation] = []
        self.buffers: dict[SSAValue, SSAValue] = {}
        self.symbols: set[str] = set()

    def lower(self, func: FuncOp) -> None:
        if func.is_declaration:
            raise CompileError(f"function @{func.sym_name.data} has no body to compile")
        block = func.body.block
        for index, arg in enumerate(block.args):
            self._place(arg, input=index)
        returned: list[SSAValue] = []
        for op in block.ops:
            if isinstance(op, ConstOp):
                self._weight(op)
            elif isinstance(op, KernelOp):
                self._launch(op)
            elif isinstance(op, ReturnOp):
                returned = list(op.arguments)
            else:
                raise CompileError(
                    f"{describe(op)} is not inside a kernel: run ge-lower-graph-to-kernel first"
                )
        outputs = [self.buffers[v] for v in returned]
        self.tasks.append(stream.OutputsOp(outputs))
        model = stream.ModelOp.build(
            properties={
                "sym_name": func.sym_name,
                "arena_size": IntegerAttr(self.arena, i64),
                "weight_size": IntegerAttr(self.blob, i64),
                "input_names": _names(func.arg_attrs, len(block.args), "input"),
                "output_names": _names(func.res_attrs, len(returned), "output"),
            },
            regions=[Region(Block(self.tasks))],
        )
        Rewriter.replace_op(func, [*self.kernels, model])

    def _align(self, offset: int) -> int:
        return -(-offset // self.alignment) * self.alignment

    def _place(self, value: SSAValue, input: int | None = None) -> None:
        t = _tensor_type(value)
        size = stream.byte_size(t)
        buffer = stream.BufferOp(self.arena, size, _memref(t), input=input)
        buffer.buffer.name_hint = value.name_hint
        self.arena = self._align(self.arena + max(size, 1))
        self.tasks.append(buffer)
        self.buffers[value] = buffer.buffer

    def _weight(self, op: ConstOp) -> None:
        t = op.result.type
        identity = self._content(op)
        if identity in self.stored:
            self.buffers[op.result] = self.stored[identity]
            return
        size = stream.byte_size(t)
        weight = stream.WeightOp(op.value, self.blob, size, _memref(t))
        weight.buffer.name_hint = op.result.name_hint
        self.blob = self._align(self.blob + max(size, 1))
        self.tasks.append(weight)
        self.buffers[op.result] = weight.buffer
        self.stored[identity] = weight.buffer

    def _content(self, op: ConstOp) -> tuple:
        """What makes two constants the same bytes: their type and value (a resource's data)."""
        value = op.value
        if isinstance(value, DenseResourceAttr) and self.weights is not None:
            key = value.resource_handle.data
            if key in self.weights:
                data = self.weights.get(key)
                return (str(op.result.type), "resource", hashlib.sha256(data.tobytes()).hexdigest())
        return (str(op.result.type), str(value))

    def _launch(self, op: KernelOp) -> None:
        symbol = self._symbol(op)
        body = op.body.clone()
        terminator = body.block.last_op
        assert isinstance(terminator, YieldOp)
        Rewriter.replace_op(terminator, stream.ReturnOp(terminator.values))
        properties = {
            "sym_name": StringAttr(symbol),
            "function_type": FunctionType.from_lists(
                [v.type for v in op.inputs], [r.type for r in op.outputs]
            ),
            "unit": StringAttr(op.UNIT),
            "in_formats": op.in_formats,
            "out_formats": op.out_formats,
        }
        if op.kernel_name is not None:
            properties["kernel_name"] = op.kernel_name
        kernel = stream.KernelFuncOp.build(properties=properties, regions=[body])
        kernel.location = op.location
        self.kernels.append(kernel)
        for result in op.outputs:
            self._place(result)
        launch = stream.LaunchOp(
            symbol,
            [self.buffers[v] for v in op.inputs],
            [self.buffers[r] for r in op.outputs],
            stream=0,
        )
        launch.location = op.location
        self.tasks.append(launch)

    def _symbol(self, op: KernelOp) -> str:
        if op.kernel_name is not None:
            base = op.kernel_name.data
        else:
            first = op.body.block.first_op
            base = first.name.removeprefix("ascend.graph.") if first is not None else op.UNIT
        base = re.sub(r"[^A-Za-z0-9_]", "_", base) or op.UNIT
        symbol, counter = base, 0
        while symbol in self.symbols:
            counter += 1
            symbol = f"{base}_{counter}"
        self.symbols.add(symbol)
        return symbol


def _tensor_type(value: SSAValue) -> TensorType:
    t = value.type
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        raise CompileError(
            f"value %{value.name_hint or '?'} of type {t} needs a static shape to get a buffer"
        )
    return t


def _memref(t: TensorType) -> MemRefType:
    return MemRefType(t.element_type, t.get_shape())


def _names(attrs: ArrayAttr[DictionaryAttr] | None, count: int, prefix: str) -> ArrayAttr:
    names = []
    for index in range(count):
        name = None
        if attrs is not None and index < len(attrs.data):
            name = attrs.data[index].data.get(NAME_ATTR)
        names.append(name if isinstance(name, StringAttr) else StringAttr(f"{prefix}_{index}"))
    return ArrayAttr(names)
