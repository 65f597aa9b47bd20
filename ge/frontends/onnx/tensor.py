"""Converters of data-movement and shape operators, and of constants.

Inputs that decide a shape (Reshape's shape, Slice's starts, Split's sizes, Range's bounds, ...)
are read with `node.value` and become properties. Ops that only rename dimensions (Squeeze,
Unsqueeze, DepthToSpace, SpaceToDepth) lower to reshapes and transposes; what depends only on
a static shape (Shape, Size, EyeLike, Range) becomes a constant.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import int_attr, ints_attr
from ge.dialects.graph.tensor import PAD_MODES
from ge.dtypes import element_type, numpy_dtype
from ge.graph import Tensor

from .importer import Converter, Importer, Node, tensor_array


def _reshape(imp: Importer, node: Node) -> list[Tensor]:
    """A 0 in the shape copies the input's dimension (unless allowzero), one -1 is inferred."""
    x = node.input(0)
    shape = _dims(node, 1, "shape", smallest=-1)
    if shape.count(-1) > 1:
        raise node.invalid(f"shape {shape} has more than one -1: at most one dimension is inferred")
    if node.attr("allowzero", 0):
        if 0 in shape and -1 in shape:
            raise node.invalid(
                f"shape {shape} holds both 0 and -1 with allowzero=1: "
                "the -1 cannot be inferred from zero elements"
            )
        return [imp.g.add_reshape(x, shape, node.name)]
    if 0 in shape[len(x.shape) :]:
        raise node.invalid(
            f"shape {shape} has a 0 (copy the input's dimension) at position {shape.index(0, len(x.shape))}, "
            f"beyond the input's rank {len(x.shape)} (shape {list(x.shape)})"
        )
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return [imp.g.add_reshape(x, shape, node.name)]


def _flatten(imp: Importer, node: Node) -> list[Tensor]:
    axis = int(node.attr("axis", 1))
    return [imp.g.add_op(ops.FlattenOp, [node.input(0)], {"axis": int_attr(axis)}, node.name)]


def _transpose(imp: Importer, node: Node) -> list[Tensor]:
    x = node.input(0)
    perm = node.attr("perm", list(reversed(range(len(x.shape)))))
    return [imp.g.add_op(ops.TransposeOp, [x], {"perm": ints_attr(perm)}, node.name)]


def _concat(imp: Importer, node: Node) -> list[Tensor]:
    if "axis" not in node.attrs:
        raise node.invalid("Concat needs an 'axis' attribute")
    return [imp.g.add_concat(node.present_inputs(), int(node.attr("axis")), node.name)]


def _squeeze(imp: Importer, node: Node) -> list[Tensor]:
    x = node.input(0)
    given = _axes(node, 1, 13)
    rank = len(x.shape)
    if given is None:
        if _dynamic(x.shape):
            raise node.fail("Squeeze without axes of a tensor with dynamic dimensions")
        axes = {i for i, d in enumerate(x.shape) if d == 1}
    else:
        axes = {_axis(node, a, rank) for a in given}
    for axis in axes:
        if x.shape[axis] < 0:
            shown = ", ".join("?" if d < 0 else str(d) for d in x.shape)
            raise node.fail(f"Squeeze of dimension {axis} of [{shown}], which is dynamic (it must be 1)")
        if x.shape[axis] != 1:
            raise node.invalid(f"cannot squeeze dimension {axis} of {list(x.shape)}: it is not 1")
    shape = [d for i, d in enumerate(x.shape) if i not in axes]
    return [_reshape_to(imp, node, x, shape)]


def _unsqueeze(imp: Importer, node: Node) -> list[Tensor]:
    x = node.input(0)
    given = _axes(node, 1, 13, scalar=True)
    if given is None:
        raise node.invalid("Unsqueeze needs axes")
    rank = len(x.shape) + len(given)
    axes = sorted(_axis(node, a, rank) for a in given)
    if len(set(axes)) != len(axes):
        raise node.invalid(f"axes {given} repeat an axis")
    shape = list(x.shape)
    for axis in axes:
        shape.insert(axis, 1)
    return [_reshape_to(imp, node, x, shape)]


