"""The bad-input corpus of the Python API: each wrong argument to a `Graph` method, an optimizer,
the compiler, a `.ge` file or a run gets a `GeError` whose message names the function or input,
the parameter and the value, never a raw Python exception and never a silent acceptance.

Each case builds its input, makes the call, and names the error class and a fragment of the
message it must give.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import ge
from ge.artifact import MAGIC
from ge.errors import CompileError, GeError, InvalidModelError, RuntimeInputError


def relu_graph() -> ge.Graph:
    g = ge.Graph()
    g.add_output(g.add_relu(g.add_input("x", [2])))
    return g


def with_input(shape: list[int], build: Callable[[ge.Graph, ge.Tensor], object]) -> Callable[[], object]:
    """A call on a fresh graph and its input `x` of `shape`."""

    def call() -> object:
        g = ge.Graph()
        return build(g, g.add_input("x", shape))

    return call


def conv(**options: object) -> Callable[[], object]:
    return with_input(
        [1, 1, 4, 4], lambda g, x: g.add_conv2d(x, **{"out_channels": 2, "kernel_size": 3, **options})
    )


def compile_relu(**options: object) -> Callable[[], object]:
    return lambda: ge.GraphCompiler().compile(relu_graph(), **options)


def rewritten(tmp: Path, ir: bytes | None = None, **manifest: object) -> Callable[[], object]:
    """Loading a saved relu model whose IR or manifest values were replaced, checksums made right."""
    path = tmp / "m.ge"
    ge.GraphCompiler().compile(relu_graph()).save(path)
    data = path.read_bytes()
    (length,) = struct.unpack_from("<I", data, len(MAGIC))
    start = len(MAGIC) + 4
    header = json.loads(data[start : start + length])
    ir = data[start + length : start + length + header["ir_bytes"]] if ir is None else ir
    blob = data[start + length + header["ir_bytes"] :]
    header.update(manifest, ir_bytes=len(ir), ir_sha256=hashlib.sha256(ir).hexdigest())
    del header["manifest_sha256"]
    header["manifest_sha256"] = hashlib.sha256(json.dumps(header, sort_keys=True).encode()).hexdigest()
    encoded = json.dumps(header, sort_keys=True).encode()
    path.write_bytes(MAGIC + struct.pack("<I", len(encoded)) + encoded + ir + blob)
    return lambda: ge.GraphCompiler.load(path)


def cnn() -> ge.Graph:
    g = ge.Graph()
    y = g.add_relu(g.add_conv2d(g.add_input("x", [1, 3, 8, 8]), out_channels=4, kernel_size=3, padding=1))
    g.add_output(g.add_linear(g.add_flatten(g.add_global_avgpool(y)), out_features=3))
    return g


def memory(graph: object = None, **sizes: object) -> Callable[[], object]:
    return lambda: ge.MemoryOptimizer.calculate_memory_usage(cnn() if graph is None else graph, **sizes)


def keeping(layers: object) -> Callable[[], object]:
    return lambda: ge.GraphOptimizer().apply_mixed_precision_optimization(
        cnn(), preserve_precision_layers=layers
    )


def onnx_relu() -> object:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    return helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]))


def onnx_model(op: str, inputs: dict[str, int], output: int) -> object:
    """A one-node ONNX model on 1-D inputs of these element types."""
    from onnx import helper

    values = [helper.make_tensor_value_info(n, t, [2]) for n, t in inputs.items()]
    y = helper.make_tensor_value_info("y", output, None)
    node = helper.make_node(op, list(inputs), ["y"])
    return helper.make_model(
        helper.make_graph([node], "g", values, [y]), opset_imports=[helper.make_opsetid("", 17)]
    )


def backend_run(model: object, feeds: dict[str, object]) -> Callable[[], object]:
    import ge.backend

    return lambda: ge.backend.prepare(model).run(feeds)


def add_xz() -> object:
    from onnx import TensorProto

    return onnx_model("Add", {"x": TensorProto.FLOAT, "z": TensorProto.FLOAT}, TensorProto.FLOAT)


def string_identity() -> object:
    from onnx import TensorProto

    return onnx_model("Identity", {"s": TensorProto.STRING}, TensorProto.STRING)


def executor_run(value: object, **options: object) -> Callable[[], object]:
    runner = ge.GraphExecutor()
    runner.load_graph(ge.GraphCompiler().compile(relu_graph()))
    return lambda: runner.run(value, **options)


def other_graphs_tensor() -> object:
    g, h = ge.Graph(), ge.Graph()
    return h.add_relu(g.add_input("x", [2]))


def twice_named_output() -> object:
    g = ge.Graph()
    x = g.add_input("x", [2])
    g.add_output(g.add_relu(x), "y")
    return g.add_output(g.add_relu(x), "y")


Case = tuple[Callable[[Path], Callable[[], object]], type[GeError], str]
CASES: dict[str, Case] = {
    # Graph building
    "a tensor that is None": (
        lambda tmp: lambda: ge.Graph().add_relu(None),
        GeError,
        "add_relu takes a Tensor",
    ),
    "an array for a tensor": (
        lambda tmp: lambda: ge.Graph().add_relu(np.ones(3)),
        GeError,
        "Graph.add_relu takes a Tensor of this graph as x, got array(",
    ),
    "a tensor of another graph": (
        lambda tmp: other_graphs_tensor,
        GeError,
        "x is tensor 'x' of another graph",
    ),
    "a concat of a non-tensor": (
        lambda tmp: with_input([2], lambda g, x: g.add_concat([x, 3], axis=0)),
        GeError,
        "Graph.add_concat takes a Tensor of this graph as inputs[1], got 3 (int)",
    ),
    "an input named None": (
        lambda tmp: lambda: ge.Graph().add_input(None, [2]),
        GeError,
        "name must be a string",
    ),
    "an input named 123": (
        lambda tmp: lambda: ge.Graph().add_input(123, [2]),
        GeError,
        "Graph.add_input: name must be a string, got 123 (int)",
    ),
    "an input of dtype None": (
        lambda tmp: lambda: ge.Graph().add_input("x", [2], None),
        GeError,
        "Graph.add_input: dtype must be a dtype name such as 'float32', got None",
    ),
    "an input of an unknown dtype": (
        lambda tmp: lambda: ge.Graph().add_input("x", [2], "float99"),
        GeError,
        "Graph.add_input: dtype: unsupported dtype 'float99'",
    ),
    "out_channels -1": (
        lambda tmp: conv(out_channels=-1),
        GeError,
        "Graph.add_conv2d: out_channels must be an integer of at least 0, got -1",
    ),
    "out_channels as a string": (
        lambda tmp: conv(out_channels="8"),
        GeError,
        "Graph.add_conv2d: out_channels must be an integer of at least 0, got '8' (str)",
    ),
    "one kernel size of two": (
        lambda tmp: conv(kernel_size=(3,)),
        GeError,
        "Graph.add_conv2d: kernel_size must be an integer or two (height, width), got 1: [3]",
    ),
    "a stride of True": (
        lambda tmp: conv(stride=True),
        GeError,
        "stride must be an integer or two, got True (bool)",
    ),
    "a float padding": (
        lambda tmp: conv(padding=1.0),
        GeError,
        "padding must be an integer or two, got 1.0 (float)",
    ),
    "groups as a string": (
        lambda tmp: conv(groups="1"),
        GeError,
        "groups must be an integer of at least 1, got '1' (str)",
    ),
    "a linear on a scalar": (
        lambda tmp: with_input([], lambda g, x: g.add_linear(x, 2)),
        GeError,
        "Graph.add_linear needs an input of rank >= 1",
    ),
    "a batchnorm on a vector": (
        lambda tmp: with_input([3], lambda g, x: g.add_batchnorm(x)),
        GeError,
        "Graph.add_batchnorm needs an input with channels on axis 1, got shape [3]",
    ),
    "an input with more elements than an int64 counts": (
        lambda tmp: lambda: ge.Graph().add_input("x", [2**70]),
        GeError,
        "graph input 'x': tensor<1180591620717411303424xf32> has more elements than an int64 counts",
    ),
    "a parser limit given as text": (
        lambda tmp: lambda: ge.GraphParser(max_tensor_bytes="1"),
        GeError,
        "max_tensor_bytes (a number of bytes) must be an integer of at least 1, got '1' (str)",
    ),
    "a splat of None": (
        lambda tmp: lambda: ge.Graph().add_splat(None, [2]),
        GeError,
        "Graph.add_splat: value must be a number, got None (NoneType)",
    ),
    "a splat of text": (
        lambda tmp: lambda: ge.Graph().add_splat("a", [2]),
        GeError,
        "Graph.add_splat: value must be a number, got 'a' (str)",
    ),
    "an epsilon given as text": (
        lambda tmp: with_input([1, 2, 4, 4], lambda g, x: g.add_batchnorm(x, epsilon="x")),
        GeError,
        "Graph.add_batchnorm: epsilon must be a number above 0, got 'x' (str)",
    ),
    "a zero epsilon": (
        lambda tmp: with_input([1, 2, 4, 4], lambda g, x: g.add_batchnorm(x, epsilon=0.0)),
        GeError,
        "Graph.add_batchnorm: epsilon must be a number above 0, got 0.0",
    ),
    "a ceil mode given as text": (
        lambda tmp: with_input([1, 2, 4, 4], lambda g, x: g.add_avgpool(x, 2, ceil_mode="yes")),
        GeError,
        "Graph.add_avgpool: ceil_mode must be True or False, got 'yes' (str)",
    ),
    "a bias switch given as text": (
        lambda tmp: with_input([2, 3], lambda g, x: g.add_linear(x, 4, bias="no")),
        GeError,
        "Graph.add_linear: bias must be True or False, got 'no' (str)",
    ),
    "a batchnorm shift of text": (
        lambda tmp: with_input([1, 2, 4, 4], lambda g, x: g.add_batchnorm(x, bias=["a", "b"])),
        GeError,
        "Graph.add_batchnorm: bias must be an array of numbers",
    ),
    "an op given by name": (
        lambda tmp: with_input([2], lambda g, x: g.add_op("relu", [x])),
        GeError,
        "Graph.add_op: op_class must be an ascend.graph op class (ge.dialects.graph), got 'relu' (str)",
    ),
    "a missing argument": (
        lambda tmp: with_input([1, 2, 4, 4], lambda g, x: g.add_conv2d(x, 4)),
        GeError,
        "Graph.add_conv2d: missing a required argument: 'kernel_size'",
    ),
    "outputs that are not pairs": (
        lambda tmp: lambda: ge.Graph().set_outputs(None),
        GeError,
        "Graph.set_outputs takes a list of (Tensor, name) pairs, got None (NoneType)",
    ),
    "a reshape to a string": (
        lambda tmp: with_input([2, 3], lambda g, x: g.add_reshape(x, ["a"])),
        GeError,
        "node 'reshape' (reshape): Graph.add_reshape: shape[0] must be an integer, got 'a' (str)",
    ),
    "a reshape to a fraction": (
        lambda tmp: with_input([2, 3], lambda g, x: g.add_reshape(x, [1.5, 4])),
        GeError,
        "node 'reshape' (reshape): Graph.add_reshape: shape[0] must be an integer, got 1.5 (float)",
    ),
    "a concat axis as a string": (
        lambda tmp: with_input([2], lambda g, x: g.add_concat([x, x], axis="0")),
        GeError,
        "Graph.add_concat: axis must be an integer, got '0' (str)",
    ),
    "a softmax axis of False": (
        lambda tmp: with_input([2], lambda g, x: g.add_softmax(x, axis=False)),
        GeError,
        "Graph.add_softmax: axis must be an integer, got False (bool)",
    ),
    "a transpose perm of floats": (
        lambda tmp: with_input([2, 3], lambda g, x: g.add_transpose(x, [1.0, 0.0])),
        GeError,
        "Graph.add_transpose: perm[0] must be an integer, got 1.0 (float)",
    ),
    "a seed as a string": (
        lambda tmp: lambda: ge.Graph(seed="a"),
        GeError,
        "Graph(): seed must be an integer of at least 0, got 'a'",
    ),
    "a module that is None": (
        lambda tmp: lambda: ge.Graph.from_module(None),
        GeError,
        "Graph.from_module takes an xDSL builtin.module, got None",
    ),
    "two outputs named alike": (
        lambda tmp: twice_named_output,
        GeError,
        "Graph.add_output: the graph already has an output named 'y'",
    ),
    # Compile options
    "a float optimization level": (
        lambda tmp: compile_relu(optimization_level=3.0),
        CompileError,
        "optimization_level (0 to 3) must be an integer, got 3.0 (float)",
    ),
    "a bool optimization level": (
        lambda tmp: compile_relu(optimization_level=True),
        CompileError,
        "got True (bool)",
    ),
    "an optimization level as a string": (
        lambda tmp: compile_relu(optimization_level="3"),
        CompileError,
        "got '3' (str)",
    ),
    "a target of None": (
        lambda tmp: compile_relu(target=None),
        CompileError,
        "unknown target None; known SoCs",
    ),
    "a target that is a path": (
        lambda tmp: compile_relu(target="../../../x/evil"),
        CompileError,
        "unknown target '../../../x/evil'; known SoCs: Ascend310P3, Ascend910A, Ascend910B2",
    ),
    "a fusion switch whose Switch is a string": (
        lambda tmp: compile_relu(fusion_switch_file={"Switch": "off"}),
        CompileError,
        "a fusion switch file looks like",
    ),
    "a fusion switch file that is a number": (
        lambda tmp: compile_relu(fusion_switch_file=5),
        CompileError,
        "fusion_switch_file (or its parsed JSON, a dict) must be a file path, got 5 (int)",
    ),
    "a fusion report in a missing folder": (
        lambda tmp: compile_relu(fusion_report=tmp / "missing" / "r.json"),
        CompileError,
        "cannot write the fusion_report",
    ),
    "a float max_streams": (
        lambda tmp: compile_relu(max_streams=2.0),
        CompileError,
        "compile option max_streams must be an integer of at least 1, got 2.0 (float)",
    ),
    # .ge files
    "IR that is not UTF-8": (
        lambda tmp: rewritten(tmp, ir=b"\xff\xfe builtin.module {}"),
        InvalidModelError,
        "the stream IR is invalid: 'utf-8' codec can't decode",
    ),
    "IR of a graph, not a compiled model": (
        lambda tmp: rewritten(tmp, ir=str(relu_graph().module).encode()),
        InvalidModelError,
        "the IR holds 0 'ascend.stream.model' ops; a .ge file holds one compiled model",
    ),
    "IR of an empty module": (
        lambda tmp: rewritten(tmp, ir=b"builtin.module {}"),
        InvalidModelError,
        "the IR holds 0 'ascend.stream.model' ops",
    ),
    "a manifest target no SoC has, against the IR's": (
        lambda tmp: rewritten(tmp, target="Ascend999"),
        InvalidModelError,
        "the manifest's target 'Ascend999' contradicts the IR's #ascend.target ('Ascend910B2')",
    ),
    "a manifest target other than the IR's": (
        lambda tmp: rewritten(tmp, target="Ascend310P3"),
        InvalidModelError,
        "the manifest's target 'Ascend310P3' contradicts",
    ),
    "a manifest optimization level of 99": (
        lambda tmp: rewritten(tmp, optimization_level=99),
        InvalidModelError,
        "optimization_level must be 0, 1, 2 or 3, got 99",
    ),
    "a manifest sink of 'no'": (
        lambda tmp: rewritten(tmp, options={"sink": "no"}),
        InvalidModelError,
        "compile option sink must be True or False, got 'no' (str)",
    ),
    "a manifest max_streams of -5": (
        lambda tmp: rewritten(tmp, options={"max_streams": -5}),
        InvalidModelError,
        "compile option max_streams must be an integer of at least 1, got -5",
    ),
    "a manifest with an unknown option": (
        lambda tmp: rewritten(tmp, options={"turbo": True}),
        InvalidModelError,
        "unknown compile options: turbo",
    ),
    "loading None": (
        lambda tmp: lambda: ge.GraphCompiler.load(None),
        GeError,
        "GraphCompiler.load: path must be a file path",
    ),
    "saving into a missing folder": (
        lambda tmp: lambda: ge.GraphCompiler().compile(relu_graph()).save(tmp / "missing" / "m.ge"),
        GeError,
        "CompiledModel.save cannot write",
    ),
    "saving to None": (
        lambda tmp: lambda: ge.GraphCompiler().compile(relu_graph()).save(None),
        GeError,
        "CompiledModel.save: path must be a file path, got None",
    ),
    # Optimizers
    "a batch size as a string": (
        lambda tmp: memory(batch_size="4"),
        GeError,
        "MemoryOptimizer.calculate_memory_usage: batch_size must be an integer of at least 1, got '4' (str)",
    ),
    "a fractional batch size": (lambda tmp: memory(batch_size=2.5), GeError, "got 2.5 (float)"),
    "a batch size of None": (lambda tmp: memory(batch_size=None), GeError, "batch_size must be an integer"),
    "a seq_len an image cannot take": (
        lambda tmp: memory(seq_len=7),
        GeError,
        "seq_len 7 for input 'x': an image of 8 x 8 keeps its aspect ratio only at H x W",
    ),
    "the memory of None": (
        lambda tmp: lambda: ge.MemoryOptimizer.calculate_memory_usage(None),
        GeError,
        "MemoryOptimizer.calculate_memory_usage takes a ge.Graph, got None",
    ),
    "optimizing None": (
        lambda tmp: lambda: ge.GraphOptimizer().apply_standard_optimizations(None),
        GeError,
        "GraphOptimizer.apply_standard_optimizations takes a ge.Graph, got None",
    ),
    "optimizing an ONNX model": (
        lambda tmp: lambda: ge.GraphOptimizer().apply_operator_fusion(onnx_relu()),
        GeError,
        "(ModelProto) (an ONNX model is read by ge.GraphParser().parse_onnx",
    ),
    "keeping a layer the graph lacks": (
        lambda tmp: keeping(["nonexistent"]),
        GeError,
        "preserve_precision_layers: ['nonexistent'] name no op type, node, graph input or output",
    ),
    "keeping layers given as one string": (
        lambda tmp: keeping("conv"),
        GeError,
        "preserve_precision_layers must be a list of names, got 'conv' (str)",
    ),
    # Run-time inputs
    "a missing input": (
        lambda tmp: backend_run(add_xz(), {"x": np.ones(2, np.float32)}),
        RuntimeInputError,
        "inputs ['z'] are missing; the model takes ['x', 'z']",
    ),
    "strings that are not UTF-8": (
        lambda tmp: backend_run(string_identity(), {"s": np.array([b"\xff\xfe", b"a"], dtype=object)}),
        RuntimeInputError,
        "input 's' holds bytes that are not UTF-8 text at index 0",
    ),
    "a string input holding None": (
        lambda tmp: backend_run(string_identity(), {"s": np.array([None, "a"], dtype=object)}),
        RuntimeInputError,
        "input 's' is an object array holding None (NoneType) at index 0; it must be string",
    ),
    "a string input holding an int": (
        lambda tmp: backend_run(string_identity(), {"s": np.array(["a", 3], dtype=object)}),
        RuntimeInputError,
        "input 's' is an object array holding 3 (int) at index 1",
    ),
    "a float input holding None, through the backend": (
        lambda tmp: backend_run(
            add_xz(), {"x": np.array([1.0, None], dtype=object), "z": np.ones(2, np.float32)}
        ),
        RuntimeInputError,
        "input 'x' is an object array holding None (NoneType) at index 1; it must be float",
    ),
    "a float input holding None, through the executor": (
        lambda tmp: executor_run(np.array([1.0, None], dtype=object)),
        RuntimeInputError,
        "input 'x' is an object array holding None (NoneType) at index 1; it must be float32",
    ),
    "a ragged nested list for an input": (
        lambda tmp: executor_run([[[1.0], [1.0, 2.0]]]),
        RuntimeInputError,
        "input 'x' is not an array (float32): setting an array element with a sequence",
    ),
    "launch_times that is no list": (
        lambda tmp: executor_run(np.ones(2, np.float32), launch_times=()),
        GeError,
        "launch_times is a list that receives each launch's time, got tuple",
    ),
    "a layer whose generated weight is too large to draw": (
        lambda tmp: conv(out_channels=2**31),
        GeError,
        "drawing a weight of shape [2147483648, 1, 3, 3] would take 154,618,822,656 bytes of float64, "
        "over the 4,294,967,296 the builder draws; pass the layer its weight values instead",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_api_input_gets_a_clear_error(case: str, tmp_path: Path) -> None:
    build, error, fragment = CASES[case]
    call = build(tmp_path)
    with pytest.raises(error) as raised:
        call()
    assert fragment in str(raised.value), str(raised.value)


def test_sizes_take_numpy_integers_and_pairs() -> None:
    g = ge.Graph(seed=np.int64(1))
    x = g.add_input("x", [1, 2, 6, 6])
    y = g.add_conv2d(
        x, out_channels=np.int32(2), kernel_size=(3, np.int64(1)), stride=[1, 1], padding=np.array([1, 0])
    )
    y = g.add_reshape(g.add_maxpool(y, kernel_size=2), np.array([1, -1]))
    assert y.shape == (1, 2 * 3 * 3)
    assert g.add_transpose(g.add_reshape(y, (2, 9)), np.array([1, 0])).shape == (9, 2)


def test_outputs_of_one_tensor_under_two_names() -> None:
    g = ge.Graph()
    y = g.add_relu(g.add_input("x", [2]))
    g.add_output(y, "a")
    g.add_output(y, "b")
    assert ge.GraphCompiler().compile(g).input_names == ["x"]
    assert g.outputs == ["a", "b"]


def test_a_target_found_through_ge_soc_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SoC of one's own is a known name once its folder is on GE_SOC_PATH."""
    from ge.soc import DEFAULT_SOC, _search_path

    builtin = next(p for p in _search_path() if (p / f"{DEFAULT_SOC}.json").is_file())
    (tmp_path / "MySoc.json").write_text((builtin / f"{DEFAULT_SOC}.json").read_text())
    monkeypatch.setenv("GE_SOC_PATH", str(tmp_path))
    assert (
        ge.GraphCompiler().compile(relu_graph(), target="MySoc", optimization_level=np.int64(1)).num_operators
        == 1
    )


