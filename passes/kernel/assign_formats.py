"""`ge-assign-formats`: device data formats for every kernel operand, conversions where needed.

A format is part of a value's type (`tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>`), so the pass
is in two parts:
- `choose_formats`, an analysis that reads the IR and says, for every kernel, view, concat view and
  return, in which format it reads each operand and writes each result;
- `ApplyFormats`, a rewrite pattern that retypes each op's results to the chosen formats and, where
  an operand's type is not in the format its consumer reads, inserts an `ascend.kernel.trans_data`
  (one per value and format) after the producer, unless the bytes already agree (NC1HWC0 with
  H = W = 1 and C a multiple of C0 reads as NCHW through a view). A conversion of a constant is
  done once, at compile time, by the stream lowering. Inverse conversion pairs then cancel.

xDSL's `TypeConversionPattern` converts every type by a rule of the type alone; here the format of a
value depends on its producer and its consumers, so the pattern reads the analysis instead.

The choice flows forward in program order:
- a 2-D convolution on the cube reads its input in NC1HWC0 and its weights in FRACTAL_Z, and
  writes NC1HWC0; a residual or other 4-D epilogue operand is read in NC1HWC0 too;
- a matrix product reads a constant right-hand side in FRACTAL_NZ (other operands stay ND and
  are laid out as fractal tiles by the kernel's own load) and writes ND; or FRACTAL_NZ when
  every reader takes its result as its own product's left matrix and the cost model finds the
  chain faster so (the readers' loads convert nothing, against the padding of rows and
  columns to 16): GE's chained matmuls, a transformer's feed-forward block, whose epilogue
  then computes on the tiles the next product reads as they are;
- a vector kernel whose ops all work per channel or per plane (elementwise ops, batch norm,
  group norm, pooling, reductions over H and W, LRN, a concat of whole C0 blocks) takes
  NC1HWC0 when one of its 4-D inputs arrives in it, so the format propagates through the conv
  network's vector work; so does a channel shuffle (reshape, transpose, reshape between 4-D
  tensors of whole C0 blocks), a gather;
- everything else, views and the graph's outputs take the framework formats (plain types).

```
%y = ascend.kernel.cube(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> ...
```
becomes, with `%x` a graph input,
```
%t = ascend.kernel.trans_data %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>
%v = ascend.kernel.trans_data %w : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32, #ascend.format<FRACTAL_Z>>
%y = ascend.kernel.cube(%t, %v) : (tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>,
    tensor<4x3x3x3xf32, #ascend.format<FRACTAL_Z>>) -> tensor<1x4x6x6xf32, #ascend.format<NC1HWC0>> ...
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ge.cost.decisions import kernel_latency
from ge.cost.model import Operand
from ge.dialects import graph
from ge.dialects.common import TARGET_ATTR_NAME, TargetAttr
from ge.dialects.formats import (
    FRAMEWORK_FORMATS,
    bitwidth_of,
    c0_of,
    format_of,
    framework_format,
    plain_type,
    with_format,
)
from ge.dialects.kernel import (
    AiCpuKernelOp,
    ConcatViewOp,
    CubeKernelOp,
    KernelOp,
    TransDataOp,
    VectorKernelOp,
    ViewOp,
)
from ge.dtypes import tensor_type
from ge.soc import load_profile

from ..driver import rewrite
from ..session import current
from .tile_kernels import block_dim, cube_kernel_tiling, cube_op


def _shuffles_channels(kernel: VectorKernelOp) -> bool:
    """A data-movement kernel from 4-D to 4-D (reshape, transpose, reshape: a channel shuffle)
    whose channels are whole C0 blocks on both sides: it gathers NC1HWC0 data as well as NCHW."""
    body = [op for op in kernel.body.block.ops if op is not kernel.body.block.last_op]
    if not body or not all(op.has_trait(graph.Permutes) for op in body):
        return False
    if len(kernel.inputs) != 1 or len(kernel.outputs) != 1:
        return False
    values = [kernel.inputs[0], kernel.outputs[0]]
    if not all(_rank(v) == 4 for v in values):
        return False
    c0 = c0_of(bitwidth_of(tensor_type(values[0]).element_type))
    return all(tensor_type(v).get_shape()[1] % c0 == 0 for v in values)


def _works_per_channel(op: Operation) -> bool:
    if op.has_trait(graph.PerChannel):
        return True
    # Some reductions (over the plane) and concats (of whole C0 blocks) keep channels apart.
    when = op.get_trait(graph.PerChannelWhen)
    if when is None or not op.results:
        return False
    return when.holds(op, c0_of(bitwidth_of(tensor_type(op.results[0]).element_type)))


def same_layout(a: str, b: str) -> bool:
    """ND and NCHW are the same bytes (row-major); device formats only equal themselves."""
    return a == b or (a in FRAMEWORK_FORMATS and b in FRAMEWORK_FORMATS)


def _rank(value: SSAValue) -> int:
    return len(value.type.get_shape()) if isinstance(value.type, TensorType) else 0


def _framework(value: SSAValue) -> str:
    """The framework format of a value's logical shape (NCHW for 4-D, ND otherwise)."""
    return framework_format(value.type.get_shape()) if isinstance(value.type, TensorType) else "ND"


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, graph.ConstOp)


