"""`ge-fuse-conv-bn`: folds inference batch normalization, and per-channel scale and shift
chains, into the weights and bias of the convolution before them.

With `s = scale / sqrt(var + eps)`, `bn(conv(x, w, b))` is `conv(x, w * s, (b - mean) * s + beta)`.
A per-channel `mul` by `c` is `conv(x, w * c, b * c)`, and an `add` of `d` is `conv(x, w, b + d)`.
The rewrite writes the new weight and bias as graph ops on the constants, which
`ge-constant-fold` then computes with the shared semantics, so no numerics live in this pass.

```
%c = ascend.graph.conv2d %x, %w : (...) -> tensor<1x64x56x56xf32>
%y = ascend.graph.batch_norm %c, %scale, %beta, %mean, %var {epsilon = 1.0e-05 : f32} : (...)
```
becomes
```
%s = ascend.graph.div %scale, (ascend.graph.sqrt (ascend.graph.add %var, %eps))
%w2 = ascend.graph.mul %w, (ascend.graph.reshape %s : tensor<64x1x1x1xf32>)
%b2 = ascend.graph.add (ascend.graph.mul (ascend.graph.sub %zero, %mean), %s), %beta
%y = ascend.graph.conv2d %x, %w2, %b2 : (...) -> tensor<1x64x56x56xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, FloatAttr, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from ge.dialects import graph
from ge.dialects.common import get_float

from ..driver import RewritesOnly, rewrite
from ..fusion import source_names
from ..session import CompileSession, current
from .match import computed_from_constants, drops_rounding


@dataclass
class _Builder:
    """Appends graph ops before `anchor`, each computing part of the new weight or bias."""

    rewriter: PatternRewriter
    anchor: Operation

    def op(self, op_class: type[graph.GraphOp], operands: list[SSAValue]) -> SSAValue:
        new = op_class.build_inferred(operands)
        _insert_before(self.rewriter, new, self.anchor)
        return new.results[0]

    def reshape(self, value: SSAValue, shape: list[int]) -> SSAValue:
        new = graph.ReshapeOp(value, shape)
        _insert_before(self.rewriter, new, self.anchor)
        return new.result

    def splat(self, number: float, like: SSAValue) -> SSAValue:
        t = like.type
        # The folds build float weights; FloatAttr fails on anything else just as this does.
        assert isinstance(t, TensorType) and isinstance(t.element_type, AnyFloat)
        new = graph.ConstOp(FloatAttr(number, t.element_type), t)
        _insert_before(self.rewriter, new, self.anchor)
        return new.result


def _insert_before(rewriter: PatternRewriter, op: Operation, anchor: Operation) -> None:
    rewriter.insert(op, InsertPoint.before(anchor))


def _single_use_conv(value: SSAValue) -> graph.ConvOp | None:
    conv = value.owner
    if not isinstance(conv, graph.ConvOp) or not value.has_one_use():
        return None
    if not computed_from_constants(conv.weight) or (
        conv.bias is not None and not computed_from_constants(conv.bias)
    ):
        return None
    return conv


def _channel_vector(value: SSAValue, conv: graph.ConvOp, rank: int) -> bool:
    """Whether `value` is a constant that varies along the channel axis only (or not at all),
    so that multiplying or adding it keeps the conv's result shape."""
    if not computed_from_constants(value) or not isinstance(value.type, TensorType):
        return False
    shape = value.type.get_shape()
    if len(shape) > rank:
        return False
    padded = (1,) * (rank - len(shape)) + tuple(shape)
    channels = conv.result.type.get_shape()[1]
    return padded[1] in (1, channels) and all(d == 1 for i, d in enumerate(padded) if i != 1)


def _replace_conv(
    rewriter: PatternRewriter,
    conv: graph.ConvOp,
    root: Operation,
    weight: SSAValue,
    bias: SSAValue,
    replaced: list[Operation],
) -> None:
    new = type(conv).build_inferred([conv.input, weight, bias], dict(conv.properties))
    new.location = conv.location
    new.attributes["sources"] = source_names(replaced)
    rewriter.replace(root, new)
    rewriter.erase(conv)


def _channels_as(value: SSAValue, builder: _Builder, channels: int) -> SSAValue:
    """A per-channel constant as a vector of `channels` elements."""
    value_type = value.type
    assert isinstance(value_type, TensorType)  # `_channel_vector` checked it
    shape = value_type.get_shape()
    if tuple(shape) == (channels,):
        return value
    if all(d == 1 for d in shape):
        # A single value: broadcast it over the channels with a multiply by ones.
        element = value_type.element_type
        assert isinstance(element, AnyFloat)  # as FloatAttr would fail on any other element
        ones = graph.ConstOp(FloatAttr(1.0, element), TensorType(element, [channels]))
        _insert_before(builder.rewriter, ones, builder.anchor)
        return builder.op(graph.MulOp, [ones.result, builder.reshape(value, [1])])
    return builder.reshape(value, [channels])


