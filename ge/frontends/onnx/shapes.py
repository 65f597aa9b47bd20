"""ONNX's own shape inference as a cross-check of the importer.

Every op infers its result type as it is built; ONNX's shape inference (with data propagation,
so shapes computed by Shape/Concat chains are known too) infers them independently from the
operator schemas. Where both know a dimension they must agree, or the import stops with an
error naming the value: a wrong shape never reaches the compiler.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import onnx

from ge.errors import InvalidModelError
from ge.graph import Tensor

from .importer import Importer, value_type

MAX_MODEL_BYTES = 64 << 20
"""Larger models skip the check: inference copies the whole model, weights included."""
PROPAGATED_ELEMENTS = 1 << 16
"""Data propagation computes the values of these ops' outputs; it only matters for shape-sized
tensors, and a large one (a Range of 2e8 constants) would take seconds and gigabytes."""
MATERIALIZING_OPS = ("Range", "ConstantOfShape", "Expand", "Tile")


def check_shapes(
    model: onnx.ModelProto, importer: Importer, input_shapes: Mapping[str, Sequence[int]] | None = None
) -> None:
    """Raises InvalidModelError where ONNX infers a static dimension the importer disagrees with."""
    if model.ByteSize() > MAX_MODEL_BYTES or _specialized_away(model, input_shapes):
        return
    propagate = not any(
        _elements(importer, output) > PROPAGATED_ELEMENTS
        for node in model.graph.node
        if node.op_type in MATERIALIZING_OPS
        for output in node.output
    )
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=propagate)
    except (onnx.shape_inference.InferenceError, ValueError, RuntimeError):
        return  # ONNX cannot infer this model: there is nothing to compare with
    for info in (*inferred.graph.value_info, *inferred.graph.output):
        tensor = importer.values.get(info.name)
        if not isinstance(tensor, Tensor) or not info.type.HasField("tensor_type"):
            continue
        t = info.type.tensor_type
        if not t.HasField("shape"):
            continue
        theirs = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        ours = list(tensor.shape)
        agree = len(theirs) == len(ours) and all(
            a is None or b < 0 or a == b for a, b in zip(theirs, ours, strict=True)
        )
        if not agree:
            shown = ["?" if d is None else d for d in theirs]
            raise InvalidModelError(
                f"value '{info.name}': ge infers shape {ours} but ONNX shape inference gives {shown}"
            )


def _elements(importer: Importer, name: str) -> int:
    """Elements of a value the importer made, as far as its static dimensions tell."""
    tensor = importer.values.get(name)
    shape = getattr(tensor, "shape", None)
    if shape is None:
        return 0
    return math.prod(max(d, 1) for d in shape)


def _specialized_away(model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[int]] | None) -> bool:
    """Whether the run's input shapes differ from the static shapes the model declares."""
    if not input_shapes:
        return False
    for info in model.graph.input:
        if info.name in input_shapes and info.type.HasField("tensor_type"):
            declared, _ = value_type(info)
            given = list(input_shapes[info.name])
            if len(declared) != len(given) or any(
                d >= 0 and d != g for d, g in zip(declared, given, strict=True)
            ):
                return True
    return False
