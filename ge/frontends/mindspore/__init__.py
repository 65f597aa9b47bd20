"""The MindSpore frontend: a MINDIR file into a `ge.Graph` of `ascend.graph` ops.

The file is read with protobuf classes generated from ge's own schema of the MINDIR fields it
reads (`mind_ir.proto`), so MindSpore need not be installed. Each supported primitive has one
converter, grouped by family in this package's modules; `CONVERTERS` maps MindSpore's primitive
names to them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ge.errors import GeError, InvalidModelError
from ge.graph import Graph

from ..common import unsupported_operators_error
from . import elementwise, nn, recurrent, tensor
from . import mind_ir_pb2 as mind_ir
from .importer import REF, STRUCTURAL, Converter, Importer, Node
from .reader import load_mindir

CONVERTERS: dict[str, Converter] = {
    **nn.CONVERTERS,
    **elementwise.CONVERTERS,
    **tensor.CONVERTERS,
    **recurrent.CONVERTERS,
}
"""Converters by MindSpore primitive name (`Conv2D`, `ReLU`, ...); STRUCTURAL holds the primitives
that only move values (MakeTuple, TupleGetItem, Depend, Load, UpdateState, Return)."""


def import_mindspore(path: str | Path, input_shapes: Mapping[str, Sequence[int]] | None = None) -> Graph:
    """Imports a MINDIR file (external parameter data beside it is read too).

    `input_shapes` fixes the dynamic dimensions (-1) of inputs by name. Raises
    `UnsupportedOperatorError` listing every unsupported primitive at once, and
    `InvalidModelError` for an AIR file or a file that is not a MINDIR model.
    """
    model = load_mindir(path)
    check_supported(model)
    if input_shapes is not None:
        _check_input_names(model, input_shapes)
    return Importer(model, Path(path).resolve().parent, CONVERTERS).run(input_shapes)


def load_model_file(
    path: str | Path,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    outputs: Sequence[str] | None = None,
) -> Graph:
    """The model file loader of `ge compile --framework 1`: `import_mindspore`. A MINDIR file has
    no output names a user knows, so `outputs` (atc's `--out_nodes`) is refused."""
    if outputs:
        raise GeError(
            f"choosing outputs ({', '.join(outputs)}) is not supported for MindSpore models: export the "
            "network with the outputs wanted"
        )
    return import_mindspore(path, input_shapes)


def check_supported(model: mind_ir.ModelProto) -> None:
    """Raises one error listing every node, in every graph, whose primitive has no converter."""
    primitives = {p.name: p.op_type for p in model.primitives}
    functions = {f.name for f in model.functions}
    unsupported = []
    for graph in (model.graph, *model.functions):
        for node in graph.node:
            if node.op_type == "Constant":
                continue
            target = node.op_type.removeprefix(REF)
            if node.op_type.startswith(REF) and target in functions:
                continue
            primitive = primitives.get(target, target) if node.op_type.startswith(REF) else node.op_type
            if primitive not in CONVERTERS and primitive not in STRUCTURAL:
                unsupported.append(
                    {"op_type": primitive, "domain": "mindspore", "node": node.domain or node.name}
                )
    if unsupported:
        raise unsupported_operators_error("MindSpore", unsupported, operators="primitives")


def _check_input_names(model: mind_ir.ModelProto, input_shapes: Mapping[str, Sequence[int]]) -> None:
    names = [info.name.split(":", 1)[-1] for info in model.graph.input]
    unknown = [name for name in input_shapes if name not in names]
    if unknown:
        raise InvalidModelError(
            f"input_shapes names {', '.join(unknown)}, which the model does not have (its inputs: "
            f"{', '.join(names)})"
        )


__all__ = ["CONVERTERS", "STRUCTURAL", "Converter", "Importer", "Node", "check_supported", "import_mindspore"]
__all__ += ["load_model_file"]
