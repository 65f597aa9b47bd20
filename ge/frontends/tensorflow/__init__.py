"""The TensorFlow frontend: a frozen GraphDef (binary `.pb` or text `.pbtxt`) into a `ge.Graph`.

The GraphDef is read with TensorBoard's copy of TensorFlow's protos (`pip install ge[tensorflow]`),
so TensorFlow itself is not needed; a SavedModel directory is frozen with TensorFlow when it is
installed. Each supported op has one converter in `CONVERTERS` (by TensorFlow op type), grouped by
family in this package's modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ge.errors import InvalidModelError, UnsupportedOperatorError
from ge.graph import Graph, Tensor
from ge.limits import DEFAULT_MAX_TENSOR_BYTES

from ..common import unsupported_operators_error
from . import control, elementwise, indexing, nn, spatial, tensor
from .control import Frame, back_edge, find_frames, unroll
from .functions import inline_calls, library
from .importer import DTYPES, Converter, Importer, Node, NodeDef, tensor_array, tensor_name


def _placeholder(imp: Importer, node: Node) -> list[Tensor]:
    shapes = imp.input_shapes
    dtype = node.dtype("dtype")
    if node.name in shapes:
        shape = [int(d) for d in shapes[node.name]]
    else:
        proto = node.proto.attr["shape"].shape if "shape" in node.proto.attr else None
        if proto is None or proto.unknown_rank:
            raise UnsupportedOperatorError(
                f"Placeholder '{node.name}' has no known rank: give its shape in input_shapes",
                category="input",
            )
        shape = [int(d.size) for d in proto.dim]
    return [imp.g.add_input(node.name, shape, dtype)]


def _placeholder_with_default(imp: Importer, node: Node) -> list[Tensor]:
    """Its default, unless input_shapes names it: then it is a graph input."""
    if node.name in imp.input_shapes:
        shape = [int(d) for d in imp.input_shapes[node.name]]
        return [imp.g.add_input(node.name, shape, node.dtype("dtype"))]
    return [node.inputs[0]]


def _const(imp: Importer, node: Node) -> list[np.ndarray]:
    return [tensor_array(node.proto.attr["value"].tensor, f"Const '{node.name}'", imp.max_tensor_bytes)]


CONVERTERS: dict[str, Converter] = {
    "Placeholder": _placeholder,
    "PlaceholderWithDefault": _placeholder_with_default,
    "Const": _const,
    **elementwise.CONVERTERS,
    **nn.CONVERTERS,
    **tensor.CONVERTERS,
    **spatial.CONVERTERS,
    **indexing.CONVERTERS,
    **control.CONVERTERS,
}
"""Every supported TensorFlow op type and its converter."""

SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")
"""The files that make a directory a SavedModel (TensorFlow writes one of them)."""

NOT_OUTPUTS = ("NoOp", "Const", "Placeholder", "PlaceholderWithDefault")
"""Ops whose results are never default graph outputs."""


def load_graph_def(source: str | Path | bytes):
    """A `GraphDef` from a `.pb` (binary) or `.pbtxt` (text) file, or serialized bytes; a
    SavedModel directory is frozen first, which needs TensorFlow."""
    from google.protobuf import text_format
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto.graph_pb2 import (
        GraphDef,  # pyright: ignore[reportAttributeAccessIssue]  # protoc's module defines it when imported
    )

    if isinstance(source, bytes | bytearray):
        data, what, text = bytes(source), "the given bytes", False
    elif isinstance(source, str | Path):
        path = Path(source)
        what = f"'{path}'"
        if path.is_dir():
            if not any((path / name).is_file() for name in SAVED_MODEL_FILES):
                raise InvalidModelError(
                    f"'{path}' is a directory without saved_model.pb: give a frozen GraphDef (.pb, "
                    ".pbtxt) or a SavedModel directory"
                )
            return freeze_saved_model(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise InvalidModelError(f"TensorFlow model file '{path}' does not exist") from None
        except OSError as error:
            raise InvalidModelError(f"cannot read TensorFlow model file '{path}': {error}") from None
        text = path.suffix == ".pbtxt"
    else:
        raise InvalidModelError(f"a TensorFlow model is a path or bytes, got {type(source).__name__}")
    if not data:
        raise InvalidModelError(f"{what} is empty (0 bytes): not a TensorFlow GraphDef")
    graph_def = GraphDef()
    try:
        if text:
            text_format.Parse(data.decode(), graph_def)
        else:
            graph_def.ParseFromString(data)
    except (DecodeError, text_format.ParseError, UnicodeDecodeError, ValueError, RuntimeError) as error:
        kind = "text GraphDef (.pbtxt)" if text else "binary GraphDef (.pb)"
        raise InvalidModelError(f"{what} is not a valid TensorFlow {kind}: {error}") from None
    if not graph_def.node:
        raise InvalidModelError(f"{what} holds no node: not a frozen TensorFlow GraphDef")
    return graph_def


def freeze_saved_model(path: Path):
    """The GraphDef of a SavedModel's serving signature, its variables made constants."""
    try:
        import tensorflow as tf
        from tensorflow.python.framework.convert_to_constants import (  # pyright: ignore[reportMissingImports]  # only a SavedModel needs TensorFlow, which the lock leaves out
            convert_variables_to_constants_v2,
        )
    except ImportError:
        raise InvalidModelError(
            f"'{path}' is a SavedModel directory, which needs TensorFlow to be read; freeze it where "
            "TensorFlow is installed: load it with tf.saved_model.load, take "
            "convert_variables_to_constants_v2(model.signatures['serving_default']).graph.as_graph_def() "
            "and write that GraphDef's SerializeToString() to a .pb file"
        ) from None
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto.graph_pb2 import (
        GraphDef,  # pyright: ignore[reportAttributeAccessIssue]  # protoc's module defines it when imported
    )

    try:
        model = tf.saved_model.load(str(path))
        frozen = convert_variables_to_constants_v2(model.signatures["serving_default"])
    except (OSError, KeyError, ValueError) as error:
        raise InvalidModelError(f"cannot freeze the SavedModel '{path}': {error}") from None
    graph_def = GraphDef()
    try:
        graph_def.ParseFromString(frozen.graph.as_graph_def().SerializeToString())
    except DecodeError as error:
        raise InvalidModelError(f"cannot read the frozen SavedModel '{path}': {error}") from None
    return graph_def


