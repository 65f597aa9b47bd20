"""The TensorFlow frontend, without TensorFlow: frozen fixtures against TensorFlow's recorded
outputs at O0 and O3, layout transposes, refusals and bad files.

The fixtures (GraphDefs and TensorFlow's outputs on fixed inputs) are made by
tools/tensorflow_fixtures/make_fixtures.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto.graph_pb2 import GraphDef

import ge
from ge.compiler import launches
from ge.errors import GeError, InvalidModelError, UnsupportedOperatorError
from ge.frontends.tensorflow import CONVERTERS, load_model_file

FIXTURES = Path(__file__).parent / "fixtures" / "tensorflow"
MODELS = [
    "cnn",
    "depthwise",
    "mlp",
    "transformer",
    "fused_batch_norm",
    "tensor_ops",
    "text_cnn",
    "causal_attention",
    "strided_slices",
    "math_ops",
    "index_ops",
    "lstm",
    "gru_backwards",
    "spatial_ops",
    "scatter_ops",
    "grouped_conv",
    "control_flow",
    "lstm_unlowered",
    "image_resizes",
]
FLOAT = 1  # TensorFlow's DT_FLOAT
INT32 = 3
BFLOAT16 = 14


def _recorded(name: str) -> tuple[list[str], dict[str, np.ndarray], list[np.ndarray]]:
    data = np.load(FIXTURES / f"{name}.npz")
    outputs = [str(o) for o in data["outputs"]]
    feeds = {k.removeprefix("input_"): data[k] for k in data.files if k.startswith("input_")}
    return outputs, feeds, [data[f"output_{i}"] for i in range(len(outputs))]


def _run(graph: ge.Graph, feeds, level: int) -> list[np.ndarray]:
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(graph, optimization_level=level))
    results = executor.run(feeds)
    return [np.asarray(r) for r in (results if isinstance(results, list | tuple) else [results])]


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("name", MODELS)
def test_fixture_matches_tensorflow(name: str, level: int) -> None:
    outputs, feeds, expected = _recorded(name)
    graph = ge.GraphParser().parse_tensorflow(FIXTURES / f"{name}.pb", outputs=outputs)
    results = _run(graph, feeds, level)
    assert len(results) == len(expected)
    for index, (got, want) in enumerate(zip(results, expected, strict=True)):
        assert got.shape == want.shape, outputs[index]
        assert got.dtype == want.dtype, outputs[index]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=outputs[index])


def _transposes(compiled) -> int:
    return sum(
        any(op.name == "ascend.graph.transpose" for op in info.ops) for _, info in launches(compiled.module)
    )


def test_cnn_keeps_one_transpose_at_o3() -> None:
    """Every NHWC conv and pool imports between two transposes, and each elementwise op on their
    results (batch norm's multiply and add, ReLU) runs on the NCHW value with a transpose back
    after it; at O3 only the one that brings the NHWC input to NCHW is left (the global pooling
    reduces the NCHW value)."""
    graph = ge.GraphParser().parse_tensorflow(FIXTURES / "cnn.pb")
    imported = sum(node.op_type == "transpose" for node in graph.nodes)
    assert imported == 2 * (2 + 3 + 2)  # two blocks: conv in and out, 3 elementwise, pool in and out
    compiled = ge.GraphCompiler().compile(graph, optimization_level=3)
    assert _transposes(compiled) == 1
    assert len(graph.inputs) == 1 and len(graph.outputs) == 1


def test_default_outputs_and_load_model_file() -> None:
    """Without `outputs`, the outputs are the node outputs nothing reads (the Identity)."""
    graph = load_model_file(FIXTURES / "mlp.pb")
    assert graph.outputs == ["Identity:0"]
    assert graph.inputs == ["input_0"]


def _node(graph_def: GraphDef, name: str, op: str, inputs=(), **attrs):
    node = graph_def.node.add(name=name, op=op)
    node.input.extend(inputs)
    for key, value in attrs.items():
        if key == "dtype" or key == "T":
            node.attr[key].type = value
        elif key == "shape":
            for size in value:
                node.attr[key].shape.dim.add(size=size)
        elif key == "value":
            array = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=np.float32)
            node.attr[key].tensor.dtype = {"float32": FLOAT, "int32": INT32, "bfloat16": BFLOAT16}[
                array.dtype.name
            ]
            for size in array.shape:
                node.attr[key].tensor.tensor_shape.dim.add(size=size)
            node.attr[key].tensor.tensor_content = array.tobytes()
        elif key == "frame_name":
            node.attr[key].s = value.encode()
        elif isinstance(value, bool):
            node.attr[key].b = value
        elif isinstance(value, float):
            node.attr[key].f = value
    return node


def _small_graph() -> GraphDef:
    """y = LeakyRelu(x * w + b, alpha=0.3) on x of shape [2, 3]."""
    graph_def = GraphDef()
    _node(graph_def, "x", "Placeholder", dtype=FLOAT, shape=[2, 3])
    _node(graph_def, "w", "Const", dtype=FLOAT, value=[1.0, -2.0, 0.5])
    _node(graph_def, "b", "Const", dtype=FLOAT, value=[0.25])
    _node(graph_def, "scaled", "Mul", ["x", "w"], T=FLOAT)
    _node(graph_def, "shifted", "AddV2", ["scaled", "b:0"], T=FLOAT)
    _node(graph_def, "y", "LeakyRelu", ["shifted"], T=FLOAT, alpha=0.3)
    return graph_def


def _small_expected(x: np.ndarray) -> np.ndarray:
    z = x * np.array([1.0, -2.0, 0.5], np.float32) + 0.25
    return np.where(z > 0, z, 0.3 * z)


def test_text_graph_def(tmp_path: Path) -> None:
    path = tmp_path / "small.pbtxt"
    path.write_text(text_format.MessageToString(_small_graph()))
    x = np.array([[1.0, 2.0, -3.0], [-1.0, 0.5, 4.0]], np.float32)
    graph = ge.GraphParser().parse_tensorflow(path)
    assert graph.outputs == ["y:0"]
    np.testing.assert_allclose(_run(graph, {"x": x}, 3)[0], _small_expected(x), rtol=1e-6)


def test_a_constant_over_max_tensor_bytes_is_refused_before_its_values_are_filled() -> None:
    """A Const whose shape claims 2**31 - 1 values but holds 2 (TensorFlow fills the rest with the
    last) is refused by its size, naming it, instead of being filled."""
    graph_def = _small_graph()
    weights = next(n for n in graph_def.node if n.name == "w").attr["value"].tensor
    weights.ClearField("tensor_content")
    weights.tensor_shape.dim[0].size = 2**31 - 1
    weights.float_val.extend([1.0, 2.0])
    with pytest.raises(InvalidModelError, match=r"Const 'w' would hold a tensor of 8,589,934,588 bytes"):
        ge.GraphParser().parse_tensorflow(graph_def.SerializeToString())
    weights.tensor_shape.dim[0].size = 3
    with pytest.raises(InvalidModelError, match=r"Const 'w' .* over max_tensor_bytes = 8"):
        ge.GraphParser(max_tensor_bytes=8).parse_tensorflow(graph_def.SerializeToString())


def test_input_shapes_and_outputs_by_node_name(tmp_path: Path) -> None:
    path = tmp_path / "small.pb"
    path.write_bytes(_small_graph().SerializeToString())
    graph = ge.GraphParser().parse_tensorflow(path, outputs=["shifted"], input_shapes={"x": [4, 3]})
    x = np.arange(12, dtype=np.float32).reshape(4, 3) - 6
    np.testing.assert_allclose(_run(graph, {"x": x}, 0)[0], x * np.array([1.0, -2.0, 0.5]) + 0.25)
    with pytest.raises(InvalidModelError, match="'nothing:0' names no node"):
        ge.GraphParser().parse_tensorflow(path, outputs=["nothing"])
    with pytest.raises(InvalidModelError, match=r"input_shapes names \['z'\]"):
        ge.GraphParser().parse_tensorflow(path, input_shapes={"z": [1]})


def test_unsupported_ops_are_listed_at_once() -> None:
    graph_def = _small_graph()
    _node(graph_def, "fft", "FFT2D", ["y"])
    _node(graph_def, "sorted", "UniqueWithCounts", ["fft"])
    with pytest.raises(UnsupportedOperatorError) as error:
        ge.GraphParser().parse_tensorflow(graph_def.SerializeToString())
    message = str(error.value)
    assert "2 node(s)" in message and "FFT2D at node 'fft'" in message
    assert "UniqueWithCounts at node 'sorted'" in message
    assert [u["node"] for u in error.value.unsupported] == ["fft", "sorted"]


def test_saved_model_without_tensorflow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # as if TensorFlow were not installed
    (tmp_path / "saved_model.pb").write_bytes(b"")
    with pytest.raises(InvalidModelError, match="convert_variables_to_constants_v2"):
        ge.GraphParser().parse_tensorflow(tmp_path)


@pytest.mark.parametrize("files", [[], ["variables.index", "model.pb"]])
def test_directory_without_saved_model_is_refused(tmp_path: Path, files: list[str]) -> None:
    """Only a directory holding saved_model.pb (or .pbtxt) is taken for a SavedModel."""
    for name in files:
        (tmp_path / name).write_bytes(b"")
    with pytest.raises(
        InvalidModelError,
        match="is a directory without saved_model.pb: give a frozen GraphDef .*or a SavedModel directory",
    ):
        ge.GraphParser().parse_tensorflow(tmp_path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.pb", b"", "is empty"),
        ("garbage.pb", b"\xff\xff\xff\xff\x0f\x01", "not a valid TensorFlow binary GraphDef"),
        ("bad.pbtxt", b"node { name: 'x' op: }", "not a valid TensorFlow text GraphDef"),
        ("no_nodes.pb", GraphDef().SerializeToString() + b"\x20\x01", "holds no node"),
    ],
)
def test_bad_files_are_ge_errors(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(GeError, match=message):
        ge.GraphParser().parse_tensorflow(path)


def test_missing_file_and_dangling_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidModelError, match="does not exist"):
        ge.GraphParser().parse_tensorflow(tmp_path / "missing.pb")
    graph_def = _small_graph()
    _node(graph_def, "z", "Relu", ["ghost:0"], T=FLOAT)
    with pytest.raises(InvalidModelError, match="'z' reads 'ghost:0', which no node produces"):
        ge.GraphParser().parse_tensorflow(graph_def.SerializeToString())


def test_registry_covers_the_supported_ops() -> None:
    wanted = """Placeholder PlaceholderWithDefault Const Identity IdentityN NoOp StopGradient Conv2D
    DepthwiseConv2dNative BiasAdd FusedBatchNorm FusedBatchNormV3 MatMul BatchMatMulV2 BatchMatMulV3
    Relu Relu6 LeakyRelu Elu Selu Softplus Sigmoid Tanh Softmax LogSoftmax Erf Add AddV2 AddN Sub Mul
    RealDiv Maximum Minimum Pow SquaredDifference Rsqrt Sqrt Exp Log Neg Square Less Greater Equal Mean
    Sum Max Min Prod Reshape Transpose ConcatV2 Pack Unpack Split SplitV Squeeze ExpandDims
    StridedSlice Slice Pad PadV2 MirrorPad Shape Fill Range Tile GatherV2 Cast MaxPool AvgPool
    ResizeBilinear ResizeNearestNeighbor ArgMax OneHot Select SelectV2 Einsum Conv2DBackpropInput"""
    assert set(wanted.split()) <= set(CONVERTERS)


def test_docs_list_every_converter() -> None:
    text = (Path(__file__).parents[2] / "docs" / "frontends.md").read_text()
    section = text.split("## TensorFlow", 1)[1]
    listed = section.split("**Supported ops**", 1)[1].split("**Refused**", 1)[0]
    assert {name.strip("`") for name in listed.split(": ", 1)[1].rstrip(". \n").split(", ")} == set(
        CONVERTERS
    )


def test_defaults_identity_n_select_and_batch_matmul() -> None:
    """PlaceholderWithDefault is its default unless input_shapes names it; Select's rank-1
    condition picks rows; BatchMatMulV3 with adj_y multiplies by the transpose."""
    graph_def = GraphDef()
    _node(graph_def, "x", "Placeholder", dtype=FLOAT, shape=[2, 3])
    _node(graph_def, "default", "Const", dtype=FLOAT, value=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    _node(graph_def, "d", "PlaceholderWithDefault", ["default"], dtype=FLOAT, shape=[2, 3])
    _node(graph_def, "both", "IdentityN", ["x", "d"])
    _node(graph_def, "sum", "Add", ["both:0", "both:1"], T=FLOAT)
    _node(graph_def, "rows", "Const", dtype=FLOAT, value=[1.0, -1.0])
    _node(graph_def, "zero", "Const", dtype=FLOAT, value=0.0)
    _node(graph_def, "picked", "Greater", ["rows", "zero"], T=FLOAT)
    _node(graph_def, "chosen", "Select", ["picked", "sum", "x"], T=FLOAT)
    _node(graph_def, "product", "BatchMatMulV3", ["chosen", "chosen"], adj_y=True)
    x = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]], np.float32)
    chosen = np.array([[2.0, 0.0, 3.5], [3.0, 0.0, -1.0]])  # row 0 is x + default, row 1 is x
    graph = ge.GraphParser().parse_tensorflow(graph_def.SerializeToString(), outputs=["product"])
    assert graph.inputs == ["x"]
    np.testing.assert_allclose(_run(graph, {"x": x}, 0)[0], chosen @ chosen.T, rtol=1e-6)
    fed = ge.GraphParser().parse_tensorflow(
        graph_def.SerializeToString(), outputs=["sum"], input_shapes={"d": [2, 3]}
    )
    assert fed.inputs == ["x", "d"]
    np.testing.assert_allclose(_run(fed, {"x": x, "d": x}, 3)[0], 2 * x)


def _cubic_resize_axis(x: np.ndarray, size: int, axis: int, half_pixel: bool) -> np.ndarray:
    """Bicubic interpolation along one axis, written from TensorFlow's definition: Keys' kernel
    with a = -0.5 on half-pixel centers, samples outside the input dropped and the weights
    renormalized; else a = -0.75 on `out * in / size`, edge samples repeated."""
    a = -0.5 if half_pixel else -0.75

    def kernel(s: float) -> float:
        s = abs(s)
        if s <= 1:
            return ((a + 2) * s - (a + 3)) * s * s + 1
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a if s < 2 else 0.0

    length = x.shape[axis]
    rows = []
    for out in range(size):
        at = (out + 0.5) * length / size - 0.5 if half_pixel else out * length / size
        first = int(np.floor(at))
        taps = [first - 1, first, first + 1, first + 2]
        weights = [kernel(at - t) for t in taps]
        if half_pixel:
            weights = [w if 0 <= t < length else 0.0 for w, t in zip(weights, taps, strict=True)]
            weights = [w / sum(weights) for w in weights]
        taps = [min(max(t, 0), length - 1) for t in taps]
        rows.append(sum(w * np.take(x, t, axis=axis) for w, t in zip(weights, taps, strict=True)))
    return np.stack(rows, axis=axis)


@pytest.mark.parametrize("half_pixel", [True, False])
def test_resize_bicubic(half_pixel: bool) -> None:
    """ResizeBicubic uses TensorFlow's kernel for each coordinate mode (TensorFlow itself reads
    the weights from a table at 1/1024 steps, which moves its results by up to about 1e-3)."""
    graph_def = GraphDef()
    _node(graph_def, "image", "Placeholder", dtype=FLOAT, shape=[1, 5, 6, 2])
    _node(graph_def, "size", "Const", value=np.array([9, 4], np.int32))
    resize = _node(graph_def, "resized", "ResizeBicubic", ["image", "size"], T=FLOAT)
    resize.attr["half_pixel_centers"].b = half_pixel
    image = np.random.default_rng(3).standard_normal((1, 5, 6, 2)).astype(np.float32)
    expected = _cubic_resize_axis(
        _cubic_resize_axis(image.astype(np.float64), 9, 1, half_pixel), 4, 2, half_pixel
    )
    graph = ge.GraphParser().parse_tensorflow(graph_def.SerializeToString())
    for level in (0, 3):
        np.testing.assert_allclose(_run(graph, {"image": image}, level)[0], expected, rtol=1e-5, atol=1e-5)


def test_a_shape_of_a_dynamic_batch_names_input_shapes() -> None:
    """Keras models freeze with an unknown batch, and a Keras Reshape or Flatten reads it with
    Shape: the refusal shows the unknown dimension as '?' and names the fix, which works."""
    graph_def = GraphDef()
    _node(graph_def, "x", "Placeholder", dtype=FLOAT, shape=[-1, 2, 3])
    _node(graph_def, "shape", "Shape", ["x"], T=FLOAT)
    _node(graph_def, "flat", "Reshape", ["x", "shape"], T=FLOAT)
    with pytest.raises(
        UnsupportedOperatorError,
        match=r"Shape at node 'shape': needs static dimensions, got \[\?, 2, 3\]: give the placeholders' "
        r"shapes in input_shapes \(parse_tensorflow\(\.\.\., input_shapes=\{'x': \[\.\.\.\]\}\)\)",
    ):
        ge.GraphParser().parse_tensorflow(graph_def.SerializeToString())
    graph = ge.GraphParser().parse_tensorflow(graph_def.SerializeToString(), input_shapes={"x": [1, 2, 3]})
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    np.testing.assert_array_equal(_run(graph, {"x": x}, 0)[0], x)


def _loop(limit: str) -> GraphDef:
    """TensorFlow 1's lowered form of `acc = x; i = 0; while i < limit: acc *= x; i += 1`, as
    convert_variables_to_constants_v2 writes a Keras RNN's loop; `limit` names its bound's node."""
    graph_def = GraphDef()
    _node(graph_def, "x", "Placeholder", dtype=FLOAT, shape=[2])
    _node(graph_def, "zero", "Const", value=np.array(0, np.int32))
    _node(graph_def, "one", "Const", value=np.array(1, np.int32))
    frame = {"frame_name": "loop"}
    _node(graph_def, "enter_i", "Enter", ["zero"], **frame)
    _node(graph_def, "enter_acc", "Enter", ["x"], **frame)
    _node(graph_def, "enter_x", "Enter", ["x"], is_constant=True, **frame)
    _node(graph_def, "enter_limit", "Enter", [limit], is_constant=True, **frame)
    _node(graph_def, "enter_one", "Enter", ["one"], is_constant=True, **frame)
    _node(graph_def, "merge_i", "Merge", ["enter_i", "next_i"])
    _node(graph_def, "merge_acc", "Merge", ["enter_acc", "next_acc"])
    _node(graph_def, "less", "Less", ["merge_i", "enter_limit"])
    _node(graph_def, "condition", "LoopCond", ["less"])
    _node(graph_def, "switch_i", "Switch", ["merge_i", "condition"])
    _node(graph_def, "switch_acc", "Switch", ["merge_acc", "condition"])
    _node(graph_def, "body_i", "Identity", ["switch_i:1"])
    _node(graph_def, "body_acc", "Identity", ["switch_acc:1"])
    _node(graph_def, "add", "AddV2", ["body_i", "enter_one"])
    _node(graph_def, "times", "Mul", ["body_acc", "enter_x"])
    _node(graph_def, "next_i", "NextIteration", ["add"])
    _node(graph_def, "next_acc", "NextIteration", ["times"])
    _node(graph_def, "exit_acc", "Exit", ["switch_acc"])
    _node(graph_def, "exit_i", "Exit", ["switch_i"])
    _node(graph_def, "y", "Identity", ["exit_acc"])
    return graph_def


def test_a_lowered_while_loop_is_unrolled() -> None:
    """Three iterations of the loop: x ** 4, each iteration's ops named after it."""
    graph_def = _loop("three")
    _node(graph_def, "three", "Const", value=np.array(3, np.int32))
    graph = ge.GraphParser().parse_tensorflow(graph_def.SerializeToString(), outputs=["y"])
    assert [n.name for n in graph.nodes if n.op_type == "mul"] == ["times/0", "times/1", "times/2"]
    x = np.array([1.5, -2.0], np.float32)
    for level in (0, 3):
        np.testing.assert_allclose(_run(graph, {"x": x}, level)[0], x**4, rtol=1e-6)


