"""Attribute and input values of less common ONNX operators that ONNX's shape inference or
onnxruntime refuse: `ge` refuses each with a one-line `GeError` naming the node, the attribute or
input and the value, never a raw Python exception or an allocation. Yes/no attributes other than
0 and 1 are refused where onnxruntime (which reads only 1 as yes, or refuses them) and ONNX's
reference (any nonzero value is yes) disagree. The valid neighbours at the end compute what
onnxruntime computes, or, where onnxruntime refuses what the spec allows, the spec's value.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from oracle import run_onnxruntime

import ge
import ge.backend
from ge.errors import GeError, InvalidModelError, VerificationError

F = TensorProto.FLOAT
X = np.arange(6, dtype=np.float32).reshape(2, 3)


def one_op(op_type: str, *constants, x=X, opset: int = 17, outputs: int = 1, **attrs) -> onnx.ModelProto:
    """`op_type` at node 'n' over graph input `x` and the constants (initializers; None leaves
    one out)."""
    names = ["" if c is None else f"c{i}" for i, c in enumerate(constants, 1)]
    inits = [
        numpy_helper.from_array(np.asarray(c), f"c{i}") for i, c in enumerate(constants, 1) if c is not None
    ]
    out = [f"y{i}" for i in range(outputs)]
    inputs = [] if x is None else [helper.make_tensor_value_info("x", F, list(x.shape))]
    node = helper.make_node(op_type, [*(["x"] if x is not None else []), *names], out, name="n", **attrs)
    graph = helper.make_graph(
        [node], "g", inputs, [helper.make_empty_tensor_value_info(o) for o in out], initializer=inits
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run(proto: onnx.ModelProto, x: np.ndarray | None = X) -> Callable[[], object]:
    return lambda: ge.backend.prepare(proto).run([] if x is None else [x])


def i64(*values) -> np.ndarray:
    return np.array(values, np.int64)


def range_by_delta() -> onnx.ModelProto:
    start, limit = (numpy_helper.from_array(np.array(v, np.int64), k) for k, v in (("a", 0), ("b", 5)))
    node = helper.make_node("Range", ["a", "b", "d"], ["y"], name="n")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("d", TensorProto.INT64, [])],
        [helper.make_empty_tensor_value_info("y")],
        initializer=[start, limit],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def floats_perm() -> onnx.ModelProto:
    proto = one_op("Transpose")
    proto.graph.node[0].attribute.append(
        onnx.AttributeProto(name="perm", type=onnx.AttributeProto.FLOATS, floats=[1.0, 0.0])
    )
    return proto


SEQUENCE = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 1, 3)
"""A sequence of 2 steps of a batch of 1, 3 features."""
RECURRENT_WEIGHTS = (np.full((1, 16, 3), 0.1, np.float32), np.full((1, 16, 4), 0.1, np.float32))
"""W and R of a one-direction LSTM of hidden size 4."""
THETA = np.array([[[1, 0, 0], [0, 1, 0]]], np.float32)


def split_to_sequence(split: np.ndarray) -> onnx.ModelProto:
    """x split along axis 1 by `split` into a sequence, whose first element is the output."""
    proto = one_op("SplitToSequence", split, axis=1)
    node = proto.graph.node[0]
    node.output[0] = "parts"
    first = numpy_helper.from_array(np.array(0, np.int64), "first")
    proto.graph.initializer.append(first)
    proto.graph.node.append(helper.make_node("SequenceAt", ["parts", "first"], ["y0"], name="at"))
    return proto


COLUMNS = np.ones((1, 4, 4), np.float32)
"""Col2Im's input: 4 columns of blocks of 2 x 2 cells."""
X4 = np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2)

