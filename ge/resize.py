"""Re-batching a graph: its inputs given another batch size and number of positions per sample,
and every result type inferred again (`with_batch_size`), as `MemoryOptimizer` sizes memory."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.traits import IsTerminator

from ge.dialects import graph as ops
from ge.dialects.common import describe
from ge.dialects.graph.base import tensor_type

from . import arguments
from .compiler import require_graph
from .errors import GeError
from .graph import Graph


def with_batch_size(
    graph: Graph, batch_size: int, seq_len: int | None = None, where: str = "with_batch_size"
) -> Graph:
    """A copy of `graph` whose inputs have `batch_size` as their first dimension and, when
    `seq_len` is given, `seq_len` positions per sample: on axis 1 of an input [N, L] or [N, L, D],
    over H x W of an image [N, C, H, W] keeping its aspect ratio; inputs of other ranks keep theirs.
    Every result type is inferred again by its op's `infer`.

    A reshape states its result shape, so it is followed by dimension groups (input and result
    dimensions of equal products): a group whose input changed takes the batch factor on its first
    result dimension and the sequence factor on its next, as batch-major layouts have them. A
    reshape that cannot follow, or an op whose fixed operand (a weight, a stated shape) does not
    fit the new sizes, raises GeError naming the op."""
    graph = require_graph(graph, where)
    batch_size = arguments.integer(batch_size, f"{where}: batch_size", 1)
    if seq_len is not None:
        seq_len = arguments.integer(seq_len, f"{where}: seq_len", 1)
    copy = graph.copy()
    module = copy.module
    func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
    resizer = _Resizer()
    for arg, name in zip(list(func.body.block.args), copy.inputs, strict=True):
        t = arg.type
        if not isinstance(t, TensorType) or not t.get_shape():
            continue
        shape = list(t.get_shape())
        resized = _resized(shape, batch_size, seq_len, f"{where}: seq_len {seq_len} for input '{name}'")
        resizer.note_factors(shape, resized)
        resizer.retype(arg, TensorType(t.element_type, resized))
    resizer.infer_block(func.body.block)
    resized_graph = Graph.from_module(module, copy.weights)
    resized_graph.verify()
    return resized_graph


def _resized(shape: list[int], batch_size: int, seq_len: int | None, where: str) -> list[int]:
    """`shape` with `batch_size` samples of `seq_len` positions (see `with_batch_size`)."""
    resized = [batch_size, *shape[1:]]
    if seq_len is None or len(shape) not in (2, 3, 4):
        return resized
    if len(shape) < 4:
        resized[1] = seq_len
        return resized
    height, width = shape[2], shape[3]
    if height < 1 or width < 1:
        return resized
    step = math.gcd(height, width)
    tall, wide = height // step, width // step
    scale = math.isqrt(seq_len // (tall * wide))
    if tall * wide * scale * scale != seq_len:
        raise GeError(
            f"{where}: an image of {height} x {width} keeps its aspect ratio only at H x W = "
            f"{tall * wide} x k^2 positions ({tall * wide}, {4 * tall * wide}, {9 * tall * wide}, ...)"
        )
    resized[2], resized[3] = tall * scale, wide * scale
    return resized


class _Resizer:
    """Infers result types again after some values changed type; remembers the old types."""

    def __init__(self) -> None:
        self.previous: dict[SSAValue, TensorType] = {}
        self.batch = self.seq = Fraction(1)

    def note_factors(self, before: list[int], after: list[int]) -> None:
        """The batch and sequence factors of the first input that changes them."""
        if self.batch == 1 and before[0] > 0:
            self.batch = Fraction(after[0], before[0])
        positions = math.prod(before[1:])
        if self.seq == 1 and positions > 0:
            self.seq = Fraction(math.prod(after[1:]), positions)

    def retype(self, value: SSAValue, t: Attribute) -> None:
        if value.type != t:
            old = value.type
            assert isinstance(old, TensorType)
            self.previous[Rewriter.replace_value_with_new_type(value, t)] = old

    def infer_block(self, block: Block) -> None:
        """Infers again the result types of the ops of `block` that read a retyped value."""
        for op in block.ops:
            if (
                isinstance(op, ops.ConstOp)
                or op.has_trait(IsTerminator)
                or not any(v in self.previous for v in op.operands)
            ):
                continue
            try:
                types = self.inferred(op)
            except ValueError as error:
                raise GeError(
                    f"{describe(op)} cannot take the new input sizes: {error}; the graph's fixed "
                    "shapes do not allow this batch size or sequence length"
                ) from None
            for result, t in zip(list(op.results), types, strict=True):
                self.retype(result, t)

    def inferred(self, op: Operation, types: list[TensorType] | None = None) -> list[Attribute]:
        """The result types of `op` on operands of `types` (by default, their types now)."""
        types = [tensor_type(v.type) for v in op.operands] if types is None else types
        where = describe(op)
        if isinstance(op, ops.FusedOp):
            epilogue = ops.infer_fused_types(op, types, self._inner_types)
            for value, t in epilogue.items():
                self.retype(value, t)
            last = op.epilogue.block.last_op
            assert last is not None
            return [last.operands[0].type]
        if isinstance(op, ops.CastOp):
            return [TensorType(op.result.type.element_type, types[0].get_shape())]
        if isinstance(op, ops.ReshapeOp):
            old = self.previous.get(op.input) or tensor_type(op.input.type)
            shape = self.reshaped(old.get_shape(), types[0].get_shape(), op.result.type.get_shape())
            return [TensorType(op.result.type.element_type, shape)]
        if isinstance(op, ops.GraphOp):
            inferred = op.infer(types, op.properties, where)
            return list(inferred) if isinstance(inferred, list) else [inferred]
        raise GeError(f"{describe(op)} has no shape inference, so the graph cannot be re-batched")

    def _inner_types(self, op: Operation, operand_types: list[Attribute]) -> list[Attribute]:
        """An epilogue op's result types once its operands take `operand_types` (nothing retyped yet)."""
        if all(v.type == t for v, t in zip(op.operands, operand_types, strict=True)):
            return [r.type for r in op.results]
        return self.inferred(op, [tensor_type(t) for t in operand_types])

    def reshaped(self, before: Sequence[int], after: Sequence[int], stated: Sequence[int]) -> list[int]:
        """The result shape of a reshape of `before` into `stated` whose input is now `after`."""
        cannot = ValueError(f"a reshape of {list(before)} into {list(stated)} cannot follow {list(after)}")
        shape = list(stated)
        for group_in, group_out in _groups(before, stated):
            old = math.prod(before[k] for k in group_in)
            new = math.prod(after[k] for k in group_in)
            if new == old:
                continue
            ratio = Fraction(new, old)
            if len(group_out) == 1 or ratio in (self.batch, self.seq):
                factors = [ratio]
            elif ratio == self.batch * self.seq:
                factors = [self.batch, self.seq]
            else:
                raise cannot
            for index, factor in zip(group_out, factors, strict=False):
                scaled = shape[index] * factor
                if scaled.denominator != 1:
                    raise cannot
                shape[index] = int(scaled)
        if math.prod(shape) != math.prod(after):
            raise cannot
        return shape


def _groups(before: Sequence[int], stated: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Input and result dimension indices in runs of equal products: (2, 8, 32) into (16, 32)
    gives ([0, 1], [0]) and ([2], [1])."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(before) and j < len(stated):
        group_in, group_out = [i], [j]
        left, right = before[i], stated[j]
        i, j = i + 1, j + 1
        while left != right:
            if left < right and i < len(before):
                left *= before[i]
                group_in.append(i)
                i += 1
            elif right < left and j < len(stated):
                right *= stated[j]
                group_out.append(j)
                j += 1
            else:
                raise ValueError(f"{list(before)} and {list(stated)} do not hold the same elements")
        groups.append((group_in, group_out))
    if groups:
        groups[-1][0].extend(range(i, len(before)))
        groups[-1][1].extend(range(j, len(stated)))
    return groups