def test_a_rewritten_manifest_that_is_right_loads(tmp_path: Path) -> None:
    """The rewriting of the .ge cases keeps a valid file valid."""
    loaded = rewritten(tmp_path, options={"precision_mode": "force_fp16", "max_streams": 2, "sink": False})()
    assert loaded.target == "Ascend910B2" and loaded.options["max_streams"] == 2


def test_layers_kept_by_op_type_node_and_graph_ends() -> None:
    kept = ge.GraphOptimizer().apply_mixed_precision_optimization(
        cnn(), preserve_precision_layers=["input", "output", "conv", "relu", "x"]
    )
    assert [n.op_type for n in kept.nodes][:2] == ["conv2d", "relu"]


def test_seq_len_counts_the_positions_of_an_image() -> None:
    """seq_len is H x W for an [N, C, H, W] input: 8 x 8 changes nothing, 16 x 16 is 4 times the
    positions, and the arena grows as the model compiled at 16 x 16 has it."""
    plain = ge.MemoryOptimizer.calculate_memory_usage(cnn())
    assert ge.MemoryOptimizer.calculate_memory_usage(cnn(), seq_len=64).arena_bytes == plain.arena_bytes
    larger = ge.MemoryOptimizer.calculate_memory_usage(cnn(), batch_size=2, seq_len=256)
    g = ge.Graph()
    y = g.add_relu(g.add_conv2d(g.add_input("x", [2, 3, 16, 16]), out_channels=4, kernel_size=3, padding=1))
    g.add_output(g.add_linear(g.add_flatten(g.add_global_avgpool(y)), out_features=3))
    native = ge.GraphCompiler().compile(g, techniques=["memory-reuse"]).memory
    assert larger.arena_bytes == native.arena_bytes > plain.arena_bytes


