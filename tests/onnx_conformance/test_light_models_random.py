"""The light model-zoo CNNs with real weights: every ConstantOfShape weight replaced by a seeded
random tensor of the same shape, compared with onnxruntime.

The suite's own light models feed each weight through ConstantOfShape(0.02), so their expected
outputs are constant and cannot reveal a channel, layout or indexing bug; random weights can.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import ge.backend

sys.path.insert(0, str(Path(__file__).parents[1]))
from oracle import run_onnxruntime  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = sorted(p.stem.removeprefix("light_") for p in LIGHT.glob("light_*.onnx"))


def with_random_weights(model: onnx.ModelProto, seed: int) -> onnx.ModelProto:
    """Replaces each ConstantOfShape of a constant shape by a seeded random Constant."""
    rng = np.random.default_rng(seed)
    shapes = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    nodes = []
    for node in model.graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in shapes:
            shape = tuple(int(d) for d in shapes[node.input[0]])
            if len(shape) >= 2:
                fan_in = int(np.prod(shape[1:]))
                value = rng.standard_normal(shape, dtype=np.float32) * np.float32(np.sqrt(2.0 / fan_in))
            else:  # biases and normalization parameters: positive, near one
                value = rng.uniform(0.5, 1.5, shape).astype(np.float32)
            tensor = numpy_helper.from_array(value)
            node = helper.make_node("Constant", [], list(node.output), name=node.name, value=tensor)
        nodes.append(node)
    result = onnx.ModelProto()
    result.CopyFrom(model)
    del result.graph.node[:]
    result.graph.node.extend(nodes)
    return result


@pytest.mark.parametrize("name", MODELS)
def test_light_model_with_random_weights(name: str) -> None:
    model = with_random_weights(onnx.load(str(LIGHT / f"light_{name}.onnx")), seed=7)
    initializers = {i.name for i in model.graph.initializer}
    feeds = {}
    rng = np.random.default_rng(0)
    for value_info in model.graph.input:
        if value_info.name in initializers:
            continue
        shape = [d.dim_value for d in value_info.type.tensor_type.shape.dim]
        feeds[value_info.name] = rng.standard_normal(shape).astype(np.float32)
    expected = run_onnxruntime(model, feeds)
    actual = ge.backend.prepare(model, "CPU").run(feeds)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert a.shape == e.shape and a.dtype == e.dtype
        assert np.std(e) > 0 or np.ptp(e) > 0, "the random weights must give a non-constant output"
        np.testing.assert_allclose(a, e, rtol=1e-3, atol=1e-5 * max(1.0, float(np.abs(e).max())))
