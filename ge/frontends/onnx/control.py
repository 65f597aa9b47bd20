"""Converters of control flow: `If`, `Loop` and `Scan`, by specialization and unrolling.

They build no graph op of their own: the values that decide the control flow (If's condition,
Loop's trip count and conditions) are read with the importer's demand mechanism, as shapes are,
and the subgraph that runs is inlined into the graph being imported (`Importer.import_subgraph`).
A decision on a graph input specializes the program on the run's value; a decision on a
computed value makes the backend run the prefix of the graph that computes it, then import again
with the value observed. Scan's length is its inputs' static scan dimension.

If's outputs and Loop's carried values may be sequences and optionals (lists of tensors at
import, see `sequence`); Scan's values, and Loop's scan outputs, are tensors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx

from ge.dialects import graph as ops
from ge.dialects.common import int_attr, ints_attr
from ge.graph import Tensor

from .importer import (
    ELEM_TYPES,
    MAX_UNROLLED_NODES,
    Converter,
    Importer,
    Node,
    ValueNeeded,
    check_declared_type,
    onnx_type,
)
from .values import Value

MAX_TRIPS = 1024
"""Loops and scans that would run more iterations than this are refused (they are unrolled)."""


def _check_tensors(node: Node, graph: onnx.GraphProto, structured: bool = False) -> None:
    """Refuses subgraph values that are not tensors (or, when `structured`, sequences or optionals)."""
    allowed = (None, "tensor_type", *(("sequence_type", "optional_type") if structured else ()))
    for value_info in [*graph.input, *graph.output]:
        kind = value_info.type.WhichOneof("value")
        if kind not in allowed:
            raise node.fail(f"subgraph value '{value_info.name}' of {kind.removesuffix('_type')} type")


def _scalar(node: Node, value: np.ndarray, what: str) -> np.generic:
    array = np.asarray(value)
    if array.size != 1:
        raise node.invalid(f"{what} must hold one value, got shape {list(array.shape)}")
    return array.reshape(-1)[0]


def _demand(imp: Importer, node: Node, name: str) -> np.ndarray:
    """The value of `name` (a value the node computed), as `Node.value` reads an input's."""
    try:
        return imp.demand(name)
    except ValueNeeded as needed:
        needed.consumer = f"{node.op_type} (opset {node.opset}) at node '{node.name}'"
        raise


def _constant(imp: Importer, value: np.ndarray, name: str) -> Tensor:
    return imp.add_constant(name, value)


def _body_input_value(body: onnx.GraphProto, index: int, value: np.ndarray) -> np.ndarray:
    """`value` in the shape the body declares for input `index` (a scalar or a one-element vector)."""
    t = body.input[index].type.tensor_type
    if body.input[index].type.HasField("tensor_type") and t.HasField("shape"):
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
        if all(d == 1 for d in dims):
            return value.reshape(dims)
    return value


def _stack(imp: Importer, node: Node, tensors: Sequence[Tensor], axis: int, name: str) -> Tensor:
    """The tensors, of one shape, stacked along a new `axis`."""
    shape = list(tensors[0].shape)
    if any(list(t.shape) != shape or t.dtype != tensors[0].dtype for t in tensors):
        raise node.fail("a scan output whose shape or dtype changes between iterations")
    if any(d < 0 for d in shape):
        raise node.fail("a scan output with dynamic dimensions")
    expanded = [*shape[:axis], 1, *shape[axis:]]
    parts = [imp.g.add_reshape(t, expanded, f"{name}.{i}") for i, t in enumerate(tensors)]
    return parts[0] if len(parts) == 1 else imp.g.add_concat(parts, axis, name)


# ------------------------------------------------------------------------------------------------
# If
# ------------------------------------------------------------------------------------------------


