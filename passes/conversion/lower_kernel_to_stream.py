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

import re
from dataclasses import dataclass

import numpy as np
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
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ge.dialects import stream
from ge.dialects.common import describe, value_names
from ge.dialects.formats import format_of, memref_of, plain_type
from ge.dialects.graph import ConstOp
from ge.dialects.kernel import (
    ConcatViewOp,
    KernelKind,
    KernelKindAttr,
    KernelOp,
    KernelUnitAttr,
    TransDataOp,
    Unit,
    ViewOp,
    YieldOp,
    weight_groups,
)
from ge.errors import CompileError
from ge.layout import check_alignment
from ge.weights import WeightStore

from ..session import current

"""Argument and result attribute of the graph function that holds a tensor's user-facing name."""


@dataclass(frozen=True)
class LowerKernelToStreamPass(ModulePass):
    """Turns each graph function of kernels into an `ascend.stream.model`."""

    name = "ge-lower-kernel-to-stream"

    alignment: int = 512
    """Byte alignment of every buffer and weight offset."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_alignment(self.alignment, self.name)
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            _StreamBuilder(self.alignment, current().weights).lower(func)


class _StreamBuilder:
    def __init__(self, alignment: int, weights: WeightStore | None):
        self.alignment = alignment
        self.weights = weights
        self.stored: dict[tuple, SSAValue] = {}
        """Weights by content and stored format: identical constants share one slot of the blob."""
        self.arena = 0
        self.blob = 0
        self.kernels: list[Operation] = []
        self.tasks: list[Operation] = []
        self.buffers: dict[SSAValue, SSAValue] = {}
        self.formats: dict[SSAValue, str] = {}
        self.slots: dict[SSAValue, tuple[ConcatViewOp, int]] = {}
        """Values their producer writes straight into a slice of a concat view's result."""
        self.symbols: set[str] = set()

    def lower(self, func: FuncOp) -> None:
        if func.is_declaration:
            raise CompileError(f"function @{func.sym_name.data} has no body to compile")
        # Kernels take names no symbol of the module has (the model is named as the function).
        if (parent := func.parent) is not None:
            names = (getattr(o, "sym_name", None) for o in parent.ops)
            self.symbols |= {name.data for name in names if isinstance(name, StringAttr)}
        block = func.body.block
        for op in block.ops:
            if isinstance(op, ConcatViewOp):
                for index, value in enumerate(op.inputs):
                    self.slots[value] = (op, index)
        for index, arg in enumerate(block.args):
            self._place(arg, format_of(_tensor_type(arg)), input=index)
        returned: list[SSAValue] = []
        for op in block.ops:
            if isinstance(op, ConstOp):
                continue  # placed in the weight blob where a kernel reads it, in the format it reads
            elif isinstance(op, TransDataOp) and isinstance(op.input.owner, ConstOp):
                # A constant is converted once, at compile time: a weight stored in the new format.
                groups = _fractal_z_groups(op.output) if op.dst_format == "FRACTAL_Z" else 1
                self.buffers[op.output] = self._weight(op.input.owner, op.dst_format, groups)
            elif isinstance(op, KernelOp | TransDataOp):
                self._launch(op)
            elif isinstance(op, ViewOp):
                source = self._read(op.input, op.src_format)
                view = stream.ViewOp(source, _memref(op.output.type, op.dst_format))
                view.buffer.name_hint = op.output.name_hint
                self.tasks.append(view)
                self.buffers[op.output] = view.buffer
                self.formats[op.output] = op.dst_format
            elif isinstance(op, ConcatViewOp):
                if op.output not in self.buffers:
                    self._place(op.output, op.format)
            elif isinstance(op, ReturnOp):
                returned = list(op.arguments)
            else:
                raise CompileError(
                    f"{describe(op)} is not inside a kernel: run ge-lower-graph-to-kernel first"
                )
        outputs = [self._read(v, format_of(_tensor_type(v))) for v in returned]
        self._bind_outputs(outputs)
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

    def _place(self, value: SSAValue, fmt: str, input: int | None = None) -> None:
        """A buffer for `value` stored in `fmt`: its own, or its slice of a concat view's result."""
        t = _tensor_type(value)
        memref = _memref(t, fmt)
        self.formats[value] = fmt
        if value in self.slots:
            concat, index = self.slots[value]
            if concat.output not in self.buffers:
                self._place(concat.output, concat.format)
            axis = concat.axis.value.data  # the logical slice: the subview keeps the format
            start = sum(_tensor_type(v).get_shape()[axis] for v in concat.inputs[:index])
            length = t.get_shape()[axis]
            view = stream.SubviewOp(self.buffers[concat.output], axis, start, length, memref)
            view.buffer.name_hint = value.name_hint
            self.tasks.append(view)
            self.buffers[value] = view.buffer
            return
        size = stream.byte_size(memref)
        if input is not None:  # the caller's memory: read where it is, no arena bytes
            buffer = stream.BufferOp(0, size, memref, input=input)
        else:
            buffer = stream.BufferOp(self.arena, size, memref)
            self.arena = self._align(self.arena + max(size, 1))
        buffer.buffer.name_hint = value.name_hint
        self.tasks.append(buffer)
        self.buffers[value] = buffer.buffer

    def _bind_outputs(self, outputs: list[SSAValue]) -> None:
        """Each output a kernel writes (its whole buffer, or a view of it) goes straight to the
        caller's memory; an output that is an input, a weight, or returned twice is copied out."""
        bound: set[Operation] = set()
        for index, value in enumerate(outputs):
            source = value
            while isinstance(source.owner, stream.ViewOp):
                source = source.owner.source
            owner = source.owner
            if not isinstance(owner, stream.BufferOp) or owner.bound or owner in bound:
                continue
            owner.output = IntegerAttr(index, i64)
            owner.offset = IntegerAttr(0, i64)
            bound.add(owner)
        # The arena keeps a slot per remaining tensor, packed in order.
        self.arena = 0
        for task in self.tasks:
            if isinstance(task, stream.BufferOp) and not task.bound:
                task.offset = IntegerAttr(self.arena, i64)
                self.arena = self._align(self.arena + max(task.size.value.data, 1))

    def _read(self, value: SSAValue, fmt: str, groups: int = 1) -> SSAValue:
        """The buffer holding `value` for a reader in `fmt` (constants: a weight in that format)."""
        owner = value.owner
        if isinstance(owner, ConstOp):
            return self._weight(owner, fmt, groups)
        return self.buffers[value]

    def _weight(self, op: ConstOp, fmt: str, groups: int) -> SSAValue:
        t = op.result.type
        fmt = "ND" if fmt == "NCHW" else fmt
        identity = (*self._content(op), fmt, groups)
        if identity in self.stored:
            return self.stored[identity]
        memref = _memref(t, fmt)
        size = stream.byte_size(memref, groups)
        weight = stream.WeightOp(op.value, self.blob, size, memref, groups)
        weight.buffer.name_hint = op.result.name_hint
        self.blob = self._align(self.blob + max(size, 1))
        self.tasks.append(weight)
        self.stored[identity] = weight.buffer
        return weight.buffer

    def _content(self, op: ConstOp) -> tuple:
        """What makes two constants the same bytes: their type and value (a resource's data)."""
        value = op.value
        if isinstance(value, DenseResourceAttr) and self.weights is not None:
            key = value.resource_handle.data
            if key in self.weights:
                return (op.result.type, "resource", _Bytes(self.weights.get(key)))
        return (op.result.type, value)

    def _launch(self, op: KernelOp | TransDataOp) -> None:
        symbol = self._symbol(op)
        if isinstance(op, TransDataOp):
            body = Region(Block(arg_types=[plain_type(op.input.type)]))
            body.block.add_op(stream.ReturnOp(body.block.args))
            unit, kind = Unit.VECTOR, KernelKind.TRANS_DATA
            inputs, outputs = [op.input], [op.output]
        else:
            body = op.body.clone()
            terminator = body.block.last_op
            assert isinstance(terminator, YieldOp)
            Rewriter.replace_op(terminator, stream.ReturnOp(terminator.values))
            unit, kind = Unit(op.UNIT), KernelKind(op.UNIT)
            inputs, outputs = list(op.inputs), list(op.outputs)
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(symbol),
            "function_type": FunctionType.from_lists([v.type for v in inputs], [r.type for r in outputs]),
            "unit": KernelUnitAttr(unit),
        }
        if kind.value != unit.value:
            properties["kind"] = KernelKindAttr(kind)
        for name in ("kernel_name", "block_dim", "tiling"):
            if (value := op.properties.get(name)) is not None:
                properties[name] = value
        kernel = stream.KernelFuncOp.build(properties=properties, regions=[body])
        kernel.location = op.location
        self.kernels.append(kernel)
        buffers = [
            self._read(v, f, weight_groups(body.block.args[i]) if f == "FRACTAL_Z" else 1)
            for i, (v, f) in enumerate(zip(inputs, op.in_formats, strict=True))
        ]
        for result, fmt in zip(outputs, op.out_formats, strict=True):
            self._place(result, fmt)
        launch = stream.LaunchOp(symbol, buffers, [self.buffers[r] for r in outputs], stream=0)
        launch.location = op.location
        self.tasks.append(launch)

    def _symbol(self, op: KernelOp | TransDataOp) -> str:
        if op.kernel_name is not None:
            base = op.kernel_name.data
        elif isinstance(op, TransDataOp):
            base = "trans_data"
        else:
            first = op.body.block.first_op
            base = first.name.removeprefix("ascend.graph.") if first is not None else op.UNIT
        base = re.sub(r"[^A-Za-z0-9_]", "_", base) or "kernel"
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


