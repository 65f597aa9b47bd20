"""The bad-input corpus: each malformed model, invalid call or absurd size gets a `GeError` whose
message names what is wrong (the node or input, the attribute, the value), never a raw Python
exception and never a silent acceptance.

Each case builds its input, makes the call, and names the error class and a fragment of the
message it must give.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge
import ge.backend
from ge.errors import (
    CompileError,
    GeError,
    InvalidModelError,
    RuntimeInputError,
    UnsupportedOperatorError,
    VerificationError,
)

n = helper.make_node
X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
WEIGHT = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")


def model(nodes, inputs=(X,), outputs=(Y,), initializers=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", list(inputs), list(outputs), initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def parse(source) -> Callable[[], object]:
    return lambda: ge.GraphParser().parse_onnx(source)


def raw_tensor(name: str, data_type: int, dims, **fields) -> onnx.TensorProto:
    """A TensorProto as a file may hold it, without the checks helper.make_tensor makes."""
    tensor = onnx.TensorProto(name=name, data_type=data_type, dims=dims)
    for key, value in fields.items():
        if key == "raw_data":
            tensor.raw_data = value
        else:
            getattr(tensor, key).extend(value)
    return tensor


def external(location: str) -> onnx.TensorProto:
    tensor = raw_tensor("w", TensorProto.FLOAT, [1, 1, 3, 3])
    tensor.data_location = onnx.TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=location)
    return tensor


def saved(tmp_path: Path, proto: onnx.ModelProto) -> Path:
    path = tmp_path / "model.onnx"
    path.write_bytes(proto.SerializeToString())
    return path


def relu_graph() -> ge.Graph:
    g = ge.Graph()
    g.add_output(g.add_relu(g.add_input("x", [2])))
    return g


def executor() -> ge.GraphExecutor:
    runner = ge.GraphExecutor()
    runner.load_graph(ge.GraphCompiler().compile(relu_graph()))
    return runner


def conv_graph(**conv) -> ge.Graph:
    g = ge.Graph()
    g.add_output(g.add_conv2d(g.add_input("x", [1, 1, 4, 4]), **conv))
    return g


CASES: dict[str, tuple[Callable[[Path], Callable[[], object]], type[GeError], str]] = {
    # Malformed files
    "empty bytes": (lambda tmp: parse(b""), InvalidModelError, "is empty (0 bytes)"),
    "empty file": (lambda tmp: parse(tmp / "empty.onnx"), InvalidModelError, "is empty (0 bytes)"),
    "missing file": (lambda tmp: parse(tmp / "none.onnx"), InvalidModelError, "does not exist"),
    "a directory": (lambda tmp: parse(tmp), InvalidModelError, "is a directory"),
    "not protobuf": (lambda tmp: parse(b"\xff\xfe garbage"), InvalidModelError, "not a valid ONNX model"),
    "a number as the model": (lambda tmp: parse(12345), InvalidModelError, "got int 12345"),
    "initializer shorter than its dims": (
        lambda tmp: parse(
            model(
                [n("Conv", ["x", "w"], ["y"])],
                initializers=[raw_tensor("w", TensorProto.FLOAT, [1, 1, 3, 3], float_data=[1.0] * 5)],
            )
        ),
        InvalidModelError,
        "initializer 'w' is malformed",
    ),
    "raw initializer shorter than its dims": (
        lambda tmp: parse(
            model(
                [n("Conv", ["x", "w"], ["y"])],
                initializers=[
                    raw_tensor(
                        "w", TensorProto.FLOAT, [1, 1, 3, 3], raw_data=np.ones(5, np.float32).tobytes()
                    )
                ],
            )
        ),
        InvalidModelError,
        "initializer 'w' is malformed",
    ),
    "data type 99": (
        lambda tmp: parse(
            model(
                [n("Add", ["x", "w"], ["y"])], initializers=[raw_tensor("w", 99, [1], raw_data=b"\0\0\0\0")]
            )
        ),
        InvalidModelError,
        "'w' has data type 99",
    ),
    "a Constant of data type 99": (
        lambda tmp: parse(
            model(
                [n("Constant", [], ["y"], name="k", value=raw_tensor("v", 99, [1], raw_data=b"\0" * 4))],
                inputs=(),
            )
        ),
        InvalidModelError,
        "Constant at node 'k': tensor 'v' has data type 99",
    ),
    "external data missing": (
        lambda tmp: parse(
            saved(tmp, model([n("Conv", ["x", "w"], ["y"])], initializers=[external("no.bin")]))
        ),
        InvalidModelError,
        "no.bin",
    ),
    "external data outside the model's folder": (
        lambda tmp: parse(
            saved(tmp, model([n("Conv", ["x", "w"], ["y"])], initializers=[external("../../etc/passwd")]))
        ),
        InvalidModelError,
        "outside the directory",
    ),
    "a node name that is not UTF-8": (
        lambda tmp: parse(_renamed(model([n("Relu", ["x"], ["y"], name="rr")]), b"rr", b"\xff\xfe")),
        InvalidModelError,
        "the name of node #0 of the graph is not UTF-8 text",
    ),
    # Structurally invalid graphs
    "no outputs": (
        lambda tmp: parse(model([n("Relu", ["x"], ["y"])], outputs=())),
        InvalidModelError,
        "no outputs",
    ),
    "two writers of one value": (
        lambda tmp: parse(model([n("Relu", ["x"], ["y"]), n("Neg", ["x"], ["y"], name="neg")])),
        InvalidModelError,
        "node 'neg' writes 'y', which is already the output of node",
    ),
    "duplicate graph inputs": (
        lambda tmp: parse(
            model(
                [n("Relu", ["x"], ["y"])],
                inputs=[X, helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
            )
        ),
        InvalidModelError,
        "lists input 'x' twice",
    ),
    "an initializer shadowed by a node output": (
        lambda tmp: parse(
            model([n("Relu", ["x"], ["w"], name="r"), n("Relu", ["w"], ["y"])], initializers=[WEIGHT])
        ),
        InvalidModelError,
        "node 'r' writes 'w', which is already an initializer",
    ),
    # Nodes their operator's schema does not allow
    "a misspelled attribute": (
        lambda tmp: parse(
            model([n("Conv", ["x", "w"], ["y"], name="c", padz=[1, 1, 1, 1])], initializers=[WEIGHT])
        ),
        InvalidModelError,
        "node 'c': unknown attribute 'padz'",
    ),
    "a FLOAT axis": (
        lambda tmp: parse(model([n("Softmax", ["x"], ["y"], name="s", axis=1.0)])),
        InvalidModelError,
        "attribute 'axis' must be INT, got FLOAT",
    ),
    "extra node inputs": (
        lambda tmp: parse(model([n("Relu", ["x", "x"], ["y"], name="r")])),
        InvalidModelError,
        "node 'r': 2 inputs given, the operator takes at most 1",
    ),
    "a Conv without its weight": (
        lambda tmp: parse(model([n("Conv", ["x"], ["y"], name="c")])),
        InvalidModelError,
        "node 'c': 1 inputs given, the operator takes at least 2",
    ),
    "a required input left out": (
        lambda tmp: parse(model([n("Reshape", ["", "shape"], ["y"], name="r")], initializers=[_shape()])),
        InvalidModelError,
        "node 'r': input #0 ('data') is required but left out",
    ),
    "zero groups": (
        lambda tmp: parse(model([n("Conv", ["x", "w"], ["y"], name="c", group=0)], initializers=[WEIGHT])),
        VerificationError,
        "'groups' must be positive",
    ),
    "nested loops of 1000 trips each": (
        lambda tmp: parse(_nested_loops(1000)),
        UnsupportedOperatorError,
        "unrolling 1000 iterations of 2002 nodes each would import about 2,002,000 nodes",
    ),
    # The Python API
    "a fractional dimension": (
        lambda tmp: lambda: ge.Graph().add_input("x", [1.5, 2]),
        GeError,
        "graph input 'x': dimension 0 is 1.5",
    ),
    "add_output(None)": (
        lambda tmp: lambda: ge.Graph().add_output(None),
        GeError,
        "add_output takes a Tensor",
    ),
    "a zero-size kernel": (
        lambda tmp: lambda: conv_graph(out_channels=2, kernel_size=0),
        VerificationError,
        "the kernel's spatial sizes must be positive, got [0, 0]",
    ),
    "compile('text')": (
        lambda tmp: lambda: ge.GraphCompiler().compile("text"),
        CompileError,
        "takes a ge.Graph",
    ),
    "a fusion switch file holding a list": (
        lambda tmp: lambda: ge.GraphCompiler().compile(relu_graph(), fusion_switch_file=_json(tmp, [1, 2])),
        CompileError,
        "a fusion switch file looks like",
    ),
    "run(None)": (lambda tmp: lambda: executor().run(None), RuntimeInputError, "got NoneType"),
    "run(3.0)": (lambda tmp: lambda: executor().run(3.0), RuntimeInputError, "got float"),
    "backend run(None)": (
        lambda tmp: lambda: ge.backend.prepare(model([n("Relu", ["x"], ["y"])])).run(None),
        RuntimeInputError,
        "got NoneType",
    ),
    "an input contradicting a declared dimension": (
        lambda tmp: (
            lambda: ge.backend.prepare(model([n("Relu", ["x"], ["y"])])).run(
                [np.ones((1, 1, 4, 5), np.float32)]
            )
        ),
        RuntimeInputError,
        "input 'x' axis 3: the model declares 4, 5 given",
    ),
    "an input of another rank": (
        lambda tmp: (
            lambda: ge.backend.prepare(model([n("Relu", ["x"], ["y"])])).run([np.ones((2, 2), np.float32)])
        ),
        RuntimeInputError,
        "input 'x' has rank 2",
    ),
    # Absurd sizes
    "a 4 TiB input, parsed": (
        lambda tmp: parse(
            model(
                [n("Relu", ["x"], ["y"])],
                inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 20, 1 << 20])],
            )
        ),
        InvalidModelError,
        "input 'x' of 'func.func' would hold a tensor of 4,398,046,511,104 bytes",
    ),
    "a 16 GiB input, compiled": (
        lambda tmp: lambda: ge.GraphCompiler().compile(_wide_relu()),
        CompileError,
        "over max_tensor_bytes = 4,294,967,296",
    ),
    "a limit that is not a number": (
        lambda tmp: lambda: ge.GraphCompiler().compile(relu_graph(), max_tensor_bytes="4G"),
        CompileError,
        "max_tensor_bytes (a number of bytes) must be an integer of at least 1",
    ),
}


def _nested_loops(trips: int) -> onnx.ModelProto:
    """Loop(trips) { Loop(trips) { v + 1 } }: unrolled, trips * trips bodies."""

    def body(nodes, tag: str) -> onnx.GraphProto:
        return helper.make_graph(
            nodes,
            tag,
            [
                helper.make_tensor_value_info(f"i{tag}", TensorProto.INT64, []),
                helper.make_tensor_value_info(f"c{tag}", TensorProto.BOOL, []),
                helper.make_tensor_value_info(f"v{tag}", TensorProto.FLOAT, [1]),
            ],
            [
                helper.make_tensor_value_info(f"co{tag}", TensorProto.BOOL, []),
                helper.make_tensor_value_info(f"vo{tag}", TensorProto.FLOAT, [1]),
            ],
        )

    inner = body([n("Identity", ["cin"], ["coin"]), n("Add", ["vin", "one"], ["voin"])], "in")
    outer = body(
        [n("Identity", ["cout"], ["coout"]), n("Loop", ["trips", "", "vout"], ["voout"], body=inner)], "out"
    )
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    constants = [
        numpy_helper.from_array(np.array(trips, np.int64), "trips"),
        numpy_helper.from_array(np.ones(1, np.float32), "one"),
    ]
    return model([n("Loop", ["trips", "", "x"], ["y"], body=outer)], [x], [Y], constants)


def _renamed(proto: onnx.ModelProto, old: bytes, new: bytes) -> bytes:
    """The serialized model with a string field's bytes replaced (same length keeps it parseable)."""
    assert len(old) == len(new)
    return proto.SerializeToString().replace(old, new)