def _if(imp: Importer, node: Node) -> list[Value]:
    """The branch the condition selects, inlined: the condition must be known at import (a constant,
    or specialized on or observed); the branch outputs may be sequences or optionals."""
    branches = {key: node.attr(key) for key in ("then_branch", "else_branch")}
    for key, branch in branches.items():
        if not isinstance(branch, onnx.GraphProto):
            raise node.invalid(f"attribute '{key}' is missing: If needs then_branch and else_branch graphs")
        _check_tensors(node, branch, structured=True)
        if len(branch.output) != len(node.proto.output):
            raise node.invalid(
                f"attribute '{key}' has {len(branch.output)} outputs, the node {len(node.proto.output)}"
            )
    then_branch, else_branch = branches.values()
    for index, (a, b) in enumerate(zip(then_branch.output, else_branch.output, strict=True)):
        ta, tb = (v.type.tensor_type.elem_type if v.type.HasField("tensor_type") else 0 for v in (a, b))
        if ta and tb and ta != tb:
            names = [onnx.TensorProto.DataType.Name(t) if t in ELEM_TYPES else t for t in (ta, tb)]
            raise node.invalid(
                f"output #{index} is {names[0]} in then_branch ('{a.name}') but {names[1]} in else_branch "
                f"('{b.name}'): both branches must give the same types"
            )
    cond = bool(_scalar(node, node.value(0), "the condition"))
    key = "then_branch" if cond else "else_branch"
    branch, other = branches[key], branches["else_branch" if cond else "then_branch"]
    prefix = f"{node.name}/{'then' if cond else 'else'}/"
    names = imp.import_subgraph(branch, {}, prefix)
    for declared, name in zip(other.output, names, strict=True):
        check_declared_type(
            declared, imp.values[name], f"If at node '{node.name}': the other branch's output"
        )
    return [imp.values[n] for n in names]


# ------------------------------------------------------------------------------------------------
# Loop
# ------------------------------------------------------------------------------------------------


def _loop(imp: Importer, node: Node) -> list[Value | None]:
    """Unrolled, up to 1024 iterations: the trip count and conditions must be known at import (constants,
    or specialized on or observed); loop-carried values may be sequences or optionals."""
    body = node.attr("body")
    if not isinstance(body, onnx.GraphProto):
        raise node.invalid("Loop needs a body graph")
    _check_tensors(node, body, structured=True)
    carried = [t for t in node.inputs[2:]]
    if any(t is None for t in carried):
        raise node.fail("an omitted loop-carried value")
    n_carried = len(carried)
    if len(body.input) != 2 + n_carried or len(body.output) < 1 + n_carried:
        raise node.invalid(
            f"the body has {len(body.input)} inputs and {len(body.output)} outputs "
            f"for {n_carried} loop-carried values"
        )
    n_scan = len(body.output) - 1 - n_carried
    trips = int(_scalar(node, node.value(0), "M")) if node.has_input(0) else None
    if trips is None and not node.has_input(1):
        raise node.invalid("a Loop without trip count nor condition never ends")
    cond_tensor = node.inputs[1] if node.has_input(1) else None
    cond = bool(_scalar(node, node.value(1), "the condition")) if cond_tensor is not None else True
    if cond_tensor is None:
        cond_tensor = _constant(imp, np.array(True), f"{node.name}/cond")
    if trips is not None and trips > MAX_TRIPS:
        raise node.fail(f"a trip count of {trips}, above {MAX_TRIPS} (loops are unrolled)")
    limit = MAX_TRIPS if trips is None else trips

    scans: list[list[Tensor]] = [[] for _ in range(n_scan)]
    iteration = 0
    before = imp.unrolled
    while cond and iteration < limit:
        prefix = f"{node.name}/{iteration}/"
        number = _body_input_value(body, 0, np.array(iteration, np.int64))
        bindings = {
            body.input[0].name: _constant(imp, number, f"{prefix}#iteration"),
            body.input[1].name: cond_tensor,
        }
        bindings.update({v.name: t for v, t in zip(body.input[2:], carried, strict=True)})
        outputs = imp.import_subgraph(body, bindings, prefix)
        cond_tensor = imp.values[outputs[0]]
        following = [imp.values[n] for n in outputs[1 : 1 + n_carried]]
        for k, (given, made) in enumerate(zip(carried, following, strict=True)):
            if onnx_type(given) != onnx_type(made):
                raise node.invalid(
                    f"loop-carried value #{k} ('{body.input[2 + k].name}') is {onnx_type(given)}, but the "
                    f"body's output '{body.output[1 + k].name}' makes it {onnx_type(made)}: a body keeps "
                    "the types of the values it carries"
                )
        carried = following
        for k, name in enumerate(outputs[1 + n_carried :]):
            value = imp.values[name]
            if not isinstance(value, Tensor):
                raise node.fail(f"scan output '{body.output[1 + n_carried + k].name}' that is not a tensor")
            scans[k].append(value)
        iteration += 1
        if iteration == 1:
            # One iteration's nodes, nested loops included, tell what unrolling them all would import.
            projected = before + (imp.unrolled - before) * limit
            if projected > MAX_UNROLLED_NODES:
                raise node.fail(
                    f"unrolling {limit} iterations of {imp.unrolled - before} nodes each would import "
                    f"about {projected:,} nodes, above {MAX_UNROLLED_NODES:,} (loops are unrolled)"
                )
        if trips is None or iteration < trips:
            cond = bool(_scalar(node, _demand(imp, node, outputs[0]), "the condition"))
    if trips is None and cond:
        raise node.fail(f"more than {MAX_TRIPS} iterations (loops are unrolled)")
    if n_scan and iteration == 0:
        raise node.fail("scan outputs of a loop that runs no iteration")
    stacked = [_stack(imp, node, s, 0, f"{node.name}/scan{k}") for k, s in enumerate(scans)]
    return [*carried, *stacked]


