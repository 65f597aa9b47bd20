"""BitCast (opset 26) through `ge.backend`, against numpy's view of the same bytes."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto
from single_node import feeds, one_node

import ge.backend
from ge.errors import InvalidModelError, UnsupportedOperatorError

BF16 = np.dtype(ml_dtypes.bfloat16)

CASES = [
    (np.float32, TensorProto.INT32, np.int32),
    (np.int32, TensorProto.FLOAT, np.float32),
    (np.float64, TensorProto.UINT64, np.uint64),
    (np.int64, TensorProto.DOUBLE, np.float64),
    (np.float16, TensorProto.INT16, np.int16),
    (np.uint16, TensorProto.BFLOAT16, BF16),
    (BF16, TensorProto.FLOAT16, np.float16),
    (np.int8, TensorProto.UINT8, np.uint8),
    (np.bool_, TensorProto.UINT8, np.uint8),
]


def values(dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(0)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape).astype(dtype)
    return (100 * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize(("source", "to", "target"), CASES)
@pytest.mark.parametrize("shape", [(2, 3), ()])
def test_bytes_are_kept(source, to, target, shape):
    x = values(source, shape)
    (got,) = ge.backend.prepare(one_node("BitCast", [x], 26, to=to)).run(feeds([x], ()))
    want = np.ascontiguousarray(x).view(target).reshape(shape)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


def test_uint8_to_bool_is_true_for_any_nonzero_byte():
    x = np.array([0, 1, 2, 255], np.uint8)
    (got,) = ge.backend.prepare(one_node("BitCast", [x], 26, to=TensorProto.BOOL)).run(feeds([x], ()))
    np.testing.assert_array_equal(got, x != 0)


def test_widths_must_agree():
    x = values(np.float32, (2,))
    with pytest.raises(InvalidModelError, match="differ in width"):
        ge.backend.prepare(one_node("BitCast", [x], 26, to=TensorProto.INT64))


def test_sub_byte_types_are_refused():
    x = values(np.int8, (2,))
    with pytest.raises(UnsupportedOperatorError, match="whole-byte"):
        ge.backend.prepare(one_node("BitCast", [x], 26, to=TensorProto.INT4))
