"""One-node ONNX models, the unit the op tests compare with onnxruntime."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BF16 = np.dtype(ml_dtypes.bfloat16)


def one_node(
    op_type: str,
    inputs: list[np.ndarray | None],
    opset: int,
    outputs: int = 1,
    known: tuple[int, ...] = (),
    **attrs,
) -> onnx.ModelProto:
    """A model of one node; inputs listed in `known` are initializers, `None` leaves one out."""
    names = [f"in{i}" if a is not None else "" for i, a in enumerate(inputs)]
    graph_inputs, initializers = [], []
    for index, (name, array) in enumerate(zip(names, inputs, strict=True)):
        if array is None:
            continue
        if index in known:
            initializers.append(numpy_helper.from_array(array, name))
            continue
        element = (
            TensorProto.BFLOAT16 if array.dtype == BF16 else helper.np_dtype_to_tensor_dtype(array.dtype)
        )
        graph_inputs.append(helper.make_tensor_value_info(name, element, array.shape))
    out_names = [f"out{i}" for i in range(outputs)]
    node = helper.make_node(op_type, names, out_names, **attrs)
    graph = helper.make_graph(
        [node],
        op_type,
        graph_inputs,
        [helper.make_empty_tensor_value_info(n) for n in out_names],
        initializer=initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def feeds(inputs: list[np.ndarray | None], known: tuple[int, ...]) -> dict[str, np.ndarray]:
    return {f"in{i}": a for i, a in enumerate(inputs) if a is not None and i not in known}