def _expand(imp: Importer, node: Node) -> list[Tensor]:
    props = {"shape": ints_attr(_dims(node, 1, "shape"))}
    return [imp.g.add_op(ops.ExpandOp, [node.input(0)], props, node.name)]


def _tile(imp: Importer, node: Node) -> list[Tensor]:
    props = {"repeats": ints_attr(_dims(node, 1, "repeats"))}
    return [imp.g.add_op(ops.TileOp, [node.input(0)], props, node.name)]


def _slice(imp: Importer, node: Node) -> list[Tensor]:
    x = node.input(0)
    if node.opset < 10:
        starts, ends = list(node.attr("starts", [])), list(node.attr("ends", []))
        axes = list(node.attr("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts, ends = _vector(node, 1, "starts"), _vector(node, 2, "ends")
        axes = _vector(node, 3, "axes") if node.has_input(3) else list(range(len(starts)))
        steps = _vector(node, 4, "steps") if node.has_input(4) else [1] * len(starts)
    props = {
        "starts": ints_attr(starts),
        "ends": ints_attr(ends),
        "axes": ints_attr(axes),
        "steps": ints_attr(steps),
    }
    return [imp.g.add_op(ops.SliceOp, [x], props, node.name)]


def _split(imp: Importer, node: Node) -> list[Tensor]:
    x = node.input(0)
    rank = len(x.shape)
    axis = _axis(node, int(node.attr("axis", 0)), rank)
    count = len(node.proto.output)
    if node.opset < 13 and "split" in node.attrs:
        sizes = list(node.attr("split"))
    elif node.opset >= 13 and node.has_input(1):
        sizes = _vector(node, 1, "split")
    else:
        size = x.shape[axis]
        if size < 0:
            raise node.fail("Split into equal parts of a dynamic dimension")
        if node.opset >= 18:
            count = int(node.attr("num_outputs", count))
            if count < 1:
                raise node.invalid(f"attribute 'num_outputs' is {count}: it must be >= 1")
            chunk = -(-size // count)  # the last part may be smaller
        elif size % count:
            raise node.invalid(f"dimension {axis} of {list(x.shape)} does not split into {count} equal parts")
        else:
            chunk = size // count
        sizes = [chunk] * (count - 1) + [size - chunk * (count - 1)]
    if len(sizes) != len(node.proto.output):  # a part without an output would be lost
        raise node.invalid(f"splits into {len(sizes)} parts {sizes} but has {len(node.proto.output)} outputs")
    props = {"axis": int_attr(axis), "sizes": ints_attr(sizes)}
    return imp.g.add_op_results(ops.SplitOp, [x], props, node.name)


def _pad(imp: Importer, node: Node) -> list[Tensor]:
    x = node.input(0)
    rank = len(x.shape)
    mode = str(node.attr("mode", "constant"))
    if mode not in PAD_MODES or (mode == "wrap" and node.opset < 19):
        raise node.invalid(f"unknown mode '{mode}'")
    value: Tensor | None = None
    if node.opset < 11:
        pads = list(node.attr("pads", []))
        fill = float(node.attr("value", 0.0))
        if fill and mode == "constant":
            value = imp.g.add_constant(
                np.array(fill, dtype=numpy_dtype(element_type(x.dtype))), f"{node.name}.value"
            )
        axes = list(range(rank))
    else:
        pads = _vector(node, 1, "pads")
        if node.has_input(2) and mode == "constant":
            value = node.input(2)
        axes = list(range(rank))
        if node.has_input(3):
            given = _vector(node, 3, "axes")
            axes = [_axis(node, a, rank) for a in given]
            if len(set(axes)) != len(axes):
                raise node.invalid(f"input #3 ('axes') {given} names an axis twice")
    if len(pads) != 2 * len(axes):
        raise node.invalid(f"pads {pads} need 2 values for each of the {len(axes)} axes")
    full = [0] * (2 * rank)
    for i, axis in enumerate(axes):
        full[axis], full[axis + rank] = pads[i], pads[i + len(axes)]
    return [_add_pad(imp, node, x, full, mode, value)]


def _center_crop_pad(imp: Importer, node: Node) -> list[Tensor]:
    """A pad whose negative amounts crop: centered, the odd element going to the end."""
    x = node.input(0)
    rank = len(x.shape)
    target = _vector(node, 1, "shape")
    axes = [_axis(node, a, rank) for a in node.attr("axes", range(rank))]
    if len(set(axes)) != len(axes):
        raise node.invalid(f"attribute 'axes' {list(node.attr('axes'))} names an axis twice")
    if len(target) != len(axes):
        raise node.invalid(f"shape {target} needs one value for each of the axes {axes}")
    pads = [0] * (2 * rank)
    for axis, size in zip(axes, target, strict=True):
        if x.shape[axis] < 0:
            raise node.fail("CenterCropPad of a dynamic dimension")
        change = size - x.shape[axis]
        before = change // 2 if change > 0 else -(-change // 2)
        pads[axis], pads[axis + rank] = before, change - before
    return [_add_pad(imp, node, x, pads, "constant", None)]


def _depth_to_space(imp: Importer, node: Node) -> list[Tensor]:
    x = node.input(0)
    n, c, h, w = _static_4d(node, x)
    b = _blocksize(node)
    if c % (b * b):
        raise node.invalid(f"{c} channels do not divide into blocks of {b}x{b}")
    if _block_mode(node) == "CRD":
        blocks, perm = [n, c // (b * b), b, b, h, w], [0, 1, 4, 2, 5, 3]
    else:
        blocks, perm = [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2]
    return [_regroup(imp, node, x, blocks, perm, [n, c // (b * b), h * b, w * b])]


def _space_to_depth(imp: Importer, node: Node) -> list[Tensor]:
    x = node.input(0)
    n, c, h, w = _static_4d(node, x)
    b = _blocksize(node)
    if h % b or w % b:
        raise node.invalid(f"spatial dimensions {h}x{w} do not divide into blocks of {b}x{b}")
    perm = [0, 1, 3, 5, 2, 4] if _block_mode(node) == "CRD" else [0, 3, 5, 1, 2, 4]
    blocks = [n, c, h // b, b, w // b, b]
    return [_regroup(imp, node, x, blocks, perm, [n, c * b * b, h // b, w // b])]


def _shape(imp: Importer, node: Node) -> list[Tensor | np.ndarray]:
    x = node.input(0)
    start = int(node.attr("start", 0))
    end = node.attr("end")
    dims = x.shape[slice(start, None if end is None else int(end))]
    if not _dynamic(dims):
        return [np.array(dims, dtype=np.int64)]
    props = {"start": int_attr(start)}
    if end is not None:
        props["end"] = int_attr(int(end))
    return [imp.g.add_op(ops.ShapeOp, [x], props, node.name)]


def _size(imp: Importer, node: Node) -> list[np.ndarray]:
    shape = node.input(0).shape
    if _dynamic(shape):
        raise node.fail("Size of a tensor with dynamic dimensions")
    return [np.array(math.prod(shape), dtype=np.int64)]


def _eye_like(imp: Importer, node: Node) -> list[np.ndarray]:
    x = node.input(0)
    if len(x.shape) != 2:
        raise node.invalid(f"EyeLike needs a 2-D input, got shape {list(x.shape)}")
    if _dynamic(x.shape):
        raise node.fail("EyeLike of a tensor with dynamic dimensions")
    dtype = node.dtype("dtype", x.dtype)
    node.allocate(x.shape, numpy_dtype(element_type(dtype)))
    return [np.eye(*x.shape, k=int(node.attr("k", 0)), dtype=numpy_dtype(element_type(dtype)))]


def _range(imp: Importer, node: Node) -> list[np.ndarray]:
    """`start + i * delta` for i below `ceil((limit - start) / delta)`, as ONNX writes it (not
    a running sum, which drifts); 16-bit floats are computed in float32 (stash_type's default)."""
    start, limit, delta = (_scalar_input(node, i, name) for i, name in enumerate(("start", "limit", "delta")))
    dtype = start.dtype
    for i, (name, value) in enumerate(zip(("start", "limit", "delta"), (start, limit, delta), strict=True)):
        if dtype.kind == "f" and not np.isfinite(value):
            raise node.invalid(f"input #{i} ('{name}') is {value}: Range needs finite bounds and step")
    if dtype.kind in "iu":
        first, last, step = int(start), int(limit), int(delta)
        if step == 0:
            raise node.invalid("input #2 ('delta') is 0: Range needs a nonzero step")
        count = max(-((first - last) // step), 0)
        node.allocate((count,), np.dtype(np.int64))  # computed in int64, then narrowed
        return [(first + step * np.arange(count, dtype=np.int64)).astype(dtype)]
    compute = np.dtype(np.float32) if dtype.itemsize == 2 else dtype
    if dtype.itemsize == 2 and int(node.attr("stash_type", 1)) == 11:
        compute = np.dtype(np.float64)
    first, last, step = (v.astype(compute) for v in (start, limit, delta))
    if step == 0:
        raise node.invalid("input #2 ('delta') is 0: Range needs a nonzero step")
    count = max(math.ceil((float(last) - float(first)) / float(step)), 0)
    node.allocate((count,), compute)  # computed in `compute`, then narrowed
    return [(first + np.arange(count, dtype=compute) * step).astype(dtype)]


def _constant(imp: Importer, node: Node) -> list[np.ndarray]:
    given = sorted(k for k in node.attrs if k.startswith("value") or k == "sparse_value")
    if len(given) > 1:
        raise node.invalid(f"attributes {given} are given: a Constant holds exactly one value")
    if "sparse_value" in node.attrs:
        raise node.fail("sparse_value (a sparse constant) is not supported")
    if "value_string" in node.attrs:
        return [np.array(node.attr("value_string"), dtype=np.str_)]
    if "value_strings" in node.attrs:
        return [np.array([s.decode() for s in node.attr("value_strings")], dtype=np.str_)]
    if "value" in node.attrs:
        # Strings come as objects: the importer converts them.
        return [tensor_array(node.attr("value"), f"Constant at node '{node.name}': tensor")]
    for key, dtype in (
        ("value_float", np.float32),
        ("value_floats", np.float32),
        ("value_int", np.int64),
        ("value_ints", np.int64),
    ):
        if key in node.attrs:
            return [np.asarray(node.attr(key), dtype=dtype)]
    raise node.invalid("Constant has no value")


def _constant_of_shape(imp: Importer, node: Node) -> list[Tensor]:
    dims = _dims(node, 0, "input")
    value = node.attr("value")
    what = f"ConstantOfShape at node '{node.name}': tensor"
    fill = tensor_array(value, what) if value is not None else np.zeros(1, np.float32)
    if fill.shape != (1,):  # ONNX's shape inference and onnxruntime want exactly this shape
        raise node.invalid(
            f"attribute 'value' must be a 1-D tensor of one element, got shape {list(fill.shape)}"
        )
    return [imp.g.add_splat(fill[0].item(), dims, fill.dtype.name, node.name)]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _ints(array: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(array).reshape(-1)]


def _vector(node: Node, index: int, what: str, scalar: bool = False) -> list[int]:
    """Input `index`, a 1-D tensor of integers as ONNX and onnxruntime want it (`scalar`: a 0-D
    one too, which onnxruntime takes for Unsqueeze's axes)."""
    array = np.asarray(node.value(index))
    if array.ndim != 1 and not (scalar and array.ndim == 0):
        raise node.invalid(f"input #{index} ('{what}') must be 1-D, got shape {list(array.shape)}")
    return _ints(array)


def _dims(node: Node, index: int, what: str, smallest: int = 0) -> list[int]:
    """Input `index`, which lists dimensions (or repeats): a 1-D tensor of integers >= `smallest`."""
    values = _vector(node, index, what)
    if any(v < smallest for v in values):
        raise node.invalid(
            f"input #{index} ('{what}') is {values}: each value must be >= {smallest}"
            + (" (-1 is inferred, 0 copies the input's dimension)" if smallest == -1 else "")
        )
    return values


def _scalar_input(node: Node, index: int, what: str) -> np.ndarray:
    array = np.asarray(node.value(index))
    if array.size != 1:
        raise node.invalid(f"input #{index} ('{what}') must be a scalar, got shape {list(array.shape)}")
    return array.reshape(())


def _blocksize(node: Node) -> int:
    b = int(node.attr("blocksize"))
    if b < 1:
        raise node.invalid(f"attribute 'blocksize' is {b}: it must be >= 1")
    return b


def _dynamic(shape: Sequence[int]) -> bool:
    return any(d < 0 for d in shape)


def _axes(node: Node, index: int, since: int, scalar: bool = False) -> list[int] | None:
    """An `axes` attribute before opset `since`, the optional input `index` from it on."""
    if node.opset < since:
        axes = node.attr("axes")
        return None if axes is None else list(axes)
    return _vector(node, index, "axes", scalar) if node.has_input(index) else None


def _axis(node: Node, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise node.invalid(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _reshape_to(imp: Importer, node: Node, x: Tensor, shape: Sequence[int]) -> Tensor:
    """Squeeze and Unsqueeze only drop or insert 1s, so dynamic dimensions keep their order."""
    return imp.g.add_reshape(x, shape, node.name)


def _static_4d(node: Node, x: Tensor) -> tuple[int, int, int, int]:
    if len(x.shape) != 4:
        raise node.invalid(f"{node.op_type} needs a 4-D NCHW input, got shape {list(x.shape)}")
    if _dynamic(x.shape):
        raise node.fail(f"{node.op_type} of a tensor with dynamic dimensions")
    n, c, h, w = x.shape
    return n, c, h, w


def _block_mode(node: Node) -> str:
    mode = str(node.attr("mode", "DCR"))
    if mode not in ("DCR", "CRD"):
        raise node.invalid(f"unknown mode '{mode}' (known: DCR, CRD)")
    return mode


def _regroup(
    imp: Importer, node: Node, x: Tensor, blocks: list[int], perm: list[int], shape: list[int]
) -> Tensor:
    """reshape to `blocks`, transpose by `perm`, reshape to `shape`: moves blocks of elements."""
    split = imp.g.add_reshape(x, blocks, f"{node.name}.blocks")
    moved = imp.g.add_transpose(split, perm, f"{node.name}.transpose")
    return imp.g.add_reshape(moved, shape, node.name)


def _add_pad(
    imp: Importer, node: Node, x: Tensor, pads: list[int], mode: str, value: Tensor | None
) -> Tensor:
    props = {"pads": ints_attr(pads), "mode": StringAttr(mode)}
    operands = [x] if value is None else [x, value]
    return imp.g.add_op(ops.PadOp, operands, props, node.name)


CONVERTERS: dict[str, Converter] = {
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Transpose": _transpose,
    "Concat": _concat,
    "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze,
    "Expand": _expand,
    "Tile": _tile,
    "Slice": _slice,
    "Split": _split,
    "Pad": _pad,
    "CenterCropPad": _center_crop_pad,
    "DepthToSpace": _depth_to_space,
    "SpaceToDepth": _space_to_depth,
    "Shape": _shape,
    "Size": _size,
    "EyeLike": _eye_like,
    "Range": _range,
    "Constant": _constant,
    "ConstantOfShape": _constant_of_shape,
}
