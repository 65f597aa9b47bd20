"""Fused ops: a cube op (conv, matmul, gemm) with its elementwise epilogue.

The epilogue is a region run on the cube op's result: its block takes the accumulator and the
fused op's `extras` (a bias or a residual), and its ops (adds, activations, clips) are ordinary
graph ops in the order the graph had them, ending in `ascend.graph.yield`. The fused op keeps
the base op's operands and properties, and `sources` names the ops it replaced. Its types are
inferred again (`reinfer`) and its samples followed (`Samplewise`) through the base op, then
the epilogue's ops, each by its own rule.

```
%y = ascend.graph.fused_conv2d %x, %w, %b, %res {pads = array<i64: 1, 1, 1, 1>, extras = 1 : i64,
    sources = ["conv1", "add1", "relu1"]}
    : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>, tensor<1x8x8x8xf32>)
    -> tensor<1x8x8x8xf32> {
^bb0(%acc: tensor<1x8x8x8xf32>, %r: tensor<1x8x8x8xf32>):
  %0 = ascend.graph.add %acc, %r : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %1 = ascend.graph.relu %0 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  ascend.graph.yield %1 : tensor<1x8x8x8xf32>
}
```
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import ClassVar

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.operations import OptOperandDef, ParsePropInAttrDict, VarOperandDef
from xdsl.traits import IsTerminator, Pure

from ..common import IntArray, describe, fail, int_attr
from ..verify import LocalVerifier, check_result_dims
from .base import GraphOp, Reinfers, check_flags, compatible, flag_def, reinfer_values
from .nn import Conv2DOp, Conv3DOp, GemmOp, MatMulOp
from .products import FusedProduct
from .samples import Axes, Samplewise, sample_axes
from .traits import FusionOnly


class FusedOp(Reinfers, LocalVerifier, IRDLOperation, ABC):
    """A base cube op (`BASE`) whose result runs through the `epilogue` region.

    The operands are the base op's operands followed by `extras` of them (the epilogue's extra
    inputs); the result type is the base op's.
    """

    BASE: ClassVar[type[GraphOp]]

    args = var_operand_def(TensorType)
    result = result_def(TensorType)
    extras = opt_prop_def(IntegerAttr)
    epilogue = region_def("single_block")

    # The rule is defined after the class it reads (`fused_sample_axes`).
    traits = traits_def(Pure(), FusionOnly(), Samplewise(lambda op, axes: fused_sample_axes(op, axes)))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$args attr-dict `:` functional-type($args, results) $epilogue"

    @property
    def num_extras(self) -> int:
        return self.extras.value.data if self.extras is not None else 0

    @property
    def base_operands(self) -> Sequence[SSAValue]:
        return self.args[: len(self.args) - self.num_extras]

    @property
    def extra_operands(self) -> Sequence[SSAValue]:
        return self.args[len(self.args) - self.num_extras :]

    @classmethod
    def build_fused(
        cls,
        base_operands: Sequence[SSAValue],
        properties: Mapping[str, Attribute],
        extras: Sequence[SSAValue],
        epilogue: Region,
    ) -> FusedOp:
        props = base_properties(properties)
        if extras:
            props["extras"] = int_attr(len(extras))
        result = cls.accumulator_type([tensor(v) for v in base_operands], props, f"'{cls.name}'")
        yielded = epilogue.block.last_op
        result_type = yielded.operands[0].type if yielded is not None and yielded.operands else result
        return cls.build(
            operands=[[*base_operands, *extras]],
            properties=props,
            result_types=[result_type],
            regions=[epilogue],
        )

    def verify(self, verify_nested_ops: bool = True) -> None:
        check_flags(self)
        check_result_dims(self)
        super().verify(verify_nested_ops)

    @classmethod
    def accumulator_type(
        cls, base_types: Sequence[TensorType], properties: Mapping[str, Attribute], where: str
    ) -> TensorType:
        """The type of the base op's result (the epilogue's first argument) for these base operand
        types; raises ValueError if they are invalid."""
        inferred = cls.BASE.infer(base_types, base_properties(properties), where)
        assert isinstance(inferred, TensorType), "a fused op's base op has one result"
        return inferred

    def _check_operand_count(self) -> None:
        """`extras` leaves the base op the operands it takes."""
        if not 0 <= self.num_extras <= len(self.args):
            raise fail(
                self,
                f"property 'extras' = {self.num_extras} must be between 0 and its {len(self.args)} operands",
            )
        fewest, most = _base_arity(self.BASE)
        base = len(self.args) - self.num_extras
        if base < fewest or (most is not None and base > most):
            takes = f"{fewest}" if most == fewest else f"{fewest} to {most if most is not None else 'any'}"
            leaves = f"leaves {base} operands for '{self.BASE.name}', which takes {takes}"
            raise fail(self, f"property 'extras' = {self.num_extras} {leaves}")

    def reinfer(
        self, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
    ) -> list[TensorType]:
        """The type the epilogue yields on operands of `operand_types` (see `infer_fused_types`)."""
        return [self.reinfer_values(operand_types, factors)[self.result]]

    def reinfer_values(
        self, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
    ) -> dict[SSAValue, TensorType]:
        """The result's type and those of the epilogue's values (see `infer_fused_types`)."""
        types = infer_fused_types(self, operand_types, factors)
        terminator = self.epilogue.block.last_op
        if not isinstance(terminator, YieldOp) or len(terminator.values) != 1:
            raise ValueError(f"{describe(self)}: its epilogue must end with one 'ascend.graph.yield'")
        types[self.result] = types[terminator.values[0]]
        return types

    def verify_(self) -> None:
        self._check_operand_count()
        try:
            accumulator = self.accumulator_type(
                [tensor(v) for v in self.base_operands], self.properties, describe(self)
            )
        except ValueError as error:
            raise fail(self, str(error)) from None
        block: Block = self.epilogue.block
        expected = [accumulator, *(v.type for v in self.extra_operands)]
        if [a.type for a in block.args] != expected:
            raise fail(self, "the epilogue takes the accumulator and the extras, in their types")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp) or len(terminator.values) != 1:
            raise fail(self, "the epilogue must end with one 'ascend.graph.yield'")
        yielded = terminator.values[0].type
        if not isinstance(yielded, TensorType) or not compatible(self.results[0].type, yielded):
            raise fail(self, "the yielded value must have the result's type")
        for op in block.ops:
            if op is not terminator and not op.name.startswith("ascend.graph."):
                raise fail(self, f"an epilogue holds graph ops only, found '{op.name}'")


def _base_arity(base: type[GraphOp]) -> tuple[int, int | None]:
    """The fewest and most operands `base` takes (None: no most)."""
    definitions = [definition for _, definition in base.get_irdl_definition().operands]
    fewest = sum(not isinstance(d, VarOperandDef) for d in definitions)
    variadic = any(isinstance(d, VarOperandDef) and not isinstance(d, OptOperandDef) for d in definitions)
    return fewest, None if variadic else len(definitions)


def infer_fused_types(
    op: FusedOp, operand_types: Sequence[TensorType], factors: Sequence[Fraction] = ()
) -> dict[SSAValue, TensorType]:
    """The type of every value of `op`'s epilogue (its arguments, then each op's results, in
    order) when `op`'s operands take `operand_types`: the accumulator as the base op infers it,
    the extras as given, each epilogue op by its own `reinfer`. ValueError if any op rejects
    them."""
    count = len(op.base_operands)
    block = op.epilogue.block
    accumulator = op.accumulator_type(operand_types[:count], op.properties, describe(op))
    types: dict[SSAValue, TensorType] = dict(
        zip(block.args, [accumulator, *operand_types[count:]], strict=True)
    )
    for inner in block.ops:
        if inner is block.last_op:
            break
        types.update(reinfer_values(inner, [types[v] for v in inner.operands], factors))
    return types


def fused_sample_axes(op: Operation, axes: Axes) -> Sequence[int | None] | None:
    """The `Samplewise` rule of a fused op: its base op's rule on the base operands, then each
    epilogue op's own answer (an extra, such as a bias or a residual, by broadcasting); None
    when any of them may mix samples."""
    assert isinstance(op, FusedOp)
    count = len(op.base_operands)
    block = op.epilogue.block
    accumulator_axis: int | None = None
    if any(axis is not None for axis in axes[:count]):
        trait = op.BASE.get_trait(Samplewise)
        if trait is None:
            return None
        # The base op's rule reads the op it is given: the base op itself, on the base operands.
        base = op.BASE.create(
            operands=list(op.base_operands),
            result_types=[block.args[0].type],
            properties=base_properties(op.properties),
        )
        try:
            answer = trait.rule(base, axes[:count])
        finally:
            base.drop_all_references()
        if answer is None:
            return None
        accumulator_axis = answer[0]
    known: dict[SSAValue, int | None] = dict(zip(block.args, [accumulator_axis, *axes[count:]], strict=True))
    for inner in block.ops:
        inner_axes = [known.get(v) for v in inner.operands]
        if inner is block.last_op:
            return inner_axes
        results = sample_axes(inner, inner_axes)
        if results is None:
            return None
        known.update(zip(inner.results, results, strict=True))
    return None


def base_properties(properties: Mapping[str, Attribute]) -> dict[str, Attribute]:
    """A fused op's properties without its own (`extras`): the base op's properties."""
    return {k: v for k, v in properties.items() if k != "extras"}


def tensor(value: SSAValue) -> TensorType:
    if not isinstance(value.type, TensorType):
        raise ValueError(f"expected a tensor, got {value.type}")
    return value.type


class FusedConvOp(FusedOp, ABC):
    """A convolution with an epilogue: the convolution's properties."""

    strides = opt_prop_def(IntArray)
    pads = opt_prop_def(IntArray)
    dilations = opt_prop_def(IntArray)
    groups = opt_prop_def(IntegerAttr)


