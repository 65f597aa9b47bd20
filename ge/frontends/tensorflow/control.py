"""TensorFlow's lowered control flow and tensor lists, unrolled at import time.

A frozen Keras RNN (LSTM, GRU, SimpleRNN, Bidirectional) is a `while` loop that
`convert_variables_to_constants_v2` lowers to TensorFlow 1's dataflow form: a frame of nodes
entered through `Enter`, whose loop variables circulate `Merge -> Switch -> body -> NextIteration ->
Merge` while `LoopCond` holds, and leave through `Exit`; the time steps are read from and written
to tensor lists (`TensorListFromTensor`, `TensorListGetItem`, `TensorListSetItem`,
`TensorListStack`). ge graphs have no loops, so a frame is converted once per iteration, as long as
its condition is known at import time (a fixed sequence length):

    iteration k: Merge = Enter (k = 0) or NextIteration of k - 1;  the body's ops, named `.../k`
    LoopCond false: the Exits take the Merge values, the loop is done

A `Switch` whose predicate is known routes its input to one output and makes the other dead; ops
reading a dead value are dead too (their converter does not run) and `Merge` takes its live input,
as TensorFlow's executor does. Tensor lists live only at import time (`TensorList`): their items
are graph values, and a stack of them is one concat.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import int_attr
from ge.errors import UnsupportedOperatorError
from ge.graph import Tensor

from .functions import call_function
from .importer import DEAD, Converter, Importer, Node, NodeDef

MAX_ITERATIONS = 100_000
"""A loop that runs longer than this at import time is refused (its condition never fails)."""


@dataclass
class TensorList:
    """A TensorFlow tensor list at import time: one graph value (or None, unset) per item; a list
    made from a tensor keeps it as `source` and takes its items out as they are read."""

    items: list[Tensor | None]
    source: Tensor | None = None

    def with_item(self, index: int, item: Tensor) -> TensorList:
        items = list(self.items)
        items[index] = item
        return TensorList(items, self.source)


@dataclass
class Frame:
    """The nodes of one while loop (its `frame_name`), in data order without the back edges."""

    name: str
    nodes: list[str] = field(default_factory=list)


def find_frames(nodes: Mapping[str, NodeDef]) -> dict[str, str]:
    """The frame of every node inside a loop: the nodes reached from the frame's `Enter` nodes
    (through data and control edges) up to its `Exit` nodes. A loop inside a loop is refused."""
    consumers: dict[str, list[str]] = {}
    for name, node in nodes.items():
        for reference in node.input:
            consumers.setdefault(reference.lstrip("^").partition(":")[0], []).append(name)
    frame_of: dict[str, str] = {}
    for name, node in nodes.items():
        if node.op != "Enter":
            continue
        frame = node.attr["frame_name"].s.decode()
        stack = [name]
        while stack:
            current = stack.pop()
            owner = frame_of.get(current)
            if owner == frame:
                continue
            if owner is not None or (
                nodes[current].op == "Enter" and current != name and _frame(nodes[current]) != frame
            ):
                raise UnsupportedOperatorError(
                    f"node '{current}' is in a while loop inside the loop '{frame}' (or joins two loops): "
                    "nested loops are not supported"
                )
            frame_of[current] = frame
            if nodes[current].op != "Exit":
                stack.extend(consumers.get(current, []))
    return frame_of


def back_edge(nodes: Mapping[str, NodeDef], consumer: str, reference: str) -> bool:
    """Whether `reference`, an input of `consumer`, closes a loop: a NextIteration into a Merge."""
    source = reference.lstrip("^").partition(":")[0]
    return nodes[consumer].op == "Merge" and source in nodes and nodes[source].op == "NextIteration"


def unroll(imp: Importer, frame: Frame, nodes: Mapping[str, NodeDef]) -> None:
    """Converts the frame's nodes once per iteration while its LoopCond, known at import time,
    holds; its Exits then hold the loop's results."""
    body = [nodes[name] for name in frame.nodes]
    for proto in body:
        if proto.op == "Enter":
            imp.convert(proto)
    merges = [p for p in body if p.op == "Merge"]
    conditions = [p for p in body if p.op == "LoopCond"]
    if len(conditions) != 1:
        raise UnsupportedOperatorError(
            f"while loop '{frame.name}' has {len(conditions)} LoopCond nodes: not a lowered while loop"
        )
    condition = conditions[0]
    state: dict[str, object] = {}
    backs: dict[str, str] = {}
    for merge in merges:
        data = [i for i in merge.input if not i.startswith("^")]
        entry = [i for i in data if not back_edge(nodes, merge.name, i)]
        back = [i for i in data if back_edge(nodes, merge.name, i)]
        if len(entry) != 1 or len(back) != 1:
            raise UnsupportedOperatorError(
                f"Merge at node '{merge.name}' of while loop '{frame.name}' needs one entry and one "
                f"NextIteration, got inputs {data}"
            )
        state[merge.name] = imp.tensor(entry[0], merge.name)
        backs[merge.name] = back[0]
    for iteration in range(MAX_ITERATIONS):
        for merge in merges:
            imp.values[f"{merge.name}:0"] = state[merge.name]  # pyright: ignore[reportArgumentType]
            imp.dead_nodes.discard(merge.name)
        known = None
        for proto in body:
            if proto.op in ("Enter", "Merge"):
                continue
            imp.convert(proto, f"{proto.name}/{iteration}")
            if proto is condition:
                known = _known_condition(imp, condition, frame)
        if known is None:  # the condition read a dead value
            raise UnsupportedOperatorError(
                f"LoopCond at node '{condition.name}' of while loop '{frame.name}' has no value"
            )
        if not bool(np.asarray(known).reshape(-1)[0]):
            return
        for merge in merges:
            state[merge.name] = imp.tensor(backs[merge.name], merge.name)
    raise UnsupportedOperatorError(
        f"while loop '{frame.name}' still runs after {MAX_ITERATIONS} iterations at import time"
    )