def _operand_layout(op: Operation) -> graph.ProductOperands | None:
    """How a cube op's operands hold its (first) matrix product."""
    product = graph.matrix_product(op)
    return None if product is None else product.operands


def _left_operand_readers(value: SSAValue) -> list[CubeKernelOp]:
    """The cube kernels reading a matrix product's result `value`, when every one reads it as the
    left matrix of its own product and nothing else reads it (so its fractals could pass from one
    product to the next unconverted, as GE chains matmuls); else none. A value of dynamic shape
    has none: its fractals' count is unknown."""
    t = value.type
    if not isinstance(t, TensorType) or len(t.get_shape()) < 2 or not all(d > 0 for d in t.get_shape()):
        return []
    readers: list[CubeKernelOp] = []
    for use in value.uses:
        kernel = use.operation
        if not isinstance(kernel, CubeKernelOp):
            return []
        op = cube_op(kernel)
        product = None if op is None else graph.matrix_product(op)
        if op is None or product is None or product.operands is not graph.ProductOperands.MATRICES:
            return []
        arg = kernel.body.block.args[use.index]
        if any(u.operation is not op or u.index != product.lhs for u in arg.uses):
            return []
        if kernel not in readers:
            readers.append(kernel)
    return readers


def _static(kernel: KernelOp) -> bool:
    """Whether every operand and result of `kernel` has a static shape (the cost model needs it)."""
    values = [*kernel.inputs, *kernel.outputs]
    return all(isinstance(v.type, TensorType) and all(d >= 0 for d in v.type.get_shape()) for v in values)


def _view_as_framework(value: SSAValue) -> bool:
    """NC1HWC0 data that is byte for byte its NCHW form: H = W = 1 and C a multiple of C0."""
    t = value.type
    assert isinstance(t, TensorType)
    shape = t.get_shape()
    return len(shape) == 4 and shape[2:] == (1, 1) and shape[1] % c0_of(t.element_type.bitwidth) == 0


@dataclass
class FormatChoice:
    """What `choose_formats` decided: per op, the format it reads each operand in and the format
    it writes each result in."""

    operands: dict[Operation, list[str]] = field(default_factory=dict)
    results: dict[Operation, list[str]] = field(default_factory=dict)


def choose_formats(block: Block, target: TargetAttr) -> FormatChoice:
    """The format analysis of a function body for `target` (whose cost model settles the format
    between chained matrix products): reads the IR, changes nothing."""
    return _FormatChooser(target).run(block)