def import_tensorflow(
    source,
    outputs: Sequence[str] | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES,
) -> Graph:
    """Imports a frozen GraphDef (a path, bytes or a `GraphDef`); see `GraphParser.parse_tensorflow`."""
    graph_def = inline_calls(source if hasattr(source, "node") else load_graph_def(source))
    nodes = {}
    for node in graph_def.node:
        if node.name in nodes:
            raise InvalidModelError(f"two nodes are named '{node.name}'")
        nodes[node.name] = node
    frame_of = {name: f"while {frame}" for name, frame in find_frames(nodes).items()}
    order = _data_order(nodes, {})
    wanted = _outputs(nodes, outputs)
    needed = _needed(nodes, wanted)
    check_supported([nodes[name] for name in order if name in needed])
    importer = Importer(CONVERTERS, input_shapes, max_tensor_bytes)
    importer.functions = library(graph_def)
    unknown = sorted(
        set(importer.input_shapes) - {n for n, p in nodes.items() if p.op.startswith("Placeholder")}
    )
    if unknown:
        placeholders = sorted(n for n, p in nodes.items() if p.op.startswith("Placeholder"))
        raise InvalidModelError(
            f"input_shapes names {unknown}, which are not placeholders (they are {placeholders})"
        )
    frames: dict[str, Frame] = {}
    for name in order:
        if name in frame_of and name in needed:
            frames.setdefault(frame_of[name], Frame(frame_of[name].removeprefix("while "))).nodes.append(name)
    for unit in _data_order(nodes, frame_of):
        if unit in frames:
            unroll(importer, frames[unit], nodes)
        elif unit in needed and unit not in frame_of:
            importer.convert(nodes[unit])
    for reference in wanted:
        importer.g.add_output(importer.tensor(reference, "the graph outputs"), reference)
    return importer.g


def check_supported(nodes: Sequence[NodeDef]) -> None:
    """Raises one error listing every node (NodeDef) whose op has no converter."""
    unsupported = [
        {"op_type": n.op, "domain": "tensorflow", "node": n.name} for n in nodes if n.op not in CONVERTERS
    ]
    if unsupported:
        raise unsupported_operators_error("TensorFlow", unsupported, describe=_described)


