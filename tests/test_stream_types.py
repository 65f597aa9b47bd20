"""Device formats as memref layouts at the stream level: stored shapes and sizes follow from the
type, a launch's buffers are checked by type, and a compiled conv net carries its formats."""

from __future__ import annotations

import numpy as np
import pytest
from models import cnn
from oracle import run_onnxruntime
from xdsl.dialects.builtin import MemRefType, TensorType, f16, f32, i8
from xdsl.utils.exceptions import DiagnosticException

import ge
from ge.context import make_context
from ge.dialects.formats import Format, FormatAttr, format_of, memref_of, storage_shape
from ge.dialects.stream import BufferOp, LaunchOp, WeightOp, byte_size, holds, model_of


def _memref(element, shape, fmt: str) -> MemRefType:
    return MemRefType(element, shape, FormatAttr(Format(fmt)))


@pytest.mark.parametrize(
    ("element", "shape", "fmt", "stored", "size"),
    [
        # C = 3 fills one C0 = 16 block: 1 * 1 * 8 * 8 * 16 floats of 4 bytes.
        (f32, (1, 3, 8, 8), "NC1HWC0", (1, 1, 8, 8, 16), 4096),
        # 17 channels take two blocks of 16 halves.
        (f16, (2, 17, 3, 3), "NC1HWC0", (2, 2, 3, 3, 16), 2 * 2 * 9 * 16 * 2),
        # int8 has C0 = 32: 40 channels take two blocks of 32 bytes.
        (i8, (1, 40, 2, 2), "NC1HWC0", (1, 2, 2, 2, 32), 1 * 2 * 4 * 32),
        # 4x3x3x3 weights: ceil(3/16) * 3 * 3 = 9 rows of ceil(4/16) = 1 fractal of 16 x 16.
        (f32, (4, 3, 3, 3), "FRACTAL_Z", (9, 1, 16, 16), 9 * 256 * 4),
        # A 20x33 matrix: ceil(33/16) = 3 column blocks of ceil(20/16) = 2 row blocks.
        (f32, (20, 33), "FRACTAL_NZ", (3, 2, 16, 16), 6 * 256 * 4),
    ],
)
def test_a_memref_keeps_the_logical_shape_and_its_layout_gives_the_stored_one(
    element, shape, fmt: str, stored: tuple[int, ...], size: int
) -> None:
    memref = _memref(element, shape, fmt)
    assert memref.get_shape() == shape
    assert format_of(memref) == fmt
    assert storage_shape(memref) == stored
    assert byte_size(memref) == size


def test_a_fractal_z_weight_of_a_grouped_convolution_is_sized_for_its_groups() -> None:
    # 8 output channels in 2 groups of 4, 3 input channels each: 2 * 1 * 3 * 3 = 18 rows.
    memref = _memref(f32, (8, 3, 3, 3), "FRACTAL_Z")
    assert storage_shape(memref, groups=2) == (18, 1, 16, 16)
    assert byte_size(memref, groups=2) == 18 * 256 * 4
    assert byte_size(memref) == 9 * 256 * 4


def test_memref_of_a_tensor_moves_its_encoding_to_the_layout() -> None:
    tensor = TensorType(f32, (1, 3, 8, 8), FormatAttr(Format.NC1HWC0))
    assert str(memref_of(tensor)) == "memref<1x3x8x8xf32, #ascend.format<NC1HWC0>>"
    assert str(memref_of(TensorType(f32, (1, 3, 8, 8)))) == "memref<1x3x8x8xf32>"
    assert holds(memref_of(tensor), tensor)
    assert not holds(MemRefType(f32, (1, 3, 8, 8)), tensor)
    assert not holds(_memref(f32, (1, 3, 8, 8), "NC1HWC0"), TensorType(f32, (1, 3, 8, 8)))


def test_the_layout_names_no_affine_map_without_a_shape() -> None:
    with pytest.raises(DiagnosticException, match="NC1HWC0 .* depends on the memref's shape"):
        FormatAttr(Format.NC1HWC0).get_affine_map()


def test_a_memref_with_a_format_layout_parses_and_prints() -> None:
    from xdsl.parser import Parser

    text = "memref<4x3x3x3xf32, #ascend.format<FRACTAL_Z>>"
    parsed = Parser(make_context(), text).parse_attribute()
    assert parsed == _memref(f32, (4, 3, 3, 3), "FRACTAL_Z")
    assert str(parsed) == text


def test_a_compiled_conv_net_keeps_formats_in_its_buffer_types() -> None:
    twin = cnn()
    compiled = ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(twin.onnx_model), optimization_level=3)
    model = model_of(compiled.module)
    kernels = model.kernels()
    formats = {
        format_of(op.buffer.type) for op in model.body.block.ops if isinstance(op, BufferOp | WeightOp)
    }
    assert {"NC1HWC0", "FRACTAL_Z"} <= formats
    for op in model.body.block.ops:
        if isinstance(op, WeightOp):
            assert op.buffer.type.get_shape() == op.logical_type.get_shape()
        if isinstance(op, LaunchOp):
            signature = kernels[op.kernel.root_reference.data].function_type
            types = [*signature.inputs.data, *signature.outputs.data]
            buffers = [*op.inputs, *op.outputs]
            assert [b.type for b in buffers] == [memref_of(t) for t in types if isinstance(t, TensorType)]
    x = np.random.default_rng(0).standard_normal(twin.input_shape).astype(np.float32)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    expected = run_onnxruntime(twin.onnx_model, {twin.input_name: x})
    np.testing.assert_allclose(executor.run(x)[0], expected[0], rtol=1e-4, atol=1e-5)