def test_a_loop_whose_trip_count_is_not_known_is_refused() -> None:
    graph_def = _loop("limit")
    _node(graph_def, "limit", "Placeholder", dtype=INT32, shape=[])
    with pytest.raises(
        UnsupportedOperatorError,
        match="LoopCond at node 'condition': the condition of while loop 'loop' is not known when the "
        "model is imported",
    ):
        ge.GraphParser().parse_tensorflow(
            graph_def.SerializeToString(), outputs=["y"], input_shapes={"limit": []}
        )


def test_a_loop_merge_without_its_next_iteration_is_refused() -> None:
    """A malformed loop (a Merge fed twice by its entry) is named, not a Python error."""
    graph_def = _loop("three")
    _node(graph_def, "three", "Const", value=np.array(3, np.int32))
    merge = next(n for n in graph_def.node if n.name == "merge_acc")
    merge.input[1] = "enter_acc"
    with pytest.raises(
        UnsupportedOperatorError,
        match="Merge at node 'merge_acc' of while loop 'loop' needs one entry and one NextIteration",
    ):
        ge.GraphParser().parse_tensorflow(graph_def.SerializeToString(), outputs=["y"])


@pytest.mark.parametrize("taken", [True, False])
def test_a_lowered_cond_with_a_known_predicate_takes_its_branch(taken: bool) -> None:
    """tf.cond lowered to Switch and Merge: the branch not taken is dead and builds no op."""
    graph_def = GraphDef()
    _node(graph_def, "x", "Placeholder", dtype=FLOAT, shape=[2])
    _node(graph_def, "p", "Const", value=np.array(1.0 if taken else -1.0, np.float32))
    _node(graph_def, "zero", "Const", value=0.0)
    _node(graph_def, "predicate", "Greater", ["p", "zero"])
    _node(graph_def, "switch", "Switch", ["x", "predicate"])
    _node(graph_def, "double", "Mul", ["switch:1", "switch:1"])
    _node(graph_def, "negate", "Neg", ["switch:0"])
    _node(graph_def, "merge", "Merge", ["negate", "double"])
    graph = ge.GraphParser().parse_tensorflow(graph_def.SerializeToString(), outputs=["merge"])
    kinds = {n.op_type for n in graph.nodes}
    assert ("mul" in kinds, "neg" in kinds) == (taken, not taken)
    x = np.array([3.0, -0.5], np.float32)
    np.testing.assert_allclose(_run(graph, {"x": x}, 0)[0], x * x if taken else -x)


