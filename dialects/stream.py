"""The `ascend.stream` dialect: one model, as a task list over planned buffers.

Kernels are outlined into `ascend.stream.kernel` symbols (as `gpu.func`); an
`ascend.stream.model` holds the arena and weight-blob sizes, every buffer at its offset, and the
launches of kernels on streams, with events to order work across streams.

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

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    NoTerminator,
    SymbolOpInterface,
    SymbolTable,
)

from .common import fail
from .formats import (
    FRAMEWORK_FORMATS,
    bitwidth_of,
    c0_of,
    encoding_error,
    format_of,
    memref_of,
    plain_type,
    storage_shape,
    view_error,
)
from .kernel import KernelKindAttr, KernelUnitAttr
from .tiling import TilingAttr
from .verify import LocalVerifier

SPACES = ("arena", "weight")


def byte_size(t: MemRefType | TensorType, groups: int = 1) -> int:
    """Bytes a dense buffer of this static type takes, stored in its format (`groups`: of a
    FRACTAL_Z weight's convolution). Raises ValueError for a shape the format cannot store."""
    width = bitwidth_of(t.element_type)
    return math.prod(storage_shape(t, groups)) * max(1, width // 8)


@irdl_op_definition
class KernelFuncOp(LocalVerifier, IRDLOperation):
    """An outlined kernel: a symbol holding the graph ops it computes and its unit; its type has
    the operands' formats as encodings, the body computes on the plain types.

    ```
    ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a : tensor<4xf32>):
      %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
      ascend.stream.return %r : tensor<4xf32>
    }
    ```
    """

    name = "ascend.stream.kernel"

    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    unit = prop_def(KernelUnitAttr)
    kernel_name = opt_prop_def(StringAttr)
    kind = opt_prop_def(KernelKindAttr)
    """`#ascend.kind<trans_data>` for a format conversion; otherwise the unit."""
    block_dim = opt_prop_def(IntegerAttr[I64])
    tiling = opt_prop_def(TilingAttr)
    body = region_def("single_block")

    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove())

    @property
    def kernel_kind(self) -> str:
        """What the kernel is, for counting: its kind, or else its unit (a `KernelKind` value)."""
        return (self.kind.data if self.kind is not None else self.unit.data).value

    @property
    def input_types(self) -> tuple[TensorType, ...]:
        """The types of the kernel's inputs: the tensors of the graph it was lowered from."""
        return _tensor_types(self.function_type.inputs.data)

    @property
    def output_types(self) -> tuple[TensorType, ...]:
        """The types of the kernel's outputs: the tensors of the graph it was lowered from."""
        return _tensor_types(self.function_type.outputs.data)

    @property
    def in_formats(self) -> tuple[str, ...]:
        """The format of each input, read from its type."""
        return tuple(format_of(t) for t in self.function_type.inputs.data)

    @property
    def out_formats(self) -> tuple[str, ...]:
        """The format of each result, read from its type."""
        return tuple(format_of(t) for t in self.function_type.outputs.data)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$sym_name attr-dict `:` $function_type $body"

    def verify_(self) -> None:
        block = self.body.block
        inputs, outputs = self.function_type.inputs.data, self.function_type.outputs.data
        for what, types in (("input", inputs), ("output", outputs)):
            for index, t in enumerate(types):
                if not isinstance(t, TensorType):
                    raise fail(self, f"{what} #{index} is {t}, not a tensor type")
                if (error := encoding_error(t)) is not None:
                    raise fail(self, f"{what} #{index}: {error}")
        if tuple(a.type for a in block.args) != tuple(plain_type(t) for t in inputs):
            raise fail(self, "body arguments do not match the kernel's input types (without formats)")
        terminator = block.last_op
        if not isinstance(terminator, ReturnOp):
            raise fail(self, "body must end with 'ascend.stream.return'")
        if tuple(v.type for v in terminator.values) != tuple(plain_type(t) for t in outputs):
            raise fail(self, "returned types do not match the kernel's result types (without formats)")
        for op in block.ops:
            if op is not terminator and not op.name.startswith("ascend.graph."):
                raise fail(self, f"a kernel body holds graph ops only, found '{op.name}'")


@irdl_op_definition
class ReturnOp(LocalVerifier, IRDLOperation):
    """Ends an outlined kernel: `ascend.stream.return %r : tensor<4xf32>`."""

    name = "ascend.stream.return"

    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(KernelFuncOp))
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])


