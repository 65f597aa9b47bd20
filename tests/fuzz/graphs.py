"""Random valid ONNX models: a hypothesis strategy that builds a graph node by node, tracking
each value's shape, dtype and a bound on its magnitude, so that every model is valid by
construction (onnx's full check passes, onnxruntime loads it) and its numbers stay finite.

What the strategy leaves out, and why:
- comparisons, `Where` conditions and float-to-int casts read only exact values (inputs and
  data movement of inputs): one ulp of rounding upstream would flip them, and the two
  implementations need not round alike.
- integer `Div` and `Pow` (onnxruntime truncates a negative quotient, a choice the spec leaves
  open) and integer `Relu` (onnxruntime has no int64 kernel).
- a written-out layer norm in float16: centring then dividing by a small deviation turns one
  float16 rounding of the mean (which one implementation sums in float32, another not) into
  a few percent; `LayerNormalization` itself computes in float32 and is drawn in float16 too.
- casts to float16 count as inexact: onnxruntime's graph optimizations drop a pair of casts
  through float16, so a comparison after one may see the unrounded value.
- values that could overflow: an op that grows its operands reads only values of a small
  bound (else the operand first goes through `Tanh`, or a clamp for integers); denominators
  are kept away from zero and bases of `Pow` positive.
- empty tensors: a slice or a reshape always keeps at least one element.
- pooling windows that read only padding (dilated ones can): spec-undefined, onnxruntime's max
  is the lowest float, not -inf; and ceil_mode windows that start in the end padding, which
  onnxruntime drops and onnx's shape inference keeps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import helper, numpy_helper

F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)
I32 = np.dtype(np.int32)
I64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)
FLOATS = (F32, F16)
INTS = (I32, I64)

OPSETS = (13, 17, 18, 20, 21)
GROWTH_LIMIT = {F32: 64.0, F16: 8.0, I32: 64.0, I64: 64.0}
"""The largest bound of an operand that an op which multiplies magnitudes may read."""
MAX_ELEMENTS = 2048


@dataclass(frozen=True)
class Value:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    bound: float
    """No element's magnitude exceeds it."""
    exact: bool
    """Computed from the inputs without rounding, so every implementation agrees on it bit for bit."""
    half: bool = False
    """Computed through float16 somewhere: as precise as float16, whatever its dtype."""

    @property
    def rank(self) -> int:
        return len(self.shape)


class RandomModel:
    """A model, the inputs to run it on and its ops in the order they were drawn."""

    def __init__(
        self, model: onnx.ModelProto, feeds: dict[str, np.ndarray], ops: list[str], half: list[bool]
    ):
        self.model, self.feeds, self.ops = model, feeds, ops
        self.half = half
        """Per output: whether it was computed through float16."""

    def __repr__(self) -> str:  # what hypothesis prints for a failing example: the graph as text
        feeds = "\n".join(
            f"{name} = {a.dtype.name}{list(a.shape)} {a.tolist()}" for name, a in self.feeds.items()
        )
        return f"RandomModel\n{feeds}\n{onnx.printer.to_text(self.model.graph)}"


@st.composite
def random_models(draw: st.DrawFn, max_nodes: int = 8) -> RandomModel:
    """A model of 1 to `max_nodes` steps (a step is an op or a small pattern of ops) over 1 to 3
    inputs, with 1 to 3 outputs, and the inputs to run it on."""
    builder = _Builder(draw, draw(st.sampled_from(OPSETS)))
    builder.add_inputs()
    for _ in range(draw(st.integers(1, max_nodes))):
        step = draw(st.sampled_from([s for s in STEPS if s.applies(builder)]))
        step.build(builder, builder.pick(step.accept))
    return builder.finish()


# --------------------------------------------------------------------------------------------
# The builder
# --------------------------------------------------------------------------------------------