def _memref(t: TensorType, fmt: str = "ND") -> MemRefType:
    """The buffer type of `t` stored in `fmt`: its logical shape, with `fmt` as its layout."""
    return memref_of(t, fmt)


def _fractal_z_groups(weights: SSAValue) -> int:
    """The convolution groups of the kernels that read `weights` in FRACTAL_Z (1 if none is grouped)."""
    for use in weights.uses:
        if isinstance(use.operation, KernelOp):
            groups = weight_groups(use.operation.body.block.args[use.index])
            if groups != 1:
                return groups
    return 1


def _names(attrs: ArrayAttr[DictionaryAttr] | None, count: int, prefix: str) -> ArrayAttr:
    return ArrayAttr([StringAttr(name) for name in value_names(attrs, count, prefix)])


class _Bytes:
    """An array's bytes as a key: hashed by its dtype, shape and 64 bytes sampled across it, equal
    when every byte is (so weights are not hashed in full, and only alike ones compared)."""

    __slots__ = ("bytes", "_hash")

    def __init__(self, array: np.ndarray) -> None:
        self.bytes = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        sample = self.bytes[:: max(1, self.bytes.size // 64)][:64].tobytes()
        self._hash = hash((array.dtype.str, array.shape, sample))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Bytes)
            and self._hash == other._hash
            and np.array_equal(self.bytes, other.bytes)
        )
