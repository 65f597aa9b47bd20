"""The task list of an `ascend.stream.model`: launches of kernels on streams, and the events
that order work across streams.

A launch's buffer holds a kernel operand exactly when the two types agree in shape, element type
and format: `holds` compares, it does not recompute a stored shape.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntegerAttr, MemRefType, SymbolRefAttr, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import SymbolTable

from ..common import fail
from ..formats import format_of, memref_of
from ..verify import LocalVerifier
from .buffers import WeightOp
from .kernel import KernelFuncOp
from .traits import InModel


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

    traits = traits_def(InModel())
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
    traits = traits_def(InModel())
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


def holds(buffer: Attribute, t: TensorType) -> bool:
    """Whether `buffer` holds a value of type `t`: the same shape, element type and format."""
    return isinstance(buffer, MemRefType) and buffer == memref_of(t)