@dataclass
class ApplyFormats(RewritePattern):
    """Retypes an op's results to the chosen formats and converts each operand whose type is not
    in the format the op reads (a `trans_data`, or a view where the bytes agree)."""

    choice: FormatChoice
    converted: dict[tuple[SSAValue, str, bool], SSAValue] = field(default_factory=dict)
    count: int = 0

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        wanted = self.choice.operands.pop(op, None)
        if wanted is not None:
            for index, (value, fmt) in enumerate(zip(list(op.operands), wanted, strict=True)):
                if isinstance(value.type, TensorType) and not same_layout(self._produced(value), fmt):
                    # A concat view's producers write into its buffer, so its input must be a
                    # launched result: a conversion kernel, never a view of another buffer.
                    viewable = not isinstance(op, ConcatViewOp)
                    op.operands[index] = self._convert(value, fmt, rewriter, viewable)
                    rewriter.notify_op_modified(op)
        chosen = self.choice.results.pop(op, None)
        for result, fmt in zip(list(op.results), chosen or [], strict=chosen is not None):
            t = result.type
            if isinstance(t, TensorType) and format_of(t) != fmt:
                rewriter.replace_value_with_new_type(result, with_format(t, fmt))

    def _produced(self, value: SSAValue) -> str:
        """The format `value` is (or, when its producer is not retyped yet, will be) in."""
        if isinstance(value, OpResult):
            chosen = self.choice.results.get(value.owner)
            if chosen is not None:
                return chosen[value.index]
        return format_of(value)

    def _convert(
        self, value: SSAValue, fmt: str, rewriter: PatternRewriter, viewable: bool = True
    ) -> SSAValue:
        key = (value, fmt, viewable)
        if key in self.converted:
            return self.converted[key]
        if (
            viewable
            and self._produced(value) == "NC1HWC0"
            and fmt in FRAMEWORK_FORMATS
            and _view_as_framework(value)
        ):
            new: Operation = ViewOp(value, plain_type(tensor_type(value)))
        elif _is_constant(value):
            new = TransDataOp(value, fmt)  # converted at compile time: no kernel of its own
        else:
            new = TransDataOp(value, fmt, kernel_name=f"trans_data_{self.count}")
            self.count += 1
        owner = value.owner
        if isinstance(owner, Block):
            rewriter.insert(new, InsertPoint.at_start(owner))
        else:
            rewriter.insert(new, InsertPoint.after(owner))
        if isinstance(value.owner, Operation):
            new.location = value.owner.location
        self.converted[key] = new.results[0]
        return new.results[0]