@pytest.mark.parametrize(("outer", "inner"), [(False, True), (True, True), (True, False)])
def test_a_cond_nested_in_a_cond_takes_its_branches(outer: bool, inner: bool) -> None:
    """The inner cond sits in the outer's true branch; when the outer takes the other, both
    inputs of the inner Merge are dead, and so is that Merge (it was refused as "0 live")."""
    graph_def = GraphDef()
    _node(graph_def, "x", "Placeholder", dtype=FLOAT, shape=[2])
    _node(graph_def, "zero", "Const", value=0.0)
    _node(graph_def, "sign_p", "Const", value=1.0 if outer else -1.0)
    _node(graph_def, "sign_q", "Const", value=1.0 if inner else -1.0)
    _node(graph_def, "p", "Greater", ["sign_p", "zero"])
    _node(graph_def, "q", "Greater", ["sign_q", "zero"])
    _node(graph_def, "outer", "Switch", ["x", "p"])
    _node(graph_def, "negate", "Neg", ["outer:0"])
    _node(graph_def, "inner", "Switch", ["outer:1", "q"])
    _node(graph_def, "double", "Add", ["inner:0", "inner:0"])
    _node(graph_def, "square", "Mul", ["inner:1", "inner:1"])
    _node(graph_def, "inner_merge", "Merge", ["double", "square"])
    _node(graph_def, "outer_merge", "Merge", ["negate", "inner_merge"])
    graph = ge.GraphParser().parse_tensorflow(graph_def.SerializeToString(), outputs=["outer_merge"])
    x = np.array([3.0, -0.5], np.float32)
    want = (x * x if inner else x + x) if outer else -x
    np.testing.assert_allclose(_run(graph, {"x": x}, 0)[0], want)


