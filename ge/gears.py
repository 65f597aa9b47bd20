"""Gears, as atc names its shape profiles: one compiled model holds a stream-level plan per gear.

atc's `--dynamic_batch_size "1,4,8"`, `--dynamic_image_size "224,224;448,448"` and
`--dynamic_dims "1,32;4,32"` (with `--input_format ND`) each fill the -1 dimensions of
`--input_shape` with a list of values; every gear is compiled as a static graph, and the gears
share one weight blob (`share_weights`) and, on a device, one arena sized for the largest. A run
takes the gear its inputs' shapes equal (`select_gear`). A batch no gear has runs on the next
larger batch gear, padded with zero samples, only where `batch_padding` proved that every op
computes each sample alone (`ge.batching`); then the outputs are cut back to the real samples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i64
from xdsl.dialects.func import FuncOp

from ge.dialects.common import value_names
from ge.dialects.stream import WeightOp, model_of

from .errors import CompileError, RuntimeInputError
from .options import GEAR_LISTS, CheckedOptions, shown_gears

Shapes = dict[str, tuple[int, ...]]
"""Input shapes by input name."""

WEIGHT_ALIGNMENT = 512
"""Byte alignment of a weight added to the shared blob, as the stream lowering aligns its own."""

BATCH_AXIS = 0
IMAGE_AXES = {"NCHW": (2, 3), "NHWC": (1, 2)}
"""The H and W axes of an image input, by `input_format`."""


@dataclass(frozen=True)
class BatchPadding:
    """Whether a batch smaller than a batch gear may run on it padded: `output_axes` holds each
    output's sample axis (None for an output the same for every sample) when every op of every
    gear computes each sample alone; otherwise `blocker` names the op that may mix samples."""

    output_axes: tuple[int | None, ...] | None
    blocker: str | None = None

    def to_json(self) -> dict[str, object]:
        return (
            {"output_axes": list(self.output_axes)}
            if self.output_axes is not None
            else {"blocker": self.blocker}
        )


@dataclass(frozen=True)
class GearChoice:
    """The gear a run takes, and the real batch when its inputs are padded to the gear's (None
    when their shapes are the gear's)."""

    index: int
    batch: int | None = None


@dataclass(frozen=True)
class Gear:
    """One gear of a compiled model: the input shapes it runs and its stream-level module."""

    input_shapes: Shapes
    module: ModuleOp


