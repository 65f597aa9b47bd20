"""What the names of an imported ONNX graph stand for, and the values of a run in flat form.

A name stands for a tensor, a sequence (a Python list of tensors) or an optional
(`OptionalValue`). A graph input or output of a sequence or optional type is one tensor per
element (`element_name`); `run_value`, `flatten` and `assemble` map the values of a run to and
from that flat form. The sequence operators themselves are in `sequence.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx

from ge.dtypes import as_strings
from ge.errors import RuntimeInputError
from ge.graph import Tensor


@dataclass(frozen=True)
class OptionalValue:
    """An ONNX optional at import: a tensor, a sequence (a list of tensors), or nothing (None)."""

    element: Tensor | list[Tensor] | None


Value = Tensor | list[Tensor] | OptionalValue
"""What a name of the imported graph stands for."""

RunValue = np.ndarray | list[np.ndarray] | None
"""A value given to or returned by a run: an array, a list of arrays (a sequence), or None (an
absent optional)."""

Structure = int | list[int] | None
"""Where a graph output's tensors are among the flat outputs: an index, one index per element
of a sequence, or None for an absent optional."""


def element_name(name: str, index: int) -> str:
    """The name of the graph input or output holding element `index` of sequence `name`."""
    return f"{name}[{index}]"


def run_value(type_proto: onnx.TypeProto | None, value: object, name: str) -> RunValue:
    """`value` given for graph input `name` of this type, as arrays: a list for a sequence."""
    kind = type_proto.WhichOneof("value") if type_proto is not None else "tensor_type"
    if kind == "optional_type" and type_proto is not None:
        return None if value is None else run_value(type_proto.optional_type.elem_type, value, name)
    if kind == "sequence_type" and type_proto is not None:
        if not isinstance(value, list | tuple):
            raise RuntimeInputError(
                f"input '{name}' is a sequence: give a list of arrays, not {type(value).__name__}"
            )
        element = type_proto.sequence_type.elem_type
        return [as_strings(v, f"input '{name}' element {i}", declared(element)) for i, v in enumerate(value)]
    if value is None:
        raise RuntimeInputError(f"input '{name}' is a tensor: None is only a value of an optional input")
    return as_strings(value, f"input '{name}'", declared(type_proto))


def declared(type_proto: onnx.TypeProto | None) -> str:
    """What a value of this type is, as messages say it: "float", "a sequence of int64", ..."""
    if type_proto is None:
        return "a tensor"
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return onnx.TensorProto.DataType.Name(type_proto.tensor_type.elem_type).lower()
    if kind == "sequence_type":
        return f"a sequence of {declared(type_proto.sequence_type.elem_type)}"
    if kind == "optional_type":
        return f"an optional {declared(type_proto.optional_type.elem_type)}"
    return "a tensor"


def flatten(name: str, value: RunValue) -> dict[str, np.ndarray]:
    """The graph inputs that hold `value` of input `name`: one per element of a sequence."""
    if value is None:
        return {}
    if isinstance(value, list):
        return {element_name(name, i): v for i, v in enumerate(value)}
    return {name: value}


def shapes_of(value: RunValue) -> tuple | None:
    """The shape of an array, the shapes of a sequence's elements, None for an absent optional."""
    if value is None:
        return None
    if isinstance(value, list):
        return tuple(tuple(v.shape) for v in value)
    return tuple(value.shape)


def dtypes_of(value: RunValue) -> str | tuple[str, ...] | None:
    """The dtype name of an array, of each element of a sequence, None for an absent optional."""
    if value is None:
        return None
    if isinstance(value, list):
        return tuple(v.dtype.name for v in value)
    return value.dtype.name


def assemble(structures: Sequence[Structure], arrays: Sequence[np.ndarray]) -> list[RunValue]:
    """The graph's outputs from its flat outputs: an array, a list of arrays, or None."""
    return [
        None if s is None else [arrays[i] for i in s] if isinstance(s, list) else arrays[s]
        for s in structures
    ]


STRUCTURED_OPS = frozenset(
    {
        "SequenceEmpty",
        "SequenceConstruct",
        "SequenceInsert",
        "SequenceAt",
        "SequenceErase",
        "SequenceLength",
        "SplitToSequence",
        "ConcatFromSequence",
        "SequenceMap",
        "Optional",
        "OptionalHasElement",
        "OptionalGetElement",
        "Identity",
        "If",
        "Loop",
    }
)
"""The operators whose inputs may be sequences or optionals: the sequence and optional operators
(`sequence.CONVERTERS`), and those that pass any value through."""


def structured_input_kind(value: object) -> str | None:
    """Says "a sequence" or "an optional" for such a value, None for a tensor."""
    if isinstance(value, list):
        return "a sequence"
    if isinstance(value, OptionalValue):
        return "an optional"
    return None
