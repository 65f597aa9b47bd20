"""onnxruntime as the independent reference of every numeric test."""

from __future__ import annotations

import numpy as np
import onnx


def run_onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # the test runner already uses every core
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)


def without_softmax(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` whose output is its closing softmax's input: the logits."""
    cut = onnx.ModelProto()
    cut.CopyFrom(model)
    last = cut.graph.node[-1]
    assert last.op_type == "Softmax", f"the model ends in {last.op_type}"
    del cut.graph.output[:]
    cut.graph.output.append(onnx.helper.make_empty_tensor_value_info(last.input[0]))
    cut.graph.node.pop()
    return cut
