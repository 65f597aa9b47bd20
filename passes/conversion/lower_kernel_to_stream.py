"""`ge-lower-kernel-to-stream`: outline kernels and place every tensor in one arena.

Each kernel op becomes an `ascend.stream.kernel` symbol and a launch on stream 0; every tensor
(graph inputs included) gets a buffer at its own aligned offset in the arena (no reuse yet), and
every constant a slot at an aligned offset in the one weight blob (identical constants share
one slot). The function is replaced by one `ascend.stream.model`.

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

As MLIR's gpu-kernel-outlining turns `gpu.launch` into `gpu.func` + `gpu.launch_func`, in steps:
1. `StreamLowering.function_to_model`, the one whole-function rewrite: the function's body moves
   into an `ascend.stream.model` and each argument gets an input buffer (the caller's memory).
2. Patterns over the model's body, in one forward sweep of xDSL's `PatternRewriteWalker`; each
   replaces a kernel-level op by stream ops inserted where it stood, so the model's tasks keep
   the function's order: `OutlineKernel` (a kernel or trans_data becomes an
   `ascend.stream.kernel` symbol at module level, made unique, and a launch on buffers),
   `ConvertWeight` (a trans_data of a constant becomes a weight stored in the new format: it is
   converted once, at compile time), `LowerView`, `LowerConcatView` and `LowerReturn`. A
   replaced op's tensor results become `builtin.unrealized_conversion_cast`s of their buffers
   until their readers are lowered (MLIR's materializations), then go. A constant gets its weight
   slot where a kernel first reads it, in the format that kernel reads (one read by none gets
   none), so the constant op itself is no pattern's: it goes with the casts.
3. `StreamLowering.finish`: outputs a kernel writes go straight to the caller's memory, the
   remaining buffers are packed into the arena and the model gets its sizes.

`StreamLowering` holds the state that really is whole-function, shared by the patterns: the next
arena and weight-blob offsets, the value -> buffer map, the weight slots identical constants
share, the concat slices producers write into, and the symbol names taken.

No `TypeConversionPattern`: a tensor's buffer type is not a function of the tensor type alone
(it follows the format its writer or reader stores it in, and for FRACTAL_Z weights the
convolution groups), and the stream ops are new ops, not retyped kernel ops; kernel bodies keep
their tensor types.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

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
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

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

Insert = Callable[[Operation], object]
"""Where a lowering step puts the stream ops it creates: before the op being lowered."""


@dataclass(frozen=True)
class LowerKernelToStreamPass(ModulePass):
    """Turns each graph function of kernels into an `ascend.stream.model`."""

    name = "ge-lower-kernel-to-stream"

    alignment: int = 512
    """Byte alignment of every buffer and weight offset."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_alignment(self.alignment, self.name)
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            lower_function(func, StreamLowering(self.alignment, current().weights))


def lower_function(func: FuncOp, lowering: StreamLowering) -> stream.ModelOp:
    """Replaces `func` by its model: the function becomes the model, then one forward sweep of
    the patterns lowers its body. The sweep is not counted in bisection actions: half a model is
    no valid IR to stop at."""
    model = lowering.function_to_model(func)
    patterns: list[RewritePattern] = [
        ConvertWeight(lowering),
        OutlineKernel(lowering),
        LowerView(lowering),
        LowerConcatView(lowering),
        LowerReturn(lowering),
    ]
    walker = PatternRewriteWalker(GreedyRewritePatternApplier(patterns), apply_recursively=False)
    walker.rewrite_region(model.body)
    lowering.finish()
    return model


@dataclass
class ConvertWeight(RewritePattern):
    """A trans_data of a constant becomes a weight stored in the new format."""

    lowering: StreamLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransDataOp, rewriter: PatternRewriter) -> None:
        constant = op.input.owner
        if not self.lowering.owns(op) or not isinstance(constant, ConstOp):
            return
        groups = _fractal_z_groups(op.output) if op.dst_format == "FRACTAL_Z" else 1
        weight = self.lowering.weight(constant, op.dst_format, groups, rewriter.insert)
        self.lowering.replace_by_buffers(rewriter, op, [], [weight])