def _shape() -> onnx.TensorProto:
    return numpy_helper.from_array(np.array([16], np.int64), "shape")


def _json(tmp: Path, data: object) -> Path:
    path = tmp / "switch.json"
    path.write_text(json.dumps(data))
    return path


def _wide_relu() -> ge.Graph:
    g = ge.Graph()
    g.add_output(g.add_relu(g.add_input("x", [1 << 20, 1 << 12])))
    return g


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_gets_a_clear_error(case: str, tmp_path: Path) -> None:
    build, error, fragment = CASES[case]
    (tmp_path / "empty.onnx").write_bytes(b"")
    call = build(tmp_path)
    with pytest.raises(error) as raised:
        call()
    assert fragment in str(raised.value), str(raised.value)


def test_a_raised_limit_compiles_what_the_default_refuses() -> None:
    compiled = ge.GraphCompiler().compile(_wide_relu(), max_tensor_bytes=1 << 35)
    assert compiled.num_operators == 1


def test_a_parser_limit_refuses_a_model_the_default_takes() -> None:
    proto = model([n("Relu", ["x"], ["y"])])
    assert ge.GraphParser().parse_onnx(proto) is not None
    with pytest.raises(InvalidModelError, match="over max_tensor_bytes = 32"):
        ge.GraphParser(max_tensor_bytes=32).parse_onnx(proto)


def test_zero_output_channels_give_an_empty_result() -> None:
    """An empty tensor is valid: a conv with no output channels computes nothing, cleanly."""
    runner = ge.GraphExecutor()
    runner.load_graph(ge.GraphCompiler().compile(conv_graph(out_channels=0, kernel_size=3)))
    (y,) = runner.run(np.ones((1, 1, 4, 4), np.float32))
    assert y.shape == (1, 0, 2, 2)
