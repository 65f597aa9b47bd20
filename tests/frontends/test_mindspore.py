"""The MindSpore frontend against MindSpore's own outputs, and the files it refuses.

The fixtures (tests/frontends/fixtures/mindspore/) were exported by MindSpore 2.10.0 on CPU with
tools/mindspore_fixtures/make_fixtures.py, which recorded MindSpore's outputs on fixed inputs;
MindSpore itself is not needed here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import ge
from ge.errors import GeError, InvalidModelError, UnsupportedOperatorError
from ge.frontends.mindspore import CONVERTERS, load_model_file
from ge.frontends.mindspore import mind_ir_pb2 as mind_ir

FIXTURES = Path(__file__).parent / "fixtures" / "mindspore"
MODELS = {
    "lenet": "lenet.mindir",
    "resnet": "resnet.mindir",
    "mlp": "mlp_graph.mindir",
    "ops": "ops.mindir",
    "mobile": "mobile.mindir",
    "attention": "attention.mindir",
    "activations": "activations.mindir",
    "tensor_ops": "tensor_ops.mindir",
    "upsample": "upsample.mindir",
    "sequence": "sequence.mindir",
    "norms": "norms.mindir",
    "recurrent": "recurrent.mindir",
    "gru": "gru.mindir",
    "misc": "misc.mindir",
}
OUTPUTS = {"lenet": 1, "resnet": 1, "mlp": 2, "ops": 4, "mobile": 1, "attention": 1, "activations": 26}
OUTPUTS |= {"tensor_ops": 28, "upsample": 7, "sequence": 5, "norms": 6, "recurrent": 3, "gru": 2, "misc": 13}


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_matches_mindspore(name: str, level: int) -> None:
    recorded = np.load(FIXTURES / f"{name}.npz")
    graph = ge.GraphParser().parse_mindspore(FIXTURES / MODELS[name])
    expected = [recorded[f"y{i}"] for i in range(sum(k.startswith("y") for k in recorded.files))]
    assert graph.inputs == ["x"]
    assert len(expected) == OUTPUTS[name]
    assert graph.outputs == [f"output_{i}" for i in range(len(expected))]
    compiled = ge.GraphCompiler().compile(graph, optimization_level=level)
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    outputs = executor.run(recorded["x"])
    assert len(outputs) == len(expected)
    for output, want in zip(outputs, expected, strict=True):
        assert output.shape == want.shape
        assert output.dtype == want.dtype
        np.testing.assert_allclose(output, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("level", [0, 3])
def test_einsum_matches_numpy(level: int) -> None:
    """MindSpore runs Einsum on Ascend and GPU only, so the fixture holds no outputs: numpy's
    einsum of the recorded input is the reference."""
    x = np.load(FIXTURES / "einsum.npz")["x"]
    compiled = ge.GraphCompiler().compile(
        ge.GraphParser().parse_mindspore(FIXTURES / "einsum.mindir"), optimization_level=level
    )
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    batched, swapped, traced = executor.run(x)
    np.testing.assert_allclose(batched, np.einsum("bij,bkj->bik", x, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(swapped, np.swapaxes(x, -1, -2))
    np.testing.assert_allclose(traced, np.einsum("bij,bij->b", x, x), rtol=1e-5)


def test_fixtures_cover_sub_graphs_and_external_data() -> None:
    """The ResNet calls its residual blocks as sub-graphs; the MLP keeps its weights in a file beside it."""
    resnet = _model("resnet.mindir")
    assert len(resnet.functions) == 2
    assert any(
        node.op_type.removeprefix("REF::") in {f.name for f in resnet.functions} for node in resnet.graph.node
    )
    mlp = _model("mlp_graph.mindir")
    assert mlp.graph.parameter and all(p.HasField("external_data") for p in mlp.graph.parameter)
    assert all(not p.raw_data for p in mlp.graph.parameter)


def test_load_model_file_is_parse_mindspore() -> None:
    recorded = np.load(FIXTURES / "lenet.npz")
    graph = load_model_file(FIXTURES / "lenet.mindir", input_shapes={"x": [2, 1, 32, 32]})
    executor = ge.GraphExecutor()
    executor.load_graph(graph)
    outputs = executor.run(recorded["x"])
    np.testing.assert_allclose(outputs[0], recorded["y0"], rtol=1e-4, atol=1e-5)
    with pytest.raises(GeError, match="outputs .* not supported for MindSpore"):
        load_model_file(FIXTURES / "lenet.mindir", outputs=["y"])


def test_input_shapes_are_checked() -> None:
    with pytest.raises(
        InvalidModelError,
        match="input 'x' axis 0 is 2 in the model, given 8; a MINDIR model's shapes are fixed when it "
        "is exported: export the network again with an input of the shape wanted",
    ):
        ge.GraphParser().parse_mindspore(FIXTURES / "lenet.mindir", input_shapes={"x": [8, 1, 32, 32]})
    with pytest.raises(InvalidModelError, match="names image, which the model does not have"):
        ge.GraphParser().parse_mindspore(FIXTURES / "lenet.mindir", input_shapes={"image": [2, 1, 32, 32]})


def test_unsupported_primitives_are_listed_at_once(tmp_path: Path) -> None:
    """LeNet's 3 ReLU nodes and 2 MaxPool nodes, given primitives ge lacks, are named in one error."""
    model = _model("lenet.mindir")
    renamed = {"ReLU": "LRN", "MaxPool": "ROIAlign"}
    assert not set(renamed.values()) & set(CONVERTERS)
    for primitive in model.primitives:
        primitive.op_type = renamed.get(primitive.op_type, primitive.op_type)
    path = tmp_path / "lenet.mindir"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(UnsupportedOperatorError) as raised:
        ge.GraphParser().parse_mindspore(path)
    error = raised.value
    assert error.category == "operator"
    assert sorted(u["op_type"] for u in error.unsupported) == ["LRN"] * 3 + ["ROIAlign"] * 2
    assert str(error).startswith("5 node(s) use MindSpore primitives ge does not support (LRN, ROIAlign)")


