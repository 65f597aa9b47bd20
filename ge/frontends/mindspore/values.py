"""MINDIR attribute values as Python values: what a `Constant` node holds or a primitive's attributes.

Scalars become Python numbers, tuples and lists Python tuples, tensors numpy arrays, the monads
(MindSpore's side-effect tokens) the `MONAD` marker and `None` None. A value of a kind ge does not
read becomes an `Unreadable` that fails only if a converter asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ge.errors import InvalidModelError

from . import mind_ir_pb2 as mind_ir
from .reader import tensor_array

Kind = mind_ir.AttributeProto.AttributeType

MONAD = "monad"
"""MindSpore's UMonad and IOMonad: tokens that order side effects, with no data."""

TYPE_IDS: dict[int, str] = {
    30: "bool",
    32: "int8",
    33: "int16",
    34: "int32",
    35: "int64",
    37: "uint8",
    38: "uint16",
    39: "uint32",
    40: "uint64",
    42: "float16",
    43: "float32",
    44: "float64",
    45: "bfloat16",
}
"""MindSpore's type ids (its `TypeId` enum: the `dtype` input of Cast) as ge's dtype names."""

_INTEGERS = {Kind.UINT8, Kind.INT8, Kind.UINT16, Kind.INT16, Kind.INT32, Kind.INT64, Kind.UINT32, Kind.UINT64}


@dataclass(frozen=True)
class Unreadable:
    """A value of a kind ge does not read (a closure, a dictionary, a sparse tensor, ...)."""

    kind: str


def attribute_value(attribute: mind_ir.AttributeProto, folder: Path | None, where: str) -> object:
    """The Python value of an attribute (see the module docstring)."""
    kind = attribute.type
    if kind in (Kind.TUPLE, Kind.LIST):
        return tuple(attribute_value(value, folder, where) for value in attribute.values)
    if kind in _INTEGERS:
        return _scalar(attribute, "i", "ints", int, where)
    if kind == Kind.BOOL:
        return bool(_scalar(attribute, "i", "ints", int, where))
    if kind in (Kind.FLOAT, Kind.FLOAT16, Kind.BFLOAT16):
        return _scalar(attribute, "f", "floats", float, where)
    if kind == Kind.DOUBLE:
        return _scalar(attribute, "d", "doubles", float, where)
    if kind == Kind.STRING:
        return attribute.s.decode("utf-8", errors="replace")
    if kind in (Kind.TENSORS, Kind.TENSOR):
        tensors = list(attribute.tensors) or ([attribute.t] if attribute.HasField("t") else [])
        if len(tensors) != 1:
            raise InvalidModelError(f"{where}: a tensor value with {len(tensors)} tensors")
        return tensor_array(tensors[0], folder, where)
    if kind in (Kind.UMONAD, Kind.IOMONAD):
        return MONAD
    if kind == Kind.NONE:
        return None
    name = Kind.Name(kind) if kind in Kind.values() else str(kind)
    return Unreadable(name)


def _scalar(attribute: mind_ir.AttributeProto, one: str, many: str, cast: type, where: str) -> object:
    """MindSpore writes a scalar in the single field, or as the one element of the repeated one
    when it is an element of a tuple."""
    if attribute.HasField(one):
        return cast(getattr(attribute, one))
    values = getattr(attribute, many)
    if len(values) == 1:
        return cast(values[0])
    if not values:
        return cast(0)
    raise InvalidModelError(f"{where}: a scalar attribute '{attribute.name}' holds {len(values)} values")
