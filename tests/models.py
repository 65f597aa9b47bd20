"""Small models built two ways, as ONNX (onnx.helper) and with `ge.Graph`, with the same weights."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ge

OPSET = 17


@dataclass
class TwinModel:
    onnx_model: onnx.ModelProto
    graph: ge.Graph
    input_name: str
    input_shape: tuple[int, ...]


def _model(nodes, inputs, outputs, weights: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        inputs,
        outputs,
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def mlp(seed: int = 0, batch: int = 4, features: int = 32, hidden: int = 64, classes: int = 10) -> TwinModel:
    """gemm - relu - gemm - softmax."""
    rng = np.random.default_rng(seed)
    w = {
        "fc1.weight": (rng.standard_normal((hidden, features)) * 0.2).astype(np.float32),
        "fc1.bias": (rng.standard_normal(hidden) * 0.1).astype(np.float32),
        "fc2.weight": (rng.standard_normal((classes, hidden)) * 0.2).astype(np.float32),
        "fc2.bias": (rng.standard_normal(classes) * 0.1).astype(np.float32),
    }
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["a"], name="relu1"),
        helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["logits"], name="fc2", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    shape = (batch, features)
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, (batch, classes))],
        w,
    )
    g = ge.Graph()
    x = g.add_input("x", shape=shape)
    h = g.add_linear(x, hidden, weight=w["fc1.weight"], bias_value=w["fc1.bias"], name="fc1")
    h = g.add_linear(g.add_relu(h), classes, weight=w["fc2.weight"], bias_value=w["fc2.bias"], name="fc2")
    g.add_output(g.add_softmax(h), "probs")
    return TwinModel(model, g, "x", shape)


def cnn(seed: int = 0, batch: int = 2, size: int = 16, classes: int = 10) -> TwinModel:
    """conv - relu - maxpool - conv - relu - global_avg_pool - flatten - gemm - softmax."""
    rng = np.random.default_rng(seed)
    w = {
        "conv1.weight": (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32),
        "conv1.bias": (rng.standard_normal(8) * 0.1).astype(np.float32),
        "conv2.weight": (rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32),
        "conv2.bias": (rng.standard_normal(16) * 0.1).astype(np.float32),
        "fc.weight": (rng.standard_normal((classes, 16)) * 0.3).astype(np.float32),
        "fc.bias": (rng.standard_normal(classes) * 0.1).astype(np.float32),
    }
    nodes = [
        helper.make_node(
            "Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], name="conv1", pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node(
            "Conv",
            ["p1", "conv2.weight", "conv2.bias"],
            ["c2"],
            name="conv2",
            strides=[2, 2],
            pads=[1, 1, 1, 1],
        ),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    shape = (batch, 3, size, size)
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, (batch, classes))],
        w,
    )
    g = ge.Graph()
    x = g.add_input("x", shape=shape)
    y = g.add_conv2d(x, 8, 3, padding=1, weight=w["conv1.weight"], bias_value=w["conv1.bias"], name="conv1")
    y = g.add_maxpool(g.add_relu(y), kernel_size=2, stride=2)
    y = g.add_conv2d(
        y, 16, 3, stride=2, padding=1, weight=w["conv2.weight"], bias_value=w["conv2.bias"], name="conv2"
    )
    y = g.add_flatten(g.add_global_avgpool(g.add_relu(y)))
    y = g.add_linear(y, classes, weight=w["fc.weight"], bias_value=w["fc.bias"], name="fc")
    g.add_output(g.add_softmax(y), "probs")
    return TwinModel(model, g, "x", shape)


def relu_add() -> onnx.ModelProto:
    """`r = relu(a); s = r + b`, nodes named relu and add, both inputs [N, 4] with N symbolic."""
    nodes = [
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "b"], ["s"], name="add"),
    ]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 4]) for n in ("a", "b")]
    outputs = [helper.make_tensor_value_info("s", TensorProto.FLOAT, ["N", 4])]
    return _model(nodes, inputs, outputs, {})