def test_a_cond_on_a_computed_predicate_is_refused() -> None:
    graph_def = GraphDef()
    _node(graph_def, "x", "Placeholder", dtype=FLOAT, shape=[2])
    _node(graph_def, "zero", "Const", value=0.0)
    _node(graph_def, "predicate", "Greater", ["x", "zero"])
    _node(graph_def, "switch", "Switch", ["x", "predicate"])
    _node(graph_def, "merge", "Merge", ["switch:0", "switch:1"])
    with pytest.raises(UnsupportedOperatorError, match="Switch at node 'switch': its predicate is not known"):
        ge.GraphParser().parse_tensorflow(graph_def.SerializeToString(), outputs=["merge"])


def test_a_functional_case_names_the_freezing_that_lowers_it() -> None:
    graph_def = _small_graph()
    _node(graph_def, "switch", "Case", ["y"])
    with pytest.raises(UnsupportedOperatorError, match="Case .*lower_control_flow=True.* at node 'switch'"):
        ge.GraphParser().parse_tensorflow(graph_def.SerializeToString())


def test_a_graph_with_variables_names_freezing() -> None:
    """A tf.function's graph before freezing reads its variables with ReadVariableOp."""
    graph_def = _small_graph()
    _node(graph_def, "read", "ReadVariableOp", ["y"])
    with pytest.raises(
        UnsupportedOperatorError,
        match=r"ReadVariableOp \(a variable: freeze the graph first, with "
        r"convert_variables_to_constants_v2\(concrete_function\)\) at node 'read'",
    ):
        ge.GraphParser().parse_tensorflow(graph_def.SerializeToString())