@dataclass
class _Builder:
    draw: st.DrawFn
    opset: int
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    inputs: list[Value] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    """Values nodes computed, which later nodes may read (inputs included)."""
    feeds: dict[str, np.ndarray] = field(default_factory=dict)
    constant_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    ops: list[str] = field(default_factory=list)
    count: int = 0

    # drawing ------------------------------------------------------------------------------

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def choice(self, options):
        return self.draw(st.sampled_from(list(options)))

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.integer(0, 2**16))

    def pick(self, accept: Callable[[Value], bool]) -> Value | None:
        """A value `accept` takes, the most recent ones first when hypothesis shrinks."""
        candidates = [v for v in reversed(self.values) if accept(v)]
        return candidates[self.integer(0, len(candidates) - 1)] if candidates else None

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix.lower()}{self.count}"

    # graph building -----------------------------------------------------------------------

    def add_inputs(self) -> None:
        rng = self.rng()
        count = self.integer(1, 3)
        for index in range(count):
            if index == 0 and self.flag():
                shape = (self.integer(1, 2), self.integer(1, 6), self.integer(1, 9), self.integer(1, 9))
            else:
                shape = tuple(self.integer(1, 6) for _ in range(self.integer(1, 4)))
            dtype = self.choice([F32] * 6 + [F16, I32, I64])
            name = f"in{index}"
            if dtype in FLOATS:
                array = np.clip(rng.standard_normal(shape), -4, 4).astype(dtype)
                bound = 4.0
            else:
                array = rng.integers(-8, 9, shape).astype(dtype)
                bound = 8.0
            value = Value(name, shape, dtype, bound, True, dtype == F16)
            self.inputs.append(value)
            self.values.append(value)
            self.feeds[name] = array

    def constant(self, array: np.ndarray, as_node: bool = False) -> str:
        """An initializer (or a Constant node) holding `array`; its name."""
        name = self.name("c")
        tensor = numpy_helper.from_array(np.asarray(array), name)
        self.constant_shapes[name] = tuple(tensor.dims)
        if as_node:
            self.nodes.append(helper.make_node("Constant", [], [name], value=tensor))
        else:
            self.initializers.append(tensor)
        return name

    def ints(self, values) -> str:
        return self.constant(np.array(list(values), np.int64))

    def scalar(self, x: float, dtype: np.dtype, rank: int = 0) -> str:
        return self.constant(np.full((1,) * rank, x, dtype), as_node=self.flag())

    def weights(self, shape, dtype: np.dtype, scale: float = 1.0) -> Value:
        """A random weight tensor (an initializer)."""
        array = np.clip(self.rng().standard_normal(shape), -3, 3) * scale
        if dtype in INTS:
            array = np.round(array)
        return Value(
            self.constant(array.astype(dtype)), tuple(shape), np.dtype(dtype), 3 * scale, True, dtype == F16
        )

    def node(
        self, op: str, inputs: list[str], shape, dtype, bound: float, exact: bool = False, **attrs
    ) -> Value:
        dtype = np.dtype(dtype)
        half = dtype == F16 or any(v.half for v in self.values if v.name in inputs)
        value = Value(self.name(op), tuple(int(d) for d in shape), dtype, float(bound), exact, half)
        self.nodes.append(helper.make_node(op, inputs, [value.name], name=value.name, **attrs))
        self.values.append(value)
        self.ops.append(op)
        return value

    def small(self, value: Value, limit: float | None = None) -> Value:
        """`value`, or a squashed copy of it when its bound is above `limit` (the dtype's
        growth limit by default)."""
        limit = GROWTH_LIMIT[value.dtype] if limit is None else limit
        if value.bound <= limit:
            return value
        if value.dtype in FLOATS:
            return self.node("Tanh", [value.name], value.shape, value.dtype, 1.0)
        low, high = self.scalar(-limit, value.dtype), self.scalar(limit, value.dtype)
        clamped = self.node("Max", [value.name, low], value.shape, value.dtype, value.bound, value.exact)
        return self.node("Min", [clamped.name, high], value.shape, value.dtype, limit, value.exact)

    def finish(self) -> RandomModel:
        computed = [v for v in self.values if v not in self.inputs]
        outputs = [computed[-1]]
        for _ in range(self.integer(0, 2)):
            extra = self.pick(lambda v: v in computed and v not in outputs)
            if extra is not None:
                outputs.append(extra)
        opset = helper.make_opsetid("", self.opset)
        graph = helper.make_graph(
            self.nodes,
            "random",
            [_info(v) for v in self.inputs],
            [_info(v) for v in outputs],
            self.initializers,
        )
        model = helper.make_model(
            graph, opset_imports=[opset], ir_version=helper.find_min_ir_version_for([opset])
        )
        return RandomModel(model, dict(self.feeds), list(self.ops), [v.half for v in outputs])


def _info(value: Value) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(
        value.name, helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape)
    )


def broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def size(shape) -> int:
    return math.prod(shape)


def fits(shape: tuple[int, ...] | None, factor: int = 1) -> bool:
    """Whether a tensor of `shape`, grown `factor` times, stays small."""
    return shape is not None and size(shape) * factor <= MAX_ELEMENTS


def slice_length(extent: int, start: int, end: int, step: int) -> int:
    """The elements ONNX's Slice keeps along one axis (negative indices count from the end,
    then starts and ends are clamped, differently for negative steps)."""
    start += extent if start < 0 else 0
    end += extent if end < 0 else 0
    if step > 0:
        start, end = min(max(start, 0), extent), min(max(end, 0), extent)
    else:
        start, end = min(max(start, 0), extent - 1), min(max(end, -1), extent - 1)
    return len(range(start, end, step))


# --------------------------------------------------------------------------------------------
# Steps: each adds an op or a small pattern of ops
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    build: Callable[[_Builder, Value], None]
    accept: Callable[[Value], bool]
    """What the step's first operand may be."""
    min_opset: int = 1

    def applies(self, b: _Builder) -> bool:
        return b.opset >= self.min_opset and any(self.accept(v) for v in b.values)


def is_float(v: Value) -> bool:
    return v.dtype in FLOATS


def is_number(v: Value) -> bool:
    return v.dtype != BOOL


UNARY_BOUNDS: dict[str, Callable[[float], float]] = {
    "Relu": lambda x: x,
    "Tanh": lambda x: 1.0,
    "Sigmoid": lambda x: 1.0,
    "Neg": lambda x: x,
    "Abs": lambda x: x,
    "Erf": lambda x: 1.0,
    "Softplus": lambda x: x + 1.0,
    "LeakyRelu": lambda x: x,
    "Exp": math.exp,
}