def test_strings_given_as_python_objects_or_utf8_bytes_run() -> None:
    import ge.backend

    rep = ge.backend.prepare(string_identity())
    (out,) = rep.run({"s": np.array(["é", b"\xc3\xa9t\xc3\xa9"], dtype=object)})
    assert out.tolist() == ["é", "été"]


def test_every_graph_parameter_is_checked() -> None:
    """Each parameter of a public `Graph` method has a check: a tensor one, a named one, or a
    method's own; a new parameter without one fails here. `set_outputs` and `visualize` check
    their own (the latter in ge.visualize, and compile options as `compile` does)."""
    import inspect

    from ge.graph import ARGUMENTS, METHOD_ARGUMENTS, TENSORS

    unchecked = []
    for name, method in inspect.getmembers(ge.Graph, inspect.isfunction):
        if name.startswith("_") and name != "__init__" or name in ("set_outputs", "visualize"):
            continue
        for parameter in list(inspect.signature(method).parameters)[1:]:
            known = parameter in TENSORS or parameter == "inputs" or parameter in ARGUMENTS
            if not known and (name, parameter) not in METHOD_ARGUMENTS:
                unchecked.append(f"{name}({parameter})")
    assert unchecked == []


def test_set_outputs_keeps_the_old_outputs_when_one_is_bad() -> None:
    g = ge.Graph()
    x = g.add_input("x", [2])
    g.add_output(g.add_relu(x), "y")
    with pytest.raises(GeError, match="takes a Tensor of this graph"):
        g.set_outputs([(x, "a"), (None, "b")])
    assert g.outputs == ["y"]
