"""Element types: the mapping between xDSL's builtin types and numpy dtypes (bf16 via ml_dtypes).

Strings are `!ascend.string<N>`, numpy `<UN` (N UTF-32 code points); numpy names that dtype
`str{32 * N}`, and so do we.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    bf16,
    f16,
    f32,
    f64,
    i1,
)
from xdsl.ir import Attribute

from ge.dialects.graph.strings import StringType

from .errors import GeError, UnsupportedOperatorError

bfloat16 = np.dtype(ml_dtypes.bfloat16)

_BY_NAME: dict[str, Attribute] = {
    "float32": f32,
    "float16": f16,
    "bfloat16": bf16,
    "float64": f64,
    "bool": i1,
    **{f"int{w}": IntegerType(w) for w in (8, 16, 32, 64)},
    **{f"uint{w}": IntegerType(w, Signedness.UNSIGNED) for w in (8, 16, 32, 64)},
}


STRING = "str"
"""The name of a string dtype whose width is not known yet (ONNX's STRING)."""

FORMATTED_WIDTH = 32
"""Characters that hold any number numpy formats (a float64 takes at most 24)."""


def element_type(dtype: str | np.dtype | type) -> Attribute:
    """The xDSL element type for a numpy dtype or its name ("float32", "bfloat16", "str96", ...)."""
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    if name in _BY_NAME:
        return _BY_NAME[name]
    bits = name.removeprefix(STRING)
    if name.startswith(STRING) and bits.isdigit() and int(bits) % 32 == 0:
        return StringType(max(1, int(bits) // 32))
    known = ", ".join(_BY_NAME)
    raise UnsupportedOperatorError(
        f"unsupported dtype '{name}' (supported: {known}, and strings of a known width: str32, str64, ...)",
        category="dtype",
    )


def string_dtype(width: int) -> str:
    """The name of the dtype of strings of at most `width` characters (at least one)."""
    return f"{STRING}{32 * max(1, width)}"


def is_string(dtype: str) -> bool:
    """Whether a dtype name names strings (of a known width or not)."""
    return dtype.startswith(STRING)


def as_strings(array: np.ndarray) -> np.ndarray:
    """An array of Python strings (object dtype, as ONNX keeps them) as fixed-width `<U` strings."""
    array = np.asarray(array)
    if array.dtype.kind != "O":
        return array
    return np.array(array.tolist(), dtype=np.str_).reshape(array.shape)


def numpy_dtype(element: Attribute) -> np.dtype:
    """The numpy dtype that stores one element of this xDSL type."""
    if isinstance(element, Float32Type):
        return np.dtype(np.float32)
    if isinstance(element, Float16Type):
        return np.dtype(np.float16)
    if isinstance(element, BFloat16Type):
        return bfloat16
    if isinstance(element, Float64Type):
        return np.dtype(np.float64)
    if isinstance(element, IntegerType):
        width = element.width.data
        if width == 1:
            return np.dtype(np.bool_)
        unsigned = element.signedness.data == Signedness.UNSIGNED
        return np.dtype(f"{'u' if unsigned else ''}int{width}")
    if isinstance(element, StringType):
        return np.dtype(f"<U{element.width.data}")
    raise GeError(f"no numpy dtype for element type {element}")


def dtype_name(element: Attribute) -> str:
    return numpy_dtype(element).name