def unary(b: _Builder, x: Value) -> None:
    op = b.choice(
        [*UNARY_BOUNDS, "Sqrt", "Clip", "Gelu"] if b.opset >= 20 else [*UNARY_BOUNDS, "Sqrt", "Clip"]
    )
    if op == "Exp":
        x = b.small(x, 4.0 if x.dtype == F32 else 2.0)
        b.node(op, [x.name], x.shape, x.dtype, UNARY_BOUNDS[op](x.bound))
    elif op == "Sqrt":
        magnitude = b.node("Abs", [x.name], x.shape, x.dtype, x.bound, x.exact)
        b.node("Sqrt", [magnitude.name], x.shape, x.dtype, math.sqrt(x.bound) + 1)
    elif op == "Clip":
        low, high = sorted(b.choice([-2.0, -0.5, 0.0, 0.25, 1.0, 3.0]) for _ in range(2))
        inputs = [
            x.name,
            b.scalar(low, x.dtype) if b.flag() else "",
            b.scalar(high, x.dtype) if b.flag() else "",
        ]
        while inputs[-1] == "":
            inputs.pop()
        b.node(op, inputs, x.shape, x.dtype, x.bound, x.exact)
    elif op == "LeakyRelu":
        b.node(op, [x.name], x.shape, x.dtype, x.bound, alpha=b.choice([0.01, 0.1, 0.2]))
    elif op == "Gelu":
        b.node(op, [x.name], x.shape, x.dtype, x.bound + 1, approximate=b.choice(["none", "tanh"]))
    else:
        exact = x.exact and op in ("Relu", "Neg", "Abs")
        b.node(op, [x.name], x.shape, x.dtype, UNARY_BOUNDS[op](x.bound), exact)