@pytest.mark.parametrize("attribute", ["group", "pad_list"])
def test_an_attribute_ge_cannot_read_is_refused_naming_it(tmp_path: Path, attribute: str) -> None:
    """An attribute of a kind the reader does not decode (UNDEFINED here) stands in as an
    unreadable value; a converter asking for it gets an InvalidModelError naming the node and the
    attribute, not a TypeError from the number it expected."""
    model = _model("lenet.mindir")
    conv = next(p for p in model.primitives if p.op_type == "Conv2D")
    next(a for a in conv.attribute if a.name == attribute).type = mind_ir.AttributeProto.UNDEFINED
    path = tmp_path / "lenet.mindir"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(
        InvalidModelError, match=rf"Conv2D at node '.*': attribute '{attribute}' holds a value of a kind"
    ):
        ge.GraphParser().parse_mindspore(path)


@pytest.mark.parametrize("content", [b"\x08\x01", b""])
def test_air_is_refused(tmp_path: Path, content: bytes) -> None:
    """A .air file that is not MINDIR by content is refused as AIR, an empty one too."""
    path = tmp_path / "net.air"
    path.write_bytes(content)
    with pytest.raises(
        InvalidModelError,
        match="'.*net.air' is not a MINDIR model; as an AIR model .*AIR is exported on Ascend hardware.*"
        "export the network as MINDIR",
    ):
        ge.GraphParser().parse_mindspore(path)