@irdl_op_definition
class ModelOp(IRDLOperation):
    """One compiled model: buffers in one arena and one weight blob, and the task list.

    ```
    ascend.stream.model @main {arena_size = 1024 : i64, weight_size = 512 : i64,
        input_names = ["x"], output_names = ["y"]} {
      %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
      %y = ascend.stream.buffer offset 512 size 16 : memref<4xf32>
      ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
      ascend.stream.outputs %y : memref<4xf32>
    }
    ```
    """

    name = "ascend.stream.model"

    sym_name = prop_def(SymbolNameConstraint())
    arena_size = prop_def(IntegerAttr[I64])
    weight_size = prop_def(IntegerAttr[I64])
    input_names = prop_def(ArrayAttr[StringAttr])
    output_names = prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")

    # Not a symbol table itself: its launches name kernels of the module around it, which
    # `SymbolTable.lookup_symbol` then finds from any launch.
    traits = traits_def(SymbolOpInterface(), NoTerminator())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$sym_name attr-dict-with-keyword $body"

    def kernels(self) -> dict[str, KernelFuncOp]:
        """The kernels of the model's symbol table (the module around it), by symbol name, read
        once: `LaunchOp.callee` finds one kernel, this serves a pass over every launch."""
        block = self.parent
        if block is None:
            return {}
        return {op.sym_name.data: op for op in block.ops if isinstance(op, KernelFuncOp)}

    def verify_(self) -> None:
        arena, weights = self.arena_size.value.data, self.weight_size.value.data
        recorded: set[int] = set()
        inputs: set[int] = set()
        outputs: set[int] = set()
        ops = list(self.body.block.ops)
        kernels = self.kernels()
        for position, op in enumerate(ops):
            if isinstance(op, BufferOp | WeightOp) and not (isinstance(op, BufferOp) and op.bound):
                limit = arena if isinstance(op, BufferOp) else weights
                end = op.offset.value.data + op.size.value.data
                if op.offset.value.data < 0 or end > limit:
                    raise fail(op, f"bytes [{op.offset.value.data}, {end}) exceed the {limit}-byte space")
            if isinstance(op, BufferOp):
                if op.input is not None:
                    if op.input.value.data in inputs:
                        raise fail(op, f"input {op.input.value.data} is bound twice")
                    inputs.add(op.input.value.data)
                if op.output is not None:
                    if op.output.value.data in outputs:
                        raise fail(op, f"output {op.output.value.data} is bound twice")
                    outputs.add(op.output.value.data)
            elif isinstance(op, EventRecordOp):
                recorded.add(op.event.value.data)
            elif isinstance(op, EventWaitOp):
                if op.event.value.data not in recorded:
                    raise fail(op, f"event {op.event.value.data} is waited for before it is recorded")
            elif isinstance(op, LaunchOp):
                op.verify_callee(kernels.get(op.kernel.root_reference.data))
            elif isinstance(op, OutputsOp):
                if position != len(ops) - 1:
                    raise fail(op, "'ascend.stream.outputs' must be the model's last op")
                if len(op.values) != len(self.output_names.data):
                    raise fail(op, f"{len(op.values)} outputs for {len(self.output_names.data)} output names")
            elif not isinstance(op, WeightOp | ViewOp | SubviewOp):
                raise fail(op, "a model holds buffers, views, weights, launches, events and outputs only")
        if inputs != set(range(len(self.input_names.data))):
            raise fail(self, f"input buffers {sorted(inputs)} do not cover the model's inputs")
        if not ops or not isinstance(ops[-1], OutputsOp):
            raise fail(self, "a model ends with 'ascend.stream.outputs'")
        returned = ops[-1].values
        for op in ops:
            if isinstance(op, BufferOp) and op.output is not None:
                index = op.output.value.data
                if index >= len(returned) or root_buffer(returned[index]).owner is not op:
                    raise fail(op, f"a buffer bound to output {index} must hold that output")


class _PlacedOp(LocalVerifier, IRDLOperation):
    offset = prop_def(IntegerAttr[I64])
    size = prop_def(IntegerAttr[I64])
    buffer = result_def(MemRefType)

    @property
    def group_count(self) -> int:
        """The convolution group count the stored FRACTAL_Z bytes are laid out for."""
        return 1

    def verify_(self) -> None:
        if (error := encoding_error(self.buffer.type)) is not None:
            raise fail(self, error)
        if any(d < 0 for d in self.buffer.type.get_shape()):
            raise fail(self, f"a placed buffer needs a static shape, got {self.buffer.type}")
        try:
            need = byte_size(self.buffer.type, self.group_count)
        except ValueError as error:
            raise fail(self, str(error)) from None
        if self.size.value.data < need:
            raise fail(self, f"{self.size.value.data} bytes cannot hold {self.buffer.type} ({need} bytes)")