def partner_shape(b: _Builder, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts against `shape` to `shape`: a suffix with some dims set to 1."""
    keep = b.integer(0, len(shape))
    return tuple(1 if b.flag() else d for d in shape[len(shape) - keep :])


BINARY = ("Add", "Sub", "Mul", "Max", "Min", "Div", "Pow")


def binary(b: _Builder, a: Value) -> None:
    ops = BINARY if a.dtype in FLOATS else BINARY[:5]
    op = b.choice(ops)
    other = b.pick(lambda v: v.dtype == a.dtype and fits(broadcast(v.shape, a.shape)) and v is not a)
    if other is None or b.integer(0, 2) == 0:
        other = b.weights(partner_shape(b, a.shape), a.dtype, b.choice([0.5, 1.0, 2.0]))
    if b.flag():
        a, other = other, a
    shape = broadcast(a.shape, other.shape)
    if op in ("Add", "Sub"):
        b.node(
            op,
            [a.name, other.name],
            shape,
            a.dtype,
            a.bound + other.bound,
            a.exact and other.exact and a.dtype in INTS,
        )
    elif op in ("Max", "Min"):
        b.node(op, [a.name, other.name], shape, a.dtype, max(a.bound, other.bound), a.exact and other.exact)
    elif op == "Mul":
        a, other = b.small(a), b.small(other)
        b.node(
            op,
            [a.name, other.name],
            shape,
            a.dtype,
            a.bound * other.bound,
            a.exact and other.exact and a.dtype in INTS,
        )
    elif op == "Div":
        denominator = b.node("Abs", [other.name], other.shape, other.dtype, other.bound, other.exact)
        denominator = b.node(
            "Add", [denominator.name, b.scalar(0.5, a.dtype)], other.shape, a.dtype, other.bound + 0.5
        )
        b.node(op, [a.name, denominator.name], shape, a.dtype, 2 * a.bound)
    else:
        base = b.small(a, 8.0 if a.dtype == F32 else 2.0)
        base = b.node("Abs", [base.name], base.shape, base.dtype, base.bound, base.exact)
        base = b.node("Add", [base.name, b.scalar(0.5, a.dtype)], base.shape, a.dtype, base.bound + 0.5)
        if b.flag():
            exponent = b.scalar(b.choice([2.0, 3.0, 0.5, -1.0, 1.5, -0.5]), a.dtype, b.integer(0, 1))
        else:
            array = b.rng().uniform(-2, 2, partner_shape(b, base.shape)).astype(a.dtype)
            exponent = b.constant(array)
        shape = broadcast(base.shape, b.constant_shapes[exponent])
        b.node(op, [base.name, exponent], shape, a.dtype, max(base.bound, 2.0) ** 3)


def matmul(b: _Builder, a: Value) -> None:
    a = b.small(a)
    k = a.shape[-1]
    other = b.pick(
        lambda v: (
            v.dtype == a.dtype
            and v.rank >= 2
            and v.shape[-2] == k
            and v.bound <= GROWTH_LIMIT[v.dtype]
            and broadcast(a.shape[:-2], v.shape[:-2]) is not None
        )
    )
    if other is None or b.flag():
        n = b.integer(1, 8)
        shape = (b.choice([1, a.shape[-3]]), k, n) if a.rank >= 3 and b.flag() else (k, n)
        other = b.weights(shape, a.dtype, 1.0 / math.sqrt(k) if a.dtype in FLOATS else 1.0)
    batch = broadcast(a.shape[:-2], other.shape[:-2])
    shape = (*batch, *a.shape[-2:-1], other.shape[-1])
    y = b.node("MatMul", [a.name, other.name], shape, a.dtype, k * a.bound * other.bound, a.dtype in INTS)
    if a.dtype in FLOATS and b.flag():  # the bias-activation fusion's pattern
        bias = b.weights((shape[-1],), a.dtype, 0.5)
        y = b.node(
            "Add",
            [y.name, bias.name] if b.flag() else [bias.name, y.name],
            shape,
            a.dtype,
            y.bound + bias.bound,
        )
        if b.flag():
            b.node(b.choice(["Relu", "Sigmoid", "Tanh"]), [y.name], shape, a.dtype, y.bound)


def gemm(b: _Builder, a: Value) -> None:
    a = b.small(a)
    if a.rank != 2:
        axis = b.integer(0, a.rank)
        flat = (size(a.shape[:axis]), size(a.shape[axis:]))
        a = b.node("Flatten", [a.name], flat, a.dtype, a.bound, a.exact, axis=axis)
    trans_a, trans_b = b.flag(), b.flag()
    m, k = a.shape[::-1] if trans_a else a.shape
    n = b.integer(1, 8)
    weight = b.weights((n, k) if trans_b else (k, n), a.dtype, 1.0 / math.sqrt(k))
    inputs = [a.name, weight.name]
    alpha, beta = b.choice([1.0, 0.5, 2.0, -1.0]), b.choice([1.0, 0.5, -2.0])
    total = abs(alpha) * k * a.bound * weight.bound
    if b.flag():
        bias = b.weights(b.choice([(n,), (1, n), (m, 1), (m, n), (1,), ()]), a.dtype)
        inputs.append(bias.name)
        total += abs(beta) * bias.bound
    b.node(
        "Gemm",
        inputs,
        (m, n),
        a.dtype,
        total,
        alpha=alpha,
        beta=beta,
        transA=int(trans_a),
        transB=int(trans_b),
    )


def _window(b: _Builder, extent: int, max_kernel: int, dilated: bool, pad_below_kernel: bool):
    """kernel, stride, dilation, pads of one spatial axis with at least one output."""
    while True:
        kernel = b.integer(1, max_kernel)
        dilation = b.integer(1, 2) if dilated else 1
        limit = kernel - 1 if pad_below_kernel else 2
        pads = (b.integer(0, limit), b.integer(0, limit))
        stride = b.integer(1, 2)
        span = (kernel - 1) * dilation + 1
        if extent + sum(pads) >= span:
            return kernel, stride, dilation, pads, (extent + sum(pads) - span) // stride + 1
        max_kernel = 1  # a kernel of 1 always fits


def conv(b: _Builder, x: Value) -> None:
    x = b.small(x)
    channels, spatial = x.shape[1], x.shape[2:]
    group = b.choice([g for g in range(1, channels + 1) if channels % g == 0])
    out_channels = group * b.integer(1, 3 if group > 1 else 6)
    axes = [_window(b, extent, 3, True, False) for extent in spatial]
    kernel = [a[0] for a in axes]
    fan_in = channels // group * size(kernel)
    weight = b.weights((out_channels, channels // group, *kernel), x.dtype, 1 / math.sqrt(fan_in))
    inputs = [x.name, weight.name]
    if b.flag():
        inputs.append(b.weights((out_channels,), x.dtype, 0.5).name)
    shape = (x.shape[0], out_channels, *[a[4] for a in axes])
    y = b.node(
        "Conv", inputs, shape, x.dtype, fan_in * x.bound * weight.bound + 1.5,
        kernel_shape=kernel, strides=[a[1] for a in axes], dilations=[a[2] for a in axes],
        pads=[a[3][0] for a in axes] + [a[3][1] for a in axes], group=group,
    )  # fmt: skip
    if b.flag():  # the conv-batch-norm fusion's pattern
        y = batch_norm_of(b, y)
    if b.flag():
        b.node(b.choice(["Relu", "LeakyRelu", "Sigmoid"]), [y.name], shape, y.dtype, y.bound)


def batch_norm_of(b: _Builder, x: Value) -> Value:
    rng = b.rng()
    channels = x.shape[1]
    scale = b.constant(rng.uniform(-1.5, 1.5, channels).astype(x.dtype))
    bias = b.constant(rng.uniform(-1, 1, channels).astype(x.dtype))
    mean = b.constant(rng.uniform(-1, 1, channels).astype(x.dtype))
    var = b.constant(rng.uniform(0.5, 2, channels).astype(x.dtype))
    epsilon = b.choice([1e-5, 1e-3])
    bound = (x.bound + 1) * 1.5 / math.sqrt(0.5) + 1
    return b.node(
        "BatchNormalization", [x.name, scale, bias, mean, var], x.shape, x.dtype, bound, epsilon=epsilon
    )


def batch_norm(b: _Builder, x: Value) -> None:
    batch_norm_of(b, x)


def pooled_extent(extent: int, kernel: int, stride: int, dilation: int, pads, ceil: int) -> int | None:
    """The output extent of a pooling window, or None when ceil_mode would make a last window
    that starts in the end padding: onnxruntime drops it, onnx's shape inference keeps it."""
    room = extent + sum(pads) - ((kernel - 1) * dilation + 1)
    count = (-(-room // stride) if ceil else room // stride) + 1
    return None if (count - 1) * stride >= extent + pads[0] else count


def reads_input(extent: int, kernel: int, stride: int, dilation: int, pads) -> bool:
    """Whether every window (ceil_mode or not) reads an element of the input, not only padding."""
    starts = [o * stride - pads[0] for o in range(extent + pads[0])]
    return all(
        any(0 <= start + j * dilation < extent for j in range(kernel)) for start in starts if start < extent
    )


def pool(b: _Builder, x: Value) -> None:
    op = b.choice(["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"])
    if op.startswith("Global"):
        b.node(op, [x.name], (*x.shape[:2], *[1] * (x.rank - 2)), x.dtype, x.bound)
        return
    dilated = op == "MaxPool" or b.opset >= 19
    axes = [_window(b, extent, 3, dilated, True) for extent in x.shape[2:]]
    attrs = {
        "kernel_shape": [a[0] for a in axes],
        "strides": [a[1] for a in axes],
        "pads": [a[3][0] for a in axes] + [a[3][1] for a in axes],
    }
    dilations = [a[2] for a in axes] if dilated and b.flag() else [1] * len(axes)
    if not all(
        reads_input(e, k, s, d, p) for (k, s, _, p, _), d, e in zip(axes, dilations, x.shape[2:], strict=True)
    ):
        dilations = [1] * len(axes)  # a window of dilation 1 and pads below the kernel reads the input
    if dilated and (dilations != [1] * len(axes) or b.flag()):
        attrs["dilations"] = dilations
    if op == "AveragePool":
        attrs["count_include_pad"] = int(b.flag())
    windows = list(zip(axes, dilations, x.shape[2:], strict=True))
    shapes = {
        ceil: [pooled_extent(e, k, s, d, p, ceil) for (k, s, _, p, _), d, e in windows] for ceil in (0, 1)
    }
    ceil = int(None not in shapes[1] and b.flag())
    if ceil:
        attrs["ceil_mode"] = 1
    spatial = shapes[ceil]
    b.node(
        op,
        [x.name],
        (*x.shape[:2], *spatial),
        x.dtype,
        x.bound,
        op == "MaxPool" and x.exact,
        **attrs,
    )


def softmax(b: _Builder, x: Value) -> None:
    x = b.small(x)
    op = b.choice(["Softmax", "LogSoftmax"])
    axis = b.integer(-x.rank, x.rank - 1)
    bound = 1.0 if op == "Softmax" else 2 * x.bound + math.log(size(x.shape)) + 1
    b.node(op, [x.name], x.shape, x.dtype, bound, axis=axis)


def reduce(b: _Builder, x: Value) -> None:
    op = b.choice(
        ["ReduceSum", "ReduceMean", "ReduceMax"] if x.dtype in FLOATS else ["ReduceSum", "ReduceMax"]
    )
    if op == "ReduceSum":
        x = b.small(x)
    keepdims = int(b.flag())
    all_axes = b.integer(0, 3) == 0
    axes = sorted({b.integer(0, x.rank - 1) for _ in range(b.integer(1, x.rank))})
    reduced = range(x.rank) if all_axes else axes
    shape = [1 if i in reduced else d for i, d in enumerate(x.shape) if keepdims or i not in reduced]
    count = size(x.shape[i] for i in reduced)
    bound = x.bound * count if op == "ReduceSum" else x.bound
    written = [a - x.rank if b.flag() else a for a in axes]
    inputs, attrs = [x.name], {"keepdims": keepdims}
    if not all_axes:
        if op == "ReduceSum" and b.opset >= 13 or b.opset >= 18:
            inputs.append(b.ints(written))
        else:
            attrs["axes"] = written
    exact = x.exact and (op == "ReduceMax" or x.dtype in INTS)
    b.node(op, inputs, shape, x.dtype, bound, exact, **attrs)


def transpose(b: _Builder, x: Value) -> None:
    perm = b.draw(st.permutations(range(x.rank)))
    b.node("Transpose", [x.name], [x.shape[p] for p in perm], x.dtype, x.bound, x.exact, perm=list(perm))


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def reshape(b: _Builder, x: Value) -> None:
    op = b.choice(["Reshape", "Flatten", "Squeeze", "Unsqueeze"] if x.rank else ["Reshape", "Unsqueeze"])
    if op == "Reshape":
        remaining, shape = size(x.shape), []
        for _ in range(b.integer(0, 3)):
            shape.append(b.choice(_divisors(remaining)))
            remaining //= shape[-1]
        shape.append(remaining)
        written = list(shape)
        if b.flag():
            written[b.integer(0, len(shape) - 1)] = -1
        for i in range(min(len(shape), x.rank)):
            if written[i] == x.shape[i] and b.integer(0, 2) == 0:
                written[i] = 0
        b.node(op, [x.name, b.ints(written)], shape, x.dtype, x.bound, x.exact)
    elif op == "Flatten":
        axis = b.integer(-x.rank, x.rank)
        split = axis + x.rank if axis < 0 else axis
        shape = (size(x.shape[:split]), size(x.shape[split:]))
        b.node(op, [x.name], shape, x.dtype, x.bound, x.exact, axis=axis)
    elif op == "Squeeze":
        ones = [i for i, d in enumerate(x.shape) if d == 1]
        axes = sorted({b.choice(ones) for _ in range(b.integer(1, len(ones)))}) if ones and b.flag() else ones
        shape = [d for i, d in enumerate(x.shape) if i not in axes]
        inputs = [x.name]
        if axes != ones or b.flag():
            inputs.append(b.ints(a - x.rank if b.flag() else a for a in axes))
        b.node(op, inputs, shape, x.dtype, x.bound, x.exact)
    else:
        rank = min(x.rank + b.integer(1, 2), 5)
        axes = sorted(b.draw(st.permutations(range(rank)))[: rank - x.rank])
        dims = iter(x.shape)
        shape = [1 if i in axes else next(dims) for i in range(rank)]
        b.node(
            op, [x.name, b.ints(a - rank if b.flag() else a for a in axes)], shape, x.dtype, x.bound, x.exact
        )


def concat(b: _Builder, x: Value) -> None:
    axis = b.integer(0, x.rank - 1)
    parts = [x]
    for _ in range(b.integer(1, 2)):
        other = b.pick(
            lambda v: v.dtype == x.dtype and v.rank == x.rank
            and all(d == e for i, (d, e) in enumerate(zip(v.shape, x.shape, strict=True)) if i != axis)
        )  # fmt: skip
        parts.append(other)
    shape = list(x.shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    written = axis - x.rank if b.flag() else axis
    b.node(
        "Concat", [p.name for p in parts], shape, x.dtype, max(p.bound for p in parts),
        all(p.exact for p in parts), axis=written,
    )  # fmt: skip


def split(b: _Builder, x: Value) -> None:
    axis = b.choice([i for i, d in enumerate(x.shape) if d >= 2])
    extent = x.shape[axis]
    written = axis - x.rank if b.flag() else axis
    # From opset 18 the sizes or num_outputs must be given; before, no sizes means equal parts.
    how = b.choice(["sizes", "num_outputs"] if b.opset >= 18 else ["sizes", "equal"])
    inputs, attrs = [x.name], {"axis": written}
    if how == "sizes":
        cuts = sorted({b.integer(1, extent - 1) for _ in range(b.integer(1, min(3, extent - 1)))})
        sizes = [hi - lo for lo, hi in zip([0, *cuts], [*cuts, extent], strict=True)]
        inputs.append(b.ints(sizes))
    elif how == "equal":
        parts = b.choice([d for d in _divisors(extent) if d > 1])
        sizes = [extent // parts] * parts
    else:
        # Parts of ceil(extent / parts), the last one smaller; none may be empty.
        parts = b.choice([p for p in range(2, extent + 1) if (p - 1) * -(-extent // p) < extent])
        chunk = -(-extent // parts)
        sizes = [min(chunk, extent - i * chunk) for i in range(parts)]
        attrs["num_outputs"] = parts
    names = [b.name("split") for _ in sizes]
    b.nodes.append(helper.make_node("Split", inputs, names, name=names[0], **attrs))
    b.ops.append("Split")
    for name, part in zip(names, sizes, strict=True):
        shape = list(x.shape)
        shape[axis] = part
        b.values.append(Value(name, tuple(shape), x.dtype, x.bound, x.exact, x.half))


def slice_(b: _Builder, x: Value) -> None:
    axes = sorted({b.integer(0, x.rank - 1) for _ in range(b.integer(1, x.rank))})
    starts, ends, steps, shape = [], [], [], list(x.shape)
    for axis in axes:
        extent = x.shape[axis]
        step = b.choice([1, 1, 2, -1, -2])
        start = b.integer(-extent - 1, extent)
        end = b.choice([b.integer(-extent - 1, extent + 1), 2**63 - 1, -(2**63)])
        if not slice_length(extent, start, end, step):  # keep one element at least
            start, end = (0, extent) if step > 0 else (-1, -(2**63))
        starts.append(start)
        ends.append(end)
        steps.append(step)
        shape[axis] = slice_length(extent, start, end, step)
    written = [a - x.rank if b.flag() else a for a in axes]
    inputs = [x.name, b.ints(starts), b.ints(ends)]
    if b.flag() or any(s != 1 for s in steps):
        inputs += [b.ints(written), b.ints(steps)]
    elif axes != list(range(len(axes))) or b.flag():
        inputs.append(b.ints(written))  # without axes, starts and ends address the leading axes
    b.node("Slice", inputs, shape, x.dtype, x.bound, x.exact)


def gather(b: _Builder, x: Value) -> None:
    axis = b.integer(0, x.rank - 1)
    extent = x.shape[axis]
    indices_shape = tuple(b.integer(1, 4) for _ in range(b.integer(0, 2)))
    indices = b.rng().integers(-extent, extent, indices_shape).astype(b.choice([np.int64, np.int32]))
    shape = (*x.shape[:axis], *indices_shape, *x.shape[axis + 1 :])
    written = axis - x.rank if b.flag() else axis
    b.node("Gather", [x.name, b.constant(indices)], shape, x.dtype, x.bound, x.exact, axis=written)


def cast(b: _Builder, x: Value) -> None:
    targets = [d for d in (F32, F16, I32, I64) if d != x.dtype]
    if x.dtype in FLOATS and not x.exact:
        targets = [d for d in targets if d in FLOATS]
    to = b.choice(targets)
    if to == F16 and x.bound > 1000:
        x = b.small(x)
    bound = math.floor(x.bound) if to in INTS else x.bound
    # Rounding to float16 is exact only in principle: onnxruntime drops a pair of casts through it.
    exact = x.exact and to != F16
    b.node("Cast", [x.name], x.shape, to, bound, exact, to=helper.np_dtype_to_tensor_dtype(to))


def where(b: _Builder, a: Value) -> None:
    other = b.pick(lambda v: v.exact and v.dtype == a.dtype and fits(broadcast(v.shape, a.shape)))
    op = b.choice(["Greater", "Less", "Equal"] if a.dtype in INTS else ["Greater", "Less"])
    condition = b.node(op, [a.name, other.name], broadcast(a.shape, other.shape), BOOL, 1.0, True)
    x = b.pick(lambda v: is_number(v) and fits(broadcast(v.shape, condition.shape)))
    y = b.pick(lambda v: v.dtype == x.dtype and fits(broadcast(v.shape, broadcast(x.shape, condition.shape))))
    shape = broadcast(broadcast(x.shape, condition.shape), y.shape)
    b.node(
        "Where", [condition.name, x.name, y.name], shape, x.dtype, max(x.bound, y.bound), x.exact and y.exact
    )


def layer_norm(b: _Builder, x: Value) -> None:
    x = b.small(x)
    axis = b.integer(-x.rank, x.rank - 1)
    normalized = x.shape[axis:]
    scale = b.weights(normalized, x.dtype)
    inputs = [x.name, scale.name]
    if b.flag():
        inputs.append(b.weights(normalized, x.dtype).name)
    bound = scale.bound * math.sqrt(size(normalized)) + 3
    b.node("LayerNormalization", inputs, x.shape, x.dtype, bound, axis=axis, epsilon=b.choice([1e-5, 1e-3]))


def instance_norm(b: _Builder, x: Value) -> None:
    """Each (n, c) plane normalized alone, or from opset 21 groups of whole channels' planes
    (GroupNormalization, per-channel scale): on NC1HWC0 data after a convolution, over channel
    planes. A random tensor added first keeps every plane's variance near 1: over a nearly
    constant plane the normalization would magnify its operand's rounding without bound
    (float16's above all)."""
    x = b.small(x)
    noise = b.weights(x.shape, x.dtype)
    spread = b.node("Add", [x.name, noise.name], x.shape, x.dtype, x.bound + noise.bound)
    scale, bias = b.weights(x.shape[1:2], x.dtype), b.weights(x.shape[1:2], x.dtype)
    inputs = [spread.name, scale.name, bias.name]
    epsilon = b.choice([1e-5, 1e-3])
    channels = x.shape[1]
    if b.opset >= 21 and b.flag():
        groups = b.choice([g for g in range(1, channels + 1) if channels % g == 0])
        bound = scale.bound * math.sqrt(size(x.shape[2:]) * channels // groups) + bias.bound + 1
        b.node("GroupNormalization", inputs, x.shape, x.dtype, bound, num_groups=groups, epsilon=epsilon)
        return
    bound = scale.bound * math.sqrt(size(x.shape[2:])) + bias.bound + 1
    b.node("InstanceNormalization", inputs, x.shape, x.dtype, bound, epsilon=epsilon)


# Written-out patterns that the fusion passes look for --------------------------------------


def gelu_written_out(b: _Builder, x: Value) -> None:
    """x * 0.5 * (1 + erf(x / sqrt(2))), in the orders exporters write it."""
    x = b.small(x)
    if b.flag():
        scaled = b.node("Div", [x.name, b.scalar(1.4142135, x.dtype)], x.shape, x.dtype, x.bound)
    else:
        scaled = b.node("Mul", [x.name, b.scalar(0.70710678, x.dtype)], x.shape, x.dtype, x.bound)
    erf = b.node("Erf", [scaled.name], x.shape, x.dtype, 1.0)
    one = b.node("Add", [erf.name, b.scalar(1.0, x.dtype)], x.shape, x.dtype, 2.0)
    if b.flag():
        product = b.node("Mul", [x.name, one.name], x.shape, x.dtype, 2 * x.bound)
        b.node("Mul", [product.name, b.scalar(0.5, x.dtype)], x.shape, x.dtype, x.bound)
    else:
        half = b.node("Mul", [x.name, b.scalar(0.5, x.dtype)], x.shape, x.dtype, x.bound)
        b.node("Mul", [half.name, one.name], x.shape, x.dtype, x.bound)


def layer_norm_written_out(b: _Builder, x: Value) -> None:
    """mean, centre, variance, normalize, scale and shift over the last axis."""
    x = b.small(x)
    axes = {"axes": [-1]} if b.opset < 18 else {}

    def mean(value: Value) -> Value:
        inputs = [value.name] if b.opset < 18 else [value.name, b.ints([-1])]
        return b.node("ReduceMean", inputs, (*x.shape[:-1], 1), x.dtype, value.bound, **axes)

    centred = b.node("Sub", [x.name, mean(x).name], x.shape, x.dtype, 2 * x.bound)
    if b.flag():
        square = b.node("Pow", [centred.name, b.scalar(2.0, x.dtype)], x.shape, x.dtype, centred.bound**2)
    else:
        square = b.node("Mul", [centred.name, centred.name], x.shape, x.dtype, centred.bound**2)
    variance = b.node(
        "Add", [mean(square).name, b.scalar(1e-5, x.dtype)], (*x.shape[:-1], 1), x.dtype, square.bound
    )
    deviation = b.node("Sqrt", [variance.name], variance.shape, x.dtype, centred.bound)
    normalized = b.node("Div", [centred.name, deviation.name], x.shape, x.dtype, math.sqrt(x.shape[-1]))
    gamma = b.weights(x.shape[-1:], x.dtype)
    scaled = b.node("Mul", [normalized.name, gamma.name], x.shape, x.dtype, normalized.bound * gamma.bound)
    beta = b.weights(x.shape[-1:], x.dtype)
    b.node("Add", [scaled.name, beta.name], x.shape, x.dtype, scaled.bound + beta.bound)


def attention_written_out(b: _Builder, x: Value) -> None:
    """softmax(q @ k^T / sqrt(d)) @ v, with q, k, v projections of one input."""
    x = b.small(x)
    width = x.shape[-1]
    d = b.integer(1, 8)

    def project() -> Value:
        weight = b.weights((width, d), x.dtype, 1 / math.sqrt(width))
        return b.node("MatMul", [x.name, weight.name], (*x.shape[:-1], d), x.dtype, 3 * x.bound)

    q, k, v = project(), project(), project()
    perm = list(range(x.rank))
    perm[-2:] = perm[-1], perm[-2]
    kt = b.node("Transpose", [k.name], [k.shape[p] for p in perm], x.dtype, k.bound, perm=perm)
    scores_shape = (*x.shape[:-1], x.shape[-2])
    scores = b.node("MatMul", [q.name, kt.name], scores_shape, x.dtype, d * q.bound * k.bound)
    if b.flag():
        scores = b.node(
            "Div", [scores.name, b.scalar(math.sqrt(d), x.dtype)], scores_shape, x.dtype, scores.bound
        )
    else:
        scores = b.node(
            "Mul", [scores.name, b.scalar(1 / math.sqrt(d), x.dtype)], scores_shape, x.dtype, scores.bound
        )
    probabilities = b.node("Softmax", [scores.name], scores_shape, x.dtype, 1.0, axis=-1)
    b.node("MatMul", [probabilities.name, v.name], v.shape, x.dtype, v.bound * x.shape[-2])


DUPLICABLE = tuple(
    op.lower() for op in (*UNARY_BOUNDS, *BINARY, "MatMul", "Gemm", "Conv", "Reduce", "Transpose")
)
"""Values of single-output ops whose name is the op's (`Builder.node` names them so)."""


def duplicate(b: _Builder, x: Value) -> None:
    """The node that computed `x` again, reading the same values: a common subexpression."""
    node = next(n for n in b.nodes if x.name in n.output)
    copy = helper.make_node(node.op_type, list(node.input), [b.name(node.op_type)], name=f"copy{b.count}")
    copy.attribute.extend(node.attribute)
    b.nodes.append(copy)
    b.ops.append(node.op_type)
    b.values.append(Value(copy.output[0], x.shape, x.dtype, x.bound, x.exact, x.half))


def rank_at_least(rank: int) -> Callable[[Value], bool]:
    return lambda v: v.rank >= rank


def image(v: Value) -> bool:
    return is_float(v) and v.rank in (3, 4)


STEPS: tuple[Step, ...] = (
    Step(unary, is_float),
    Step(binary, is_number),
    Step(binary, is_number),
    Step(matmul, lambda v: is_number(v) and v.rank >= 1 and fits(v.shape, 8)),
    Step(gemm, lambda v: is_float(v) and v.rank >= 1),
    Step(conv, image),
    Step(conv, image),
    Step(pool, image),
    Step(batch_norm, lambda v: is_float(v) and v.rank >= 2),
    Step(softmax, lambda v: is_float(v) and v.rank >= 1),
    Step(reduce, lambda v: is_number(v) and v.rank >= 1),
    Step(transpose, rank_at_least(2)),
    Step(reshape, lambda v: True),
    Step(concat, lambda v: v.rank >= 1 and fits(v.shape, 3)),
    Step(split, lambda v: any(d >= 2 for d in v.shape)),
    Step(slice_, rank_at_least(1)),
    Step(gather, lambda v: v.rank >= 1 and fits(v.shape, 16)),
    Step(cast, is_number),
    Step(where, lambda v: v.exact and is_number(v) and fits(v.shape)),
    Step(layer_norm, lambda v: is_float(v) and v.rank >= 1, min_opset=17),
    Step(instance_norm, image),
    Step(gelu_written_out, is_float),
    Step(layer_norm_written_out, lambda v: v.dtype == F32 and v.rank >= 1),
    Step(attention_written_out, lambda v: is_float(v) and v.rank in (2, 3)),
    Step(duplicate, lambda v: v.name.startswith(DUPLICABLE)),
)
"""What a model is built of; a step listed twice is drawn twice as often."""