def test_mindir_named_air_is_read(tmp_path: Path) -> None:
    """The content decides: a MINDIR model under a .air name is imported as MINDIR."""
    recorded = np.load(FIXTURES / "lenet.npz")
    path = tmp_path / "lenet.air"
    shutil.copy(FIXTURES / "lenet.mindir", path)
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphParser().parse_mindspore(path))
    np.testing.assert_allclose(executor.run(recorded["x"])[0], recorded["y0"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"\xff\xff\xff\xff\xff", "is not a MINDIR model"),
        (b"\x12\x09MindSpore", "it has no graph"),  # producer_name only
    ],
)
def test_bad_files_are_refused(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.mindir"
    path.write_bytes(content)
    with pytest.raises(InvalidModelError, match=message):
        ge.GraphParser().parse_mindspore(path)


def test_onnx_model_is_refused(tmp_path: Path) -> None:
    """An ONNX model parses as protobuf with the MINDIR classes; its producer gives it away."""
    path = tmp_path / "model.mindir"
    shutil.copy(Path(ge.__file__).parent / "models" / "tiny_cnn.onnx", path)
    with pytest.raises(InvalidModelError, match="made by 'ge', not MindSpore.*parse_onnx"):
        ge.GraphParser().parse_mindspore(path)


@pytest.mark.parametrize("producer", ["", "pytorch"])
def test_onnx_model_of_any_producer_is_refused(tmp_path: Path, producer: str) -> None:
    """An ONNX model with no producer (or another one) is not taken for MINDIR: its nodes would
    read as nodes without a primitive."""
    model = onnx.load(Path(ge.__file__).parent / "models" / "tiny_cnn.onnx")
    model.producer_name = producer
    path = tmp_path / "model.mindir"
    onnx.save(model, path)
    made_by = f"was made by '{producer}'" if producer else "names no producer"
    with pytest.raises(
        InvalidModelError, match=f"'.*model.mindir' is not a MINDIR model \\({made_by}, not MindSpore"
    ):
        ge.GraphParser().parse_mindspore(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda model: model.graph.ClearField("name"), "a graph has no name"),
        (lambda model: model.graph.node[0].ClearField("op_type"), "1 node.s. of graph '.*' have no op_type"),
    ],
)
def test_malformed_mindir_is_refused(tmp_path: Path, change, message: str) -> None:
    model = _model("lenet.mindir")
    change(model)
    path = tmp_path / "lenet.mindir"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(InvalidModelError, match=f"'.*lenet.mindir' is not a MINDIR model \\({message}\\)"):
        ge.GraphParser().parse_mindspore(path)


def test_truncated_file_is_refused(tmp_path: Path) -> None:
    data = (FIXTURES / "lenet.mindir").read_bytes()
    path = tmp_path / "cut.mindir"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InvalidModelError, match="cut.mindir"):
        ge.GraphParser().parse_mindspore(path)


def test_missing_paths_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidModelError, match="does not exist"):
        ge.GraphParser().parse_mindspore(tmp_path / "none.mindir")
    with pytest.raises(InvalidModelError, match="is a directory"):
        ge.GraphParser().parse_mindspore(tmp_path)


def test_missing_external_data_is_refused(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "mlp_graph.mindir", tmp_path)
    with pytest.raises(InvalidModelError, match="'mlp_variables/data_0' of tensor .* does not exist"):
        ge.GraphParser().parse_mindspore(tmp_path / "mlp_graph.mindir")


def test_external_data_outside_the_folder_is_refused(tmp_path: Path) -> None:
    model = _model("mlp_graph.mindir")
    model.graph.parameter[0].external_data.location = "../elsewhere/data_0"
    path = tmp_path / "mlp_graph.mindir"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(InvalidModelError, match="outside the model's folder"):
        ge.GraphParser().parse_mindspore(path)


def test_short_external_data_is_refused(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "mlp_graph.mindir", tmp_path)
    (tmp_path / "mlp_variables").mkdir()
    (tmp_path / "mlp_variables" / "data_0").write_bytes(bytes(100))
    with pytest.raises(InvalidModelError, match="ends before offset"):
        ge.GraphParser().parse_mindspore(tmp_path / "mlp_graph.mindir")


def test_undefined_value_is_refused(tmp_path: Path) -> None:
    model = _model("lenet.mindir")
    node = next(n for n in model.graph.node if n.op_type.startswith("REF::") and n.input)
    node.input[0] = "nowhere"
    path = tmp_path / "lenet.mindir"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(InvalidModelError, match="uses 'nowhere', which no node, input or parameter defines"):
        ge.GraphParser().parse_mindspore(path)


def test_import_needs_no_mindspore() -> None:
    code = "import sys, ge, ge.frontends.mindspore; assert 'mindspore' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_docs_list_every_primitive() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "frontends.md").read_text()
    listed = docs.split("<!-- mindspore-primitives -->\n", 1)[1].split("\n<!--", 1)[0]
    assert listed == ", ".join(f"`{name}`" for name in sorted(CONVERTERS))


def _model(name: str) -> mind_ir.ModelProto:
    model = mind_ir.ModelProto()
    model.ParseFromString((FIXTURES / name).read_bytes())
    return model