def _known_condition(imp: Importer, condition: NodeDef, frame: Frame) -> np.ndarray:
    value = imp.values.get(f"{condition.name}:0")
    known = imp.known_value(value) if isinstance(value, Tensor) else None
    if known is None:
        raise UnsupportedOperatorError(
            f"LoopCond at node '{condition.name}': the condition of while loop '{frame.name}' is not "
            "known when the model is imported (a sequence length that depends on the input?); ge "
            "unrolls loops, so their trip count must be fixed: give input_shapes with the "
            "sequence length",
            category="input",
        )
    return known


def _frame(node: NodeDef) -> str:
    return node.attr["frame_name"].s.decode()


# Converters ---------------------------------------------------------------------------------


def _pass(imp: Importer, node: Node) -> list[Any]:
    """Enter, Exit, NextIteration, LoopCond: the value itself (the loop is unrolled around them)."""
    return [node.raw_inputs[0]]


def _switch(imp: Importer, node: Node) -> list[Any]:
    """Output 0 when the predicate is false, 1 when true; the other is dead."""
    data, predicate = node.raw_inputs[:2]
    known = imp.known_value(predicate) if isinstance(predicate, Tensor) else None
    if known is None:
        raise node.fail(
            "its predicate is not known when the model is imported: ge graphs have no branches "
            "(a tf.cond on a computed value)"
        )
    return [DEAD, data] if bool(np.asarray(known).reshape(-1)[0]) else [data, DEAD]


def _merge(imp: Importer, node: Node) -> list[Any]:
    """The live input, and its index (Merge outside a loop joins the two sides of a tf.cond). A
    Merge whose inputs are all dead is dead, as in TensorFlow's executor: the merge of a cond
    nested in the branch not taken, or in a loop's last, dead iteration."""
    live = [(i, v) for i, v in enumerate(node.raw_inputs) if v is not DEAD]
    if not live:
        return [DEAD, DEAD]
    if len(live) != 1:
        raise node.fail(f"{len(live)} of its inputs are live: a Merge takes exactly one")
    index, value = live[0]
    return [value, np.array(index, dtype=np.int32)]


def _while(imp: Importer, node: Node) -> list[Any]:
    """While(inputs) {cond, body}: the body function imported once per iteration while the cond
    function, known at import time, holds (a loop that freezing left unlowered)."""
    cond, body = (node.proto.attr[key].func.name for key in ("cond", "body"))
    values = list(node.raw_inputs)
    for iteration in range(MAX_ITERATIONS):
        (go_on,) = call_function(imp, node, cond, values, f"{node.name}/cond{iteration}")[:1]
        known = imp.known_value(go_on) if isinstance(go_on, Tensor) else None
        if known is None:
            raise node.fail(
                "its condition is not known when the model is imported (a sequence length that depends "
                "on the input?); ge unrolls loops, so their trip count must be fixed: give input_shapes "
                "with the sequence length"
            )
        if not bool(np.asarray(known).reshape(-1)[0]):
            return values
        values = call_function(imp, node, body, values, f"{node.name}/{iteration}")
    raise node.fail(f"still runs after {MAX_ITERATIONS} iterations at import time")


