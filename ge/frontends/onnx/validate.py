"""What the importer checks of an ONNX graph before converting it, against the operator schemas
of the model's opset: nothing malformed is silently accepted.

- structure: every value is defined once (graph inputs, initializers, node outputs: no second
  writer, no node output shadowing an initializer or input), inputs are unique, and the graph
  has outputs;
- scopes, through every subgraph (the branch an If does not take included): a node reads only
  names defined before it, here or in an enclosing graph, and a graph's outputs are defined in
  the graph itself (ONNX's checker and onnxruntime refuse a subgraph returning an outer value);
- declared types: no negative dimension in a graph's inputs, outputs or value_info;
- each node: attributes its operator's schema defines, each once, of the type it defines and
  holding a value of that type, the required ones present; its required inputs given (not left
  out as ''), as many inputs and outputs as the schema allows, and inputs of the types its type
  constraints allow (`check_input_types`).
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx
from onnx.defs import OpSchema

from ge.errors import InvalidModelError

_ATTRIBUTE_TYPES = {value: name for name, value in onnx.AttributeProto.AttributeType.items()}
_SCALAR_FIELDS = {"FLOAT": "f", "INT": "i", "STRING": "s", "TENSOR": "t", "GRAPH": "g"}
_SCALAR_FIELDS |= {"SPARSE_TENSOR": "sparse_tensor", "TYPE_PROTO": "tp"}
_LIST_FIELDS = {"FLOATS": "floats", "INTS": "ints", "STRINGS": "strings", "TENSORS": "tensors"}
_LIST_FIELDS |= {"GRAPHS": "graphs", "SPARSE_TENSORS": "sparse_tensors", "TYPE_PROTOS": "type_protos"}


def check_graph(graph: onnx.GraphProto, what: str = "the graph") -> None:
    """Refuses a graph whose values are not each defined once, that has no outputs, or whose
    nodes or outputs (its subgraphs' included) read names not in their scope."""
    _check_definitions(graph, what)
    _check_scopes(graph, what, frozenset(), "")


def _check_definitions(graph: onnx.GraphProto, what: str) -> None:
    if not graph.output:
        raise InvalidModelError(f"{what} has no outputs: a model must say what it computes")
    defined: dict[str, str] = {}
    for value_info in graph.input:
        if value_info.name in defined:
            raise InvalidModelError(f"{what} lists input '{value_info.name}' twice")
        defined[value_info.name] = "a graph input"
    initializers: set[str] = set()
    for init in graph.initializer:
        if init.name in initializers:
            raise InvalidModelError(f"{what} defines initializer '{init.name}' twice")
        # An initializer may also be listed as an input (its default value, IR version < 4).
        initializers.add(init.name)
        defined[init.name] = "an initializer"
    for index, node in enumerate(graph.node):
        name = node.name or f"{node.op_type}_{index}"
        for output in node.output:
            if not output:
                continue
            if output in defined:
                raise InvalidModelError(
                    f"{node.op_type} at node '{name}' writes '{output}', which is already {defined[output]}: "
                    f"every value must be defined once"
                )
            defined[output] = f"the output of node '{name}'"
    for kind, infos in (("input", graph.input), ("output", graph.output), ("value_info", graph.value_info)):
        for info in infos:
            if not info.type.HasField("tensor_type") or not info.type.tensor_type.HasField("shape"):
                continue
            dims = [d.dim_value if d.HasField("dim_value") else "?" for d in info.type.tensor_type.shape.dim]
            if any(d.HasField("dim_value") and d.dim_value < 0 for d in info.type.tensor_type.shape.dim):
                raise InvalidModelError(
                    f"{what} declares {kind} '{info.name}' with shape {dims}: a dimension is a whole "
                    "number >= 0, or a name (dim_param) when only the run knows it"
                )


def _check_scopes(graph: onnx.GraphProto, what: str, outer: frozenset[str], inside: str) -> None:
    """Refuses a node input defined nowhere before the node, and a graph output defined outside
    the graph (`outer`: the names of the enclosing graphs that the graph may read)."""
    local = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    local |= {t.values.name for t in graph.sparse_initializer}
    for index, node in enumerate(graph.node):
        name = node.name or f"{node.op_type}_{index}"
        for input_name in node.input:
            if input_name and input_name not in local and input_name not in outer:
                raise InvalidModelError(
                    f"{node.op_type} at node '{name}'{inside} reads '{input_name}', which nothing "
                    "defines before it"
                )
        for attribute in node.attribute:
            for sub in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                where = f"{node.op_type} at node '{name}'{inside}: attribute '{attribute.name}'"
                where += f" (subgraph '{sub.name}')"
                _check_definitions(sub, where)
                _check_scopes(sub, where, outer | local, f" in subgraph '{sub.name}'")
        local.update(o for o in node.output if o)
    for output in graph.output:
        if output.name in local:
            continue
        if output.name in outer:
            raise InvalidModelError(
                f"{what}: output '{output.name}' is a value of an enclosing graph; a subgraph's "
                "outputs are computed in it (ONNX's checker and onnxruntime refuse it): pass it "
                "through an Identity node"
            )
        raise InvalidModelError(
            f"{what}: output '{output.name}' is defined by no node, input or initializer of the graph"
        )


def check_node(node: onnx.NodeProto, name: str, schema: OpSchema | None) -> None:
    """Refuses attributes the operator's schema does not define or types differently, and inputs
    or outputs past the schema's count."""
    if schema is None:
        return
    where = f"{node.op_type} (opset {schema.since_version}) at node '{name}'"
    seen: set[str] = set()
    for attribute in node.attribute:
        if attribute.name in seen:
            raise InvalidModelError(f"{where}: attribute '{attribute.name}' is given twice")
        seen.add(attribute.name)
        if attribute.ref_attr_name:
            raise InvalidModelError(
                f"{where}: attribute '{attribute.name}' refers to '{attribute.ref_attr_name}', an attribute "
                "of an enclosing function, but the node is not in a function"
            )
        spec = schema.attributes.get(attribute.name)
        if spec is None:
            known = ", ".join(sorted(schema.attributes)) or "none"
            raise InvalidModelError(
                f"{where}: unknown attribute '{attribute.name}' (the operator's attributes: {known})"
            )
        # AttributeProto's type numbers and OpSchema.AttrType's are the same; 0 is a model too
        # old to say the type, which the value's field then tells.
        number, name = schema_attribute_type(spec)
        if attribute.type and int(attribute.type) != number:
            raise InvalidModelError(
                f"{where}: attribute '{attribute.name}' must be {name}, "
                f"got {_ATTRIBUTE_TYPES.get(attribute.type, attribute.type)}"
            )
        _check_value_field(attribute, name, where)
    for attribute_name, spec in schema.attributes.items():
        if spec.required and attribute_name not in seen:
            raise InvalidModelError(f"{where}: required attribute '{attribute_name}' is missing")
    given = len(node.input)
    while given and not node.input[given - 1]:
        given -= 1  # trailing optional inputs left out
    if given < schema.min_input:
        raise InvalidModelError(
            f"{where}: {given} inputs given, the operator takes at least {schema.min_input}"
        )
    for index, (name, formal) in enumerate(zip(node.input, schema.inputs, strict=False)):
        if not name and formal.option == OpSchema.FormalParameterOption.Single:
            raise InvalidModelError(f"{where}: input #{index} ('{formal.name}') is required but left out")
    if len(node.input) > schema.max_input:
        raise InvalidModelError(
            f"{where}: {len(node.input)} inputs given, the operator takes at most {schema.max_input}"
        )
    if len(node.output) > schema.max_output:
        raise InvalidModelError(
            f"{where}: {len(node.output)} outputs given, the operator has at most {schema.max_output}"
        )


def check_input_types(
    node: onnx.NodeProto, name: str, schema: OpSchema | None, types: Sequence[str | None]
) -> None:
    """Refuses inputs whose types (ONNX type strings such as "tensor(float)", None when not known)
    the schema's type constraints do not allow, or that differ where the schema wants one type."""
    if schema is None or not schema.inputs:
        return
    where = f"{node.op_type} (opset {schema.since_version}) at node '{name}'"
    allowed = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
    bound: dict[str, tuple[str, int]] = {}
    for index, given in enumerate(types):
        if given is None:
            continue
        formal = schema.inputs[min(index, len(schema.inputs) - 1)]
        options = allowed.get(formal.type_str, [formal.type_str])
        if given not in options:
            shown = ", ".join(options) if len(options) <= 6 else ", ".join(options[:6]) + ", ..."
            raise InvalidModelError(
                f"{where}: input #{index} ('{formal.name}') is {given}; the operator takes {shown} there"
            )
        variadic = formal.option == OpSchema.FormalParameterOption.Variadic
        if formal.type_str not in allowed or (variadic and not formal.is_homogeneous):
            continue
        first = bound.setdefault(formal.type_str, (given, index))
        if first[0] != given:
            raise InvalidModelError(
                f"{where}: input #{index} ('{formal.name}') is {given} but input #{first[1]} is {first[0]}: "
                f"the operator takes one type for both ({formal.type_str})"
            )


def _check_value_field(attribute: onnx.AttributeProto, kind: str, where: str) -> None:
    """Refuses a value in another type's field (an INT attribute with only `f` set would
    otherwise read as 0), or a tensor or graph attribute without one. A number or string left
    off the wire is its type's default (proto3 writers omit 0, 0.0 and ""), as ONNX's checker and
    onnxruntime read it."""
    scalars = [f for f in _SCALAR_FIELDS.values() if attribute.HasField(f)]
    lists = [f for f in _LIST_FIELDS.values() if len(getattr(attribute, f))]
    expected = _SCALAR_FIELDS.get(kind) or _LIST_FIELDS.get(kind)
    stray = [f for f in scalars + lists if f != expected]
    missing = kind in _SCALAR_FIELDS and kind not in ("INT", "FLOAT", "STRING") and expected not in scalars
    if stray or missing:
        held = ", ".join(f"'{f}'" for f in scalars + lists) or "no value"
        raise InvalidModelError(
            f"{where}: attribute '{attribute.name}' is {kind} but holds {held}: it must hold one "
            f"{kind} value (field '{expected}')"
        )


def schema_of(node: onnx.NodeProto, versions: dict[str, int], name: str = "") -> OpSchema | None:
    """The schema of the node's operator at the model's version of its domain (None: ONNX knows
    no such operator, as for another vendor's domain). An operator ONNX defines only from a later
    version than the model imports is refused, as ONNX's checker and onnxruntime refuse it."""
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    version = versions.get(domain)
    try:
        if version is None:
            return onnx.defs.get_schema(node.op_type, domain=domain)
        return onnx.defs.get_schema(node.op_type, version, domain)
    except onnx.defs.SchemaError:
        pass
    try:
        first = onnx.defs.get_schema(node.op_type, domain=domain).since_version
    except onnx.defs.SchemaError:
        return None
    shown = domain or "ai.onnx"
    while first > 1:  # the first version that defines it: the latest schema's may be a revision
        try:
            first = onnx.defs.get_schema(node.op_type, first - 1, domain).since_version
        except onnx.defs.SchemaError:
            break
    raise InvalidModelError(
        f"{node.op_type} at node '{name or node.name}': the model imports {shown} opset {version}, and "
        f"{node.op_type} exists from opset {first}; import opset {first} or later"
    )


def schema_attribute_type(spec: onnx.defs.OpSchema.Attribute) -> tuple[int, str]:
    """The number (AttributeProto's) and name of the type an operator's schema gives an attribute."""
    kind = spec.type
    number = kind.value  # pyright: ignore[reportAttributeAccessIssue]  # onnx's stub omits pybind11's enum fields
    name = kind.name  # pyright: ignore[reportAttributeAccessIssue]  # as above
    return int(number), str(name)