@dataclass
class _FormatChooser:
    target: TargetAttr
    formats: dict[SSAValue, str] = field(default_factory=dict)
    choice: FormatChoice = field(default_factory=FormatChoice)

    def run(self, block: Block) -> FormatChoice:
        for arg in block.args:
            self.formats[arg] = format_of(arg)
        for op in block.ops:
            if isinstance(op, KernelOp):
                wanted = self._kernel_formats(op)
                self._decide(op, wanted, self._kernel_outputs(op, wanted))
            elif isinstance(op, ViewOp):
                value = op.input
                viewable = self.formats.get(value) == "NC1HWC0" and _view_as_framework(value)
                self._decide(op, ["NC1HWC0" if viewable else _framework(value)], [_framework(op.output)])
            elif isinstance(op, ConcatViewOp):
                fmt = self._concat_format(op)
                self._decide(op, [fmt] * len(op.inputs), [fmt])
            elif isinstance(op, ReturnOp):
                self._decide(op, [_framework(v) for v in op.operands], [])
            else:
                self.formats.update((r, format_of(r)) for r in op.results)
        return self.choice

    def _decide(self, op: Operation, operands: list[str], results: list[str]) -> None:
        self.choice.operands[op] = operands
        self.choice.results[op] = results
        self.formats.update(zip(op.results, results, strict=True))

    # ---------------------------------------------------------------------------------------
    # What each kernel reads and writes
    # ---------------------------------------------------------------------------------------

    def _kernel_formats(self, kernel: KernelOp) -> list[str]:
        frames = [_framework(v) for v in kernel.inputs]
        if isinstance(kernel, AiCpuKernelOp):
            return frames
        if isinstance(kernel, CubeKernelOp):
            return self._cube_formats(kernel, frames)
        if isinstance(kernel, VectorKernelOp) and self._per_channel(kernel):
            return [
                "NC1HWC0" if _rank(v) == 4 and not _is_constant(v) else f
                for v, f in zip(kernel.inputs, frames, strict=True)
            ]
        return frames

    def _cube_formats(self, kernel: CubeKernelOp, frames: list[str]) -> list[str]:
        op = cube_op(kernel)
        if op is None:
            return frames
        args = kernel.body.block.args
        index: dict[SSAValue, int] = {arg: i for i, arg in enumerate(args)}
        wanted = list(frames)
        holds = _operand_layout(op)
        operands = list(op.operands)
        if holds is graph.ProductOperands.IMAGE and _rank(kernel.outputs[0]) == 4:
            for i, arg in enumerate(args):
                if _rank(arg) == 4:
                    wanted[i] = "NC1HWC0"
            if operands[1] in index:
                # Constant weights are laid out once, at compile time; others as the kernel loads them.
                weight = index[operands[1]]
                wanted[weight] = "FRACTAL_Z" if _is_constant(kernel.inputs[weight]) else frames[weight]
            if operands[0] in index:
                wanted[index[operands[0]]] = "NC1HWC0"
        elif holds is graph.ProductOperands.MATRICES:
            product = graph.matrix_product(op)
            assert product is not None and product.lhs is not None and product.rhs is not None
            lhs, rhs = operands[product.lhs], operands[product.rhs]
            if rhs in index and _rank(rhs) >= 2 and _is_constant(kernel.inputs[index[rhs]]):
                wanted[index[rhs]] = "FRACTAL_NZ"
            if lhs in index and self.formats.get(kernel.inputs[index[lhs]]) == "FRACTAL_NZ":
                wanted[index[lhs]] = "FRACTAL_NZ"  # a product's fractals, read as they are
        return wanted

    def _kernel_outputs(self, kernel: KernelOp, wanted: list[str]) -> list[str]:
        frames = [_framework(r) for r in kernel.outputs]
        if isinstance(kernel, CubeKernelOp):
            op = cube_op(kernel)
            if op is not None and _operand_layout(op) is graph.ProductOperands.IMAGE and "NC1HWC0" in wanted:
                return [
                    "NC1HWC0" if _rank(r) == 4 else f for r, f in zip(kernel.outputs, frames, strict=True)
                ]
            if op is not None and _operand_layout(op) is graph.ProductOperands.MATRICES:
                return [
                    "FRACTAL_NZ" if self._fractals_pay(kernel, wanted, i) else f for i, f in enumerate(frames)
                ]
            return frames
        if isinstance(kernel, VectorKernelOp) and "NC1HWC0" in wanted:
            return ["NC1HWC0" if _rank(r) == 4 else f for r, f in zip(kernel.outputs, frames, strict=True)]
        return frames

    def _fractals_pay(self, kernel: CubeKernelOp, wanted: list[str], output: int) -> bool:
        """Whether result `output` of matrix-product `kernel` (reading its inputs in `wanted`)
        should stay FRACTAL_NZ: every reader takes it as its product's left matrix, and the cost
        model finds the kernel and its readers faster so (no conversion on the store without
        FixPipe, none on the readers' loads) than in its framework format (no padding rows)."""
        value = kernel.outputs[output]
        readers = _left_operand_readers(value)
        if not readers or not all(_static(k) for k in (kernel, *readers)):
            return False
        frames = [_framework(r) for r in kernel.outputs]

        def latency(fmt: str) -> float:
            outputs = [fmt if i == output else f for i, f in enumerate(frames)]
            total = self._latency(kernel, wanted, outputs)
            for reader in readers:
                inputs = self._cube_formats(reader, [_framework(v) for v in reader.inputs])
                inputs = [fmt if v is value else f for v, f in zip(reader.inputs, inputs, strict=True)]
                total += self._latency(reader, inputs, [_framework(r) for r in reader.outputs])
            return total

        return latency("FRACTAL_NZ") < latency(_framework(value))

    def _latency(self, kernel: CubeKernelOp, inputs: list[str], outputs: list[str]) -> float:
        """The cost model's latency of cube `kernel` with its operands in these formats, tiled as
        `ge-tile-kernels` will tile it (the tiling does not depend on the formats)."""
        body = [op for op in kernel.body.block.ops if op is not kernel.body.block.last_op]
        tiling = cube_kernel_tiling(kernel, self.target.figure)
        return kernel_latency(
            body,
            "cube",
            [Operand(tensor_type(v), f, _is_constant(v)) for v, f in zip(kernel.inputs, inputs, strict=True)],
            [Operand(tensor_type(r), f) for r, f in zip(kernel.outputs, outputs, strict=True)],
            self.target,
            tiling.sizes(),
            block_dim(tiling, int(self.target.figure("cube_cores"))),
        )

    def _per_channel(self, kernel: VectorKernelOp) -> bool:
        """Whether the kernel can work on NC1HWC0 data, and some 4-D input already arrives so."""
        if _shuffles_channels(kernel):
            return self.formats.get(kernel.inputs[0]) == "NC1HWC0"
        body = [op for op in kernel.body.block.ops if op is not kernel.body.block.last_op]
        if not body or not all(_works_per_channel(op) for op in body):
            return False
        if not all(_rank(r) == 4 for r in kernel.outputs):
            return False
        out_channels = tensor_type(kernel.outputs[0]).get_shape()[1]
        joins = body[-1].has_trait(graph.JoinsChannelBlocks)
        for value in kernel.inputs:
            if _rank(value) == 4 and tensor_type(value).get_shape()[1] not in (1, out_channels) and not joins:
                return False
        return any(
            _rank(v) == 4 and not _is_constant(v) and self.formats.get(v) == "NC1HWC0" for v in kernel.inputs
        )

    def _concat_format(self, op: ConcatViewOp) -> str:
        t = op.output.type
        assert isinstance(t, TensorType)
        c0 = c0_of(bitwidth_of(t.element_type))
        if (
            op.axis.value.data == 1
            and _rank(op.output) == 4
            and all(self.formats.get(v) == "NC1HWC0" for v in op.inputs)
            and all(tensor_type(v).get_shape()[1] % c0 == 0 for v in op.inputs)
        ):
            return "NC1HWC0"
        return _framework(op.output)