def gear_shapes(
    declared: Mapping[str, Sequence[int]], checked: CheckedOptions, reimported: bool = False
) -> list[Shapes] | None:
    """The input shapes of every gear the options ask for, in the order given; None when they ask
    for none. `declared` holds each input's shape (-1 for a dynamic dimension) in the graph's
    order; `input_shape` replaces the shapes of the inputs it names, as atc's does. A static
    dimension `input_shape` marks -1 becomes a gear dimension only when each gear's graph is made
    again from its source (`reimported`: an importer can make it dynamic, as
    `ge.frontends.onnx.selection.with_dynamic_dims` does); a graph specialized per gear keeps its
    static dimensions, so there it is refused."""
    given = checked.get("input_shape") or {}
    unknown = [name for name in given if name not in declared]
    if unknown:
        raise CompileError(
            f"compile option input_shape names {unknown}, which are no inputs of the graph "
            f"(its inputs: {', '.join(declared) or 'none'})"
        )
    shapes = {name: tuple(given.get(name, shape)) for name, shape in declared.items()}
    for name in given:
        if len(shapes[name]) != len(declared[name]):
            raise CompileError(
                f"compile option input_shape gives input '{name}' {len(shapes[name])} dimensions "
                f"({list(shapes[name])}), the graph's has {len(declared[name])} ({list(declared[name])})"
            )
    option = next((name for name in GEAR_LISTS if name in checked), None)
    if option is None:
        return [shapes] if given else None
    if not reimported:
        _check_static_marked(declared, shapes)
    dynamic = [(name, axis) for name, shape in shapes.items() for axis, d in enumerate(shape) if d < 0]
    values = checked[option]  # pyright: ignore[reportGeneralTypeIssues]  # a key of GEAR_LISTS
    if not dynamic:
        raise CompileError(
            f"compile option {option}={shown_gears(values)} needs -1 dimensions to fill, but every input "
            f"is static ({_shapes(shapes)}); mark them -1 with input_shape"
        )
    if option == "dynamic_batch_size":
        wrong = [(n, a) for n, a in dynamic if a != BATCH_AXIS]
        per_input = {n for n, _ in dynamic}
        if wrong or len(per_input) != len(dynamic):
            name, axis = (wrong or dynamic)[0]
            raise CompileError(
                f"compile option dynamic_batch_size={shown_gears(values)} fills the batch axis (0) only, "
                f"but input '{name}' is dynamic at axis {axis} ({_shapes(shapes)}); give one -1 per "
                "input at axis 0, or use dynamic_dims"
            )
        fills = [[batch] * len(dynamic) for batch in values]
    elif option == "dynamic_image_size":
        layout = checked.get("input_format", "NCHW")
        axes = IMAGE_AXES.get(layout)
        expected = [(name, axis) for name in dict.fromkeys(n for n, _ in dynamic) for axis in axes or ()]
        if axes is None or expected != dynamic or any(len(shapes[n]) != 4 for n, _ in dynamic):
            raise CompileError(
                f"compile option dynamic_image_size={shown_gears(values)} fills the H and W of 4-D "
                f"{layout if axes else 'NCHW or NHWC'} inputs, but the -1 dimensions are at "
                f"{_axes(dynamic)} ({_shapes(shapes)}); give -1 at H and W only, or use dynamic_dims"
            )
        fills = [[size for _ in range(len(dynamic) // 2) for size in pair] for pair in values]
    else:
        if any(len(gear) != len(dynamic) for gear in values):
            count = next(len(gear) for gear in values if len(gear) != len(dynamic))
            raise CompileError(
                f"compile option dynamic_dims={shown_gears(values)} has a gear of {count} values, but the "
                f"inputs have {len(dynamic)} -1 dimensions ({_shapes(shapes)}); every gear gives one "
                "value per -1, in input order"
            )
        fills = [list(gear) for gear in values]
    gears = []
    for fill in fills:
        gear = {name: list(shape) for name, shape in shapes.items()}
        for (name, axis), size in zip(dynamic, fill, strict=True):
            gear[name][axis] = size
        gears.append({name: tuple(shape) for name, shape in gear.items()})
    return gears


def declared_shapes(module: ModuleOp) -> Shapes:
    """The shapes of a graph module's inputs by name, in order (-1 for a dynamic dimension)."""
    func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
    names = value_names(func.arg_attrs, len(func.body.block.args), "input")
    return {
        name: tuple(max(d, -1) for d in arg.type.get_shape()) if isinstance(arg.type, TensorType) else ()
        for name, arg in zip(names, func.body.block.args, strict=True)
    }


def share_weights(modules: Sequence[ModuleOp], blobs: Sequence[bytes]) -> bytes:
    """One weight blob for all gears: the first gear's blob as it is, then every weight of a later
    gear whose bytes it lacks. Each gear's weight offsets (and weight size) are rewritten to point
    into it. Weights are matched by their bytes, never by their resource key, so two gears that fold
    a constant differently under one key keep both values."""
    shared = bytearray(blobs[0])
    placed: dict[bytes, int] = {}
    for index, (module, blob) in enumerate(zip(modules, blobs, strict=True)):
        model = model_of(module)
        for op in model.body.block.ops:
            if not isinstance(op, WeightOp):
                continue
            start, size = op.offset.value.data, op.size.value.data
            content = blob[start : start + size]
            if index == 0:
                placed.setdefault(content, start)
                continue
            if content not in placed:
                shared.extend(bytes(-len(shared) % WEIGHT_ALIGNMENT))
                placed[content] = len(shared)
                shared.extend(content)
            op.offset = IntegerAttr(placed[content], i64)
    if len(shared) != len(blobs[0]):
        shared.extend(bytes(-len(shared) % WEIGHT_ALIGNMENT))
    for module in modules:
        model_of(module).weight_size = IntegerAttr(len(shared), i64)
        module.verify()
    return bytes(shared)


def batch_padding(sources: Sequence[ModuleOp], batched: Sequence[bool]) -> BatchPadding:
    """The proof, over every gear's graph, that each sample is computed alone (`batched[i]`: input
    i has the batch at axis 0). The gears must agree on the outputs' sample axes."""
    from .batching import sample_independence

    axes: tuple[int | None, ...] | None = None
    for module in sources:
        func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
        answer = sample_independence(func, [BATCH_AXIS if b else None for b in batched])
        if answer.output_axes is None:
            return BatchPadding(None, answer.blocker)
        if axes not in (None, answer.output_axes):
            return BatchPadding(None, "the gears disagree on the outputs' batch axes")
        axes = answer.output_axes
    return BatchPadding(axes)


def select_gear(
    gears: Sequence[Gear], names: Sequence[str], inputs: object, padding: BatchPadding | None = None
) -> GearChoice:
    """The gear whose input shapes equal those of `inputs` (an array, a list of them in input
    order, or a dict by name), or, with a proven `padding`, the smallest batch gear that holds
    their batch. Inputs of the wrong count or names pick gear 0, whose own checks then name what
    is wrong; shapes no gear takes are refused, listing the gears."""
    if isinstance(inputs, Mapping):
        if set(inputs) != set(names):
            return GearChoice(0)
        given = [inputs[name] for name in names]
    elif isinstance(inputs, np.ndarray | np.generic):
        given = [inputs]
    elif isinstance(inputs, Sequence) and not isinstance(inputs, str | bytes):
        given = list(inputs)
    else:
        return GearChoice(0)
    if len(given) != len(names):
        return GearChoice(0)
    shapes = {name: tuple(np.shape(value)) for name, value in zip(names, given, strict=True)}
    for index, gear in enumerate(gears):
        if gear.input_shapes == shapes:
            return GearChoice(index)
    if padding is not None and padding.output_axes is not None:
        choice = _padded_gear(gears, shapes)
        if choice is not None:
            return choice
    _check_static_dimensions(gears, shapes)
    batched = _batched_inputs(gears)
    batches = {size for name in batched for size in shapes[name][:1]}
    largest = max((gear.input_shapes[name][0] for gear in gears for name in batched), default=0)
    if padding is None:
        why = "a batch is padded to a larger gear only in a model compiled with dynamic_batch_size"
    elif padding.output_axes is None:
        why = f"a batch is not padded to a larger gear: {padding.blocker} may mix samples"
    elif len(batches) == 1 and (batch := min(batches)) > largest:
        why = f"batch {batch} exceeds the largest gear's ({largest})"
    else:
        why = "a batch is padded only to a larger batch gear whose other dimensions are the inputs'"
    raise RuntimeInputError(
        f"the inputs' shapes {_shapes(shapes)} are none of the model's gears: {describe_gears(gears)}; "
        f"run one of those shapes ({why}), or compile a gear for this one"
    )


def pad_batch(arrays: Sequence[np.ndarray], shapes: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Each input padded with zero samples along axis 0 up to its gear shape in `shapes`."""
    return [
        np.concatenate([a, np.zeros((shape[0] - a.shape[0], *a.shape[1:]), a.dtype)])
        if a.ndim and a.shape[0] < shape[0]
        else a
        for a, shape in zip(arrays, shapes, strict=True)
    ]


def cut_batch(outputs: Sequence[np.ndarray], axes: Sequence[int | None], batch: int) -> list[np.ndarray]:
    """The outputs' first `batch` samples along each output's sample axis."""
    return [
        o if axis is None else np.take(o, np.arange(batch), axis=axis)
        for o, axis in zip(outputs, axes, strict=True)
    ]


def _check_static_dimensions(gears: Sequence[Gear], shapes: Shapes) -> None:
    """Refuses inputs whose rank, or a dimension every gear gives the same size, contradicts the
    gears, naming the input and the axis (as an executor of one shape does)."""
    for name, shape in shapes.items():
        declared = [gear.input_shapes[name] for gear in gears]
        if any(len(d) != len(shape) for d in declared):
            raise RuntimeInputError(
                f"input '{name}' has rank {len(shape)} (shape {list(shape)}), every gear declares rank "
                f"{len(declared[0])} ({describe_gears(gears)})"
            )
        for axis, size in enumerate(shape):
            sizes = {d[axis] for d in declared}
            if len(sizes) == 1 and size not in sizes:
                raise RuntimeInputError(
                    f"input '{name}' axis {axis}: declared {sizes.pop()} by every gear, {size} given "
                    f"(shape {list(shape)}; gears {describe_gears(gears)})"
                )


def _padded_gear(gears: Sequence[Gear], shapes: Shapes) -> GearChoice | None:
    """The smallest gear whose batch (axis 0 of the inputs the gears vary there) holds the inputs'
    one batch, with every other dimension equal; None if there is none."""
    batched = _batched_inputs(gears)
    batches = {shapes[name][0] for name in batched if shapes[name]}
    if len(batches) != 1:
        return None
    batch = batches.pop()
    fitting = [
        (gear.input_shapes[next(iter(batched))][0], index)
        for index, gear in enumerate(gears)
        if all(
            (shape[1:] == shapes[name][1:] and shape[0] >= batch)
            if name in batched
            else shape == shapes[name]
            for name, shape in gear.input_shapes.items()
        )
    ]
    return GearChoice(min(fitting)[1], batch) if fitting else None


def _batched_inputs(gears: Sequence[Gear]) -> list[str]:
    """The inputs whose axis 0 the gears vary (the batch of batch gears)."""
    first = gears[0].input_shapes
    return [name for name in first if any(g.input_shapes[name][:1] != first[name][:1] for g in gears)]


def _check_static_marked(declared: Mapping[str, Sequence[int]], shapes: Shapes) -> None:
    """Refuses a -1 of `input_shape` at a dimension the graph declares static: specializing the
    graph cannot change that size."""
    for name, shape in shapes.items():
        for axis, (size, fixed) in enumerate(zip(shape, declared[name], strict=True)):
            if size < 0 <= fixed:
                example = [
                    ("batch" if a == 0 else f"{name}_{a}") if s < 0 <= d else d
                    for a, (s, d) in enumerate(zip(shape, declared[name], strict=True))
                ]
                raise CompileError(
                    f"compile option input_shape marks input '{name}' axis {axis} -1 (a gear "
                    f"dimension), but the graph declares it static ({fixed}); build the graph with a "
                    f"symbol there: add_input('{name}', {example})"
                )


def describe_gears(gears: Sequence[Gear] | Sequence[Shapes]) -> str:
    """`x[1,3,8,8] | x[4,3,8,8]`: the gears' input shapes, as messages and `ge compile` show them."""
    return " | ".join(_shapes(g.input_shapes if isinstance(g, Gear) else g) for g in gears)


def _shapes(shapes: Mapping[str, Sequence[int]]) -> str:
    return ", ".join(f"{name}[{','.join(map(str, shape))}]" for name, shape in shapes.items())


def _axes(dynamic: Sequence[tuple[str, int]]) -> str:
    return ", ".join(f"'{name}' axis {axis}" for name, axis in dynamic)
