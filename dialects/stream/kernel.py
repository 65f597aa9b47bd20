"""The outlined kernel of `ascend.stream`: a symbol (as `gpu.func`) holding the graph ops it
computes, and the `ascend.stream.return` that ends its body.

A kernel's `function_type` has the same tensor types as the kernel op it was outlined from,
formats as encodings; its body computes on the plain types. Launches name it by symbol
(`tasks.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    FunctionType,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, SymbolOpInterface

from ..common import fail
from ..formats import encoding_error, format_of, plain_type
from ..graph.traits import matrix_product
from ..kernel import KernelKindAttr, KernelUnitAttr, Unit
from ..tiling import CubeTilingAttr, TilingAttr
from ..verify import LocalVerifier


@irdl_op_definition
class KernelFuncOp(LocalVerifier, IRDLOperation):
    """An outlined kernel: a symbol holding the graph ops it computes and its unit; its type has
    the operands' formats as encodings, the body computes on the plain types. A cube kernel that
    computes a matrix product carries its `#ascend.cube_tiling` (the K steps the cube runs).

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
        self._verify_cube_tiling()

    def _verify_cube_tiling(self) -> None:
        """A cube kernel's matrix product runs its K loop in the steps of its cube tiling, which
        the compiler always chooses (`ge-tile-kernels`): without one the K order is unknown."""
        if self.unit.data != Unit.CUBE or isinstance(self.tiling, CubeTilingAttr):
            return
        product = next((op for op in self.body.block.ops if matrix_product(op) is not None), None)
        if product is None:
            return
        what = "no tiling" if self.tiling is None else f"the tiling {self.tiling}"
        raise fail(
            self,
            f"cube kernel @{self.sym_name.data} computes '{product.name}' with {what}; a cube kernel "
            "carries the #ascend.cube_tiling that ge-tile-kernels chose for it",
        )


@irdl_op_definition
class ReturnOp(LocalVerifier, IRDLOperation):
    """Ends an outlined kernel: `ascend.stream.return %r : tensor<4xf32>`."""

    name = "ascend.stream.return"

    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(KernelFuncOp))
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])


def _tensor_types(types: Sequence[Attribute]) -> tuple[TensorType, ...]:
    for t in types:
        assert isinstance(t, TensorType), f"a kernel signature holds tensors, not {t}"
    return tuple(t for t in types if isinstance(t, TensorType))