@irdl_op_definition
class FusedConv2DOp(FusedConvOp):
    """`conv2d` with an elementwise epilogue (see the module docstring)."""

    name = "ascend.graph.fused_conv2d"

    traits = traits_def(FusedProduct(Conv2DOp))
    BASE: ClassVar[type[GraphOp]] = Conv2DOp


@irdl_op_definition
class FusedConv3DOp(FusedConvOp):
    """`conv3d` with an elementwise epilogue."""

    name = "ascend.graph.fused_conv3d"

    traits = traits_def(FusedProduct(Conv3DOp))
    BASE: ClassVar[type[GraphOp]] = Conv3DOp


@irdl_op_definition
class FusedMatMulOp(FusedOp):
    """`matmul` with an elementwise epilogue (a bias, a residual, an activation)."""

    name = "ascend.graph.fused_matmul"

    traits = traits_def(FusedProduct(MatMulOp))
    BASE: ClassVar[type[GraphOp]] = MatMulOp


@irdl_op_definition
class FusedGemmOp(FusedOp):
    """`gemm` with an elementwise epilogue."""

    name = "ascend.graph.fused_gemm"

    traits = traits_def(FusedProduct(GemmOp))

    alpha = opt_prop_def(FloatAttr)
    beta = opt_prop_def(FloatAttr)
    trans_a = flag_def(False)
    trans_b = flag_def(False)
    BASE: ClassVar[type[GraphOp]] = GemmOp


FUSED_BY_BASE: dict[type[Operation], type[FusedOp]] = {
    Conv2DOp: FusedConv2DOp,
    Conv3DOp: FusedConv3DOp,
    MatMulOp: FusedMatMulOp,
    GemmOp: FusedGemmOp,
}


@irdl_op_definition
class YieldOp(LocalVerifier, IRDLOperation):
    """Ends a fused op's epilogue: `ascend.graph.yield %r : tensor<4xf32>`."""

    name = "ascend.graph.yield"

    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        if not isinstance(self.parent_op(), FusedOp):
            raise fail(self, "'ascend.graph.yield' ends the epilogue of a fused op only")


OPS = (FusedConv2DOp, FusedConv3DOp, FusedMatMulOp, FusedGemmOp, YieldOp)