FUNCTIONAL = ("Case", "StatelessCase")
"""Control flow that calls functions: convert_variables_to_constants_v2 lowers it by default
(function calls themselves are inlined, see `functions`)."""


VARIABLES = ("ReadVariableOp", "VarHandleOp", "VariableV2", "Variable", "ResourceGather", "AssignVariableOp")
"""Ops of a graph that still holds variables, which freezing turns into constants."""


def _described(entry: dict) -> str:
    if entry["op_type"] in VARIABLES:
        return (
            f"{entry['op_type']} (a variable: freeze the graph first, with "
            "convert_variables_to_constants_v2(concrete_function))"
        )
    if entry["op_type"] in FUNCTIONAL:
        return (
            f"{entry['op_type']} (functional control flow: freeze with convert_variables_to_constants_v2's "
            "default lower_control_flow=True, which ge reads)"
        )
    return entry["op_type"]


def load_model_file(
    path: str | Path,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    outputs: Sequence[str] | None = None,
) -> Graph:
    """A TensorFlow model file (`.pb`, `.pbtxt`, or a SavedModel directory) as a `Graph`: what
    `ge compile --framework 3` reads."""
    return import_tensorflow(path, outputs=outputs, input_shapes=input_shapes)


def _data_order(nodes: Mapping[str, NodeDef], frame_of: Mapping[str, str]) -> list[str]:
    """The node names in an order where every node comes after the nodes it reads, a loop's
    NextIteration -> Merge edges left out; the nodes of each loop in `frame_of` stand as one unit,
    named after the loop, after everything its nodes read from outside it."""
    members: dict[str, list[str]] = {}
    for name in nodes:
        members.setdefault(frame_of.get(name, name), []).append(name)
    order, state = [], {}
    for root in members:
        stack = [(root, False)]
        while stack:
            unit, done = stack.pop()
            if done:
                state[unit] = 2
                order.append(unit)
                continue
            if state.get(unit) == 2:
                continue
            if state.get(unit) == 1:
                raise InvalidModelError(
                    f"node '{unit}' depends on itself (a cycle): not a frozen inference graph"
                )
            state[unit] = 1
            stack.append((unit, True))
            for name in members[unit]:
                for reference in nodes[name].input:
                    source = reference.lstrip("^").partition(":")[0]
                    if source not in nodes:
                        raise InvalidModelError(f"node '{name}' reads '{reference}', which no node produces")
                    if back_edge(nodes, name, reference):
                        continue
                    source = frame_of.get(source, source)
                    if source == unit or state.get(source) == 2:
                        continue
                    if state.get(source) == 1:
                        raise InvalidModelError(
                            f"node '{name}' depends on itself (a cycle): not a frozen inference graph"
                        )
                    stack.append((source, False))
    return order


def _outputs(nodes: Mapping[str, NodeDef], outputs: Sequence[str] | None) -> list[str]:
    """The output tensors (`name:index`): those given, or output 0 of every node nothing reads."""
    if outputs is not None:
        if isinstance(outputs, str) or not outputs:
            raise InvalidModelError(f"outputs must be a non-empty list of tensor names, got {outputs!r}")
        wanted = [tensor_name(o) for o in outputs]
        for reference in wanted:
            if reference.partition(":")[0] not in nodes:
                raise InvalidModelError(f"output '{reference}' names no node of the graph")
        return wanted
    read = {i.lstrip("^").partition(":")[0] for n in nodes.values() for i in n.input}
    return [f"{name}:0" for name, n in nodes.items() if name not in read and n.op not in NOT_OUTPUTS]


def _needed(nodes: Mapping[str, NodeDef], wanted: list[str]) -> set[str]:
    """The nodes the outputs read, through data edges."""
    needed, stack = set(), [w.partition(":")[0] for w in wanted]
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        stack.extend(i.partition(":")[0] for i in nodes[name].input if not i.startswith("^"))
    return needed


__all__ = [
    "CONVERTERS",
    "DTYPES",
    "check_supported",
    "import_tensorflow",
    "load_graph_def",
    "load_model_file",
]
