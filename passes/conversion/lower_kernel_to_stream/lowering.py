"""The state one function's stream lowering shares: `StreamLowering`, the bookkeeping of buffers.

`StreamLowering` holds what really is whole-function, shared by the patterns of
`.patterns`: the next arena and weight-blob offsets, the value -> buffer map, the weight slots
identical constants share, the concat slices producers write into, and the symbol names taken.
It also does the two whole-function steps around the patterns' sweep: `function_to_model` (the
function's body moves into an `ascend.stream.model`, each argument read from an input buffer)
and `finish` (outputs a kernel writes go straight to the caller's memory, the remaining buffers
are packed into the arena and the model gets its sizes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseResourceAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    TensorType,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ge.dialects import stream
from ge.dialects.common import describe, value_names
from ge.dialects.formats import format_of, memref_of
from ge.dialects.graph import ConstOp
from ge.dialects.kernel import ConcatViewOp, KernelOp, TransDataOp
from ge.errors import CompileError
from ge.weights import WeightStore

Insert = Callable[[Operation], object]
"""Where a lowering step puts the stream ops it creates: before the op being lowered."""


class StreamLowering:
    """One function's lowering: the state over the whole function the patterns share."""

    def __init__(self, alignment: int, weights: WeightStore | None):
        self.alignment = alignment
        self.weights = weights
        self.model: stream.ModelOp | None = None
        self.stored: dict[tuple, SSAValue] = {}
        """Weights by content and stored format: identical constants share one slot of the blob."""
        self.arena = 0
        self.blob = 0
        self.buffers: dict[SSAValue, SSAValue] = {}
        """The buffer of each tensor value lowered so far (casts of buffers included)."""
        self.slots: dict[SSAValue, tuple[ConcatViewOp, int]] = {}
        """Values their producer writes straight into a slice of a concat view's result."""
        self.symbols: set[str] = set()
        self.suffixes: dict[str, int] = {}
        """Per base name, the next suffix to try."""

    def function_to_model(self, func: FuncOp) -> stream.ModelOp:
        """Moves `func`'s body into a model named as it, each argument read from an input buffer."""
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
        returned = block.last_op
        outputs = len(returned.arguments) if isinstance(returned, ReturnOp) else 0
        model = stream.ModelOp.build(
            properties={
                "sym_name": func.sym_name,
                "arena_size": IntegerAttr(0, i64),
                "weight_size": IntegerAttr(0, i64),
                "input_names": _names(func.arg_attrs, len(block.args), "input"),
                "output_names": _names(func.res_attrs, outputs, "output"),
            },
            regions=[Rewriter.move_region_contents_to_new_regions(func.body)],
        )
        Rewriter.replace_op(func, model)
        self.model = model
        insert = partial(Rewriter.insert_op, insertion_point=InsertPoint.at_start(block))
        for index, arg in enumerate(block.args):
            self.place(arg, format_of(static_tensor_type(arg)), insert, input=index)
        return model

    def owns(self, op: Operation) -> bool:
        """Whether `op` is one of the model's own ops (not inside a kernel's body)."""
        return self.model is not None and op.parent_op() is self.model

    def finish(self) -> None:
        """Drops what the patterns left (casts, constants, the function's arguments), binds the
        outputs to the caller's memory and sets the model's sizes."""
        assert self.model is not None
        block = self.model.body.block
        for op in reversed(list(block.ops)):
            if isinstance(op, UnrealizedConversionCastOp | ConstOp) and not any(r.uses for r in op.results):
                Rewriter.erase_op(op)
        for op in block.ops:
            if not op.name.startswith("ascend.stream.") and not isinstance(
                op, UnrealizedConversionCastOp | ConstOp
            ):
                raise _outside_kernel(op)
        for arg in reversed(block.args):
            block.erase_arg(arg)
        if isinstance(outputs := block.last_op, stream.OutputsOp):
            self.bind_outputs(list(outputs.values))
        self.model.arena_size = IntegerAttr(self.arena, i64)
        self.model.weight_size = IntegerAttr(self.blob, i64)

    def align(self, offset: int) -> int:
        return -(-offset // self.alignment) * self.alignment

    def place(self, value: SSAValue, fmt: str, insert: Insert, input: int | None = None) -> None:
        """A buffer for `value` stored in `fmt`: its own, or its slice of a concat view's result."""
        t = static_tensor_type(value)
        memref = _memref(t, fmt)
        if value in self.slots:
            concat, index = self.slots[value]
            if concat.output not in self.buffers:
                self.place(concat.output, concat.format, insert)
            axis = concat.axis.value.data  # the logical slice: the subview keeps the format
            start = sum(static_tensor_type(v).get_shape()[axis] for v in concat.inputs[:index])
            length = t.get_shape()[axis]
            view = stream.SubviewOp(self.buffers[concat.output], axis, start, length, memref)
            view.buffer.name_hint = value.name_hint
            insert(view)
            self.buffers[value] = view.buffer
            return
        size = stream.byte_size(memref)
        if input is not None:  # the caller's memory: read where it is, no arena bytes
            buffer = stream.BufferOp(0, size, memref, input=input)
        else:
            buffer = stream.BufferOp(self.arena, size, memref)
            self.arena = self.align(self.arena + max(size, 1))
        buffer.buffer.name_hint = value.name_hint
        insert(buffer)
        self.buffers[value] = buffer.buffer

    def bind_outputs(self, outputs: list[SSAValue]) -> None:
        """Each output a kernel writes (its whole buffer, or a view of it) goes straight to the
        caller's memory; an output that is an input, a weight, or returned twice is copied out."""
        assert self.model is not None
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
        for task in self.model.body.block.ops:
            if isinstance(task, stream.BufferOp) and not task.bound:
                task.offset = IntegerAttr(self.arena, i64)
                self.arena = self.align(self.arena + max(task.size.value.data, 1))

    def read(self, value: SSAValue, fmt: str, insert: Insert, groups: int = 1) -> SSAValue:
        """The buffer holding `value` for a reader in `fmt` (constants: a weight in that format)."""
        owner = value.owner
        if isinstance(owner, ConstOp):
            return self.weight(owner, fmt, groups, insert)
        if value not in self.buffers:
            assert isinstance(owner, Operation)  # every argument has its input buffer
            raise _outside_kernel(owner)
        return self.buffers[value]

    def weight(self, op: ConstOp, fmt: str, groups: int, insert: Insert) -> SSAValue:
        t = op.result.type
        fmt = "ND" if fmt == "NCHW" else fmt
        identity = (*self._content(op), fmt, groups)
        if identity in self.stored:
            return self.stored[identity]
        memref = _memref(t, fmt)
        size = stream.byte_size(memref, groups)
        weight = stream.WeightOp(op.value, self.blob, size, memref, groups)
        weight.buffer.name_hint = op.result.name_hint
        self.blob = self.align(self.blob + max(size, 1))
        insert(weight)
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

    def symbol(self, op: KernelOp | TransDataOp) -> str:
        """A name for `op`'s kernel symbol that no symbol of the module has: its kernel name, or
        its first graph op's, made unique by a suffix."""
        if op.kernel_name is not None:
            base = op.kernel_name.data
        elif isinstance(op, TransDataOp):
            base = "trans_data"
        else:
            first = op.body.block.first_op
            base = first.name.removeprefix("ascend.graph.") if first is not None else op.UNIT
        base = re.sub(r"[^A-Za-z0-9_]", "_", base) or "kernel"
        # Each base name counts on from its last suffix, so N kernels of one name cost O(N).
        symbol, counter = base, self.suffixes.get(base, 0)
        if counter:
            symbol = f"{base}_{counter}"
        while symbol in self.symbols:
            counter += 1
            symbol = f"{base}_{counter}"
        self.suffixes[base] = counter + 1
        self.symbols.add(symbol)
        return symbol


def static_tensor_type(value: SSAValue) -> TensorType:
    """`value`'s tensor type, refused unless its shape is static (a buffer needs a size)."""
    t = value.type
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        raise CompileError(
            f"value %{value.name_hint or '?'} of type {t} needs a static shape to get a buffer"
        )
    return t


def _outside_kernel(op: Operation) -> CompileError:
    return CompileError(f"{describe(op)} is not inside a kernel: run ge-lower-graph-to-kernel first")


def _memref(t: TensorType, fmt: str = "ND") -> MemRefType:
    """The buffer type of `t` stored in `fmt`: its logical shape, with `fmt` as its layout."""
    return memref_of(t, fmt)


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
