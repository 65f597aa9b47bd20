"""Checks of Python API arguments: each returns the value in its plain form or raises the given
`GeError` naming where it was passed (`"Graph.add_conv2d: out_channels"`), the value and its type.

Python's `bool` is an `int` and `int("8")` works, so a loose call would accept `True` as a stride or
truncate `1.5` to 1: these refuse everything but real integers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import numpy as np

from .errors import GeError

Check = Callable[[object, str], object]


def shown(value: object) -> str:
    """A value and its type, as error messages show it: `'3' (str)`."""
    return f"{value!r:.60} ({type(value).__name__})"


def integer(value: object, where: str, minimum: int | None = None, error: type[GeError] = GeError) -> int:
    """`value` as an int when it is an integer (a numpy one too, never a bool) of at least `minimum`."""
    kind = "an integer" if minimum is None else f"an integer of at least {minimum}"
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise error(f"{where} must be {kind}, got {shown(value)}")
    if minimum is not None and value < minimum:
        raise error(f"{where} must be {kind}, got {value}")
    return int(value)


def integers(value: object, where: str, minimum: int | None = None) -> list[int]:
    """`value` as a list of ints when it is a sequence (or 1-D array) of integers."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = list(value)
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise GeError(f"{where} must be a list of integers, got {shown(value)}")
    return [integer(v, f"{where}[{i}]", minimum) for i, v in enumerate(value)]


def at_least(minimum: int) -> Check:
    """The check of an integer parameter of at least `minimum`."""
    return lambda value, where: integer(value, where, minimum)


def pair(minimum: int) -> Check:
    """The check of a parameter given as one integer for both spatial axes, or as two."""

    def check(value: object, where: str) -> tuple[int, int]:
        if isinstance(value, bool) or not isinstance(value, int | np.integer | Sequence | np.ndarray):
            raise GeError(f"{where} must be an integer or two, got {shown(value)}")
        if isinstance(value, int | np.integer):
            number = integer(value, where, minimum)
            return number, number
        values = integers(value, where, minimum)
        if len(values) != 2:
            raise GeError(f"{where} must be an integer or two (height, width), got {len(values)}: {values}")
        return values[0], values[1]

    return check


def number(value: object, where: str) -> float | int | bool:
    """A real number (a numpy one too): a constant's value, so a bool is one as well."""
    if not isinstance(value, int | float | np.integer | np.floating | np.bool_):
        raise GeError(f"{where} must be a number, got {shown(value)}")
    return value.item() if isinstance(value, np.generic) else value


def positive(value: object, where: str) -> float:
    """A number above 0 (an epsilon), never a bool."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        raise GeError(f"{where} must be a number above 0, got {shown(value)}")
    if not value > 0:
        raise GeError(f"{where} must be a number above 0, got {value}")
    return float(value)


def flag(value: object, where: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise GeError(f"{where} must be True or False, got {shown(value)}")
    return bool(value)


def array(value: object, where: str, text: bool = False) -> np.ndarray:
    """Numbers (an array or what numpy makes one of), not objects, dates or (unless `text`)
    strings."""
    kind = "an array of numbers or strings" if text else "an array of numbers"
    try:
        data = np.asarray(value)
    except (ValueError, TypeError) as error:
        raise GeError(f"{where} must be {kind}, got {shown(value)}: {error}") from None
    if data.dtype.kind in ("OMm" if text else "OUSMm"):
        raise GeError(f"{where} must be {kind}, got {shown(value)} (dtype {data.dtype})")
    return data


def path(value: object, where: str, error: type[GeError] = GeError) -> None:
    """Refuses what is not a file path (a string or an os.PathLike)."""
    if not isinstance(value, str | os.PathLike):
        raise error(f"{where} must be a file path, got {shown(value)}")


def text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise GeError(f"{where} must be a string, got {shown(value)}")
    return value


def dtype(value: object, where: str) -> object:
    """A dtype as a name ("float32"), a numpy dtype or a numpy scalar type, when `ge` knows it."""
    from .dtypes import element_type

    if not (isinstance(value, str | np.dtype) or (isinstance(value, type) and issubclass(value, np.generic))):
        raise GeError(f"{where} must be a dtype name such as 'float32', got {shown(value)}")
    try:
        element_type(value)
    except (GeError, TypeError) as error:
        raise GeError(f"{where}: {error}") from None
    return value
