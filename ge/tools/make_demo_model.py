"""Writes `tiny_cnn.onnx`, the model `make demo` compiles: a small CNN with seeded weights.

`python -m ge.tools.make_demo_model` rewrites `ge/models/tiny_cnn.onnx`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(2024)

    def weight(name: str, *shape: int, scale: float) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        weight("conv1.weight", 16, 3, 3, 3, scale=0.3),
        weight("conv1.bias", 16, scale=0.1),
        weight("bn1.scale", 16, scale=0.1),
        weight("bn1.bias", 16, scale=0.1),
        weight("bn1.mean", 16, scale=0.1),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 16).astype(np.float32), "bn1.var"),
        weight("conv2.weight", 32, 16, 3, 3, scale=0.1),
        weight("conv2.bias", 32, scale=0.1),
        weight("fc.weight", 10, 32, scale=0.3),
        weight("fc.bias", 10, scale=0.1),
    ]
    for t in inits[2:3]:
        t.CopyFrom(numpy_helper.from_array(1 + numpy_helper.to_array(t), t.name))
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["c1"], name="conv1", pads=[1] * 4),
        helper.make_node(
            "BatchNormalization", ["c1", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"], ["b1"], name="bn1"
        ),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node(
            "Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2", pads=[1] * 4, strides=[2, 2]
        ),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ge")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    path = Path(__file__).parents[1] / "models" / "tiny_cnn.onnx"
    onnx.save(build(), path)
    print(f"wrote {path}")