@irdl_op_definition
class BufferOp(_PlacedOp):
    """An activation buffer at `offset` in the arena. `input = i` binds it to the model's input i
    and `output = j` to its output j: such a buffer is the caller's memory, not arena bytes (its
    offset is 0), so inputs are read and outputs written where the caller has them, no copy.

    `%b = ascend.stream.buffer offset 512 size 64 : memref<16xf32>`
    """

    name = "ascend.stream.buffer"

    input = opt_prop_def(IntegerAttr[I64])
    output = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(HasParent(ModelOp))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "`offset` $offset `size` $size attr-dict `:` type($buffer)"

    def __init__(
        self, offset: int, size: int, type: MemRefType, input: int | None = None, output: int | None = None
    ):
        props: dict[str, Attribute] = {
            "offset": IntegerAttr(offset, i64),
            "size": IntegerAttr(size, i64),
        }
        if input is not None:
            props["input"] = IntegerAttr(input, i64)
        if output is not None:
            props["output"] = IntegerAttr(output, i64)
        super().__init__(properties=props, result_types=[type])

    @property
    def bound(self) -> bool:
        """Whether the buffer is the caller's memory (a model input or output), not arena bytes."""
        return self.input is not None or self.output is not None

    def verify_(self) -> None:
        super().verify_()
        if self.input is not None and self.output is not None:
            raise fail(self, "a buffer is bound to an input or to an output, not both")
        if self.bound and self.offset.value.data != 0:
            raise fail(self, "a buffer bound to the caller's memory has offset 0")


@irdl_op_definition
class WeightOp(_PlacedOp):
    """A constant at `offset` in the weight blob; its value is inline, a splat or a resource key.

    `%w = ascend.stream.weight dense_resource<fc.weight> : tensor<10x16xf32> offset 0 size 640
        : memref<10x16xf32>`
    """

    name = "ascend.stream.weight"

    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr | FloatAttr | IntegerAttr)
    groups = opt_prop_def(IntegerAttr[I64])
    """Convolution groups of a FRACTAL_Z weight: how its stored bytes are laid out."""

    traits = traits_def(HasParent(ModelOp))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value `offset` $offset `size` $size attr-dict `:` type($buffer)"

    @property
    def stored_format(self) -> str:
        """The device format the value is stored in (converted at compile time): the layout."""
        return format_of(self.buffer.type)

    @property
    def group_count(self) -> int:
        return self.groups.value.data if self.groups is not None else 1

    def verify_(self) -> None:
        super().verify_()
        memref = self.buffer.type
        logical = self.logical_type
        if logical.get_shape() != memref.get_shape() or logical.element_type != memref.element_type:
            raise fail(self, f"a value of type {logical} cannot fill {memref}")

    @property
    def logical_type(self) -> TensorType:
        """The type of the constant as the graph has it (before conversion to the stored format)."""
        value = self.value
        if isinstance(value, FloatAttr | IntegerAttr):
            return TensorType(value.type, self.buffer.type.get_shape())
        if not isinstance(value.type, TensorType):
            raise fail(self, f"a weight's value has type {value.type}, not a tensor type")
        return value.type

    def __init__(
        self,
        value: Attribute,
        offset: int,
        size: int,
        type: MemRefType,
        groups: int = 1,
    ):
        props: dict[str, Attribute] = {
            "value": value,
            "offset": IntegerAttr(offset, i64),
            "size": IntegerAttr(size, i64),
        }
        if groups != 1:
            props["groups"] = IntegerAttr(groups, i64)
        super().__init__(properties=props, result_types=[type])


