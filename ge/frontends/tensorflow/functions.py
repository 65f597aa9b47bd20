"""Function calls of a frozen GraphDef, inlined before import.

Freezing keeps a call to a function of the graph's library where TensorFlow must compile the
function whole: Keras 3's grouped Conv2D (ConvNeXt's depthwise convolutions) runs through a
`jit_compile` function, which stays a `StatefulPartitionedCall`. Such a call is replaced by the
function's nodes, named `<call>/<node>`, and an `IdentityN` named as the call that gathers the
function's results, so the call's consumers read them unchanged:

    call = StatefulPartitionedCall(w, x) {f = conv}      conv(a, b): c = Conv2D(b, a); return c
      ->  call/c = Conv2D(x, w);  call = IdentityN(call/c)

Inside a function, a node's output is named `node:argument:index` (the op's output argument);
`OUTPUT_ARGUMENTS` gives the order of the ops with several, so that the name becomes the flat
`node:index` of a graph.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from ge.errors import InvalidModelError, UnsupportedOperatorError

from .importer import Importer, Node, NodeDef

CALLS = ("PartitionedCall", "StatefulPartitionedCall")

MAX_DEPTH = 32
"""Calls nested deeper than this are refused (a function that calls itself)."""

OUTPUT_ARGUMENTS = {
    "FusedBatchNorm": ("y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"),
    "FusedBatchNormV3": (
        "y",
        "batch_mean",
        "batch_variance",
        "reserve_space_1",
        "reserve_space_2",
        "reserve_space_3",
    ),
    "Switch": ("output_false", "output_true"),
    "Merge": ("output", "value_index"),
    "TopKV2": ("values", "indices"),
    "Unique": ("y", "idx"),
    "MaxPoolWithArgmax": ("output", "argmax"),
}
"""The output arguments of the ops with several, in order (each one tensor); an op with one
output argument (a list or a tensor) numbers its outputs by the index alone."""


def inline_calls(graph_def):
    """The GraphDef with every PartitionedCall and StatefulPartitionedCall replaced by its
    function's nodes (the same object when it has none)."""
    if not any(node.op in CALLS for node in graph_def.node):
        return graph_def
    inlined = type(graph_def)()
    inlined.CopyFrom(graph_def)
    del inlined.node[:]
    inlined.node.extend(expand_calls(list(graph_def.node), library(graph_def)))
    return inlined


def library(graph_def) -> dict[str, object]:
    """The GraphDef's functions by name."""
    return {f.signature.name: f for f in graph_def.library.function}


def expand_calls(nodes: list[NodeDef], functions: Mapping[str, object]) -> list[NodeDef]:
    """`nodes` with every call replaced by the nodes of the function it calls, recursively."""
    expanded = []
    pending = deque((node, 0) for node in nodes)
    while pending:
        node, depth = pending.popleft()
        if node.op not in CALLS:
            expanded.append(node)
            continue
        if depth >= MAX_DEPTH:
            raise UnsupportedOperatorError(
                f"{node.op} at node '{node.name}': calls nested more than {MAX_DEPTH} deep (recursion?)"
            )
        pending.extend((inner, depth + 1) for inner in _inline(node, functions))
    return expanded


def call_function(
    imp: Importer, caller: Node, function: str, arguments: list[object], label: str
) -> list[object]:
    """Imports the nodes of `function` (of the GraphDef's library) on `arguments` (values the
    importer holds) under the names `<label>/<node>`, and returns its results: the body of a
    functional While or If, once per call."""
    if function not in imp.functions:
        raise caller.invalid(f"calls '{function}', which the graph's library lacks")
    call = type(caller.proto)(name=label, op="PartitionedCall")
    call.attr["f"].func.name = function
    for index, value in enumerate(arguments):
        imp.values[f"{label}/argument{index}:0"] = value
        call.input.append(f"{label}/argument{index}")
    nodes = expand_calls([call], imp.functions)
    unsupported = sorted({n.op for n in nodes if n.op not in imp.converters})
    if unsupported:
        raise caller.fail(f"function '{function}' uses ops ge does not support: {', '.join(unsupported)}")
    for node in _in_data_order(nodes):
        imp.convert(node)
    count = len(imp.functions[function].signature.output_arg)  # pyright: ignore[reportAttributeAccessIssue]
    return [imp.tensor(f"{label}:{index}", caller.name) for index in range(count)]


