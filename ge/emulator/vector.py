"""The vector unit: a kernel's vector ops computed on the device formats their operands are stored in.

A vector kernel the compiler gave NC1HWC0 operands (elementwise work, batch norm, group norm,
LRN, pooling, reductions over H and W, concat of whole C0 blocks after a convolution) runs here on
the stored 5-D arrays (N, C1, H, W, C0): elementwise ops lane by lane, a per-channel operand (a
[C, 1, 1] bias, a [1, C, 1, 1] scale, batch norm's and group norm's [C] parameters) laid out
once as (1, C1, 1, 1, C0); group norm and LRN on the blocks read as contiguous channel planes
(LRN's padded channels zero); pooling and reductions over H and W over axes 2 and 3; a reduction
over C over the real channels only (the padded lanes are masked, so whatever bytes they hold add
nothing); a concat along C by C0 blocks. Elementwise ops on FRACTAL_NZ operands (a matrix
product's epilogue) run on the stored fractals, an [N] bias laid out once as one row of whole
fractals. Every result keeps its padded lanes, rows and columns zero.

So a wrong format for a vector kernel, or garbage in a padded lane read as a channel, shows up as
a wrong number. `on_device` says how to compute one op this way, or None when it cannot (another
op, or an operand that is not in a device format); the kernel then decodes the operand and runs
the reference semantics (`ge.emulator.kernels`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge.dialects import graph
from ge.dialects.common import describe, get_ints
from ge.dialects.formats import FRACTAL, bitwidth_of, c0_of, device_shape
from ge.dtypes import bfloat16, numpy_dtype, tensor_type
from ge.errors import GeError
from ge.layout import to_device
from ge.semantics.base import Ufunc, prepare
from ge.semantics.core import _computes_in_stored_type as computes_in_stored_type  # pyright: ignore[reportPrivateUsage] the rule evaluate follows

from . import channel_planes
from .cube import LoadedForm
from .functions import vector_compute, vector_implementation

DEVICE_FORMATS = ("NC1HWC0", "FRACTAL_NZ")
NARROW = (np.dtype(np.float16), bfloat16)

Compute = Callable[[int, list[Any]], None]
"""A prepared op: `compute(target, slots)` reads its operands' slots and writes its result's."""

Stored = Mapping[SSAValue, tuple[str, TensorType, int]]
"""The values held in a device format: (format, logical type, groups)."""

Source = tuple[int | None, np.ndarray | None, Callable | None]
"""Where an elementwise operand comes from (`_elementwise_source`)."""


def on_device(
    op: Operation,
    stored: Stored,
    slots: Mapping[SSAValue, int],
    template: Sequence[Any],
    claim: Callable[[str], int | None] = lambda fmt: None,
) -> tuple[str | None, Compute, Compute] | None:
    """How the vector unit computes `op` on its operands' device formats: (the result's format,
    None for a logical result; the step; the same step checking the result's shape and dtype), or
    None when `op` is not computed this way. `stored` holds the values in a device format, `slots`
    every value's slot, `template` the constants' arrays by slot. An elementwise op that is one
    ufunc asks `claim` (with its result's format) for the slot of an array to write its result
    into (the kernel's output), if there is one."""
    if len(op.results) != 1 or not op.operands:
        return None
    on_device = [v for v in op.operands if v in stored and stored[v][0] in DEVICE_FORMATS]
    formats = {stored[v][0] for v in on_device}
    if len(formats) != 1:
        return None
    (fmt,) = formats
    result = tensor_type(op.results[0])
    c0 = c0_of(bitwidth_of(result.element_type))
    if any(c0_of(bitwidth_of(tensor_type(v).element_type)) != c0 for v in on_device):
        return None  # a cast between 8-bit and wider types changes the channel block
    prepared = _prepare(op, fmt, result, c0, stored, slots, template, claim)
    if prepared is None:
        return None
    result_format, compute = prepared
    if result_format is None:
        expected = tuple(result.get_shape())
    else:
        expected = device_shape(tuple(result.get_shape()), result_format, c0)
    dtype = numpy_dtype(result.element_type)
    return result_format, compute, partial(_checked, op, compute, expected, dtype)


def writes_into(implementation: Callable, op: Operation) -> bool:
    """Whether `implementation` computes `op` as one numpy ufunc (`ge.semantics.base.Ufunc`)
    over operands of the result's dtype, not a 16-bit float (which computes in fp32): its result
    may then be written into a given array of that dtype, with the same values."""
    if not isinstance(implementation, Ufunc) or len(op.results) != 1:
        return False
    dtype = numpy_dtype(tensor_type(op.results[0]).element_type)
    return dtype not in NARROW and all(numpy_dtype(tensor_type(v).element_type) == dtype for v in op.operands)


# --------------------------------------------------------------------------------------------


def _prepare(
    op: Operation,
    fmt: str,
    result: TensorType,
    c0: int,
    stored: Stored,
    slots: Mapping[SSAValue, int],
    template: Sequence[Any],
    claim: Callable[[str], int | None],
) -> tuple[str | None, Compute] | None:
    implementation = vector_implementation(op)
    if implementation is None:
        return None
    shape = tuple(result.get_shape())
    dtype = numpy_dtype(result.element_type)
    narrow = not computes_in_stored_type(op) and any(
        numpy_dtype(tensor_type(v).element_type) in NARROW for v in op.operands
    )
    zero = partial(_zero_padding, fmt, shape) if _padded(fmt, shape, c0) else _nothing
    read = partial(
        _elementwise_source, fmt=fmt, shape=shape, c0=c0, stored=stored, slots=slots, template=template
    )
    if op.has_trait(graph.Broadcasts):
        sources = []
        for value in op.operands:
            source = read(value)
            if source is None:
                return None
            sources.append(source)
        into = cast(Ufunc, implementation).into if writes_into(implementation, op) else None
        destination = None if into is None else claim(fmt)
        step = vector_compute(implementation, op)
        return fmt, partial(_elementwise, step, into, tuple(sources), narrow, dtype, zero, destination)
    if fmt != "NC1HWC0" or len(shape) != 4:
        return None
    groups = op.get_trait(graph.ChannelGroups)
    grouped = groups is not None and groups.holds(op, c0)
    if op.has_trait(graph.ChannelOperands) or grouped:  # the first operand stored, then [C] vectors
        sources = _channel_sources(op, shape, read)
        if sources is None:
            return None
        step = prepare(implementation, op)
        if grouped:  # a group norm: over the real channels' planes
            step = partial(_channel_planes, step, shape[1])
        return fmt, partial(_elementwise, step, None, sources, narrow, dtype, zero, None)
    if isinstance(op, graph.ConcatOp):
        concat = _prepare_concat(op, c0, stored, slots)
        return None if concat is None else (fmt, concat)
    if len(op.operands) != 1:
        return None
    (value,) = op.operands
    source = slots[value]
    channels = tensor_type(value).get_shape()[1]
    if op.has_trait(graph.ChannelWindow):
        step = prepare(implementation, op)
        return fmt, partial(_per_plane, step, source, narrow, dtype, zero, channels=channels)
    if op.has_trait(graph.WithinPlane) or (
        isinstance(op, graph.ReduceOp) and graph.ReducesPlane().holds(op, c0)
    ):
        return fmt, partial(_per_plane, prepare(implementation, op), source, narrow, dtype, zero)
    floating = dtype.kind == "f" or dtype == bfloat16
    if isinstance(op, graph.ReduceOp) and type(op) in _OVER_CHANNELS and floating:
        axes = {a % 4 for a in get_ints(op, "axes")}
        if 1 not in axes or not axes <= {1, 2, 3}:
            return None
        lanes = np.arange(-(-channels // c0) * c0).reshape(-1, c0) < channels
        mask = lanes.reshape(1, -1, 1, 1, c0)
        axes5 = (1, 4, *sorted(axes - {1}))
        reduction = _OVER_CHANNELS[type(op)]
        return None, partial(_over_channels, reduction, source, mask, axes5, shape, narrow, dtype)
    return None


def _channel_sources(
    op: Operation, shape: tuple[int, ...], read: Callable[..., Source | None]
) -> tuple[Source, ...] | None:
    """The sources of an op (of result `shape`) whose first operand is stored in NC1HWC0 and
    whose other operands are [C] vectors, laid out as (1, C1, 1, 1, C0), as `read` (the op's
    `_elementwise_source`) finds them; None when they are not."""
    first, *vectors = op.operands
    if any(tuple(tensor_type(v).get_shape()) != shape[1:2] for v in vectors):
        return None
    found = [read(first), *(read(v, full=(1, shape[1], 1, 1)) for v in vectors)]
    sources = tuple(source for source in found if source is not None)
    return sources if len(sources) == len(found) else None


def _channel_planes(
    normalize: Callable[..., Any],
    channels: int,
    x: np.ndarray,
    scale: np.ndarray,
    bias: np.ndarray,
) -> np.ndarray:
    """`normalize` (a group norm prepared: of (N, C, H, W) planes and [C] parameters) on NC1HWC0
    blocks `x` of `channels` real channels, with its scale and bias laid out as (1, C1, 1, 1, C0)
    (or as one value, for one channel): over the real channels' planes, read from the blocks as
    contiguous planes (`channel_planes`: over a strided plane numpy would sum element after
    element, over a contiguous one it sums pairwise, as the reference does), grouped as on NCHW;
    the result's padded planes zero."""
    _, c1, _, _, c0 = x.shape
    lanes = (1, c1, 1, 1, c0)  # one channel's parameters are laid out as one value for every lane
    y = normalize(
        channel_planes.planes(x)[:, :channels],
        np.broadcast_to(scale, lanes).reshape(-1)[:channels],
        np.broadcast_to(bias, lanes).reshape(-1)[:channels],
    )
    return channel_planes.blocks(y, c0)


def _prepare_concat(op: Operation, c0: int, stored: Stored, slots: Mapping[SSAValue, int]) -> Compute | None:
    if not graph.JoinsChannelBlocks().holds(op, c0):
        return None
    if not all(v in stored and stored[v][0] == "NC1HWC0" for v in op.operands):  # whole blocks only
        return None
    return partial(_concat, tuple(slots[v] for v in op.operands))


def _elementwise_source(
    value: SSAValue,
    fmt: str,
    shape: tuple[int, ...],
    c0: int,
    stored: Stored,
    slots: Mapping[SSAValue, int],
    template: Sequence[Any],
    full: tuple[int, ...] | None = None,
) -> Source | None:
    """Where an elementwise operand comes from: (a slot holding it stored, None, None); (None,
    a constant laid out once, None); (a slot, None, its layout per call); None when it cannot be
    read on the device format (a full-size logical operand or one that does not broadcast).
    `full` is the shape the operand broadcasts as, if not numpy's (batch norm's [C] vectors
    broadcast as (1, C, 1, 1))."""
    operand_shape = tuple(tensor_type(value).get_shape())
    if value in stored and stored[value][0] in DEVICE_FORMATS:
        return (slots[value], None, None) if operand_shape == shape else None
    if full is None:
        if len(operand_shape) > len(shape) or np.broadcast_shapes(operand_shape, shape) != shape:
            return None
        full = (1,) * (len(shape) - len(operand_shape)) + operand_shape
    if full == shape and int(np.prod(shape)) > 1:
        return None  # a full-size operand in a framework format: the fallback encodes it
    lay_out = partial(_broadcast_layout, fmt, full, c0)
    constant = template[slots[value]]
    if constant is not None:
        return None, lay_out(constant), None
    return slots[value], None, partial(_kept_layout, LoadedForm(), lay_out)


def _kept_layout(
    kept: LoadedForm, lay_out: Callable[[np.ndarray], np.ndarray], array: np.ndarray
) -> np.ndarray:
    """`lay_out(array)`, kept while the same read-only array comes back (a weight the run plan
    binds once, such as a Clip's bounds or a scale; a caller's read-only input comes as a new
    view at every run), as the cube keeps its operands' loaded forms."""
    return kept(array, partial(lay_out, array))


def _broadcast_layout(fmt: str, full: tuple[int, ...], c0: int, array: np.ndarray) -> np.ndarray:
    """A broadcasting operand (logical shape `full`, of the result's rank) in the layout of `fmt`,
    so numpy broadcasts it against the stored result: zero where the result is padding."""
    array = np.asarray(array).reshape(full)
    if fmt == "NC1HWC0":
        if full[1] == 1:
            return array.reshape(*full, 1)  # the same value in every lane
        return to_device(array, fmt, c0)  # (s0, C1, s2, s3, C0): one block per C1
    *batch, m, n = full
    m1, n1 = -(-m // FRACTAL), -(-n // FRACTAL)
    if m > 1 and n > 1:
        return to_device(array, fmt, c0)
    if m == 1 and n == 1:
        return array.reshape(*batch, 1, 1, 1, 1)  # one value for every element
    # A row (an [N] bias) as one row of whole fractals (..., N1, 1, 16, 16), each of their 16 rows
    # the same; a column likewise as (..., 1, M1, 16, 16): numpy then adds whole fractals, 256
    # contiguous elements at a time rather than 16 (3.3 against 6.5 us for a 32 x 256 add).
    row = m == 1
    line = array[..., 0, :] if row else array[..., :, 0]
    padded = np.zeros((*batch, (n1 if row else m1) * FRACTAL), array.dtype)
    padded[..., : line.shape[-1]] = line
    if row:
        tiles, shape = padded.reshape(*batch, n1, 1, 1, FRACTAL), (*batch, n1, 1, FRACTAL, FRACTAL)
    else:
        tiles, shape = padded.reshape(*batch, 1, m1, FRACTAL, 1), (*batch, 1, m1, FRACTAL, FRACTAL)
    return np.ascontiguousarray(np.broadcast_to(tiles, shape))


def _padded(fmt: str, shape: tuple[int, ...], c0: int) -> bool:
    """Whether a result of logical `shape` stored in `fmt` has padded lanes, rows or columns (a
    result of too few dimensions for `fmt` is not stored in it: no)."""
    if len(shape) < 2:
        return False
    if fmt == "NC1HWC0":
        return shape[1] % c0 != 0
    return shape[-2] % FRACTAL != 0 or shape[-1] % FRACTAL != 0


def _nothing(array: np.ndarray) -> None:
    """`_zero_padding` of a result without padding."""


def _zero_padding(fmt: str, shape: tuple[int, ...], array: np.ndarray) -> None:
    """Sets the padded lanes (NC1HWC0) or rows and columns (FRACTAL_NZ) of a stored result to 0."""
    if fmt == "NC1HWC0":
        rest = shape[1] % array.shape[-1]
        if rest:
            array[:, -1, :, :, rest:] = 0
        return
    rows, columns = shape[-2] % FRACTAL, shape[-1] % FRACTAL
    if columns:
        array[..., -1, :, :, columns:] = 0
    if rows:
        array[..., :, -1, rows:, :] = 0


def _elementwise(
    compute: Callable,
    into: Callable | None,
    sources: tuple[Source, ...],
    narrow: bool,
    dtype: np.dtype,
    zero: Callable[[np.ndarray], None],
    destination: int | None,
    target: int,
    slots: list[Any],
) -> None:
    """`compute` (the op prepared) on its `sources`; with a `destination` holding an array, its
    ufunc's `into` writes the result there instead."""
    arrays = [_read(source, slots) for source in sources]
    if destination is not None and slots[destination] is not None:  # the kernel's output, apart
        assert into is not None
        value = slots[destination]
        into(value, *arrays)
        zero(value)
        slots[target] = value
        return
    if narrow:
        arrays = [a.astype(np.float32) if a.dtype in NARROW else a for a in arrays]
    value = np.asarray(compute(*arrays))  # padded lanes may hold 0 / 0: they are zeroed below
    if zero is not _nothing and any(np.may_share_memory(value, a) for a in arrays):
        value = value.copy()  # never zero an input's padding in place
    value = value.astype(dtype, copy=False)
    zero(value)
    slots[target] = value


def _read(source: Source, slots: list[Any]) -> np.ndarray:
    """An elementwise operand in the layout of the result's format (`_elementwise_source`)."""
    slot, constant, lay_out = source
    if slot is None:
        return cast(np.ndarray, constant)
    return slots[slot] if lay_out is None else lay_out(slots[slot])


def _per_plane(
    compute: Callable,
    source: int,
    narrow: bool,
    dtype: np.dtype,
    zero: Callable[[np.ndarray], None],
    target: int,
    slots: list[Any],
    channels: int | None = None,
) -> None:
    """A per-plane op (`compute`, prepared) on (N, C1, H, W, C0) seen as N x C1 images of C0
    channels: the reference op then works over axes 2 and 3 of the stored array, lane by lane,
    through a strided view. With `channels` (an op reading across channels, `ChannelWindow`),
    over the blocks read as contiguous channel planes instead, the padded ones past `channels`
    zero (`channel_planes`)."""
    x = slots[source]
    n, c1, h, w, c0 = x.shape
    dtype_in = np.dtype(np.float32) if narrow else x.dtype
    if channels is not None:
        y = np.asarray(compute(channel_planes.planes(x, dtype_in, channels)))
        out = np.ascontiguousarray(channel_planes.blocks(y, c0), dtype)
    else:
        y = np.asarray(
            compute(x.reshape(n * c1, h, w, c0).transpose(0, 3, 1, 2).astype(dtype_in, copy=False))
        )
        out = np.ascontiguousarray(y.transpose(0, 2, 3, 1), dtype).reshape(n, c1, *y.shape[2:], c0)
    zero(out)
    slots[target] = out


def _over_channels(
    reduction: tuple[Callable, float, Callable, Finish],
    source: int,
    mask: np.ndarray,
    axes: tuple[int, ...],
    shape: tuple[int, ...],
    narrow: bool,
    dtype: np.dtype,
    target: int,
    slots: list[Any],
) -> None:
    """A reduction over C (and maybe H, W) of the stored array over the real channels only: each
    padded lane is replaced by the reduction's neutral value before it is read (`reduction` is
    the op's `_OVER_CHANNELS` entry)."""
    x = slots[source]
    if narrow:
        x = x.astype(np.float32)
    pre, neutral, reduce, finish = reduction
    values = pre(np.where(mask, x, x.dtype.type(neutral)))
    total = reduce(values, axis=axes, keepdims=True)
    count = int(mask.sum()) * int(np.prod([x.shape[a] for a in axes if a in (2, 3)]))
    y = finish(total, count).reshape(shape)
    slots[target] = np.asarray(y, dtype)


def _concat(sources: tuple[int, ...], target: int, slots: list[Any]) -> None:
    slots[target] = np.concatenate([slots[i] for i in sources], axis=1)


def _checked(
    op: Operation, compute: Compute, expected: tuple[int, ...], dtype: np.dtype, target: int, slots: list[Any]
) -> None:
    compute(target, slots)
    value = slots[target]
    if value.shape != expected or value.dtype != dtype:
        raise GeError(
            f"{describe(op)} on the vector unit gave {value.dtype} {list(value.shape)}, "
            f"its stored result type is {dtype} {list(expected)}"
        )


def _same(x: np.ndarray) -> np.ndarray:
    return x


def _keep(total: np.ndarray, count: int) -> np.ndarray:
    return total


Finish = Callable[[np.ndarray, int], np.ndarray]
_OVER_CHANNELS: dict[type[Operation], tuple[Callable, float, Callable, Finish]] = {
    graph.ReduceSumOp: (_same, 0.0, np.sum, _keep),
    graph.ReduceMeanOp: (_same, 0.0, np.sum, lambda total, count: total / total.dtype.type(count)),
    graph.ReduceMaxOp: (_same, -np.inf, np.max, _keep),
    graph.ReduceMinOp: (_same, np.inf, np.min, _keep),
    graph.ReduceSumSquareOp: (np.square, 0.0, np.sum, _keep),
    graph.ReduceL1Op: (np.abs, 0.0, np.sum, _keep),
    graph.ReduceL2Op: (np.square, 0.0, np.sum, lambda total, count: np.sqrt(total)),
}
"""The reductions over C the vector unit computes: (what each element contributes, the neutral
value a padded lane is replaced by, the reduction, what is done with the total and the count)."""