@dataclass
class FoldBatchNormIntoConv(RewritePattern):
    """`batch_norm(conv(x, w, b))` is `conv(x, w * s, (b - mean) * s + beta)`."""

    session: CompileSession
    keep_rounding: bool = True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.BatchNormOp):
            return
        conv = _single_use_conv(op.input)
        if conv is None:
            return
        params = [op.scale, op.bias, op.mean, op.var]
        applied = (
            all(computed_from_constants(p) for p in params)
            and op.result.type == conv.result.type
            and not drops_rounding(conv.result.type.element_type, self.keep_rounding)
        )
        self.session.record("FoldBatchNormIntoConv", applied, op)
        if not applied:
            return
        b = _Builder(rewriter, op)
        channels = conv.result.type.get_shape()[1]
        eps = b.splat(get_float(op, "epsilon", 1e-5), op.var)
        s = b.op(graph.DivOp, [op.scale, b.op(graph.SqrtOp, [b.op(graph.AddOp, [op.var, eps])])])
        weight = _scale_weight(b, conv, s, channels)
        base = conv.bias if conv.bias is not None else b.splat(0.0, op.mean)
        bias = b.op(graph.AddOp, [b.op(graph.MulOp, [b.op(graph.SubOp, [base, op.mean]), s]), op.bias])
        _replace_conv(rewriter, conv, op, weight, bias, [conv, op])


def _scale_weight(b: _Builder, conv: graph.ConvOp, s: SSAValue, channels: int) -> SSAValue:
    weight_type = conv.weight.type
    assert isinstance(weight_type, TensorType)  # the verifier holds a conv's weight to a tensor
    rank = len(weight_type.get_shape())
    return b.op(graph.MulOp, [conv.weight, b.reshape(s, [channels, *([1] * (rank - 1))])])


@dataclass
class FoldChannelScaleIntoConv(RewritePattern):
    """`conv(x, w, b) * c`, c per output channel, is `conv(x, w * c, b * c)`."""

    session: CompileSession
    keep_rounding: bool = True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.MulOp):
            return
        for conv_value, factor in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            conv = _single_use_conv(conv_value)
            if conv is None:
                continue
            if not computed_from_constants(factor):
                continue
            rank = len(conv.result.type.get_shape())
            applied = (
                _channel_vector(factor, conv, rank)
                and op.result.type == conv.result.type
                and not drops_rounding(conv.result.type.element_type, self.keep_rounding)
            )
            self.session.record("FoldChannelScaleIntoConv", applied, op)
            if not applied:
                return
            b = _Builder(rewriter, op)
            channels = conv.result.type.get_shape()[1]
            c = _channels_as(factor, b, channels)
            weight = _scale_weight(b, conv, c, channels)
            bias = b.op(graph.MulOp, [conv.bias, c]) if conv.bias is not None else None
            if bias is None:
                bias = b.splat(0.0, c)
            _replace_conv(rewriter, conv, op, weight, bias, [conv, op])
            return


@dataclass
class FoldChannelShiftIntoConv(RewritePattern):
    """`conv(x, w, b) + d`, d per output channel, is `conv(x, w, b + d)`."""

    session: CompileSession
    keep_rounding: bool = True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.AddOp):
            return
        for conv_value, shift in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            conv = _single_use_conv(conv_value)
            if conv is None:
                continue
            if not computed_from_constants(shift):
                continue  # a residual add, not a shift
            rank = len(conv.result.type.get_shape())
            applied = (
                _channel_vector(shift, conv, rank)
                and op.result.type == conv.result.type
                and not drops_rounding(conv.result.type.element_type, self.keep_rounding)
            )
            self.session.record("FoldChannelShiftIntoConv", applied, op)
            if not applied:
                return
            b = _Builder(rewriter, op)
            d = _channels_as(shift, b, conv.result.type.get_shape()[1])
            bias = b.op(graph.AddOp, [conv.bias, d]) if conv.bias is not None else d
            _replace_conv(rewriter, conv, op, conv.weight, bias, [conv, op])
            return


@dataclass(frozen=True)
class FuseConvBatchNormPass(RewritesOnly, ModulePass):
    """Folds batch norm and per-channel scale/shift chains into the preceding convolution."""

    name = "ge-fuse-conv-bn"

    keep_rounding: bool = True
    """Leave float16 and bfloat16 convolutions alone (see `match.drops_rounding`): the folded
    convolution rounds once where the graph rounded its result and then the normalization's."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        session = current()
        keep = self.keep_rounding
        patterns = [
            FoldBatchNormIntoConv(session, keep),
            FoldChannelScaleIntoConv(session, keep),
            FoldChannelShiftIntoConv(session, keep),
        ]
        rewrite(op, patterns, session)
