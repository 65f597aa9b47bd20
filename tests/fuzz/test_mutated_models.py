"""Mutation fuzzing of the ONNX frontend and the whole pipeline: a small valid model, its bytes or
its structure mutated, imported, compiled and run. Whatever the mutant, `ge` either runs it or
raises a `GeError`; any other exception (or a hang, which the run's time would show) is a bug.

The hypothesis profile is fixed (tests/conftest.py): derandomized in `make test`, random and
10,000 examples each in `make fuzz`.
"""

from __future__ import annotations

import numpy as np
import onnx
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import ge.backend
from ge.errors import GeError

X = np.ones((1, 2, 4, 4), np.float32)


def seed_model() -> onnx.ModelProto:
    """conv -> relu -> max pool -> reshape -> softmax, with weights and a shape initializer."""
    rng = np.random.default_rng(0)
    initializers = [
        numpy_helper.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), "w"),
        numpy_helper.from_array(np.zeros(3, np.float32), "b"),
        numpy_helper.from_array(np.array([1, -1], np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "shape"], ["f"]),
        helper.make_node("Softmax", ["f"], ["y"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "seed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 12])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


SEED = seed_model()
SEED_BYTES = SEED.SerializeToString()


def run(model: onnx.ModelProto | bytes, level: int) -> None:
    try:
        ge.backend.prepare(model, optimization_level=level).run([X])
    except GeError:
        pass


# --------------------------------------------------------------------------------------------
# Bytes
# --------------------------------------------------------------------------------------------

edits = st.lists(
    st.tuples(
        st.sampled_from(["set", "delete", "insert", "truncate"]),
        st.integers(0, len(SEED_BYTES) - 1),
        st.binary(min_size=1, max_size=4),
    ),
    min_size=1,
    max_size=4,
)


def mutated_bytes(changes) -> bytes:
    data = bytearray(SEED_BYTES)
    for kind, position, payload in changes:
        position %= max(len(data), 1)
        if kind == "set" and data:
            data[position] = payload[0]
        elif kind == "delete":
            del data[position : position + len(payload)]
        elif kind == "insert":
            data[position:position] = payload
        else:
            del data[position:]
    return bytes(data)


@given(changes=edits, level=st.sampled_from([0, 3]))
def test_a_byte_mutant_runs_or_gets_a_ge_error(changes, level) -> None:
    run(mutated_bytes(changes), level)


# --------------------------------------------------------------------------------------------
# Structure
# --------------------------------------------------------------------------------------------

OPS = ["Relu", "Add", "Conv", "MaxPool", "Reshape", "Softmax", "Transpose", "Concat", "Gather", "Slice"]
OPS += ["Split", "Gemm", "MatMul", "Pad", "Resize", "TopK", "Cast", "Expand", "Tile", "Range"]
OPS += ["ConstantOfShape", "ReduceSum", "Flatten", "Squeeze", "Unsqueeze", "Identity"]
NAMES = ["x", "w", "b", "shape", "c", "r", "p", "f", "y", "", "undefined"]
NUMBERS = [0, -1, 1, 2, 3, -7, 255, 1 << 40, -(1 << 62)]
DTYPES = [1, 2, 3, 6, 7, 9, 10, 11, 16, 13]

mutation = st.one_of(
    st.tuples(
        st.just("attribute"),
        st.integers(0, 4),
        st.integers(0, 9),
        st.lists(st.sampled_from(NUMBERS), max_size=5),
    ),
    st.tuples(st.just("op_type"), st.integers(0, 4), st.sampled_from(OPS)),
    st.tuples(st.just("input"), st.integers(0, 4), st.integers(0, 3), st.sampled_from(NAMES)),
    st.tuples(st.just("initializer_type"), st.integers(0, 2), st.sampled_from(DTYPES)),
    st.tuples(st.just("initializer_dim"), st.integers(0, 2), st.integers(0, 3), st.sampled_from(NUMBERS)),
    st.tuples(st.just("input_dim"), st.integers(0, 3), st.sampled_from([0, 1, 3, 1 << 20])),
    st.tuples(st.just("input_type"), st.sampled_from(DTYPES)),
    st.tuples(
        st.just("extra_attribute"),
        st.integers(0, 4),
        st.sampled_from(["axis", "perm", "pads", "kernel_shape", "to", "keepdims", "axes"]),
        st.sampled_from([1, [0, 1], [1, 1, 1, 1], 3.5, "s"]),
    ),
    st.tuples(st.just("drop_node"), st.integers(0, 4)),
)


def mutated_model(changes) -> onnx.ModelProto:
    model = onnx.ModelProto()
    model.CopyFrom(SEED)
    g = model.graph
    for change in changes:
        kind = change[0]
        node = g.node[change[1] % len(g.node)] if g.node and kind not in ("input_dim", "input_type") else None
        if kind == "attribute" and node is not None and node.attribute:
            attribute = node.attribute[change[2] % len(node.attribute)]
            if attribute.type == onnx.AttributeProto.INTS:
                del attribute.ints[:]
                attribute.ints.extend(change[3])
            elif attribute.type == onnx.AttributeProto.INT and change[3]:
                attribute.i = change[3][0]
        elif kind == "op_type" and node is not None:
            node.op_type = change[2]
        elif kind == "input" and node is not None and node.input:
            node.input[change[2] % len(node.input)] = change[3]
        elif kind == "initializer_type":
            g.initializer[change[1]].data_type = change[2]
        elif kind == "initializer_dim":
            dims = g.initializer[change[1]].dims
            dims[change[2] % len(dims)] = change[3]
        elif kind == "input_dim":
            g.input[0].type.tensor_type.shape.dim[change[1]].dim_value = change[2]
        elif kind == "input_type":
            g.input[0].type.tensor_type.elem_type = change[1]
        elif kind == "extra_attribute" and node is not None:
            node.attribute.append(helper.make_attribute(change[2], change[3]))
        elif kind == "drop_node" and node is not None and len(g.node) > 1:
            g.node.remove(node)
    return model


@given(changes=st.lists(mutation, min_size=1, max_size=3), level=st.sampled_from([0, 3]))
def test_a_structural_mutant_runs_or_gets_a_ge_error(changes, level) -> None:
    run(mutated_model(changes), level)