@dataclass
class OutlineKernel(RewritePattern):
    """A kernel (or a trans_data of a computed tensor) becomes an `ascend.stream.kernel` symbol at
    module level and an `ascend.stream.launch` on its operands' and results' buffers."""

    lowering: StreamLowering

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, KernelOp | TransDataOp) or not self.lowering.owns(op):
            return
        if isinstance(op, TransDataOp) and isinstance(op.input.owner, ConstOp):
            return  # ConvertWeight's
        self.lowering.outline(op, rewriter)


@dataclass
class LowerView(RewritePattern):
    """A view becomes an `ascend.stream.view` of its source's buffer."""

    lowering: StreamLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ViewOp, rewriter: PatternRewriter) -> None:
        if not self.lowering.owns(op):
            return
        source = self.lowering.read(op.input, op.src_format, rewriter.insert)
        view = stream.ViewOp(source, _memref(op.output.type, op.dst_format))
        view.buffer.name_hint = op.output.name_hint
        rewriter.insert(view)
        self.lowering.replace_by_buffers(rewriter, op, [], [view.buffer])


@dataclass
class LowerConcatView(RewritePattern):
    """A concat view becomes its buffer, whose subviews its inputs' producers wrote."""

    lowering: StreamLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConcatViewOp, rewriter: PatternRewriter) -> None:
        if not self.lowering.owns(op):
            return
        if op.output not in self.lowering.buffers:
            self.lowering.place(op.output, op.format, rewriter.insert)
        self.lowering.replace_by_buffers(rewriter, op, [], [self.lowering.buffers[op.output]])


@dataclass
class LowerReturn(RewritePattern):
    """The function's return becomes `ascend.stream.outputs` of the returned buffers."""

    lowering: StreamLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReturnOp, rewriter: PatternRewriter) -> None:
        if not self.lowering.owns(op):
            return
        outputs = [self.lowering.read(v, format_of(_tensor_type(v)), rewriter.insert) for v in op.arguments]
        rewriter.replace(op, stream.OutputsOp(outputs))


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
            self.place(arg, format_of(_tensor_type(arg)), insert, input=index)
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

    def replace_by_buffers(
        self,
        rewriter: PatternRewriter,
        op: Operation,
        ops: list[Operation],
        buffers: list[SSAValue],
    ) -> None:
        """Replaces `op` by `ops`, and its results by casts of `buffers` until they are read."""
        casts: list[Operation] = []
        values: list[SSAValue] = []
        for result, buffer in zip(op.results, buffers, strict=True):
            cast, value = UnrealizedConversionCastOp.cast_one(buffer, result.type)
            self.buffers[value] = buffer
            casts.append(cast)
            values.append(value)
        rewriter.replace(op, [*ops, *casts], values)

    def align(self, offset: int) -> int:
        return -(-offset // self.alignment) * self.alignment

    def place(self, value: SSAValue, fmt: str, insert: Insert, input: int | None = None) -> None:
        """A buffer for `value` stored in `fmt`: its own, or its slice of a concat view's result."""
        t = _tensor_type(value)
        memref = _memref(t, fmt)
        if value in self.slots:
            concat, index = self.slots[value]
            if concat.output not in self.buffers:
                self.place(concat.output, concat.format, insert)
            axis = concat.axis.value.data  # the logical slice: the subview keeps the format
            start = sum(_tensor_type(v).get_shape()[axis] for v in concat.inputs[:index])
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

    def outline(self, op: KernelOp | TransDataOp, rewriter: PatternRewriter) -> None:
        """`op`'s kernel symbol before the model, and its launch where `op` stood."""
        assert self.model is not None
        symbol = self.symbol(op)
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
        rewriter.insert(kernel, InsertPoint.before(self.model))
        insert = rewriter.insert
        buffers = [
            self.read(v, f, insert, weight_groups(body.block.args[i]) if f == "FRACTAL_Z" else 1)
            for i, (v, f) in enumerate(zip(inputs, op.in_formats, strict=True))
        ]
        for result, fmt in zip(outputs, op.out_formats, strict=True):
            self.place(result, fmt, insert)
        written = [self.buffers[r] for r in outputs]
        launch = stream.LaunchOp(symbol, buffers, written, stream=0)
        launch.location = op.location
        self.replace_by_buffers(rewriter, op, [launch], written)

    def symbol(self, op: KernelOp | TransDataOp) -> str:
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


def _outside_kernel(op: Operation) -> CompileError:
    return CompileError(f"{describe(op)} is not inside a kernel: run ge-lower-graph-to-kernel first")


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
