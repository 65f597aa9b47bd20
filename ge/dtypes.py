"""Element types: the mapping between xDSL's builtin types and numpy dtypes (bf16 via ml_dtypes)."""

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


def element_type(dtype: str | np.dtype | type) -> Attribute:
    """The xDSL element type for a numpy dtype or its name ("float32", "bfloat16", ...)."""
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    try:
        return _BY_NAME[name]
    except KeyError:
        known = ", ".join(_BY_NAME)
        raise UnsupportedOperatorError(
            f"unsupported dtype '{name}' (supported: {known})", category="dtype"
        ) from None


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
    raise GeError(f"no numpy dtype for element type {element}")


def dtype_name(element: Attribute) -> str:
    return numpy_dtype(element).name