class CancelInverseTransData(RewritePattern):
    """`trans_data(trans_data(x, A -> B), B -> A)` is `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransDataOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, TransDataOp) and same_layout(inner.src_format, op.dst_format):
            rewriter.replace_op(op, [], [inner.input])
            if inner.output.first_use is None:
                rewriter.erase_op(inner)


class ChainTransData(RewritePattern):
    """`trans_data(trans_data(x, A -> B), B -> C)` with C != A converts once: `trans_data(x, A -> C)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransDataOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, TransDataOp) and not same_layout(inner.src_format, op.dst_format):
            direct = TransDataOp(inner.input, op.dst_format)
            if op.kernel_name is not None:
                direct.properties["kernel_name"] = op.kernel_name
            rewriter.replace_op(op, direct)
            if inner.output.first_use is None:
                rewriter.erase_op(inner)


@dataclass(frozen=True)
class AssignFormatsPass(ModulePass):
    """Picks device formats for kernel operands and inserts (and cancels) TransData."""

    name = "ge-assign-formats"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = op.attributes.get(TARGET_ATTR_NAME)
        if not isinstance(target, TargetAttr):
            target = load_profile().target_attr()
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            if not func.is_declaration:
                apply = ApplyFormats(choose_formats(func.body.block, target))
                PatternRewriteWalker(apply, apply_recursively=False).rewrite_region(func.body)
        rewrite(op, [CancelInverseTransData(), ChainTransData()], current())
