"""What of an ONNX model to import, as atc's `--input_shape` and `--out_nodes` choose it: input
shapes fixed before import (so every shape after them is static), static input dimensions made
dynamic for gears (`with_dynamic_dims`), and the values that become the graph's outputs (what only
they need is imported; the rest is left out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx

from ge.arguments import shown
from ge.errors import CompileError


def check_input_shapes(
    model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[int]]
) -> dict[str, list[int]]:
    """`input_shapes` as lists, after checking each names a graph input, has its rank, and keeps
        every static dimension the model declares; -1 keeps the model's dimension (its size, or a
    dynamic one left dynamic)."""
    if not isinstance(input_shapes, Mapping):
        raise CompileError(f"input_shapes takes a dict of shapes by input name, got {shown(input_shapes)}")
    inputs = {info.name: info for info in graph_inputs(model)}
    checked = {}
    for name, shape in input_shapes.items():
        if name not in inputs:
            raise CompileError(
                f"input_shapes names '{name}', which is no input of the model (its inputs: "
                f"{', '.join(inputs) or 'none'})"
            )
        if isinstance(shape, str | bytes) or not isinstance(shape, Sequence):
            raise CompileError(f"input_shapes['{name}'] must be a list of dimensions, got {shown(shape)}")
        given = list(shape)
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= -1 for d in given):
            raise CompileError(
                f"input_shapes['{name}'] takes sizes of at least 0, or -1 to keep the model's, got {given}"
            )
        tensor = inputs[name].type.tensor_type
        if inputs[name].type.HasField("tensor_type") and tensor.HasField("shape"):
            declared = tensor.shape.dim
            if len(declared) != len(given):
                raise CompileError(
                    f"input '{name}' has {len(declared)} dimensions in the model, the shape given "
                    f"{given} has {len(given)}"
                )
            for axis, (dim, size) in enumerate(zip(declared, given, strict=True)):
                if dim.HasField("dim_value") and size != -1 and size != dim.dim_value:
                    raise CompileError(
                        f"input '{name}' axis {axis} is {dim.dim_value} in the model, the shape given "
                        f"{given} makes it {size} (only a dynamic dimension can be chosen)"
                    )
            # -1 keeps what the model declares: its size where it has one.
            given = [
                dim.dim_value if size == -1 and dim.HasField("dim_value") else size
                for dim, size in zip(declared, given, strict=True)
            ]
        checked[name] = given
    return checked


def with_dynamic_dims(model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[int]]) -> onnx.ModelProto:
    """A copy of `model` in which every static input dimension that `input_shapes` marks -1 is
    dynamic (a `dim_param` named `<input>_<axis>`), as atc's `--input_shape` marks a dimension for
    gears; `model` itself when none is. The shapes are checked first as `check_input_shapes`
    checks them. Where a dimension was made dynamic, the declared shapes of the graph's outputs
    and values may no longer hold, so they are dropped and their element types kept (as ONNX
    Runtime does when input shapes are overridden): each gear's import infers them again."""
    check_input_shapes(model, input_shapes)
    weights = {init.name for init in model.graph.initializer}
    marked = {
        (index, axis)
        for index, info in enumerate(model.graph.input)
        if info.name in input_shapes and info.name not in weights
        # an input of no declared shape has no dimension to relax; check_input_shapes checked the ranks
        for axis, (dim, size) in enumerate(
            zip(info.type.tensor_type.shape.dim, input_shapes[info.name], strict=False)
        )
        if size == -1 and dim.HasField("dim_value")
    }
    if not marked:
        return model
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for index, axis in sorted(marked):
        info = copy.graph.input[index]
        info.type.tensor_type.shape.dim[axis].dim_param = f"{info.name}_{axis}"  # clears dim_value
    for info in (*copy.graph.output, *copy.graph.value_info):
        if info.type.HasField("tensor_type"):
            info.type.tensor_type.ClearField("shape")
    return copy


def with_outputs(model: onnx.ModelProto, outputs: Sequence[str]) -> onnx.ModelProto:
    """A copy of `model` whose graph outputs are the values named `outputs` (node outputs, graph
    inputs or initializers), declared as the model declares them where it does."""
    if isinstance(outputs, str) or not isinstance(outputs, Sequence) or not outputs:
        raise CompileError(f"outputs takes a non-empty list of value names, got {shown(outputs)}")
    graph = model.graph
    produced = [name for node in graph.node for name in node.output if name]
    known = set(produced) | {i.name for i in graph.input} | {i.name for i in graph.initializer}
    declared = {info.name: info for info in (*graph.value_info, *graph.input, *graph.output)}
    for name in outputs:
        if name not in known:
            sample = ", ".join(produced[:8]) + (", ..." if len(produced) > 8 else "")
            raise CompileError(f"output '{name}' is no value of the model (its node outputs: {sample})")
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    del copy.graph.output[:]
    for name in dict.fromkeys(outputs):
        info = onnx.ValueInfoProto()
        if name in declared:
            info.CopyFrom(declared[name])
        else:
            info.name = name
        copy.graph.output.append(info)
    return copy


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The graph's inputs that are not initializers (an old model lists its weights as inputs)."""
    weights = {init.name for init in model.graph.initializer}
    return [info for info in model.graph.input if info.name not in weights]


def node_output(model: onnx.ModelProto, node: str, index: int) -> str:
    """The value name of output `index` of the node named `node` (atc's `--out_nodes node:index`)."""
    nodes = {n.name: n for n in model.graph.node if n.name}
    if node not in nodes:
        sample = ", ".join(list(nodes)[:8]) + (", ..." if len(nodes) > 8 else "")
        raise CompileError(f"out node '{node}' is no node of the model (its nodes: {sample or 'unnamed'})")
    names = [name for name in nodes[node].output]
    if not 0 <= index < len(names) or not names[index]:
        raise CompileError(f"node '{node}' has {len(names)} output(s); output {index} does not exist")
    return names[index]
