"""Prepared implementations read their op once: after `prepare`, computing reads no property or
attribute of the op and calls nothing of xDSL (`tests.sealed.reading_no_ir`), and gives what
`evaluate` (which prepares and computes in one call, and which the op tests and ONNX's suite hold
to onnxruntime and ONNX's outputs) gives. The cases set the properties each op reads
to values other than their defaults.

Each case is a one-node ONNX model, imported (specialized on its inputs) and run op by op: an op
whose implementation is `Prepared` is prepared, then computed with properties and attributes that
raise when read.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from ge.dialects import graph as ops
from ge.dtypes import numpy_dtype
from ge.frontends.onnx import import_onnx
from ge.semantics import IMPLEMENTATIONS, evaluate, run_block, widen
from ge.semantics.base import Prepared, prepare
from ge.weights import WeightStore
from tests.sealed import reading_no_ir


def one_node(
    op_type: str,
    opset: int,
    inputs: list[np.ndarray | None],
    known: tuple[int, ...] = (),
    outputs: int = 1,
    **attrs,
) -> onnx.ModelProto:
    """A model of one node; inputs listed in `known` are initializers, `None` leaves one out."""
    names = [f"in{i}" if a is not None else "" for i, a in enumerate(inputs)]
    graph_inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for i, (name, a) in enumerate(zip(names, inputs, strict=True))
        if a is not None and i not in known
    ]
    initializers = [numpy_helper.from_array(inputs[i], names[i]) for i in known]
    results = [f"out{i}" for i in range(outputs)]
    graph = helper.make_graph(
        [helper.make_node(op_type, names, results, **attrs)],
        op_type,
        graph_inputs,
        [helper.make_empty_tensor_value_info(n) for n in results],
        initializer=initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def run_sealed(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> set[type[Operation]]:
    """Runs `model` on `feeds` op by op, computing each `Prepared` op sealed and checking it
    against `evaluate`; the classes of the ops so computed."""
    graph = import_onnx(model, feeds)
    (function,) = [op for op in graph.module.body.block.ops if isinstance(op, FuncOp)]
    block = function.body.block
    args = [
        np.asarray(a, numpy_dtype(arg.type.element_type))
        for a, arg in zip(feeds.values(), block.args, strict=True)
    ]
    sealed: set[type[Operation]] = set()

    def run_op(op: Operation, operands: list[np.ndarray], weights: WeightStore | None) -> list[np.ndarray]:
        want = evaluate(op, operands, weights)
        implementation = IMPLEMENTATIONS.get(type(op))
        if isinstance(implementation, Prepared):
            compute = prepare(implementation, op)
            with reading_no_ir([op]):
                got = compute(*(widen(a) for a in operands))
            for g, w in zip(got if isinstance(got, tuple) else (got,), want, strict=True):
                np.testing.assert_array_equal(g.astype(w.dtype), w)
            sealed.add(type(op))
        return want

    run_block(block, args, graph.weights, run_op)
    return sealed


def floats(*shape: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return np.random.default_rng(len(shape)).uniform(low, high, shape).astype(np.float32)


def ints(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def strings(*values: str) -> np.ndarray:
    return np.array(values, dtype=object)


def case(op_type: str, opset: int, inputs, known=(), outputs=1, kind=None, **attrs) -> Any:
    """A one-node model (see `one_node`), its feeds, and the graph op it becomes (`kind`, by
    default `<op_type>Op`)."""
    model = one_node(op_type, opset, inputs, known, outputs, **attrs)
    feeds = {f"in{i}": a for i, a in enumerate(inputs) if a is not None and i not in known}
    kind = kind or getattr(ops, f"{op_type}Op")
    return pytest.param(kind, model, feeds, id=",".join([op_type, *(f"{k}={v}" for k, v in attrs.items())]))


X = floats(1, 2, 4, 5)
GRID = floats(1, 3, 3, 2, low=-1.3, high=1.3)
CROP = np.array([0, 0, 0.1, -0.2, 1, 1, 0.9, 1.3], np.float32)
ROIS = np.array([[0, 0, 5, 5], [1, 2, 9, 7], [3, 1, 4, 8]], np.float32)
BOXES = np.array([[[0.5, 0.5, 1, 1], [0.6, 0.5, 1, 1], [2, 2, 1, 1], [2.1, 2, 1.2, 1]]], np.float32)
SCORES = floats(1, 2, 4, low=0, high=1)
SCALAR = np.array([0.3], np.float32)
INDICES = np.array([[1, 1], [-1, 0]], np.int64)

CASES = [
    case("Resize", 19, [X, None, np.array([1, 1, 2, 1.5], np.float32)], (2,),
         mode="nearest", nearest_mode="round_prefer_ceil", coordinate_transformation_mode="asymmetric"),
    case("Resize", 19, [X, None, np.array([1, 1, 0.5, 0.8], np.float32)], (2,),
         mode="cubic", antialias=1, cubic_coeff_a=-0.5, exclude_outside=1),
    case("Resize", 19, [X, CROP, None, ints(1, 2, 5, 6)], (1, 3),
         mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=2.5),
    case("GridSample", 20, [X, GRID], mode="cubic", padding_mode="border", align_corners=1),
    case("GridSample", 20, [X, GRID], mode="nearest", padding_mode="reflection"),
    case("RoiAlign", 16, [floats(2, 2, 6, 6), ROIS, ints(0, 1, 0)],
         mode="max", output_height=2, output_width=3, sampling_ratio=2, spatial_scale=0.5),
    case("StringConcat", 20, [strings("a", "bc"), strings("de", "")]),
    case("StringSplit", 20, [strings("a-b-c", "d", "")], outputs=2, delimiter="-", maxsplit=1),
    case("StringNormalizer", 10, [strings("a", "B", "c", "b")],
         stopwords=["b"], case_change_action="UPPER", is_case_sensitive=0),
    case("RegexFullMatch", 20, [strings("abc", "bca", "a")], pattern="a.*"),
    case("NonMaxSuppression", 11, [BOXES, SCORES, ints(2), SCALAR, SCALAR], (2, 3, 4), center_point_box=1),
    case("Gather", 13, [floats(3, 4), ints(-1, 0, 2)], axis=-1),
    case("GatherElements", 13, [floats(3, 4), INDICES], axis=-2),
    case("GatherND", 13, [floats(2, 3, 4), INDICES[:, None]], batch_dims=1),
    case("ScatterElements", 18, [floats(2, 4), INDICES, floats(2, 2)], axis=-1, reduction="add"),
    case("ScatterND", 18, [floats(3, 4), ints(1, 1)[:, None], floats(2, 4)], reduction="mul"),
    case("OneHot", 11, [INDICES, ints(5), np.array([0, 3], np.float32)], (1, 2), axis=-2),
    case("Trilu", 14, [floats(3, 4), ints(1)], (1,), upper=0),
    case("ReverseSequence", 10, [floats(4, 3, 2), ints(4, 1, 2)], time_axis=0, batch_axis=1),
    case("NonZero", 13, [np.array([[0, 1], [2, 0]], np.float32)]),
    case("Unique", 11, [np.array([[2, 1], [0, 3], [2, 1]], np.float32)], outputs=4, axis=0, sorted=0),
    case("Cast", 21, [floats(2, 3, low=-300, high=300)], to=TensorProto.INT8),
    case("Cast", 21, [floats(2, 3, low=-1e5, high=1e5)], to=TensorProto.FLOAT8E5M2, saturate=0),
    case("Cast", 24, [floats(2, 3)], to=TensorProto.FLOAT8E8M0, round_mode="nearest"),
    case("Cast", 21, [floats(2, 3)], to=TensorProto.STRING),
    case("BitCast", 26, [floats(2, 3)], to=TensorProto.INT32),
    case("Mod", 13, [floats(2, 3), floats(2, 3, low=0.5, high=1)], fmod=1),
    case("IsInf", 20, [np.array([np.inf, -np.inf, 1], np.float32)], detect_positive=0),
    case("Gelu", 20, [floats(2, 3)], approximate="tanh"),
    case("LeakyRelu", 16, [floats(2, 3)], alpha=0.3),
    case("Selu", 6, [floats(2, 3)], alpha=1.5, gamma=0.5),
    case("Shrink", 9, [floats(2, 3)], bias=0.25, lambd=0.75),
    case("Transpose", 13, [X], perm=[2, 0, 3, 1]),
    case("Split", 18, [floats(2, 7), ints(3, 4)], (1,), outputs=2, axis=-1),
    case("Concat", 13, [floats(2, 3), floats(2, 1)], axis=-1),
    case("Slice", 13, [floats(4, 6), ints(3, 1), ints(0, 6), ints(0, -1), ints(-1, 2)], (1, 2, 3, 4)),
    case("Pad", 18, [floats(2, 3), ints(1, -1, 0, 2)], (1,), mode="reflect"),
    case("Tile", 13, [floats(2, 3), ints(2, 1)], (1,)),
    case("Expand", 13, [floats(3, 1), ints(2, 3, 4)], (1,)),
    case("Flatten", 13, [X], axis=-2),
    case("Reshape", 14, [X, ints(4, -1)], (1,)),
    case("ReduceSum", 13, [X, ints(1, -1)], (1,), keepdims=0),
    case("ArgMax", 13, [np.array([[1, 3, 3], [2, 2, 0]], np.float32)], axis=-1, select_last_index=1),
    case("CumSum", 14, [floats(2, 4), np.array(-1, np.int64)], (1,), exclusive=1, reverse=1),
    case("TopK", 11, [floats(3, 5), ints(2)], (1,), outputs=2, axis=0, largest=0),
    case("Softmax", 13, [X], axis=1),
    case("LogSoftmax", 13, [X], axis=-2),
    case("Hardmax", 13, [X], axis=2),
    case("LayerNormalization", 17, [X, floats(4, 5), floats(4, 5)], (1, 2), axis=-2, epsilon=1e-3,
         kind=ops.LayerNormOp),
    case("RMSNormalization", 23, [X, floats(5)], (1,), epsilon=0.1, kind=ops.RMSNormOp),
    case("GroupNormalization", 21, [floats(1, 4, 3, 3), floats(4), floats(4)], (1, 2), num_groups=2,
         epsilon=0.5, kind=ops.GroupNormOp),
    case("MeanVarianceNormalization", 13, [X], axes=[0, 3], kind=ops.MeanVarianceNormOp),
    case("LpNormalization", 1, [X], axis=2, p=1, kind=ops.LpNormOp),
    case("LRN", 13, [floats(1, 5, 2, 2)], size=3, alpha=0.01, beta=0.5, bias=2.0),
    case("Gemm", 13, [floats(4, 3), floats(5, 4), floats(5)], (1, 2), transA=1, transB=1, alpha=0.5,
         beta=2.0),
    case("Einsum", 12, [floats(2, 3), floats(3, 4)], equation="ij,jk->ik"),
    case("Conv", 11, [floats(1, 4, 9), floats(6, 2, 3)], (1,), group=2, pads=[2, 1], strides=[2],
         dilations=[2], kind=ops.Conv2DOp),
    case("Conv", 11, [floats(1, 2, 4, 4, 4), floats(3, 2, 2, 2, 2)], (1,), pads=[1, 0, 1, 0, 1, 0],
         kind=ops.Conv3DOp),
    case("ConvTranspose", 11, [floats(1, 2, 3, 3), floats(2, 3, 3, 3)], (1,), strides=[2, 2],
         output_padding=[1, 0], pads=[1, 1, 0, 0], kind=ops.ConvTranspose2DOp),
    case("BatchNormalization", 15, [X, floats(2), floats(2), floats(2), floats(2, low=0.5)],
         (1, 2, 3, 4), epsilon=0.25, kind=ops.BatchNormOp),
    case("MaxPool", 12, [X], kernel_shape=[2, 2], strides=[1, 2], pads=[1, 0, 0, 1], ceil_mode=1),
    case("MaxPool", 12, [X], outputs=2, kernel_shape=[3, 2], kind=ops.MaxPoolWithArgmaxOp),
    case("AveragePool", 19, [X], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1,
         dilations=[1, 2], kind=ops.AvgPoolOp),
    case("LpPool", 18, [X], kernel_shape=[2, 3], p=3),
    case("GlobalLpPool", 2, [X], p=1),
    case("RNN", 14, [floats(3, 2, 4), floats(2, 5, 4), floats(2, 5, 5)], (1, 2), hidden_size=5,
         direction="bidirectional", activations=["Affine", "LeakyRelu"], activation_alpha=[0.5, 0.1],
         activation_beta=[0.2], clip=1.5),
    case("GRU", 14, [floats(3, 2, 4), floats(1, 15, 4), floats(1, 15, 5)], (1, 2), outputs=2,
         hidden_size=5, direction="reverse", linear_before_reset=1),
    case("LSTM", 14, [floats(3, 2, 4), floats(1, 20, 4), floats(1, 20, 5)], (1, 2), outputs=3,
         hidden_size=5, input_forget=1, activations=["HardSigmoid", "Tanh", "Softsign"]),
    case("Attention", 23, [floats(1, 2, 3, 4), floats(1, 2, 5, 4), floats(1, 2, 5, 4)], is_causal=1,
         scale=0.3, softcap=2.0),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "model", "feeds"), CASES)
def test_prepared_op_reads_no_ir(
    kind: type[Operation], model: onnx.ModelProto, feeds: dict[str, np.ndarray]
) -> None:
    assert kind in run_sealed(model, feeds)
