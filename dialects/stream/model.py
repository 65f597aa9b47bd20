"""The `ascend.stream.model` op: one compiled model, its arena and weight-blob sizes, and the
ops it holds in task order, ending with `ascend.stream.outputs`.

The model's verifier checks what no single op can: every slot lies inside its space, each input
and output is bound once, every wait follows its record, every launch fits the kernel it names,
a buffer bound to an output holds that output, and in task order every buffer is written before
it is read (an input by the caller, the others by a launch) and no launch writes an input, which
is the caller's array, read in place. Then the placement (`placement.py`): reads ordered after
their writes across streams, arena bytes shared only by buffers never live at once, weights apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
)
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import HasParent, NoTerminator, SymbolOpInterface

from ..common import fail
from .buffers import BufferOp, WeightOp
from .kernel import KernelFuncOp
from .placement import check_placement
from .tasks import EventRecordOp, EventWaitOp, LaunchOp
from .traits import MODEL_OP_NAME
from .views import SubviewOp, ViewOp, root_buffer


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

    name = MODEL_OP_NAME

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
        written: set[SSAValue] = set()
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
                    written.add(op.buffer)
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
                _check_dataflow(op, op.inputs, op.outputs, written)
            elif isinstance(op, OutputsOp):
                if position != len(ops) - 1:
                    raise fail(op, "'ascend.stream.outputs' must be the model's last op")
                _check_dataflow(op, op.values, (), written)
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
                if not 0 <= index < len(returned) or root_buffer(returned[index]).owner is not op:
                    raise fail(op, f"a buffer bound to output {index} must hold that output")
        check_placement(ops, returned)


def _check_dataflow(
    op: Operation, reads: Sequence[SSAValue], writes: Sequence[SSAValue], written: set[SSAValue]
) -> None:
    """`op` reads only buffers written before it and writes no model input; adds what it writes
    to `written` (the buffers written so far in task order, the inputs included)."""
    for value in reads:
        root = root_buffer(value)
        if isinstance(root.owner, BufferOp) and root not in written:
            raise fail(op, f"reads %{root.name_hint or '?'} before any launch writes it")
    for value in writes:
        root = root_buffer(value)
        if isinstance(root.owner, BufferOp) and root.owner.input is not None:
            raise fail(
                op,
                f"writes %{root.name_hint or '?'}, model input {root.owner.input.value.data}: "
                "the caller's array, which a run reads in place and never changes",
            )
        written.add(root)


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


def model_of(module: Operation) -> ModelOp:
    """The `ascend.stream.model` of a compiled module."""
    for op in module.walk():
        if isinstance(op, ModelOp):
            return op
    raise ValueError("the module holds no 'ascend.stream.model'")