CASES: dict[str, tuple[Callable[[], object], type[GeError], str]] = {
    # Yes/no attributes other than 0 and 1.
    "ReduceMean noop_with_empty_axes=2": (
        run(one_op("ReduceMean", opset=18, noop_with_empty_axes=2)),
        InvalidModelError,
        "ReduceMean at node 'n': attribute 'noop_with_empty_axes' is 2: it must be 0 or 1",
    ),
    "ReduceSum keepdims=2": (
        run(one_op("ReduceSum", i64(1), opset=13, keepdims=2)),
        InvalidModelError,
        "ReduceSum at node 'n': attribute 'keepdims' is 2: it must be 0 or 1",
    ),
    "ArgMax select_last_index=-1": (
        run(one_op("ArgMax", axis=1, select_last_index=-1)),
        InvalidModelError,
        "ArgMax at node 'n': attribute 'select_last_index' is -1: it must be 0 or 1",
    ),
    "CumSum exclusive=2": (
        run(one_op("CumSum", np.array(1, np.int64), exclusive=2)),
        InvalidModelError,
        "CumSum at node 'n': attribute 'exclusive' is 2: it must be 0 or 1",
    ),
    "TopK largest=2": (
        run(one_op("TopK", i64(1), outputs=2, largest=2)),
        InvalidModelError,
        "TopK at node 'n': attribute 'largest' is 2: it must be 0 or 1",
    ),
    "AveragePool ceil_mode=2": (
        run(one_op("AveragePool", x=X4, kernel_shape=[2, 2], ceil_mode=2), X4),
        InvalidModelError,
        "AveragePool at node 'n': attribute 'ceil_mode' is 2: it must be 0 or 1",
    ),
    "MaxPool storage_order=2": (
        run(one_op("MaxPool", x=X4, outputs=2, kernel_shape=[2, 2], storage_order=2), X4),
        InvalidModelError,
        "MaxPool at node 'n': attribute 'storage_order' is 2: it must be 0 or 1",
    ),
    # Inputs that ONNX wants 1-D (or of one value).
    "ReduceL2 axes of shape [1, 1]": (
        run(one_op("ReduceL2", np.array([[1]], np.int64), opset=18)),
        InvalidModelError,
        "ReduceL2 at node 'n': input #1 ('axes') must be 1-D, got shape [1, 1]",
    ),
    "Unsqueeze axes of shape [1, 1]": (
        run(one_op("Unsqueeze", np.array([[0]], np.int64), opset=13)),
        InvalidModelError,
        "Unsqueeze at node 'n': input #1 ('axes') must be 1-D, got shape [1, 1]",
    ),
    "Slice starts of shape [1, 2]": (
        run(one_op("Slice", np.array([[0, 0]], np.int64), np.array([[1, 2]], np.int64))),
        InvalidModelError,
        "Slice at node 'n': input #1 ('starts') must be 1-D, got shape [1, 2]",
    ),
    "Pad pads of shape [1, 4]": (
        run(one_op("Pad", np.array([[1, 1, 1, 1]], np.int64))),
        InvalidModelError,
        "Pad at node 'n': input #1 ('pads') must be 1-D, got shape [1, 4]",
    ),
    "TopK K a scalar": (
        run(one_op("TopK", np.array(1, np.int64), outputs=2)),
        InvalidModelError,
        "TopK at node 'n': input #1 ('K') must be a 1-D tensor of one value, got shape []",
    ),
    "Trilu k of two values": (
        run(one_op("Trilu", i64(1, 2), opset=14)),
        InvalidModelError,
        "Trilu at node 'n': input #1 ('k') must hold one value, got shape [2]",
    ),
    "ConstantOfShape value of shape [1, 1]": (
        run(
            one_op(
                "ConstantOfShape", i64(2), x=None, value=numpy_helper.from_array(np.ones((1, 1), np.float32))
            ),
            None,
        ),
        InvalidModelError,
        "ConstantOfShape at node 'n': attribute 'value' must be a 1-D tensor of one element, got shape",
    ),
    # Axes out of range or named twice.
    "Compress axis 2 of a rank-2 input": (
        run(one_op("Compress", np.array([True, False]), axis=2)),
        InvalidModelError,
        "Compress at node 'n': attribute 'axis' is 2: it is out of range for rank 2",
    ),
    "CenterCropPad axes [0, 0]": (
        run(one_op("CenterCropPad", i64(1, 1), opset=18, axes=[0, 0])),
        InvalidModelError,
        "CenterCropPad at node 'n': attribute 'axes' [0, 0] names an axis twice",
    ),
    "Pad axes [1, 1]": (
        run(one_op("Pad", i64(1, 1, 1, 1), None, i64(1, 1), opset=18)),
        InvalidModelError,
        "Pad at node 'n': input #3 ('axes') [1, 1] names an axis twice",
    ),
    "Unsqueeze axes 3 and -1 (the same)": (
        run(one_op("Unsqueeze", i64(3, -1), opset=13)),
        InvalidModelError,
        "Unsqueeze at node 'n': axes [3, -1] repeat an axis",
    ),
    "GatherElements axis 5": (
        run(one_op("GatherElements", np.zeros((2, 3), np.int64), axis=5)),
        VerificationError,
        "node 'n' (gather_elements): axis 5 is out of range for rank 2",
    ),
    "CumSum axis -3": (
        run(one_op("CumSum", np.array(-3, np.int64))),
        VerificationError,
        "node 'n' (cum_sum): axis -3 is out of range for rank 2",
    ),
    # Constant indices outside the data: refused on import rather than failing the run.
    "Gather index 3 of an axis of 3": (
        run(one_op("Gather", i64(0, 3), axis=1)),
        InvalidModelError,
        "Gather at node 'n': input #1 ('indices') holds 3, outside [-3, 2] for axis 1 of the data [2, 3]",
    ),
    "GatherElements index -4": (
        run(one_op("GatherElements", np.array([[0, -4, 1], [0, 0, 0]], np.int64), axis=1)),
        InvalidModelError,
        "GatherElements at node 'n': input #1 ('indices') holds -4, outside [-3, 2] for axis 1",
    ),
    "GatherND index 3 past batch_dims": (
        run(one_op("GatherND", np.array([[1], [3]], np.int64), batch_dims=1)),
        InvalidModelError,
        "GatherND at node 'n': input #1 ('indices') holds 3, outside [-3, 2] for axis 1 of the data [2, 3]",
    ),
    "ScatterND index 2 of an axis of 2": (
        run(one_op("ScatterND", np.array([[2]], np.int64), np.ones((1, 3), np.float32))),
        InvalidModelError,
        "ScatterND at node 'n': input #1 ('indices') holds 2, outside [-2, 1] for axis 0 of the data [2, 3]",
    ),
    "ScatterElements index 9": (
        run(one_op("ScatterElements", np.array([[9]], np.int64), np.ones((1, 1), np.float32), axis=0)),
        InvalidModelError,
        "ScatterElements at node 'n': input #1 ('indices') holds 9, outside [-2, 1] for axis 0",
    ),
    # Recurrent layers, sampling, detection and quantization.
    "LSTM layout=2": (
        run(one_op("LSTM", *RECURRENT_WEIGHTS, x=SEQUENCE, hidden_size=4, layout=2), SEQUENCE),
        InvalidModelError,
        "LSTM at node 'n': attribute 'layout' is 2: it must be 0 or 1",
    ),
    "LSTM clip=-1": (
        run(one_op("LSTM", *RECURRENT_WEIGHTS, x=SEQUENCE, hidden_size=4, clip=-1.0), SEQUENCE),
        InvalidModelError,
        "LSTM at node 'n': attribute 'clip' is -1.0: it must be positive",
    ),
    "Resize keep_aspect_ratio_policy with scales": (
        run(
            one_op(
                "Resize", None, np.ones(4, np.float32), x=X4, opset=18, keep_aspect_ratio_policy="not_larger"
            ),
            X4,
        ),
        InvalidModelError,
        "Resize at node 'n': keep_aspect_ratio_policy 'not_larger' needs 'sizes', not 'scales'",
    ),
    "NonMaxSuppression boxes of 3 values": (
        run(one_op("NonMaxSuppression", np.ones((1, 1, 2), np.float32), x=X[None]), X[None]),
        InvalidModelError,
        "NonMaxSuppression at node 'n': boxes of shape [1, 2, 3] and scores of shape [1, 1, 2]",
    ),
    "AffineGrid of a negative height": (
        run(one_op("AffineGrid", i64(1, 1, -2, 3), x=THETA, opset=20), THETA),
        InvalidModelError,
        "AffineGrid at node 'n': input #1 ('size') is [1, 1, -2, 3]: its spatial sizes must be positive",
    ),
    "AffineGrid of 10^10 cells": (
        run(one_op("AffineGrid", i64(1, 1, 100_000, 100_000), x=THETA, opset=20), THETA),
        InvalidModelError,
        "AffineGrid at node 'n': its grid of cell centres would hold a tensor of 240,000,000,000 bytes",
    ),
    "InstanceNormalization of a rank-2 input": (
        run(one_op("InstanceNormalization", np.ones(3, np.float32), np.zeros(3, np.float32))),
        InvalidModelError,
        "InstanceNormalization at node 'n': the input must have a rank of 3 or more, got shape [2, 3]",
    ),
    "DequantizeLinear block_size=-1": (
        run(
            one_op(
                "DequantizeLinear",
                np.ones((2, 4), np.int8),
                np.ones((2, 2), np.float32),
                x=None,
                opset=21,
                axis=1,
                block_size=-1,
            ),
            None,
        ),
        InvalidModelError,
        "DequantizeLinear at node 'n': attribute 'block_size' is -1: it must be >= 0",
    ),
    "MaxUnpool index 99 of 16 cells": (
        run(
            one_op(
                "MaxUnpool",
                np.array([[[[0, 3], [8, 99]]]], np.int64),
                x=X4[:, :1],
                kernel_shape=[2, 2],
                strides=[2, 2],
            ),
            X4[:, :1],
        ),
        InvalidModelError,
        "MaxUnpool at node 'n': input #1 ('I') holds 99, outside [0, 15]",
    ),
    "ReverseSequence length -1": (
        run(one_op("ReverseSequence", i64(-1, 2), batch_axis=0, time_axis=1)),
        InvalidModelError,
        "ReverseSequence at node 'n': input #1 ('sequence_lens') holds -1, outside [0, 3] (the 3 steps",
    ),
    "RoiAlign batch index 5 of a batch of 1": (
        run(one_op("RoiAlign", np.array([[0, 0, 1, 1]], np.float32), i64(5), x=X4, opset=16), X4),
        InvalidModelError,
        "RoiAlign at node 'n': input #2 ('batch_indices') holds 5, outside [0, 0]",
    ),
    "Unique axis 5": (
        run(one_op("Unique", X, x=None, opset=11, axis=5), None),
        InvalidModelError,
        "Unique at node 'n': attribute 'axis' is 5: it is out of range for rank 2",
    ),
    "HannWindow size of two values": (
        run(one_op("HannWindow", i64(4, 4), x=None), None),
        InvalidModelError,
        "HannWindow at node 'n': input #0 ('size') must hold one value, got shape [2]",
    ),
    "Col2Im block_shape with a 0": (
        run(one_op("Col2Im", i64(3, 3), i64(0, 2), x=COLUMNS, opset=18), COLUMNS),
        InvalidModelError,
        "Col2Im at node 'n': input #2 ('block_shape') is [0, 2]: each value must be >= 1",
    ),
    "Col2Im strides with a 0": (
        run(one_op("Col2Im", i64(3, 3), i64(2, 2), x=COLUMNS, opset=18, strides=[0, 1]), COLUMNS),
        InvalidModelError,
        "Col2Im at node 'n': attribute 'strides' is [0, 1]: each value must be >= 1",
    ),
    "OneHot depth of shape [1, 1]": (
        run(
            one_op("OneHot", i64(0, 2), np.array([[4]], np.int64), np.array([0, 1], np.float32), x=None), None
        ),
        InvalidModelError,
        "OneHot at node 'n': input #1 ('depth') must be a scalar or 1-D, got shape [1, 1]",
    ),
    "SplitToSequence split of shape [1, 2]": (
        run(split_to_sequence(np.array([[1, 2]], np.int64))),
        InvalidModelError,
        "SplitToSequence at node 'n': input #1 ('split') must be a scalar or 1-D, got shape [1, 2]",
    ),
    # Einsum equations that are not einsum equations (on the second '...', ONNX 1.23's shape
    # inference and onnxruntime 1.32 do not return).
    "Einsum with two '...' in one term": (
        run(one_op("Einsum", opset=12, equation="...i...->i")),
        VerificationError,
        "node 'n' (einsum): '...i...' in '...i...->i' is not a term of letters and one '...'",
    ),
    "Einsum with two arrows": (
        run(one_op("Einsum", opset=12, equation="ij->j->i")),
        VerificationError,
        "node 'n' (einsum): 'j->i' in 'ij->j->i' is not a term of letters and one '...'",
    ),
    "Einsum output letter no input has": (
        run(one_op("Einsum", opset=12, equation="ij->k")),
        VerificationError,
        "node 'n' (einsum): output 'k' of 'ij->k' repeats or invents a letter",
    ),
    "Einsum letter of two sizes": (
        run(one_op("Einsum", opset=12, equation="ii->i")),
        VerificationError,
        "node 'n' (einsum): 'i' is 2 in one place and 3 in another",
    ),
    # Other values out of range.
    "Split num_outputs=0": (
        run(one_op("Split", opset=18, axis=1, num_outputs=0)),
        InvalidModelError,
        "Split at node 'n': attribute 'num_outputs' is 0: it must be >= 1",
    ),
    "ScatterND indices longer than the rank": (
        run(one_op("ScatterND", i64([0, 1, 2]), np.ones(1, np.float32))),
        VerificationError,
        "node 'n' (scatter_nd): indices [1, 3] cannot address data [2, 3]",
    ),
    "DepthToSpace 3 channels in blocks of 2x2": (
        run(one_op("DepthToSpace", x=X4[:, :3], blocksize=2), X4[:, :3]),
        InvalidModelError,
        "DepthToSpace at node 'n': 3 channels do not divide into blocks of 2x2",
    ),
    "Resize with scales and sizes": (
        run(one_op("Resize", None, np.ones(4, np.float32), i64(1, 4, 2, 2), x=X4, opset=13), X4),
        InvalidModelError,
        "Resize at node 'n': Resize needs exactly one of 'scales' and 'sizes'",
    ),
    "Pad cropping more than the dimension": (
        run(one_op("Pad", i64(0, -5, 0, 0))),
        VerificationError,
        "node 'n' (pad): pads [0, -5, 0, 0] crop more than dimension 1 of [2, 3]",
    ),
    "TopK k larger than the axis": (
        run(one_op("TopK", i64(5), outputs=2)),
        VerificationError,
        "node 'n' (top_k): k = 5 exceeds the 3 elements of axis 1",
    ),
    "OneHot depth 0": (
        run(one_op("OneHot", i64(0, 2), np.array(0, np.int64), np.array([0, 1], np.float32), x=None), None),
        VerificationError,
        "node 'n' (one_hot): 'depth' must be positive, got 0",
    ),
    "Range with a zero delta at run time": (
        lambda: ge.backend.prepare(range_by_delta()).run([np.array(0, np.int64)]),
        InvalidModelError,
        "Range at node 'n': input #2 ('delta') is 0: Range needs a nonzero step",
    ),
    "Transpose perm as FLOATS": (
        run(floats_perm()),
        InvalidModelError,
        "Transpose (opset 13) at node 'n': attribute 'perm' must be INTS, got FLOATS",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_operator_value_gets_a_clear_error(case: str) -> None:
    call, error, fragment = CASES[case]
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert fragment in message, message
    assert "\n" not in message


# --------------------------------------------------------------------------------------------
# The valid neighbours of the refused forms
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "proto",
    [
        one_op("ReduceSum", i64(), opset=13, noop_with_empty_axes=1),
        one_op("ReduceMax", opset=18, noop_with_empty_axes=1),
        one_op("ReduceSum", i64(1), opset=13, keepdims=0),
        one_op("Unsqueeze", np.array(0, np.int64), opset=13),  # a 0-D axes, which onnxruntime takes
        one_op("Pad", i64(0, -1, 1, 0)),
        one_op("Pad", i64(0, -2, 0, -1)),
        one_op("Trilu", np.array(2**62, np.int64), opset=14),
        one_op("Trilu", np.array(-(2**62), np.int64), opset=14, upper=0),
        one_op("TopK", i64(0), outputs=2),
        one_op("Split", opset=18, outputs=4, axis=1, num_outputs=4),
        one_op("GatherElements", np.array([[-1, -3, 0], [2, -2, 1]], np.int64), axis=1),
        one_op("GatherND", np.array([[-1], [2]], np.int64), batch_dims=1),
        one_op("ScatterND", np.array([[-2]], np.int64), np.ones((1, 3), np.float32)),
        one_op("AveragePool", x=X4[0], kernel_shape=[3], pads=[1, 1], count_include_pad=2),
    ],
    ids=[
        "noop-empty-axes",
        "noop-no-axes",
        "keepdims-0",
        "unsqueeze-0d-axes",
        "pad-crop-within",
        "pad-crop-whole",
        "trilu-huge-k",
        "trilu-huge-negative-k",
        "topk-0",
        "split-more-parts-than-elements",
        "gather-elements-negative",
        "gather-nd-negative",
        "scatter-nd-negative",
        "count-include-pad-2",
    ],
)
def test_valid_neighbour_computes_what_onnxruntime_computes(proto: onnx.ModelProto) -> None:
    x = X4[0] if proto.graph.node[0].op_type == "AveragePool" else X
    got = ge.backend.prepare(proto).run([x])
    want = run_onnxruntime(proto, {"x": x})
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_cast_ignores_saturate_outside_float8() -> None:
    # ONNX: saturate "only applies for float 8 conversion"; onnxruntime refuses it on others.
    proto = one_op("Cast", opset=19, to=TensorProto.FLOAT16, saturate=0)
    x = np.array([[1.0, 7e4, -1e5], [65504.0, 3.5, -0.25]], np.float32)
    (got,) = ge.backend.prepare(proto).run([x])
    want = np.array([[1.0, np.inf, -np.inf], [65504.0, 3.5, -0.25]], np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


def test_range_takes_bounds_of_shape_one() -> None:
    # onnxruntime refuses them, but ONNX's own AffineGrid function body feeds Range such bounds,
    # and its reference computes them: the sequence they bound.
    proto = one_op("Range", i64(0), i64(5), i64(2), x=None)
    (got,) = ge.backend.prepare(proto).run([])
    np.testing.assert_array_equal(got, np.array([0, 2, 4], np.int64))
