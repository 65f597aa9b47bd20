"""Gears (atc's dynamic_batch_size, dynamic_image_size, dynamic_dims): one compiled model with a
plan per gear and one shared weight blob, each gear checked against onnxruntime, saved and loaded
as a version 3 `.ge` file, and every refusal of the options' rules."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge
import ge.passes.stream.plan_memory as plan_memory
from ge.artifact import FORMAT_VERSION, read_manifest
from ge.dialects.stream import WeightOp
from ge.gears import BatchPadding, GearChoice

RTOL, ATOL = 1e-4, 1e-5


def onnx_model(nodes, inputs, outputs, weights: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g", inputs, outputs, initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def small_cnn(height: int | str = 8, width: int | str = 8) -> onnx.ModelProto:
    """conv - relu - maxpool - conv - global average pool - gemm, batch `N` symbolic."""
    rng = np.random.default_rng(7)
    weights = {
        "w1": (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32),
        "b1": (rng.standard_normal(8) * 0.1).astype(np.float32),
        "w2": (rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32),
        "fc": (rng.standard_normal((10, 16)) * 0.3).astype(np.float32),
        "fcb": (rng.standard_normal(10) * 0.1).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["y"], transB=1),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, height, width])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])
    return onnx_model(nodes, [x], [y], weights)


def small_bert() -> onnx.ModelProto:
    """Token ids and an additive mask, both [batch, seq]: an embedding, a projection, and one
    attention step `softmax(h h^T + mask) h`."""
    rng = np.random.default_rng(11)
    weights = {
        "table": (rng.standard_normal((50, 16)) * 0.5).astype(np.float32),
        "proj": (rng.standard_normal((16, 16)) * 0.3).astype(np.float32),
        "bias": (rng.standard_normal(16) * 0.1).astype(np.float32),
        "axis1": np.array([1], np.int64),
    }
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["emb"]),
        helper.make_node("MatMul", ["emb", "proj"], ["m"]),
        helper.make_node("Add", ["m", "bias"], ["h"]),
        helper.make_node("Transpose", ["h"], ["ht"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["h", "ht"], ["scores"]),
        helper.make_node("Unsqueeze", ["mask", "axis1"], ["mask3"]),
        helper.make_node("Add", ["scores", "mask3"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "h"], ["y"]),
    ]
    inputs = [
        helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"]),
        helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "seq"]),
    ]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 16])
    return onnx_model(nodes, inputs, [y], weights)


def compile_gears(
    model: onnx.ModelProto, imported_at: dict[str, list[int]] | None = None, **options: object
) -> ge.CompiledModel:
    """The model compiled with gears, each gear imported again at its shapes; the graph handed to
    the compiler is imported at `imported_at` (default: the shapes the model declares)."""
    parser = ge.GraphParser()
    return ge.GraphCompiler().compile(
        parser.parse_onnx(model, input_shapes=imported_at),
        specialize=lambda shapes: parser.parse_onnx(model, input_shapes=shapes),
        **options,
    )


def compile_at(model: onnx.ModelProto, shapes: dict[str, list[int]]) -> ge.CompiledModel:
    """The model compiled alone at one shape, as before gears."""
    return ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(model, input_shapes=shapes))


def run_both(model: onnx.ModelProto, compiled: ge.CompiledModel, feeds: dict[str, np.ndarray]) -> None:
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    expected = onnxruntime.InferenceSession(model.SerializeToString()).run(None, feeds)
    for got, want in zip(executor.run(feeds), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.fixture(scope="module")
def cnn_gears() -> ge.CompiledModel:
    return compile_gears(small_cnn(), dynamic_batch_size=[1, 4, 8])


def test_dynamic_batch_size_makes_a_gear_per_batch(cnn_gears: ge.CompiledModel) -> None:
    assert [gear.input_shapes for gear in cnn_gears.gears] == [
        {"x": (1, 3, 8, 8)},
        {"x": (4, 3, 8, 8)},
        {"x": (8, 3, 8, 8)},
    ]
    assert [(s.name, s.shape) for s in cnn_gears.inputs] == [("x", (-1, 3, 8, 8))]
    assert [(s.name, s.shape) for s in cnn_gears.outputs] == [("y", (-1, 10))]


def test_gears_share_one_weight_blob_of_one_shapes_size(cnn_gears: ge.CompiledModel) -> None:
    alone = compile_at(small_cnn(), {"x": [1, 3, 8, 8]})
    assert len(cnn_gears.weight_blob) == len(alone.weight_blob)
    assert cnn_gears.weight_blob == alone.weight_blob
    for gear in cnn_gears.gear_models:
        assert gear.model.weight_size.value.data == len(cnn_gears.weight_blob)


def test_the_arena_is_the_largest_gears(cnn_gears: ge.CompiledModel) -> None:
    arenas = [compile_at(small_cnn(), {"x": [b, 3, 8, 8]}).memory.arena_bytes for b in (1, 4, 8)]
    assert [m.arena_bytes for m in cnn_gears.gear_memory()] == arenas
    assert cnn_gears.memory.arena_bytes == max(arenas)
    assert arenas[0] < arenas[2]  # the batch of 8 needs more than the batch of 1


@pytest.mark.parametrize("batch", [1, 4, 8])
def test_each_batch_gear_matches_onnxruntime(cnn_gears: ge.CompiledModel, batch: int) -> None:
    x = np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)
    run_both(small_cnn(), cnn_gears, {"x": x})


def test_one_executor_runs_every_gear_in_turn(cnn_gears: ge.CompiledModel) -> None:
    executor = ge.GraphExecutor()
    executor.load_graph(cnn_gears)
    session = onnxruntime.InferenceSession(small_cnn().SerializeToString())
    for batch in (8, 1, 8, 4):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)
        (got,) = executor.run(x)
        np.testing.assert_allclose(got, session.run(None, {"x": x})[0], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("batch", [2, 3, 5, 7])
def test_a_batch_between_gears_runs_padded_on_the_next_larger(
    cnn_gears: ge.CompiledModel, batch: int
) -> None:
    # every op of the CNN computes each sample alone, so the batch pads up to gear 4 or 8
    assert cnn_gears.batch_padding == BatchPadding((0,))
    assert cnn_gears.select_gear(np.zeros((batch, 3, 8, 8), np.float32)) == GearChoice(
        1 if batch <= 4 else 2, batch
    )
    x = np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)
    run_both(small_cnn(), cnn_gears, {"x": x})


def test_a_shape_of_no_gear_is_refused_listing_the_gears(cnn_gears: ge.CompiledModel) -> None:
    executor = ge.GraphExecutor()
    executor.load_graph(cnn_gears)
    with pytest.raises(ge.RuntimeInputError) as error:
        executor.run(np.zeros((9, 3, 8, 8), np.float32))  # above every gear
    assert str(error.value) == (
        "the inputs' shapes x[9,3,8,8] are none of the model's gears: x[1,3,8,8] | x[4,3,8,8] | "
        "x[8,3,8,8]; run one of those shapes (batch 9 exceeds the largest gear's (8)), or compile a "
        "gear for this one"
    )
    with pytest.raises(ge.RuntimeInputError) as error:
        executor.run(np.zeros((2, 3, 6, 6), np.float32))  # a size every gear has static
    assert str(error.value) == (
        "input 'x' axis 2: declared 8 by every gear, 6 given (shape [2, 3, 6, 6]; gears x[1,3,8,8] | "
        "x[4,3,8,8] | x[8,3,8,8])"
    )


def test_a_batch_is_not_padded_where_an_op_mixes_samples() -> None:
    # softmax over the batch axis: a padded sample would change every real one
    nodes = [helper.make_node("Softmax", ["x"], ["y"], axis=0)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    compiled = compile_gears(onnx_model(nodes, [x], [y], {}), dynamic_batch_size=[2, 4])
    assert compiled.batch_padding is not None and compiled.batch_padding.output_axes is None
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    with pytest.raises(
        ge.RuntimeInputError, match=r"x\[3,4\] .* not padded to a larger gear: 'ascend.graph.softmax'"
    ):
        executor.run(np.zeros((3, 4), np.float32))


def test_dynamic_dims_fill_every_dynamic_dimension_in_order() -> None:
    model = small_bert()
    # The importer cannot unsqueeze a dynamic shape: the graph is imported at the first gear, and
    # input_shape marks the dimensions the gears fill.
    compiled = compile_gears(
        model,
        {"ids": [1, 8], "mask": [1, 8]},
        input_shape={"ids": [-1, -1], "mask": [-1, -1]},
        input_format="ND",
        dynamic_dims=[[1, 8, 1, 8], [2, 16, 2, 16]],
    )
    assert [gear.input_shapes for gear in compiled.gears] == [
        {"ids": (1, 8), "mask": (1, 8)},
        {"ids": (2, 16), "mask": (2, 16)},
    ]
    rng = np.random.default_rng(3)
    for batch, seq in ((1, 8), (2, 16)):
        ids = rng.integers(0, 50, (batch, seq)).astype(np.int64)
        mask = np.where(rng.random((batch, seq)) < 0.2, -1e4, 0).astype(np.float32)
        run_both(model, compiled, {"ids": ids, "mask": mask})


def test_dynamic_image_size_fills_height_and_width() -> None:
    model = small_cnn("H", "W")
    compiled = compile_gears(model, input_shape={"x": [2, 3, -1, -1]}, dynamic_image_size=[[8, 8], [16, 12]])
    assert [gear.input_shapes for gear in compiled.gears] == [{"x": (2, 3, 8, 8)}, {"x": (2, 3, 16, 12)}]
    for height, width in ((8, 8), (16, 12)):
        x = np.random.default_rng(height).standard_normal((2, 3, height, width)).astype(np.float32)
        run_both(model, compiled, {"x": x})


def test_gears_that_fold_a_constant_differently_keep_each_value() -> None:
    """`y = x * w + arange(N * 64).reshape(N, 64)`: the arange folds at import to a weight of the
    same name in every gear but of other values; each gear must read its own."""
    w = np.linspace(0.5, 1.5, 64, dtype=np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"]),
        helper.make_node("Mul", ["n", "width"], ["count"]),
        helper.make_node("Range", ["zero", "count", "one"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        helper.make_node("Reshape", ["rf", "rows"], ["ramp"]),
        helper.make_node("Mul", ["x", "w"], ["scaled"]),
        helper.make_node("Add", ["scaled", "ramp"], ["y"]),
    ]
    constants = {
        "w": w,
        "zero": np.array(0, np.int64),
        "one": np.array(1, np.int64),
        "width": np.array(64, np.int64),
        "rows": np.array([-1, 64], np.int64),
    }
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 64])
    model = onnx_model(nodes, [x_info], [y_info], constants)
    # The importer needs the batch to fold the arange: the graph is imported at the first gear.
    compiled = compile_gears(model, {"x": [3, 64]}, input_shape={"x": [-1, 64]}, dynamic_batch_size=[3, 5])
    ramps = [
        [
            str(op.value)
            for op in gear.model.body.block.ops
            if isinstance(op, WeightOp) and len(op.buffer.type.get_shape()) == 2
        ]
        for gear in compiled.gear_models
    ]
    assert ramps == [  # one name, two values
        ["dense_resource<folded_reshape> : tensor<3x64xf32>"],
        ["dense_resource<folded_reshape> : tensor<5x64xf32>"],
    ]
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    for batch in (3, 5, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 64)).astype(np.float32)
        expected = x * w + np.arange(batch * 64, dtype=np.float32).reshape(batch, 64)
        np.testing.assert_allclose(executor.run(x)[0], expected, rtol=RTOL, atol=ATOL)


def test_a_three_gear_model_round_trips_through_a_file(cnn_gears: ge.CompiledModel, tmp_path: Path) -> None:
    path = tmp_path / "cnn.ge"
    cnn_gears.save(path)
    manifest = read_manifest(path)
    assert manifest["format_version"] == FORMAT_VERSION
    assert [g["input_shapes"] for g in manifest["gears"]] == [
        {"x": [1, 3, 8, 8]},
        {"x": [4, 3, 8, 8]},
        {"x": [8, 3, 8, 8]},
    ]
    assert manifest["options"]["dynamic_batch_size"] == [1, 4, 8]
    assert manifest["batch_padding"] == {"output_axes": [0]}
    loaded = ge.GraphCompiler.load(path)
    assert loaded.batch_padding == BatchPadding((0,))
    assert [g.input_shapes for g in loaded.gears] == [g.input_shapes for g in cnn_gears.gears]
    assert loaded.weight_blob == cnn_gears.weight_blob
    assert [str(g.module) for g in loaded.gears] == [str(g.module) for g in cnn_gears.gears]
    loaded.save(tmp_path / "again.ge")
    assert (tmp_path / "again.ge").read_bytes() == path.read_bytes()
    for batch in (4, 3):  # a gear's batch, and one padded to it
        x = np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)
        run_both(small_cnn(), loaded, {"x": x})


def test_compiling_gears_twice_gives_the_same_bytes(cnn_gears: ge.CompiledModel, tmp_path: Path) -> None:
    cnn_gears.save(tmp_path / "first.ge")
    compile_gears(small_cnn(), dynamic_batch_size=[1, 4, 8]).save(tmp_path / "second.ge")
    assert (tmp_path / "first.ge").read_bytes() == (tmp_path / "second.ge").read_bytes()


def test_a_model_of_one_shape_has_one_ir_and_no_gears(tmp_path: Path) -> None:
    compile_at(small_cnn(), {"x": [1, 3, 8, 8]}).save(tmp_path / "one.ge")
    manifest = read_manifest(tmp_path / "one.ge")
    assert manifest["format_version"] == FORMAT_VERSION
    assert "gears" not in manifest and {"ir_bytes", "ir_sha256"} <= set(manifest)


def test_loading_checks_every_gears_checksum(cnn_gears: ge.CompiledModel, tmp_path: Path) -> None:
    path = tmp_path / "cnn.ge"
    cnn_gears.save(path)
    data = path.read_bytes()
    # The last gear's IR ends where the blob starts; damage a byte inside it.
    blob_start = len(data) - len(cnn_gears.weight_blob)
    where = blob_start - 20
    path.write_bytes(data[:where] + bytes([data[where] ^ 1]) + data[where + 1 :])
    with pytest.raises(ge.InvalidModelError, match="the IR of gear 2 does not match its checksum"):
        ge.GraphCompiler.load(path)


def test_the_memory_planners_validator_runs_for_every_gear(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    validate = plan_memory.validate

    def recording(intervals, offsets, *rest):
        seen.append(max(i.size for i in intervals))
        return validate(intervals, offsets, *rest)

    monkeypatch.setattr(plan_memory, "validate", recording)
    compile_gears(small_cnn(), dynamic_batch_size=[2, 32])
    # The largest value of each gear is its first convolution's output, N x 8 x 8 x 8 float32 in
    # NC1HWC0, whose C0 of 16 pads the 8 channels to 16.
    assert set(seen) == {2 * 16 * 8 * 8 * 4, 32 * 16 * 8 * 8 * 4}


# --------------------------------------------------------------------------------------------
# Refusals: one line each, naming the option and the value
# --------------------------------------------------------------------------------------------

BERT_SHAPES = {"ids": [-1, -1], "mask": [-1, -1]}


@pytest.mark.parametrize(
    ("model", "options", "message"),
    [
        (
            small_cnn,
            {"dynamic_batch_size": [1, 4], "dynamic_dims": [[1], [2]], "input_format": "ND"},
            "compile options dynamic_batch_size and dynamic_dims are mutually exclusive (as atc's): "
            "give one kind of gears",
        ),
        (
            small_cnn,
            {"dynamic_batch_size": [4]},
            'compile option dynamic_batch_size="4" has 1 gear; atc takes 2 to 100 (a single shape is '
            "given by input_shape alone)",
        ),
        (
            small_cnn,
            {"dynamic_batch_size": list(range(1, 102))},
            "has 101 gears; atc takes 2 to 100",
        ),
        (
            small_cnn,
            {"dynamic_batch_size": [1, 4, 1]},
            'compile option dynamic_batch_size="1,4,1" repeats the gear "1"; every gear must be distinct',
        ),
        (
            small_cnn,
            {"dynamic_batch_size": [1, 4096]},
            'compile option dynamic_batch_size="1,4096" has batch size 4096; atc takes 1 to 2048',
        ),
        (
            small_cnn,
            {"dynamic_batch_size": [0, 4]},
            "compile option dynamic_batch_size (batch sizes) must be an integer of at least 1, got 0",
        ),
        (
            small_cnn,
            {"input_shape": {"x": [1, 3, -1, 8]}, "dynamic_batch_size": [1, 4]},
            "compile option dynamic_batch_size=\"1,4\" fills the batch axis (0) only, but input 'x' is "
            "dynamic at axis 2 (x[1,3,-1,8]); give one -1 per input at axis 0, or use dynamic_dims",
        ),
        (
            small_cnn,
            {"input_shape": {"x": [2, 3, 8, 8]}, "dynamic_batch_size": [1, 4]},
            'compile option dynamic_batch_size="1,4" needs -1 dimensions to fill, but every input is '
            "static (x[2,3,8,8]); mark them -1 with input_shape",
        ),
        (
            small_cnn,
            {"input_shape": {"x": [-1, 3, 8, 8]}, "dynamic_image_size": [[8, 8], [16, 16]]},
            'compile option dynamic_image_size="8,8;16,16" fills the H and W of 4-D NCHW inputs, but '
            "the -1 dimensions are at 'x' axis 0 (x[-1,3,8,8]); give -1 at H and W only, or use "
            "dynamic_dims",
        ),
        (
            small_cnn,
            {"dynamic_image_size": [[8, 8, 1], [16, 16, 1]]},
            'compile option dynamic_image_size="8,8,1;16,16,1" has a gear of 3 values; each is '
            "(height, width)",
        ),
        (
            small_bert,
            {"input_shape": BERT_SHAPES, "dynamic_dims": [[1, 8, 1, 8], [2, 16, 2, 16]]},
            'compile option dynamic_dims="1,8,1,8;2,16,2,16" fills dimensions of ND inputs, as atc\'s '
            "does: add input_format='ND'",
        ),
        (
            small_bert,
            {"input_shape": BERT_SHAPES, "input_format": "ND", "dynamic_dims": [[1, 8], [2, 16]]},
            'compile option dynamic_dims="1,8;2,16" has a gear of 2 values, but the inputs have 4 -1 '
            "dimensions (ids[-1,-1], mask[-1,-1]); every gear gives one value per -1, in input order",
        ),
        (
            small_cnn,
            {"input_shape": {"image": [-1, 3, 8, 8]}, "dynamic_batch_size": [1, 4]},
            "compile option input_shape names ['image'], which are no inputs of the graph (its inputs: x)",
        ),
        (
            small_cnn,
            {"input_format": "NC1HWC0", "dynamic_batch_size": [1, 4]},
            "compile option input_format must be one of NCHW, NHWC, ND, got 'NC1HWC0'",
        ),
    ],
)
def test_gear_options_that_break_atcs_rules_are_refused(model, options, message: str) -> None:
    imported_at = {"ids": [1, 8], "mask": [1, 8]} if model is small_bert else None
    with pytest.raises(ge.CompileError) as error:
        compile_gears(model(), imported_at, **options)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_dynamic_input_without_gears_is_refused_naming_input_and_axis() -> None:
    with pytest.raises(ge.CompileError, match=r"input 'x' has a dynamic dimension at axis 0"):
        ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(small_cnn()))


def _api_cnn(batch: int | str) -> ge.Graph:
    g = ge.Graph(seed=3)
    x = g.add_input("x", [batch, 3, 8, 8])
    y = g.add_relu(g.add_conv2d(x, 4, 3, padding=1))
    g.add_output(g.add_linear(g.add_flatten(y), 5))
    return g


def test_a_graph_with_a_batch_symbol_compiles_its_gears_by_specializing() -> None:
    compiled = ge.GraphCompiler().compile(_api_cnn("batch"), dynamic_batch_size=[1, 4])
    assert [gear.input_shapes for gear in compiled.gears] == [{"x": (1, 3, 8, 8)}, {"x": (4, 3, 8, 8)}]
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    static = ge.GraphExecutor()
    static.load_graph(ge.GraphCompiler().compile(_api_cnn(4)))  # the same weights, built at batch 4
    x = np.random.default_rng(5).standard_normal((4, 3, 8, 8)).astype(np.float32)
    (expected,) = static.run(x)
    np.testing.assert_array_equal(executor.run(x)[0], expected)
    np.testing.assert_array_equal(executor.run(x[:3])[0], expected[:3])  # padded to gear 4


def test_a_model_imported_with_its_symbols_compiles_its_gears_by_specializing() -> None:
    # Unsqueeze of a [batch, seq] mask keeps the symbols, so one import serves every gear
    graph = ge.GraphParser().parse_onnx(small_bert())
    assert graph.input_dims == {"ids": ("batch", "seq"), "mask": ("batch", "seq")}
    output = graph.module.body.block.ops.first.body.block.last_op.operands[0]  # the func's return
    assert graph.symbolic_shapes()[output] == ("batch", "seq", 16)
    compiled = ge.GraphCompiler().compile(graph, input_format="ND", dynamic_dims=[[1, 8, 1, 8], [2, 4, 2, 4]])
    rng = np.random.default_rng(2)
    for batch, seq in ((1, 8), (2, 4)):
        feeds = {
            "ids": rng.integers(0, 50, (batch, seq)).astype(np.int64),
            "mask": rng.standard_normal((batch, seq)).astype(np.float32),
        }
        run_both(small_bert(), compiled, feeds)


def test_squeezing_a_dynamic_dimension_is_refused_naming_it() -> None:
    nodes = [helper.make_node("Squeeze", ["x", "axes"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    model = onnx_model(nodes, [x], [y], {"axes": np.array([0], np.int64)})
    with pytest.raises(
        ge.UnsupportedOperatorError, match=r"Squeeze of dimension 0 of \[\?, 4\], which is dynamic"
    ):
        ge.GraphParser().parse_onnx(model)