def _if(imp: Importer, node: Node) -> list[Any]:
    """If(cond, inputs) {then_branch, else_branch}: the branch the known condition picks."""
    condition = node.raw_inputs[0]
    known = imp.known_value(condition) if isinstance(condition, Tensor) else None
    if known is None:
        raise node.fail(
            "its condition is not known when the model is imported: ge graphs have no branches "
            "(a tf.cond on a computed value)"
        )
    branch = "then_branch" if bool(np.asarray(known).reshape(-1)[0]) else "else_branch"
    return call_function(
        imp, node, node.proto.attr[branch].func.name, node.raw_inputs[1:], f"{node.name}/{branch}"
    )


def _list_from_tensor(imp: Importer, node: Node) -> list[Any]:
    x = node.inputs[0]
    if not x.shape or x.shape[0] < 0:
        raise node.fail(f"needs a static leading dimension, got {list(x.shape)}")
    return [TensorList([None] * x.shape[0], x)]


def _list_reserve(imp: Importer, node: Node) -> list[Any]:
    count = int(node.value(1).reshape(()))
    if count < 0:
        raise node.fail("needs a known number of elements")
    return [TensorList([None] * count)]


def _list_get_item(imp: Importer, node: Node) -> list[Any]:
    items = _tensor_list(node, 0)
    index = _index(node, items)
    item = items.items[index]
    if item is None:
        if items.source is None:
            raise node.fail(f"reads item {index} of a tensor list before it is set")
        position = imp.add_constant(f"{node.name}.index", np.array(index, dtype=np.int64))
        item = imp.g.add_op(ops.GatherOp, [items.source, position], {"axis": int_attr(0)}, node.name)
    return [item]


def _list_set_item(imp: Importer, node: Node) -> list[Any]:
    items = _tensor_list(node, 0)
    item = node.raw_inputs[2]
    if not isinstance(item, Tensor):
        raise node.invalid("sets an item that is not a tensor")
    return [items.with_item(_index(node, items), item)]


def _list_stack(imp: Importer, node: Node) -> list[Any]:
    items = _tensor_list(node, 0)
    if items.source is not None and all(i is None for i in items.items):
        return [items.source]
    unset = [i for i, item in enumerate(items.items) if item is None]
    if unset:
        raise node.fail(f"stacks a tensor list whose items {unset} are not set")
    parts = [
        imp.g.add_reshape(item, [1, *item.shape], f"{node.name}.{i}")
        for i, item in enumerate(items.items)
        if item is not None  # every item is set (checked above)
    ]

    return [parts[0] if len(parts) == 1 else imp.g.add_concat(parts, 0, node.name)]


def _list_length(imp: Importer, node: Node) -> list[Any]:
    return [np.array(len(_tensor_list(node, 0).items), dtype=np.int32)]


def _tensor_list(node: Node, index: int) -> TensorList:
    value = node.raw_inputs[index]
    if not isinstance(value, TensorList):
        raise node.invalid(f"input #{index} is not a tensor list")
    return value


def _index(node: Node, items: TensorList) -> int:
    index = int(node.value(1).reshape(()))
    if not -len(items.items) <= index < len(items.items):
        raise node.invalid(f"index {index} is outside the tensor list of {len(items.items)} items")
    return index % len(items.items)


CONVERTERS: dict[str, Converter] = {
    "Enter": _pass,
    "Exit": _pass,
    "NextIteration": _pass,
    "LoopCond": _pass,
    "Switch": _switch,
    "Merge": _merge,
    "While": _while,
    "StatelessWhile": _while,
    "If": _if,
    "StatelessIf": _if,
    "TensorListFromTensor": _list_from_tensor,
    "TensorListReserve": _list_reserve,
    "TensorListGetItem": _list_get_item,
    "TensorListSetItem": _list_set_item,
    "TensorListStack": _list_stack,
    "TensorListLength": _list_length,
}