# ------------------------------------------------------------------------------------------------
# Scan
# ------------------------------------------------------------------------------------------------


def _axes(node: Node, key: str, count: int, ranks: Sequence[int]) -> list[int]:
    given = node.attr(key)
    axes = [0] * count if given is None else [int(a) for a in given]
    if len(axes) != count:
        raise node.invalid(f"{key} has {len(axes)} values for {count} tensors")
    for i, (axis, rank) in enumerate(zip(axes, ranks, strict=True)):
        if not -rank <= axis < rank:
            raise node.invalid(f"{key}[{i}] = {axis} is out of range for rank {rank}")
    return [a % r for a, r in zip(axes, ranks, strict=True)]


def _directions(node: Node, key: str, count: int) -> list[int]:
    given = node.attr(key)
    directions = [0] * count if given is None else [int(d) for d in given]
    if len(directions) != count or any(d not in (0, 1) for d in directions):
        raise node.invalid(f"{key} must hold {count} values, each 0 or 1")
    return directions


def _slices(imp: Importer, node: Node, x: Tensor, axis: int, length: int, name: str) -> list[Tensor]:
    """The `length` slices of `x` along `axis`, without that axis."""
    shape = [d for i, d in enumerate(x.shape) if i != axis]
    if length == 1:
        return [imp.g.add_reshape(x, shape, f"{name}.0")]
    parts = imp.g.add_op_results(
        ops.SplitOp, [x], {"axis": int_attr(axis), "sizes": ints_attr([1] * length)}, name
    )
    return [imp.g.add_reshape(p, shape, f"{name}.{i}") for i, p in enumerate(parts)]


def _scan_core(
    imp: Importer,
    node: Node,
    body: onnx.GraphProto,
    states: list[Tensor],
    inputs: list[Tensor],
    in_axes: list[int],
    in_directions: list[int],
    out_axes_attr: str | None,
    out_directions: list[int],
    prefix: str,
) -> list[Tensor]:
    """One scan: the final states, then the scan outputs."""
    lengths = {t.shape[a] for t, a in zip(inputs, in_axes, strict=True)}
    if len(lengths) != 1:
        raise node.invalid(f"the scan inputs have different lengths {sorted(lengths)}")
    length = lengths.pop()
    if length < 0:
        raise node.fail("a scan input with a dynamic scan dimension")
    if length == 0:
        raise node.fail("a scan of length 0")
    if length > MAX_TRIPS:
        raise node.fail(f"more than {MAX_TRIPS} iterations (scans are unrolled)")
    n_state = len(states)
    mark = imp.g.block.last_op
    slices = [
        _slices(imp, node, t, a, length, f"{prefix}in{j}")[:: -1 if d else 1]
        for j, (t, a, d) in enumerate(zip(inputs, in_axes, in_directions, strict=True))
    ]
    imp._evaluate_known(mark)
    outputs_per_step: list[list[Tensor]] = []
    for step in range(length):
        bindings = {v.name: t for v, t in zip(body.input[:n_state], states, strict=True)}
        bindings.update({v.name: s[step] for v, s in zip(body.input[n_state:], slices, strict=True)})
        names = imp.import_subgraph(body, bindings, f"{prefix}{step}/")
        states = [imp.tensor(n) for n in names[:n_state]]
        outputs_per_step.append([imp.tensor(n) for n in names[n_state:]])
    n_out = len(body.output) - n_state
    ranks = [len(outputs_per_step[0][k].shape) + 1 for k in range(n_out)]
    out_axes = _axes(node, out_axes_attr, n_out, ranks) if out_axes_attr else [0] * n_out
    stacked = []
    for k in range(n_out):
        steps = [o[k] for o in outputs_per_step][:: -1 if out_directions[k] else 1]
        stacked.append(_stack(imp, node, steps, out_axes[k], f"{prefix}out{k}"))
    return [*states, *stacked]


