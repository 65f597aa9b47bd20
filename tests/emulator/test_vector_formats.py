"""The vector unit on device formats: NC1HWC0 and FRACTAL_NZ vector kernels computed on the stored
arrays. Expected values are numpy on the logical arrays (or onnxruntime for compiled models)."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.parser import Parser

import ge
from ge.context import make_context
from ge.dialects.formats import device_shape
from ge.dialects.stream import LaunchOp
from ge.emulator import Emulator
from ge.frontends.onnx import import_onnx
from ge.layout import from_device

RTOL, ATOL = 1e-5, 1e-5


def _type(shape: tuple[int, ...], fmt: str | None = None) -> str:
    encoding = f", #ascend.format<{fmt}>" if fmt else ""
    return f"{'x'.join(map(str, shape))}xf32{encoding}"


def _module(x: tuple[int, ...], y: tuple[int, ...], body: str, y_format: str = "NC1HWC0", bias=None) -> str:
    """A model: x -> NC1HWC0 (trans_data) -> kernel @vec (`body`, reading %0 as NC1HWC0 and %1, a
    framework-format bias of shape `bias`, when given) -> y in `y_format` -> y in NCHW."""
    arguments = [("%0", x, "NC1HWC0")] + ([("%1", bias, None)] if bias else [])
    kernel_in = ", ".join(f"tensor<{_type(s, f)}>" for _, s, f in arguments)
    block_args = ", ".join(f"{n}: tensor<{_type(s)}>" for n, s, _ in arguments)
    y_encoded = y_format if y_format != "NCHW" else None
    buffers = [("x", x, None, "{input = 0 : i64} "), ("xd", x, "NC1HWC0", "")]
    if bias:
        buffers.append(("b", bias, None, "{input = 1 : i64} "))
    buffers += [("yd", y, y_encoded, ""), ("y", y, None, "{output = 0 : i64} ")]
    offset, lines = 0, []
    for name, shape, fmt, attrs in buffers:
        size = 4 * int(np.prod(device_shape(shape, fmt or "NCHW", 16)))
        lines.append(f"%{name} = ascend.stream.buffer offset {offset} size {size} {attrs}: memref<{_type(shape, fmt)}>")
        offset += -(-size // 512) * 512
    vec_inputs = "%xd, %b" if bias else "%xd"
    vec_types = ", ".join(f"memref<{_type(s, f)}>" for _, s, f in arguments)
    return f"""builtin.module {{
  ascend.stream.kernel @to_device {{unit = #ascend.unit<vector>, kind = #ascend.kind<trans_data>}} : (tensor<{_type(x)}>) -> tensor<{_type(x, "NC1HWC0")}> {{
  ^bb0(%0: tensor<{_type(x)}>):
    ascend.stream.return %0 : tensor<{_type(x)}>
  }}
  ascend.stream.kernel @vec {{unit = #ascend.unit<vector>}} : ({kernel_in}) -> tensor<{_type(y, y_encoded)}> {{
  ^bb0({block_args}):
    {body}
    ascend.stream.return %r : tensor<{_type(y)}>
  }}
  ascend.stream.kernel @to_logical {{unit = #ascend.unit<vector>, kind = #ascend.kind<trans_data>}} : (tensor<{_type(y, y_encoded)}>) -> tensor<{_type(y)}> {{
  ^bb0(%0: tensor<{_type(y)}>):
    ascend.stream.return %0 : tensor<{_type(y)}>
  }}
  ascend.stream.model @main attributes {{arena_size = {offset} : i64, weight_size = 0 : i64, input_names = [{'"x", "b"' if bias else '"x"'}], output_names = ["y"]}} {{
    {chr(10).join("    " + line for line in lines).strip()}
    ascend.stream.launch @to_device(%x) -> (%xd) stream 0 : (memref<{_type(x)}>) -> (memref<{_type(x, "NC1HWC0")}>)
    ascend.stream.launch @vec({vec_inputs}) -> (%yd) stream 0 : ({vec_types}) -> (memref<{_type(y, y_encoded)}>)
    ascend.stream.launch @to_logical(%yd) -> (%y) stream 0 : (memref<{_type(y, y_encoded)}>) -> (memref<{_type(y)}>)
    ascend.stream.outputs %y : memref<{_type(y)}>
  }}
}}"""


def _emulator(text: str) -> Emulator:
    return Emulator(Parser(make_context(), text).parse_module(), b"")


def test_explore(rng) -> None:
    x = (2, 20, 4, 4)
    text = _module(x, x, f"%r = ascend.graph.relu %0 : (tensor<{_type(x)}>) -> tensor<{_type(x)}>")
    print(text)
    e = _emulator(text)
    data = rng.standard_normal(x).astype(np.float32)
    (got,) = e.run([data])
    np.testing.assert_allclose(got, np.maximum(data, 0))
