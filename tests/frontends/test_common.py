"""The errors, SAME padding, integer floor division and strided slice the frontends share
(ge/frontends/common.py, ge/frontends/strided_slice.py)."""

from __future__ import annotations

import numpy as np
import pytest

import ge
from ge.errors import InvalidModelError, UnsupportedOperatorError
from ge.frontends.common import (
    add_floor_division,
    invalid_node_error,
    same_pads,
    unsupported_form_error,
    unsupported_operators_error,
)
from ge.frontends.strided_slice import add_strided_slice


@pytest.mark.parametrize(
    ("sizes", "kernel", "strides", "dilations", "begin", "end"),
    [
        # 3 windows of 3 over 5 cells, stride 2: (3 - 1) * 2 + 3 = 7 cells, 2 of padding.
        ([5], [3], [2], None, [1], [1]),
        # 3 windows over 6 cells: 7 cells, 1 of padding, at the end (TensorFlow's rule).
        ([6], [3], [2], None, [0], [1]),
        # A kernel of 3 dilated by 2 spans 5 cells: 7 windows over 7 cells need 4 of padding.
        ([7], [3], [1], [2], [2], [2]),
        # 2 windows of 1 over 4 cells, stride 2, reach cell 3: no padding.
        ([4], [1], [2], None, [0], [0]),
        ([5, 6], [3, 3], [2, 2], [1, 1], [1, 0], [1, 1]),
    ],
)
def test_same_pads(sizes, kernel, strides, dilations, begin, end) -> None:
    assert same_pads(sizes, kernel, strides, dilations) == (begin, end)


def test_same_pads_odd_cell_first() -> None:
    """ONNX's SAME_LOWER puts the odd cell before the data."""
    assert same_pads([6], [3], [2], odd_cell_first=True) == ([1], [0])
    assert same_pads([5], [3], [2], odd_cell_first=True) == ([1], [1])


def test_unsupported_operators_error_lists_every_node() -> None:
    entries = [
        {"op_type": "Foo", "domain": "tensorflow", "node": "a"},
        {"op_type": "Bar", "domain": "tensorflow", "node": "b"},
        {"op_type": "Foo", "domain": "tensorflow", "node": "c"},
    ]
    error = unsupported_operators_error("TensorFlow", entries)
    assert isinstance(error, UnsupportedOperatorError)
    assert error.category == "operator"
    assert error.unsupported == entries
    assert str(error) == (
        "3 node(s) use TensorFlow ops ge does not support (Bar, Foo):\n"
        "  Foo at node 'a'\n  Bar at node 'b'\n  Foo at node 'c'"
    )


def test_unsupported_operators_error_with_kinds_and_lines_of_its_own() -> None:
    entries = [{"op_type": "Foo", "domain": "ai.onnx", "opset": 17, "node": "n"}]
    error = unsupported_operators_error(
        "",
        entries,
        operators="operators",
        kind=lambda e: f"{e['domain']}::{e['op_type']}",
        describe=lambda e: f"{e['op_type']} (opset {e['opset']})",
    )
    assert str(error) == (
        "1 node(s) use operators ge does not support (ai.onnx::Foo):\n  Foo (opset 17) at node 'n'"
    )


def test_node_errors() -> None:
    error = unsupported_form_error("Conv2D", "tensorflow", "conv", "no padding X")
    assert str(error) == "Conv2D at node 'conv': no padding X"
    assert error.unsupported == [
        {"op_type": "Conv2D", "domain": "tensorflow", "node": "conv", "missing": "no padding X"}
    ]
    labelled = unsupported_form_error("Conv", "ai.onnx", "c", "why", "Conv (opset 9)", opset=9)
    assert str(labelled) == "Conv (opset 9) at node 'c': why"
    assert labelled.unsupported[0]["opset"] == 9
    invalid = invalid_node_error("Conv", "c", "needs 2 inputs")
    assert isinstance(invalid, InvalidModelError)
    assert str(invalid) == "Conv at node 'c': needs 2 inputs"


@pytest.mark.parametrize(
    ("shape", "begin", "end", "strides", "masks", "index"),
    [
        # a backward slice from before the first element is empty, as numpy and TensorFlow have it
        (
            [5, 3],
            [4, -6],
            [5, -1],
            [1, -1],
            {"begin_mask": 1, "end_mask": 2},
            (slice(None, 5), slice(-6, None, -1)),
        ),
        (
            [3, 4],
            [0, -5],
            [0, 0],
            [1, -2],
            {"begin_mask": 1, "end_mask": 3},
            (slice(None), slice(-5, None, -2)),
        ),
        # the last element of a dynamic axis (an RNN's last step)
        (
            [2, None, 3],
            [0, -1, 0],
            [0, 0, 0],
            [1, 1, 1],
            {"begin_mask": 5, "end_mask": 5, "shrink_axis_mask": 2},
            (slice(None), -1),
        ),
        (
            [2, None, 3],
            [0, -2, 0],
            [0, 0, 0],
            [1, 1, 1],
            {"begin_mask": 5, "end_mask": 5, "shrink_axis_mask": 2},
            (slice(None), -2),
        ),
    ],
)
def test_strided_slice_as_numpy(shape, begin, end, strides, masks, index) -> None:
    graph = ge.Graph("slice")
    x = graph.add_input("x", shape)
    graph.add_output(add_strided_slice(graph, x, begin, end, strides, masks, "y"), "y")
    executor = ge.GraphExecutor()
    if None in shape:
        graph = graph.specialize({"x_1": 4})
    executor.load_graph(ge.GraphCompiler().compile(graph, optimization_level=0))
    value = np.arange(2 * 4 * 3 if None in shape else np.prod(shape), dtype=np.float32)
    value = value.reshape([4 if d is None else d for d in shape])
    [got] = executor.run({"x": value})
    want = value[index]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_floor_division_of_integers_as_numpy(dtype: str, level: int) -> None:
    """Every pair of signs, with and without a remainder, and a zero dividend: Python's `//`."""
    x = np.array([7, -7, 7, -7, 6, -6, 6, -6, 0, 0, 1, -1, 45, -45], dtype=dtype)
    y = np.array([2, 2, -2, -2, 3, 3, -3, -3, 5, -5, 4, 4, -7, -7], dtype=dtype)
    graph = ge.Graph("floor_division")
    a, b = graph.add_input("x", x.shape, dtype), graph.add_input("y", y.shape, dtype)
    graph.add_output(add_floor_division(graph, a, b, "q"), "q")
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(graph, optimization_level=level))
    [got] = executor.run({"x": x, "y": y})
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, x // y)