@irdl_op_definition
class LaunchOp(LocalVerifier, IRDLOperation):
    """Runs an outlined kernel on a stream, reading `inputs` and writing `outputs`.

    `ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)`
    """

    name = "ascend.stream.launch"

    kernel = prop_def(SymbolRefAttr)
    stream = prop_def(IntegerAttr[I64])
    inputs = var_operand_def(MemRefType)
    outputs = var_operand_def(MemRefType)

    traits = traits_def(HasParent(ModelOp))
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$kernel `(` $inputs `)` `->` `(` $outputs `)` `stream` $stream attr-dict"
        " `:` `(` type($inputs) `)` `->` `(` type($outputs) `)`"
    )

    def __init__(self, kernel: str, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue], stream: int):
        super().__init__(
            operands=[inputs, outputs],
            properties={"kernel": SymbolRefAttr(kernel), "stream": IntegerAttr(stream, i64)},
        )

    def callee(self) -> KernelFuncOp | None:
        """The kernel the launch runs, looked up in the symbol table around the model (a scan of
        the module's symbols: a pass over every launch uses `ModelOp.kernels` instead)."""
        kernel = SymbolTable.lookup_symbol(self, self.kernel)
        return kernel if isinstance(kernel, KernelFuncOp) else None

    def verify_callee(self, kernel: KernelFuncOp | None) -> None:
        """Checks the launch against `kernel`, the symbol it names (None: there is none)."""
        if kernel is None:
            raise fail(self, f"launches @{self.kernel.root_reference.data}, which is no kernel of the module")
        signature = kernel.function_type
        for what, buffers, types in (
            ("input", self.inputs, signature.inputs.data),
            ("output", self.outputs, signature.outputs.data),
        ):
            if len(buffers) != len(types):
                raise fail(self, f"{len(buffers)} {what} buffers for {len(types)} kernel {what}s")
            if what == "output" and any(isinstance(b.owner, WeightOp) for b in buffers):
                raise fail(self, "a launch cannot write into a weight")
            for buffer, t in zip(buffers, types, strict=True):
                b = buffer.type
                if not isinstance(t, TensorType) or not holds(b, t):
                    held = f"kernel {what} {t} ({format_of(t)})"
                    raise fail(self, f"{what} buffer {b} ({format_of(b)}) does not hold {held}")


class _EventOp(LocalVerifier, IRDLOperation):
    event = prop_def(IntegerAttr[I64])
    stream = prop_def(IntegerAttr[I64])
    traits = traits_def(HasParent(ModelOp))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "`event` $event `stream` $stream attr-dict"

    def __init__(self, event: int, stream: int):
        super().__init__(properties={"event": IntegerAttr(event, i64), "stream": IntegerAttr(stream, i64)})


@irdl_op_definition
class EventRecordOp(_EventOp):
    """Marks the point on `stream` that waiters of `event` depend on.

    `ascend.stream.event_record event 0 stream 1`
    """

    name = "ascend.stream.event_record"


@irdl_op_definition
class EventWaitOp(_EventOp):
    """Holds `stream` until `event` has been recorded: `ascend.stream.event_wait event 0 stream 0`."""

    name = "ascend.stream.event_wait"


@irdl_op_definition
class OutputsOp(IRDLOperation):
    """Names the buffers that hold the model's outputs, in order (the model's last op).

    `ascend.stream.outputs %y : memref<4xf32>`
    """

    name = "ascend.stream.outputs"

    values = var_operand_def(MemRefType)
    traits = traits_def(HasParent(ModelOp))
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])


def holds(buffer: Attribute, t: TensorType) -> bool:
    """Whether `buffer` holds a value of type `t`: the same shape, element type and format."""
    return isinstance(buffer, MemRefType) and buffer == memref_of(t)


@irdl_op_definition
class ViewOp(LocalVerifier, IRDLOperation):
    """The same bytes as `source`, seen with another shape: no copy, no task. The rules are a
    kernel view's (`ge.dialects.formats.view_error`): the same element type and count, a plain
    result, and a source that is plain or NC1HWC0 whose bytes are the plain ones (H = W = 1, C a
    multiple of C0).

    `%v = ascend.stream.view %b : memref<1x2048x1x1xf32, #ascend.format<NC1HWC0>> -> memref<1x2048xf32>`
    """

    name = "ascend.stream.view"

    source = operand_def(MemRefType)
    buffer = result_def(MemRefType)

    traits = traits_def(HasParent(ModelOp))
    assembly_format = "$source attr-dict `:` type($source) `->` type($buffer)"

    def __init__(self, source: SSAValue, type: MemRefType):
        super().__init__(operands=[source], result_types=[type])

    def verify_(self) -> None:
        source, result = _memref_types(self)
        for what, t in (("source", source), ("result", result)):
            if (error := encoding_error(t)) is not None:
                raise fail(self, f"{what}: {error}")
        if (error := view_error(source, result)) is not None:
            raise fail(self, error)