def test_grouped_conv2d() -> None:
    """A filter [3, 3, 2, 6] on 4 channels (Keras' Conv2D with groups=2): each half of the
    output channels sees its half of the input channels."""
    rng = np.random.default_rng(5)
    filters = rng.standard_normal((3, 3, 2, 6)).astype(np.float32)
    graph_def = GraphDef()
    _node(graph_def, "x", "Placeholder", dtype=FLOAT, shape=[1, 5, 5, 4])
    _node(graph_def, "w", "Const", value=filters)
    conv = _node(graph_def, "conv", "Conv2D", ["x", "w"], T=FLOAT)
    conv.attr["strides"].list.i.extend([1, 1, 1, 1])
    conv.attr["padding"].s = b"VALID"
    x = rng.standard_normal((1, 5, 5, 4)).astype(np.float32)
    expected = np.zeros((1, 3, 3, 6))
    for out in range(6):
        group = out // 3
        for i in range(3):
            for j in range(3):
                window = x[0, i : i + 3, j : j + 3, 2 * group : 2 * group + 2]
                expected[0, i, j, out] = np.sum(window * filters[:, :, :, out])
    graph = ge.GraphParser().parse_tensorflow(graph_def.SerializeToString())
    for level in (0, 3):
        np.testing.assert_allclose(_run(graph, {"x": x}, level)[0], expected, rtol=1e-5, atol=1e-5)