def _scan(imp: Importer, node: Node) -> list[Tensor]:
    body = node.attr("body")
    if not isinstance(body, onnx.GraphProto):
        raise node.invalid("Scan needs a body graph")
    _check_tensors(node, body)
    n_in = int(node.attr("num_scan_inputs", 0))
    if node.opset < 9:
        return _scan8(imp, node, body, n_in)
    if not all(map(node.has_input, range(len(node.inputs)))):
        raise node.invalid("Scan inputs cannot be omitted")
    values = node.input_tensors()
    n_state = len(values) - n_in
    if n_in < 1 or n_state < 0 or len(body.input) != len(values) or len(body.output) < n_state:
        raise node.invalid("the body's inputs and outputs do not match num_scan_inputs and the node's inputs")
    inputs = values[n_state:]
    in_axes = _axes(node, "scan_input_axes", n_in, [len(t.shape) for t in inputs])
    in_directions = _directions(node, "scan_input_directions", n_in)
    out_directions = _directions(node, "scan_output_directions", len(body.output) - n_state)
    return _scan_core(
        imp,
        node,
        body,
        values[:n_state],
        inputs,
        in_axes,
        in_directions,
        "scan_output_axes" if node.attr("scan_output_axes") is not None else None,
        out_directions,
        f"{node.name}/",
    )


def _scan8(imp: Importer, node: Node, body: onnx.GraphProto, n_in: int) -> list[Tensor]:
    """Opset 8: a batch axis 0 on every state and scan input, the scan axis 1, optional lengths."""
    if node.has_input(0):
        raise node.fail("sequence_lens (scans of different lengths per batch entry)")
    if not all(map(node.has_input, range(1, len(node.inputs)))):
        raise node.invalid("Scan inputs cannot be omitted")
    values = [node.input(i) for i in range(1, len(node.inputs))]
    n_state = len(values) - n_in
    if n_in < 1 or n_state < 0 or len(body.input) != len(values) or len(body.output) < n_state:
        raise node.invalid("the body's inputs and outputs do not match num_scan_inputs and the node's inputs")
    batches = {t.shape[0] if t.shape else -2 for t in values}
    if len(batches) != 1 or next(iter(batches)) < 1:
        raise node.fail("batch dimensions that differ or are dynamic")
    batch = batches.pop()
    if batch > MAX_TRIPS:
        raise node.fail(f"more than {MAX_TRIPS} batch entries (scans are unrolled)")
    directions = _directions(node, "directions", n_in)
    mark = imp.g.block.last_op
    per_batch = [_slices(imp, node, t, 0, batch, f"{node.name}/batch{j}") for j, t in enumerate(values)]
    imp._evaluate_known(mark)
    n_out = len(body.output)
    results: list[list[Tensor]] = [[] for _ in range(n_out)]
    for b in range(batch):
        entry = [p[b] for p in per_batch]
        outputs = _scan_core(
            imp,
            node,
            body,
            entry[:n_state],
            entry[n_state:],
            [0] * n_in,
            directions,
            None,
            [0] * (n_out - n_state),
            f"{node.name}/{b}/",
        )
        for k, t in enumerate(outputs):
            results[k].append(t)
    return [_stack(imp, node, r, 0, f"{node.name}/out{k}") for k, r in enumerate(results)]


CONVERTERS: dict[str, Converter] = {
    "If": _if,
    "Loop": _loop,
    "Scan": _scan,
}
