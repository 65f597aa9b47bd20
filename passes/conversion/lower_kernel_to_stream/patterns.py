"""The per-op rewrites of `ge-lower-kernel-to-stream`, one xDSL `RewritePattern` each.

Every pattern is a `StreamPattern`: it sees only the model's own ops (a kernel's body keeps its
graph ops), matches one kind of kernel-level op by its type, builds the stream ops that take its
place before it, and replaces it with `replace_by_buffers`, which leaves a
`builtin.unrealized_conversion_cast` of each new buffer where a tensor result was, until that
result's readers are lowered. The buffer bookkeeping they share is the function's
`StreamLowering` (`.lowering`).

- `ConvertWeight`: a trans_data of a constant becomes a weight stored in the new format.
- `OutlineKernel`: a kernel (or a trans_data of a computed tensor) becomes an
  `ascend.stream.kernel` symbol at module level and a launch on buffers.
- `LowerView`, `LowerConcatView`, `LowerReturn`: a view, a concat view and the function's
  return become a stream view, the concat's buffer and the model's outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import FunctionType, StringAttr, UnrealizedConversionCastOp
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter

from ge.dialects import stream
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

from .lowering import StreamLowering, static_tensor_type


@dataclass
class StreamPattern(RewritePattern):
    """A pattern over the model's own ops, sharing one function's `StreamLowering`.

    Subclasses implement `lower`, filtered by op type with `@op_type_rewrite_pattern`."""

    lowering: StreamLowering

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if self.lowering.owns(op):
            self.lower(op, rewriter)

    def lower(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        """Builds `op`'s stream ops before it and replaces it (when `op` is this pattern's)."""
        raise NotImplementedError

    def replace_by_buffers(
        self,
        rewriter: PatternRewriter,
        op: Operation,
        buffers: list[SSAValue],
        ops: list[Operation] | None = None,
    ) -> None:
        """Replaces `op` by `ops`, and its results by casts of `buffers` until they are read."""
        casts: list[Operation] = []
        values: list[SSAValue] = []
        for result, buffer in zip(op.results, buffers, strict=True):
            cast, value = UnrealizedConversionCastOp.cast_one(buffer, result.type)
            self.lowering.buffers[value] = buffer
            casts.append(cast)
            values.append(value)
        rewriter.replace(op, [*(ops or []), *casts], values)


@dataclass
class ConvertWeight(StreamPattern):
    """A trans_data of a constant becomes a weight stored in the new format: it is converted
    once, at compile time."""

    @op_type_rewrite_pattern
    def lower(self, op: TransDataOp, rewriter: PatternRewriter) -> None:
        constant = op.input.owner
        if not isinstance(constant, ConstOp):
            return
        groups = _fractal_z_groups(op.output) if op.dst_format == "FRACTAL_Z" else 1
        weight = self.lowering.weight(constant, op.dst_format, groups, rewriter.insert)
        self.replace_by_buffers(rewriter, op, [weight])


@dataclass
class OutlineKernel(StreamPattern):
    """A kernel (or a trans_data of a computed tensor) becomes an `ascend.stream.kernel` symbol at
    module level, made unique, and an `ascend.stream.launch` on its operands' and results'
    buffers where it stood."""

    @op_type_rewrite_pattern
    def lower(self, op: KernelOp | TransDataOp, rewriter: PatternRewriter) -> None:
        if isinstance(op, TransDataOp) and isinstance(op.input.owner, ConstOp):
            return  # ConvertWeight's
        model = self.lowering.model
        assert model is not None
        symbol = self.lowering.symbol(op)
        kernel = _kernel_symbol(op, symbol)
        rewriter.insert(kernel, InsertPoint.before(model))
        inputs, outputs = _operands(op)
        arguments = kernel.body.block.args
        buffers = [
            self.lowering.read(v, f, rewriter.insert, weight_groups(arguments[i]) if f == "FRACTAL_Z" else 1)
            for i, (v, f) in enumerate(zip(inputs, op.in_formats, strict=True))
        ]
        for result, fmt in zip(outputs, op.out_formats, strict=True):
            self.lowering.place(result, fmt, rewriter.insert)
        written = [self.lowering.buffers[r] for r in outputs]
        launch = stream.LaunchOp(symbol, buffers, written, stream=0)
        launch.location = op.location
        self.replace_by_buffers(rewriter, op, written, [launch])


@dataclass
class LowerView(StreamPattern):
    """A view becomes an `ascend.stream.view` of its source's buffer."""

    @op_type_rewrite_pattern
    def lower(self, op: ViewOp, rewriter: PatternRewriter) -> None:
        source = self.lowering.read(op.input, op.src_format, rewriter.insert)
        view = stream.ViewOp(source, memref_of(op.output.type, op.dst_format))
        view.buffer.name_hint = op.output.name_hint
        rewriter.insert(view)
        self.replace_by_buffers(rewriter, op, [view.buffer])


@dataclass
class LowerConcatView(StreamPattern):
    """A concat view becomes its buffer, whose subviews its inputs' producers wrote."""

    @op_type_rewrite_pattern
    def lower(self, op: ConcatViewOp, rewriter: PatternRewriter) -> None:
        if op.output not in self.lowering.buffers:
            self.lowering.place(op.output, op.format, rewriter.insert)
        self.replace_by_buffers(rewriter, op, [self.lowering.buffers[op.output]])


@dataclass
class LowerReturn(StreamPattern):
    """The function's return becomes `ascend.stream.outputs` of the returned buffers."""

    @op_type_rewrite_pattern
    def lower(self, op: ReturnOp, rewriter: PatternRewriter) -> None:
        outputs = [
            self.lowering.read(v, format_of(static_tensor_type(v)), rewriter.insert) for v in op.arguments
        ]
        rewriter.replace(op, stream.OutputsOp(outputs))


def _operands(op: KernelOp | TransDataOp) -> tuple[list[SSAValue], list[SSAValue]]:
    """The tensors `op`'s launch reads and writes."""
    if isinstance(op, TransDataOp):
        return [op.input], [op.output]
    return list(op.inputs), list(op.outputs)


def _kernel_symbol(op: KernelOp | TransDataOp, symbol: str) -> stream.KernelFuncOp:
    """`op`'s kernel as an `ascend.stream.kernel` named `symbol`: its body (a trans_data's is
    empty: the unit converts), its unit and kind, and its name, block_dim and tiling."""
    inputs, outputs = _operands(op)
    if isinstance(op, TransDataOp):
        body = Region(Block(arg_types=[plain_type(op.input.type)]))
        body.block.add_op(stream.ReturnOp(body.block.args))
        unit, kind = Unit.VECTOR, KernelKind.TRANS_DATA
    else:
        body = op.body.clone()
        terminator = body.block.last_op
        assert isinstance(terminator, YieldOp)
        Rewriter.replace_op(terminator, stream.ReturnOp(terminator.values))
        unit, kind = Unit(op.UNIT), KernelKind(op.UNIT)
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
    return kernel


def _fractal_z_groups(weights: SSAValue) -> int:
    """The convolution groups of the kernels that read `weights` in FRACTAL_Z (1 if none is grouped)."""
    for use in weights.uses:
        if isinstance(use.operation, KernelOp):
            groups = weight_groups(use.operation.body.block.args[use.index])
            if groups != 1:
                return groups
    return 1