def test_explicit_pads_and_channels_first_windows() -> None:
    """The window of a 2-D and a 3-D op is read from the spatial axes of its data format:
    EXPLICIT pads of an NHWC Conv2D ([N, H, W, C] pairs), a max pool and a Conv3D over NCDHW
    (its channels on axis 1, not the last)."""
    rng = np.random.default_rng(7)
    filters = rng.standard_normal((2, 2, 1, 1)).astype(np.float32)
    graph_def = GraphDef()
    _node(graph_def, "x", "Placeholder", dtype=FLOAT, shape=[1, 4, 4, 1])
    _node(graph_def, "w", "Const", value=filters)
    conv = _node(graph_def, "conv", "Conv2D", ["x", "w"], T=FLOAT)
    conv.attr["strides"].list.i.extend([1, 1, 1, 1])
    conv.attr["padding"].s = b"EXPLICIT"
    conv.attr["explicit_paddings"].list.i.extend([0, 0, 1, 2, 0, 1, 0, 0])
    _node(graph_def, "v", "Placeholder", dtype=FLOAT, shape=[1, 2, 4, 4, 6])
    pool = _node(graph_def, "pool", "MaxPool3D", ["v"], T=FLOAT)
    pool.attr["ksize"].list.i.extend([1, 1, 2, 2, 3])
    pool.attr["strides"].list.i.extend([1, 1, 2, 2, 3])
    pool.attr["padding"].s = b"VALID"
    pool.attr["data_format"].s = b"NCDHW"
    mixing = rng.standard_normal((1, 1, 1, 2, 3)).astype(np.float32)  # [D, H, W, I, O]
    _node(graph_def, "m", "Const", value=mixing)
    conv3d = _node(graph_def, "conv3d", "Conv3D", ["v", "m"], T=FLOAT)
    conv3d.attr["strides"].list.i.extend([1, 1, 1, 1, 1])
    conv3d.attr["padding"].s = b"VALID"
    conv3d.attr["data_format"].s = b"NCDHW"
    outputs = ["conv", "pool", "conv3d"]
    graph = ge.GraphParser().parse_tensorflow(graph_def.SerializeToString(), outputs=outputs)
    x = rng.standard_normal((1, 4, 4, 1)).astype(np.float32)
    v = rng.standard_normal((1, 2, 4, 4, 6)).astype(np.float32)
    padded = np.pad(x[0, :, :, 0], ((1, 2), (0, 1)))
    conv_expected = np.array(
        [[np.sum(padded[i : i + 2, j : j + 2] * filters[:, :, 0, 0]) for j in range(4)] for i in range(6)]
    )
    pool_expected = v.reshape(1, 2, 2, 2, 2, 2, 2, 3).max(axis=(3, 5, 7))
    conv3d_expected = np.einsum("ncdhw,co->nodhw", v, mixing[0, 0, 0])
    for level in (0, 3):
        got_conv, got_pool, got_conv3d = _run(graph, {"x": x, "v": v}, level)
        np.testing.assert_allclose(got_conv, conv_expected[None, :, :, None], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got_pool, pool_expected)
        np.testing.assert_allclose(got_conv3d, conv3d_expected, rtol=1e-5, atol=1e-5)