def _in_data_order(nodes: list[NodeDef]) -> list[NodeDef]:
    by_name = {node.name: node for node in nodes}
    order, done = [], set()
    for root in nodes:
        stack = [(root.name, False)]
        while stack:
            name, ready = stack.pop()
            if ready:
                order.append(by_name[name])
                continue
            if name in done:
                continue
            done.add(name)
            stack.append((name, True))
            for reference in by_name[name].input:
                source = reference.lstrip("^").partition(":")[0]
                if source in by_name and source not in done:
                    stack.append((source, False))
    return order


def _inline(call: NodeDef, functions: Mapping[str, object]) -> list[NodeDef]:
    """The function's nodes renamed under the call's name, and the IdentityN that replaces it."""
    name = call.attr["f"].func.name
    if name not in functions:
        raise InvalidModelError(
            f"{call.op} at node '{call.name}' calls '{name}', which the graph's library lacks"
        )
    function = functions[name]
    signature = function.signature  # pyright: ignore[reportAttributeAccessIssue]
    if any(a.number_attr or a.type_list_attr for a in (*signature.input_arg, *signature.output_arg)):
        raise UnsupportedOperatorError(
            f"{call.op} at node '{call.name}': function '{name}' takes or returns lists"
        )
    arguments = [i for i in call.input if not i.startswith("^")]
    if len(arguments) != len(signature.input_arg):
        raise InvalidModelError(
            f"{call.op} at node '{call.name}' passes {len(arguments)} inputs to '{name}', which takes "
            f"{len(signature.input_arg)}"
        )
    outer = {a.name: reference for a, reference in zip(signature.input_arg, arguments, strict=True)}
    ops = {n.name: n.op for n in function.node_def}  # pyright: ignore[reportAttributeAccessIssue]
    prefix = f"{call.name}/"

    def resolve(reference: str) -> str:
        control = reference.startswith("^")
        reference = reference.lstrip("^")
        if reference in outer:
            source = outer[reference]
            return "^" + source.lstrip("^").partition(":")[0] if control else source
        node, _, rest = reference.partition(":")
        if node not in ops:
            raise InvalidModelError(
                f"function '{name}' (called at node '{call.name}') reads '{reference}', which it "
                "does not define"
            )
        if control or not rest:
            return ("^" if control else "") + prefix + node
        argument, _, index = rest.partition(":")
        position = int(index or 0)
        order = OUTPUT_ARGUMENTS.get(ops[node])
        if order is not None:
            if argument not in order:
                raise InvalidModelError(
                    f"function '{name}' reads output '{argument}' of {ops[node]} node '{node}'"
                )
            position += order.index(argument)
        return f"{prefix}{node}:{position}"

    nodes = []
    for inner in function.node_def:  # pyright: ignore[reportAttributeAccessIssue]
        if any(value.placeholder for value in inner.attr.values()):
            raise UnsupportedOperatorError(
                f"{call.op} at node '{call.name}': function '{name}' has attributes set by its caller"
            )
        copy = type(inner)()
        copy.CopyFrom(inner)
        copy.name = prefix + inner.name
        del copy.input[:]
        copy.input.extend(resolve(i) for i in inner.input)
        nodes.append(copy)
    results = type(call)(name=call.name, op="IdentityN")
    results.input.extend(resolve(function.ret[a.name]) for a in signature.output_arg)  # pyright: ignore[reportAttributeAccessIssue]
    nodes.append(results)
    return nodes
