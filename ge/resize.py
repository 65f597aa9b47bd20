"""Re-batching a graph: its inputs given another batch size and number of positions per sample,
and every result type inferred again (`with_batch_size`), as `MemoryOptimizer` sizes memory."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from ge.dialects.common import describe
from ge.dialects.graph.base import tensor_type

from . import arguments, symbolic
from .compiler import require_graph
from .errors import GeError
from .graph import Graph
from .symbolic import SpecializationError


def with_batch_size(
    graph: Graph, batch_size: int, seq_len: int | None = None, where: str = "with_batch_size"
) -> Graph:
    """A copy of `graph` whose inputs have `batch_size` as their first dimension and, when
    `seq_len` is given, `seq_len` positions per sample: on axis 1 of an input [N, L] or [N, L, D],
    over H x W of an image [N, C, H, W] keeping its aspect ratio; inputs of other ranks keep theirs.
    A symbol on an input's first dimension (`"batch"`) is specialized to `batch_size` wherever it
    stands; every result type is inferred again by its op (`reinfer`).

    A reshape to a static shape follows groups of dimensions of equal products: a group whose
    input changed takes the batch factor on its first result dimension and the sequence factor
    on its next, as batch-major layouts have them. A reshape that cannot follow, or an op whose
    fixed operand (a weight, a stated shape) does not fit the new sizes, raises
    SpecializationError naming the op."""
    graph = require_graph(graph, where)
    batch_size = arguments.integer(batch_size, f"{where}: batch_size", 1)
    if seq_len is not None:
        seq_len = arguments.integer(seq_len, f"{where}: seq_len", 1)
    copy = graph.copy()
    leading = {dims[0] for dims in copy.input_dims.values() if dims and isinstance(dims[0], str)}
    if leading:
        copy = copy.specialize(dict.fromkeys(leading, batch_size))
    module = copy.module  # once: the graph brings its return up to date on each access
    func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
    block = func.body.block
    before, after, new_dims = [], [], []
    for arg, name, dims in zip(block.args, copy.inputs, symbolic.input_dims(func), strict=True):
        shape = list(tensor_type(arg.type).get_shape())
        resized = shape
        if shape:
            resized = _resized(shape, batch_size, seq_len, f"{where}: seq_len {seq_len} for input '{name}'")
        before.append(shape)
        after.append(resized)
        new_dims.append(
            tuple(d if size == DYNAMIC_INDEX else size for d, size in zip(dims, resized, strict=True))
        )
    arguments_types = [
        TensorType(tensor_type(arg.type).element_type, shape)
        for arg, shape in zip(block.args, after, strict=True)
    ]

    def rejected(op: Operation, inferred: list[TensorType] | ValueError) -> list[TensorType]:
        if isinstance(inferred, ValueError):
            raise SpecializationError(
                f"{describe(op)} cannot take the new input sizes: {inferred}; the graph's fixed "
                "shapes do not allow this batch size or sequence length"
            )
        return inferred

    symbolic.retype(symbolic.infer_types(block, arguments_types, rejected, _factors(before, after)))
    func.arg_attrs = symbolic.argument_attrs(copy.inputs, new_dims)
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


def _factors(before: Sequence[Sequence[int]], after: Sequence[Sequence[int]]) -> tuple[Fraction, Fraction]:
    """The factors the batch and the positions per sample grew by: those of the first static
    input that changes each."""
    batch = seq = Fraction(1)
    for old, new in zip(before, after, strict=True):
        if not old or DYNAMIC_INDEX in old:
            continue
        if batch == 1 and old[0] > 0:
            batch = Fraction(new[0], old[0])
        positions = math.prod(old[1:])
        if seq == 1 and positions > 0:
            seq = Fraction(math.prod(new[1:]), positions)
    return batch, seq