def test_bfloat16_constants() -> None:
    """bfloat16 constants (Keras' mixed_bfloat16 policy) are read from their raw bytes and from
    half_val, where TensorFlow keeps their bits."""
    graph_def = GraphDef()
    _node(graph_def, "x", "Placeholder", dtype=FLOAT, shape=[3])
    _node(graph_def, "scale", "Const", value=np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16))
    shift = _node(graph_def, "shift", "Const")
    shift.attr["value"].tensor.dtype = BFLOAT16
    shift.attr["value"].tensor.tensor_shape.dim.add(size=3)
    shift.attr["value"].tensor.half_val.append(int(np.array(0.5, ml_dtypes.bfloat16).view(np.uint16)))
    for name, source in (("scale_f", "scale"), ("shift_f", "shift")):
        cast = _node(graph_def, name, "Cast", [source])
        cast.attr["DstT"].type = FLOAT
    _node(graph_def, "scaled", "Mul", ["x", "scale_f"], T=FLOAT)
    _node(graph_def, "y", "AddV2", ["scaled", "shift_f"], T=FLOAT)
    graph = ge.GraphParser().parse_tensorflow(graph_def.SerializeToString(), outputs=["y"])
    x = np.array([2.0, 1.0, -1.0], np.float32)
    np.testing.assert_array_equal(_run(graph, {"x": x}, 0)[0], x * [1.5, -2.25, 3.0] + 0.5)


def test_a_call_of_a_function_the_library_lacks_is_refused() -> None:
    graph_def = _small_graph()
    call = _node(graph_def, "call", "StatefulPartitionedCall", ["y"])
    call.attr["f"].func.name = "missing"
    _node(graph_def, "z", "Relu", ["call"], T=FLOAT)
    with pytest.raises(
        InvalidModelError,
        match="StatefulPartitionedCall at node 'call' calls 'missing', which the graph's library lacks",
    ):
        ge.GraphParser().parse_tensorflow(graph_def.SerializeToString())