@irdl_op_definition
class SubviewOp(LocalVerifier, IRDLOperation):
    """A slice of `source` along logical `axis`, from `start`, `length` long: a producer writes its
    result straight into its part of a concat. Both keep the source's format; in NC1HWC0 the slice
    is whole channel blocks (axis 1, start and length multiples of C0).

    `%s = ascend.stream.subview %b axis 1 start 64 length 32 : memref<1x96x8x8xf32, #ascend.format<NC1HWC0>>
        -> memref<1x32x8x8xf32, #ascend.format<NC1HWC0>>`
    """

    name = "ascend.stream.subview"

    source = operand_def(MemRefType)
    axis = prop_def(IntegerAttr[I64])
    start = prop_def(IntegerAttr[I64])
    length = prop_def(IntegerAttr[I64])
    buffer = result_def(MemRefType)

    traits = traits_def(HasParent(ModelOp))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$source `axis` $axis `start` $start `length` $length attr-dict `:` type($source) `->` type($buffer)"
    )

    def __init__(self, source: SSAValue, axis: int, start: int, length: int, type: MemRefType):
        super().__init__(
            operands=[source],
            result_types=[type],
            properties={
                "axis": IntegerAttr(axis, i64),
                "start": IntegerAttr(start, i64),
                "length": IntegerAttr(length, i64),
            },
        )

    def verify_(self) -> None:
        source, result = _memref_types(self)
        for what, t in (("source", source), ("result", result)):
            if (error := encoding_error(t)) is not None:
                raise fail(self, f"{what}: {error}")
        outer, inner = source.get_shape(), result.get_shape()
        axis, start, length = self.axis.value.data, self.start.value.data, self.length.value.data
        if not 0 <= axis < len(outer) or len(inner) != len(outer):
            raise fail(self, f"axis {axis} does not fit {self.source.type} -> {self.buffer.type}")
        expected = tuple(length if i == axis else d for i, d in enumerate(outer))
        if inner != expected or start < 0 or start + length > outer[axis]:
            raise fail(
                self,
                f"slice [{start}, {start + length}) of axis {axis} of {self.source.type} "
                f"is not {self.buffer.type}",
            )
        fmt = format_of(source)
        if format_of(result) != fmt or source.element_type != result.element_type:
            raise fail(self, f"a subview keeps the format and element type of {source}")
        if fmt == "NC1HWC0":
            c0 = c0_of(getattr(result.element_type, "bitwidth", 32))
            if axis != 1 or start % c0 or length % c0:
                raise fail(self, f"an NC1HWC0 subview takes whole blocks of {c0} channels on axis 1")
        elif fmt not in FRAMEWORK_FORMATS:
            raise fail(self, f"a subview is ND, NCHW or NC1HWC0, not {fmt}")

    def stored_slice(self) -> tuple[int, int, int]:
        """(axis, start, length) of the slice in the source's stored shape."""
        axis, start, length = self.axis.value.data, self.start.value.data, self.length.value.data
        source, result = _memref_types(self)
        if format_of(source) == "NC1HWC0":
            c0 = c0_of(getattr(result.element_type, "bitwidth", 32))
            return axis, start // c0, length // c0
        return axis, start, length


def _memref_types(op: ViewOp | SubviewOp) -> tuple[MemRefType, MemRefType]:
    """The source and result types of a view (memrefs: the op's constraints hold before verify_)."""
    source, result = op.source.type, op.buffer.type
    assert isinstance(source, MemRefType) and isinstance(result, MemRefType)
    return source, result


def root_buffer(value: SSAValue) -> SSAValue:
    """The arena buffer (or weight) a view or subview's bytes belong to."""
    while isinstance(value.owner, ViewOp | SubviewOp):
        value = value.owner.source
    return value


def model_of(module: Operation) -> ModelOp:
    for op in module.walk():
        if isinstance(op, ModelOp):
            return op
    raise ValueError("the module holds no 'ascend.stream.model'")


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


def _tensor_types(types: Sequence[Attribute]) -> tuple[TensorType, ...]:
    for t in types:
        assert isinstance(t, TensorType), f"a kernel signature holds tensors, not {t}"
    return tuple(t for t in types if isinstance(t, TensorType))


__all__ = [
    "Stream",
    "byte_size",
    "holds",
    "model_of",
    "root_buffer",
    *(op.__name__ for op in STREAM_OPS),
]
