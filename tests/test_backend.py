"""`ge.backend`: the ONNX backend interface, specialization and the program cache."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge
import ge.backend

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model(nodes, inputs, outputs, inits=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _io(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def test_module_level_interface() -> None:
    for name in ("prepare", "run_model", "run_node", "supports_device", "is_compatible"):
        assert callable(getattr(ge.backend, name))
    assert ge.backend.supports_device("CPU") and not ge.backend.supports_device("CUDA")


def test_static_model_compiles_at_prepare_with_options() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_io("x", F, [2, 3])], [_io("y", F, [2, 3])])
    rep = ge.backend.prepare(model, "CPU", optimization_level=0, target="Ascend910A")
    assert len(rep.steps) == 1
    step = next(iter(rep.steps.values()))
    assert step.compiled.target == "Ascend910A" and step.compiled.optimization_level == 0
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.testing.assert_array_equal(rep.run([x])[0], np.maximum(x, 0))
    assert len(rep.steps) == 1, "the program compiled at prepare serves the run"


def test_unsupported_attribute_is_refused_at_prepare() -> None:
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2, 2], name="pool")
    model = _model([node], [_io("x", F, [1, 1, 4, 4, 4])], [_io("y", F, None), _io("i", I64, None)])
    with pytest.raises(
        ge.UnsupportedOperatorError,
        match="MaxPool .* at node 'pool': the 'Indices' output is supported for 1-D and 2-D pools only",
    ) as info:
        ge.backend.prepare(model)
    assert info.value.category == "attribute"


def test_shape_input_specialized_and_cached_per_value() -> None:
    model = _model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        [_io("x", F, [2, 6]), _io("shape", I64, [2])],
        [_io("y", F, None)],
    )
    rep = ge.backend.prepare(model)
    assert not rep.steps, "the shape input decides the program: compile at the first run"
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    assert rep.run([x, np.array([3, 4])])[0].shape == (3, 4)
    assert rep.run([x, np.array([4, 3])])[0].shape == (4, 3)
    assert rep.run([x, np.array([3, 4])])[0].shape == (3, 4)
    assert len(rep.steps) == 2


def test_shape_from_a_computed_value_runs_its_prefix_first() -> None:
    offset = numpy_helper.from_array(np.array([1, -1], np.int64), "offset")
    model = _model(
        [
            helper.make_node("Add", ["shape", "offset"], ["computed"]),
            helper.make_node("Reshape", ["x", "computed"], ["y"]),
        ],
        [_io("x", F, [2, 6]), _io("shape", I64, [2])],
        [_io("y", F, None)],
        [offset],
    )
    rep = ge.backend.prepare(model)
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    y = rep.run([x, np.array([2, 5])])[0]
    np.testing.assert_array_equal(y, x.reshape(3, 4))
    kinds = sorted(step.observes or "final" for step in rep.steps.values())
    assert kinds == ["computed", "final"]


def test_segments_hand_on_their_results_instead_of_computing_them_again() -> None:
    threshold = numpy_helper.from_array(np.array(1.5, np.float32), "t")
    model = _model(
        [
            helper.make_node("Exp", ["x"], ["e"]),
            helper.make_node("Greater", ["e", "t"], ["mask"]),
            helper.make_node("NonZero", ["mask"], ["idx"]),
            helper.make_node("Transpose", ["idx"], ["idx_t"], perm=[1, 0]),
            helper.make_node("GatherND", ["e", "idx_t"], ["g"]),
            helper.make_node("ReduceSum", ["e"], ["s"], keepdims=0),
        ],
        [_io("x", F, [3, 4])],
        [_io("g", F, None), _io("s", F, None)],
        [threshold],
    )
    rep = ge.backend.prepare(model)
    for scale in (1.0, 2.0):
        x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32) * scale
        e = np.exp(x)
        g, s = rep.run([x])
        np.testing.assert_allclose(g, e[e > 1.5], rtol=1e-6)
        np.testing.assert_allclose(s, e.sum(), rtol=1e-5)
    first = next(step for step in rep.steps.values() if step.observes == "mask")
    assert first.resume is not None and list(first.resume.inputs) == ["e"]
    finals = [step for step in rep.steps.values() if step.observes is None]
    assert len(finals) == 2  # one per observed mask
    for step in finals:
        assert "e" in step.compiled.input_names
        bodies = [op.name for op in step.compiled.module.walk() if op.name.startswith("ascend.graph.")]
        assert "ascend.graph.exp" not in bodies  # the first segment's result is read, not recomputed


def test_input_signature_selects_the_program() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_io("x", F, ["n", 3])], [_io("y", F, ["n", 3])])
    rep = ge.backend.prepare(model)
    assert rep.run([np.ones((2, 3), np.float32)])[0].shape == (2, 3)
    assert rep.run([np.ones((5, 3), np.float32)])[0].shape == (5, 3)
    assert len(rep.steps) == 2


def test_run_node_and_run_model() -> None:
    out = ge.backend.run_node(helper.make_node("Relu", ["a"], ["b"]), [np.array([-1.0, 2.0], np.float32)])
    np.testing.assert_array_equal(out[0], [0.0, 2.0])
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_io("x", F, [2])], [_io("y", F, [2])])
    np.testing.assert_array_equal(
        ge.backend.run_model(model, [np.array([3.0, -3.0], np.float32)])[0], [3.0, 0.0]
    )


def test_unknown_options_and_precision_modes() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_io("x", F, [2])], [_io("y", F, [2])])
    with pytest.raises(ge.CompileError, match="unknown backend options: fast"):
        ge.backend.prepare(model, fast=True)
    with pytest.raises(ge.CompileError, match="unknown precision_mode 'fp8'"):
        ge.backend.prepare(model, precision_mode="fp8")


def test_float64_arithmetic_runs_on_the_ai_cpu() -> None:
    model = _model(
        [helper.make_node("Add", ["x", "x"], ["y"])],
        [_io("x", TensorProto.DOUBLE, [3])],
        [_io("y", TensorProto.DOUBLE, [3])],
    )
    rep = ge.backend.prepare(model)
    step = next(iter(rep.steps.values()))
    units = [op.unit.data for op in step.compiled.module.walk() if op.name == "ascend.stream.kernel"]
    assert units == ["aicpu"]
    x = np.array([1e-300, 2.5, -1.0])
    np.testing.assert_array_equal(rep.run([x])[0], 2 * x)
