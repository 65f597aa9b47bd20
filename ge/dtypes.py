"""Element types: the mapping between xDSL's builtin types and numpy dtypes (bf16 via ml_dtypes).

The narrow types of ONNX (float8 and float4 formats, 4-bit and 2-bit integers) are ml_dtypes
dtypes too, stored one element per byte as ml_dtypes stores them: buffers are byte-addressed.

Strings are `!ascend.string<N>`, numpy `<UN` (N UTF-32 code points); numpy names that dtype
`str{32 * N}`, and so do we.
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    MemRefType,
    Signedness,
    TensorType,
    bf16,
    f4E2M1FN,
    f8E4M3FN,
    f8E4M3FNUZ,
    f8E5M2,
    f8E5M2FNUZ,
    f8E8M0FNU,
    f16,
    f32,
    f64,
    i1,
)
from xdsl.ir import Attribute, SSAValue

from ge.dialects.graph.strings import StringType

from .errors import GeError, RuntimeInputError, UnsupportedOperatorError

bfloat16 = np.dtype(ml_dtypes.bfloat16)

NARROW: dict[str, Attribute] = {
    "float8_e4m3fn": f8E4M3FN,
    "float8_e4m3fnuz": f8E4M3FNUZ,
    "float8_e5m2": f8E5M2,
    "float8_e5m2fnuz": f8E5M2FNUZ,
    "float8_e8m0fnu": f8E8M0FNU,
    "float4_e2m1fn": f4E2M1FN,
    **{f"int{w}": IntegerType(w) for w in (2, 4)},
    **{f"uint{w}": IntegerType(w, Signedness.UNSIGNED) for w in (2, 4)},
}
"""The narrow element types (numpy names as ml_dtypes gives them): casts and data movement only."""

ONNX_NAMES: dict[str, str] = {
    "float8_e4m3fn": "FLOAT8E4M3FN",
    "float8_e4m3fnuz": "FLOAT8E4M3FNUZ",
    "float8_e5m2": "FLOAT8E5M2",
    "float8_e5m2fnuz": "FLOAT8E5M2FNUZ",
    "float8_e8m0fnu": "FLOAT8E8M0",
    "float4_e2m1fn": "FLOAT4E2M1",
    "int4": "INT4",
    "uint4": "UINT4",
    "int2": "INT2",
    "uint2": "UINT2",
}
"""The ONNX TensorProto name of each narrow dtype."""

SATURABLE = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")
"""The narrow float types where out-of-range values become infinity or NaN unless a cast saturates."""

_NARROW_DTYPES: dict[Attribute, np.dtype] = {
    element: np.dtype(getattr(ml_dtypes, name)) for name, element in NARROW.items()
}

_BY_NAME: dict[str, Attribute] = {
    "float32": f32,
    "float16": f16,
    "bfloat16": bf16,
    "float64": f64,
    "bool": i1,
    **{f"int{w}": IntegerType(w) for w in (8, 16, 32, 64)},
    **{f"uint{w}": IntegerType(w, Signedness.UNSIGNED) for w in (8, 16, 32, 64)},
    **NARROW,
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


def as_strings(
    array: object, what: str, expected: str = "strings", error: type[GeError] = RuntimeInputError
) -> np.ndarray:
    """An array of Python strings (object dtype, as ONNX keeps them; bytes are read as UTF-8) as
    fixed-width `<U` strings; other arrays as they are. An object array holding anything else is
    refused, naming `what` (`"input 'x'"`) and the `expected` dtype: numpy would write None as
    'None', or make a float input's data strings."""
    try:
        array = np.asarray(array)
    except (ValueError, TypeError) as failure:  # ragged nested lists, objects numpy cannot read
        raise error(f"{what} is not an array ({expected}): {failure}") from None
    if array.dtype.kind != "O":
        return array
    items = array.ravel().tolist()
    for index, item in enumerate(items):
        if isinstance(item, bytes):
            try:
                items[index] = item.decode()
            except UnicodeDecodeError:
                raise error(
                    f"{what} holds bytes that are not UTF-8 text at index {index}: {item!r:.40}"
                ) from None
    wrong = [i for i, item in enumerate(items) if not isinstance(item, str)]
    if wrong:
        # A None is what most often makes an array of objects: name it first.
        index = next((i for i in wrong if items[i] is None), wrong[0])
        item = items[index]
        raise error(
            f"{what} is an object array holding {item!r:.40} ({type(item).__name__}) at index {index}; "
            f"it must be {expected}: give an array of that dtype"
        )
    return np.array(items, dtype=np.str_).reshape(array.shape)


@functools.cache
def numpy_dtype(element: Attribute) -> np.dtype:
    """The numpy dtype that stores one element of this xDSL type (types are immutable, and few:
    the answer is remembered)."""
    if element in _NARROW_DTYPES:
        return _NARROW_DTYPES[element]
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


@functools.cache
def dtype_name(element: Attribute) -> str:
    return numpy_dtype(element).name


def tensor_type(value: SSAValue) -> TensorType:
    """The type of a value of the graph or kernel level, where every value is a tensor."""
    value_type = value.type
    assert isinstance(value_type, TensorType), f"a value of type {value_type}, not a tensor"
    return value_type


def shaped_type(value: SSAValue) -> TensorType | MemRefType:
    """The type of a value of any level: a tensor, or at the stream level a buffer (a memref)."""
    value_type = value.type
    assert isinstance(value_type, TensorType | MemRefType), f"a value of type {value_type}"
    return value_type
