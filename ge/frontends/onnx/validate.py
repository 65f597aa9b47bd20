"""What the importer checks of an ONNX graph before converting it, against the operator schemas
of the model's opset: nothing malformed is silently accepted.

- structure: every value is defined once (graph inputs, initializers, node outputs: no second
  writer, no node output shadowing an initializer or input), inputs are unique, and the graph
  has outputs;
- each node: attributes its operator's schema defines, of the type it defines; its required
  inputs given (not left out as ''), and as many inputs and outputs as the schema allows.
"""

from __future__ import annotations

import onnx
from onnx.defs import OpSchema

from ge.errors import InvalidModelError

_ATTRIBUTE_TYPES = {value: name for name, value in onnx.AttributeProto.AttributeType.items()}


def check_graph(graph: onnx.GraphProto, what: str = "the graph") -> None:
    """Refuses a graph whose values are not each defined once, or that has no outputs."""
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


def check_node(node: onnx.NodeProto, name: str, schema: OpSchema | None) -> None:
    """Refuses attributes the operator's schema does not define or types differently, and inputs
    or outputs past the schema's count."""
    if schema is None:
        return
    where = f"{node.op_type} (opset {schema.since_version}) at node '{name}'"
    for attribute in node.attribute:
        spec = schema.attributes.get(attribute.name)
        if spec is None:
            known = ", ".join(sorted(schema.attributes)) or "none"
            raise InvalidModelError(
                f"{where}: unknown attribute '{attribute.name}' (the operator's attributes: {known})"
            )
        # AttributeProto's type numbers and OpSchema.AttrType's are the same; 0 is a model too
        # old to say the type, which the value's field then tells.
        if attribute.type and int(attribute.type) != int(spec.type.value):
            raise InvalidModelError(
                f"{where}: attribute '{attribute.name}' must be {spec.type.name}, "
                f"got {_ATTRIBUTE_TYPES.get(attribute.type, attribute.type)}"
            )
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


def schema_of(node: onnx.NodeProto, versions: dict[str, int]) -> OpSchema | None:
    """The schema of the node's operator at the model's version of its domain (None: none known)."""
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    version = versions.get(domain)
    try:
        if version is None:
            return onnx.defs.get_schema(node.op_type, domain=domain)
        return onnx.defs.get_schema(node.op_type, version, domain)
    except onnx.defs.SchemaError:
        return None
