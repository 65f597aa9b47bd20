"""ONNX sequences and optionals, resolved at import: a sequence is a Python list of tensors.

A sequence's length and its elements' shapes are static in each program (the backend specializes
on them as it does on input shapes), so the sequence operators are list operations done while
importing: they emit tensor ops (split, concat, reshape) only where data is computed, and the
positions they read come from constants or from the importer's demand mechanism. An optional is
an `OptionalValue` (`values.py`, with the flat form of a run's values): a tensor, a sequence, or
nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx

from ge.dialects import graph as ops
from ge.dialects.common import int_attr, ints_attr
from ge.graph import Tensor

from .values import OptionalValue

if TYPE_CHECKING:
    from .importer import Converter, Importer, Node

MAX_ELEMENTS = 1024
"""Longer sequences are refused: each element is a value of its own in the program."""


# ------------------------------------------------------------------------------------------------
# Converters
# ------------------------------------------------------------------------------------------------


def _sequence(node: Node, index: int) -> list[Tensor]:
    value = node.inputs[index] if index < len(node.inputs) else None
    if isinstance(value, OptionalValue):
        value = value.element
    if not isinstance(value, list):
        raise node.invalid(f"input #{index} ('{node.input_names[index]}') is not a sequence")
    return value


def _tensor(node: Node, index: int) -> Tensor:
    value = node.inputs[index] if index < len(node.inputs) else None
    if not isinstance(value, Tensor):
        raise node.invalid(f"input #{index} is not a tensor")
    return value


def _checked(node: Node, elements: list[Tensor]) -> list[Tensor]:
    if len({t.dtype for t in elements}) > 1:
        raise node.invalid(f"the elements have different dtypes {sorted({t.dtype for t in elements})}")
    if len(elements) > MAX_ELEMENTS:
        raise node.fail(f"a sequence of more than {MAX_ELEMENTS} elements (sequences are unrolled)")
    return elements


def _position(node: Node, index: int, length: int, default: int, upper: int) -> int:
    """Input `index` as a position in [-length, upper], made non-negative; `default` if omitted."""
    if not node.has_input(index):
        return default
    value = np.asarray(node.value(index))
    if value.size != 1:
        raise node.invalid(f"the position must hold one value, got shape {list(value.shape)}")
    position = int(value.reshape(-1)[0])
    if not -length <= position <= upper:
        raise node.invalid(f"position {position} is out of range for a sequence of {length} elements")
    return position + length if position < 0 else position


def _sequence_empty(imp: Importer, node: Node) -> list[list[Tensor]]:
    """An empty list; the element dtype is that of the first element inserted."""
    return [[]]


def _sequence_construct(imp: Importer, node: Node) -> list[list[Tensor]]:
    """The list of the inputs."""
    return [_checked(node, [_tensor(node, i) for i in range(len(node.inputs))])]


def _sequence_insert(imp: Importer, node: Node) -> list[list[Tensor]]:
    """The position, when given, must be known at import (a constant, or specialized on)."""
    sequence, tensor = _sequence(node, 0), _tensor(node, 1)
    n = len(sequence)
    position = _position(node, 2, n, n, n)
    return [_checked(node, [*sequence[:position], tensor, *sequence[position:]])]


def _sequence_at(imp: Importer, node: Node) -> list[Tensor]:
    """The position must be known at import (a constant, or specialized on)."""
    sequence = _sequence(node, 0)
    if not node.has_input(1):
        raise node.invalid("SequenceAt needs a position")
    return [sequence[_position(node, 1, len(sequence), 0, len(sequence) - 1)]]


def _sequence_erase(imp: Importer, node: Node) -> list[list[Tensor]]:
    """The position, when given, must be known at import (a constant, or specialized on)."""
    sequence = _sequence(node, 0)
    n = len(sequence)
    if n == 0:
        raise node.invalid("cannot erase from an empty sequence")
    position = _position(node, 1, n, n - 1, n - 1)
    return [[*sequence[:position], *sequence[position + 1 :]]]


def _sequence_length(imp: Importer, node: Node) -> list[np.ndarray]:
    """A constant."""
    return [np.array(len(_sequence(node, 0)), np.int64)]


def _split_to_sequence(imp: Importer, node: Node) -> list[list[Tensor]]:
    """Split's ops; the split sizes must be known at import and the split dimension static."""
    x = _tensor(node, 0)
    rank = len(x.shape)
    axis = int(node.attr("axis", 0))
    if not -rank <= axis < rank:
        raise node.invalid(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    size = x.shape[axis]
    if size < 0:
        raise node.fail("a split along a dynamic dimension")
    keep = True
    if node.has_input(1):
        split = np.asarray(node.value(1)).astype(np.int64)
        if split.ndim > 1:
            raise node.invalid(f"input #1 ('split') must be a scalar or 1-D, got shape {list(split.shape)}")
        if split.ndim == 0:
            chunk = int(split)
            if chunk <= 0:
                raise node.invalid(f"the split size must be positive, got {chunk}")
            sizes = [chunk] * (size // chunk) + ([size % chunk] if size % chunk else [])
        else:
            sizes = [int(s) for s in split]
            if sum(sizes) != size or min(sizes, default=0) < 0:
                raise node.invalid(
                    f"split sizes {sizes} do not add up to dimension {axis} of {list(x.shape)}"
                )
    else:
        sizes = [1] * size
        keep = bool(node.attr("keepdims", 1))
    if len(sizes) > MAX_ELEMENTS:
        raise node.fail(f"a sequence of more than {MAX_ELEMENTS} elements (sequences are unrolled)")
    if not sizes:
        return [[]]
    if len(sizes) == 1:
        parts = [x]
    else:
        props = {"axis": int_attr(axis), "sizes": ints_attr(sizes)}
        parts = imp.g.add_op_results(ops.SplitOp, [x], props, node.name)
    if keep:
        return [parts]
    if any(d < 0 for d in x.shape):
        raise node.fail("keepdims=0 on a tensor with dynamic dimensions")
    shape = [d for i, d in enumerate(x.shape) if i != axis]
    return [[imp.g.add_reshape(p, shape, f"{node.name}.{i}") for i, p in enumerate(parts)]]


def _concat_from_sequence(imp: Importer, node: Node) -> list[Tensor]:
    """Concat of the elements, each first given a new axis when new_axis=1; the sequence must not be
    empty."""
    sequence = _sequence(node, 0)
    if not sequence:
        raise node.invalid("cannot concatenate an empty sequence")
    if "axis" not in node.attrs:
        raise node.invalid("ConcatFromSequence needs an 'axis' attribute")
    axis = int(node.attr("axis"))
    rank = len(sequence[0].shape) + (1 if node.attr("new_axis", 0) else 0)
    if not -rank <= axis < rank:
        raise node.invalid(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    if node.attr("new_axis", 0):
        if any(d < 0 for t in sequence for d in t.shape):
            raise node.fail("new_axis=1 on elements with dynamic dimensions")
        sequence = [
            imp.g.add_reshape(t, [*t.shape[:axis], 1, *t.shape[axis:]], f"{node.name}.{i}")
            for i, t in enumerate(sequence)
        ]
    if len(sequence) == 1:
        return [sequence[0]]
    return [imp.g.add_concat(sequence, axis, node.name)]


def _sequence_map(imp: Importer, node: Node) -> list[list[Tensor]]:
    """The body inlined once per element; inputs after the first that are tensors go whole to each
    iteration."""
    body = node.attr("body")
    if not isinstance(body, onnx.GraphProto):
        raise node.invalid("SequenceMap needs a body graph")
    length = len(_sequence(node, 0))
    inputs: list[Tensor | list[Tensor]] = []
    for index, given in enumerate(node.inputs):
        value = given.element if isinstance(given, OptionalValue) else given
        if value is None:
            raise node.fail(f"input #{index} is absent (an empty optional)")
        inputs.append(value)
    lengths = {len(v) for v in inputs if isinstance(v, list)}
    if lengths != {length}:
        raise node.invalid(f"the sequences have different lengths {sorted(lengths)}")
    if len(body.input) != len(inputs):
        raise node.invalid(f"the body has {len(body.input)} inputs, the node {len(inputs)}")
    if length > MAX_ELEMENTS:
        raise node.fail(f"a sequence of more than {MAX_ELEMENTS} elements (sequences are unrolled)")
    outputs: list[list[Tensor]] = [[] for _ in body.output]
    for i in range(length):
        bindings = {
            info.name: v[i] if isinstance(v, list) else v for info, v in zip(body.input, inputs, strict=True)
        }
        for k, name in enumerate(imp.import_subgraph(body, bindings, f"{node.name}/{i}/")):
            value = imp.values[name]
            if not isinstance(value, Tensor):
                raise node.fail(f"body output '{body.output[k].name}' that is not a tensor")
            outputs[k].append(value)
    return outputs


def _optional(imp: Importer, node: Node) -> list[OptionalValue]:
    """An optional holding the input, or nothing when there is none."""
    value = node.inputs[0] if node.has_input(0) else None
    if isinstance(value, OptionalValue):
        raise node.invalid("an optional of an optional")
    return [OptionalValue(value)]


def _optional_has_element(imp: Importer, node: Node) -> list[np.ndarray]:
    """A constant (a tensor or a sequence holds an element; a missing input does not)."""
    value = node.inputs[0] if node.has_input(0) else None
    present = value is not None and not (isinstance(value, OptionalValue) and value.element is None)
    return [np.array(present)]


def _optional_get_element(imp: Importer, node: Node) -> list[Tensor | list[Tensor]]:
    """The element (a tensor or a sequence passes through); an empty optional is an error."""
    value = node.inputs[0] if node.has_input(0) else None
    if isinstance(value, OptionalValue):
        value = value.element
    if value is None:
        raise node.invalid("the optional holds no element")
    return [value]


CONVERTERS: dict[str, Converter] = {
    "SequenceEmpty": _sequence_empty,
    "SequenceConstruct": _sequence_construct,
    "SequenceInsert": _sequence_insert,
    "SequenceAt": _sequence_at,
    "SequenceErase": _sequence_erase,
    "SequenceLength": _sequence_length,
    "SplitToSequence": _split_to_sequence,
    "ConcatFromSequence": _concat_from_sequence,
    "SequenceMap": _sequence_map,
    "Optional": _optional,
    "OptionalHasElement": _optional_has_element,
    "OptionalGetElement": _optional_get_element,
}

__all__ = ["CONVERTERS"]
