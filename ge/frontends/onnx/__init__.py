"""The ONNX frontend: an `onnx.ModelProto` into a `ge.Graph` of `ascend.graph` ops.

Each supported operator has one converter (grouped by family in this package's modules), which
reads the node's attributes with the semantics of the model's opset and appends graph ops
through the builder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError

from ge.errors import InvalidModelError, UnsupportedOperatorError
from ge.graph import Graph
from ge.limits import DEFAULT_MAX_TENSOR_BYTES, check_limit, check_max_tensor_bytes

from ..common import unsupported_operators_error
from . import (
    attention,
    control,
    deform,
    detection,
    elementwise,
    flex_attention,
    indexing,
    legacy,
    linalg,
    linear_attention,
    losses,
    ml,
    nn,
    normalization,
    quantize,
    quantized_conv,
    recurrent,
    reduction,
    reinterpret,
    resize,
    sampling,
    sequence,
    signal,
    strings,
    tensor,
    training,
    transformer,
)
from .importer import Converter, Importer, Node, ValueNeeded, converter_key
from .selection import with_dynamic_dims
from .shapes import check_shapes

MIN_OPSET = 6
OLDEST_OPSET = 1
"""Models of opsets OLDEST_OPSET to MIN_OPSET - 1 import when each operator they use is as opset
MIN_OPSET defines it (`legacy.changed_since`)."""
MAX_OPSET = onnx.defs.onnx_opset_version()
DEFAULT_DOMAINS = ("", "ai.onnx")

CONVERTERS: dict[str, Converter] = {
    **attention.CONVERTERS,
    **control.CONVERTERS,
    **deform.CONVERTERS,
    **detection.CONVERTERS,
    **elementwise.CONVERTERS,
    **indexing.CONVERTERS,
    **linalg.CONVERTERS,
    **linear_attention.CONVERTERS,
    **losses.CONVERTERS,
    **ml.CONVERTERS,
    **nn.CONVERTERS,
    **recurrent.CONVERTERS,
    **reinterpret.CONVERTERS,
    **resize.CONVERTERS,
    **sampling.CONVERTERS,
    **reduction.CONVERTERS,
    **normalization.CONVERTERS,
    **quantize.CONVERTERS,
    **quantized_conv.CONVERTERS,
    **sequence.CONVERTERS,
    **signal.CONVERTERS,
    **strings.CONVERTERS,
    **tensor.CONVERTERS,
    **transformer.CONVERTERS,
    **training.CONVERTERS,  # after nn: its BatchNormalization adds the training mode
}

OTHER_DOMAIN_CONVERTERS: dict[str, Converter] = {
    **strings.ML_CONVERTERS,
    **ml.ML_CONVERTERS,
    **flex_attention.CONVERTERS,
    **training.TRAINING_CONVERTERS,
}
"""Converters of operators of other domains (`ai.onnx.ml`, `ai.onnx.preview`, `ai.onnx.preview.training`),
keyed `domain::op_type`."""


def load_model(source: str | Path | bytes | onnx.ModelProto) -> onnx.ModelProto:
    """Reads a model from a path, serialized bytes or a `ModelProto`."""
    if isinstance(source, onnx.ModelProto):
        return source
    if not isinstance(source, str | Path | bytes | bytearray):
        raise InvalidModelError(
            "an ONNX model is a path, bytes or an onnx.ModelProto, "
            f"got {type(source).__name__} {source!r:.40}"
        )
    what = "the given bytes" if isinstance(source, bytes | bytearray) else f"'{source}'"
    try:
        if isinstance(source, bytes | bytearray):
            data = bytes(source)
        else:
            data = Path(source).read_bytes()
        if not data:
            raise InvalidModelError(f"{what} is empty (0 bytes): not an ONNX model")
        model = onnx.load_from_string(data)
        _check_text(model, what)
        if not isinstance(source, bytes | bytearray):
            # External tensor data lives in files beside the model, which onnx checks stay inside
            # its folder.
            onnx.load_external_data_for_model(model, str(Path(source).resolve().parent))
        return model
    except FileNotFoundError:
        raise InvalidModelError(f"ONNX model file '{source}' does not exist") from None
    except IsADirectoryError:
        raise InvalidModelError(f"ONNX model '{source}' is a directory, not a file") from None
    except onnx.checker.ValidationError as error:
        raise InvalidModelError(f"{what}: {error}") from None
    except (DecodeError, ValueError, RuntimeError, OSError, UnicodeDecodeError) as error:
        raise InvalidModelError(f"{what} is not a valid ONNX model: {error}") from None


def _check_text(model: onnx.ModelProto, what: str) -> None:
    """Every name the importer reads is text: protobuf hands invalid UTF-8 over as bytes."""

    def check(value: object, where: str) -> None:
        if not isinstance(value, str):
            raise InvalidModelError(f"{what}: {where} is not UTF-8 text ({value!r:.40})")

    def graph(g: onnx.GraphProto, where: str) -> None:
        check(g.name, f"the name of {where}")
        for kind, values in (("input", g.input), ("output", g.output), ("initializer", g.initializer)):
            for index, value in enumerate(values):
                check(value.name, f"the name of {kind} #{index} of {where}")
        for index, node in enumerate(g.node):
            at = f"node #{index} of {where}"
            for field in ("name", "op_type", "domain"):
                check(getattr(node, field), f"the {field} of {at}")
            for name in (*node.input, *node.output):
                check(name, f"a value name of {at}")
            for attribute in node.attribute:
                check(attribute.name, f"an attribute name of {at}")
                for sub in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                    graph(sub, f"a subgraph of {at}")

    for opset in model.opset_import:
        check(opset.domain, "an opset domain")
    graph(model.graph, "the graph")


def import_onnx(
    source: str | Path | bytes | onnx.ModelProto,
    feeds: Mapping[str, np.ndarray] | None = None,
    observed: Mapping[str, np.ndarray] | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES,
) -> Graph:
    """Imports a model; see `Importer` for `feeds` (specialization) and `observed` values."""
    model = load_model(source)
    importer = make_importer(model, feeds, observed, max_tensor_bytes)
    graph = importer.run(model.graph, input_shapes)
    check_max_tensor_bytes(graph.module, max_tensor_bytes, InvalidModelError)
    check_shapes(model, importer, input_shapes)
    return graph


def make_importer(
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray] | None = None,
    observed: Mapping[str, np.ndarray] | None = None,
    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES,
) -> Importer:
    """An importer for `model`, after checking its IR version, opsets and operators; it computes
    no tensor at import time larger than `max_tensor_bytes`."""
    check_limit(max_tensor_bytes, InvalidModelError)
    check_versions(model)
    opset = default_opset(model)
    check_supported(model, opset)
    versions = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    versions[""] = opset
    converters = {**CONVERTERS, **OTHER_DOMAIN_CONVERTERS}
    # Nodes of opsets before 9 are brought to today's form before their converter runs.
    converters = {key: legacy.upgraded(converter) for key, converter in converters.items()}
    return Importer(opset, converters, feeds, observed, versions, max_tensor_bytes)


def check_versions(model: onnx.ModelProto) -> None:
    """Refuses an IR version this ONNX does not define, and a node of the default operator set
    in a model that does not say which version of that set it uses (what the node means)."""
    if not 1 <= model.ir_version <= onnx.IR_VERSION:
        raise InvalidModelError(
            f"the model's ir_version is {model.ir_version}; ONNX {onnx.__version__} defines 1 to "
            f"{onnx.IR_VERSION} (re-export the model, or convert it with onnx.version_converter)"
        )
    if any(o.domain in DEFAULT_DOMAINS for o in model.opset_import):
        return
    node = next(_default_domain_nodes(model.graph), None)
    if node is not None:
        domains = ", ".join(repr(o.domain) for o in model.opset_import) or "none"
        raise InvalidModelError(
            f"{node.op_type} at node '{node.name or node.op_type}' is an operator of the default set "
            f"(domain ''), which the model does not import (it imports {domains}): add an opset_import "
            "for domain ''"
        )


def _default_domain_nodes(graph: onnx.GraphProto):
    for node in graph.node:
        if node.domain in DEFAULT_DOMAINS:
            yield node
        for attribute in node.attribute:
            for subgraph in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                yield from _default_domain_nodes(subgraph)


def default_opset(model: onnx.ModelProto) -> int:
    """The model's version of the default domain (the newest one when it imports none)."""
    versions = [o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS]
    if not versions:
        return MAX_OPSET
    opset = versions[0]
    if not OLDEST_OPSET <= opset <= MAX_OPSET:
        raise UnsupportedOperatorError(
            f"opset {opset} is outside the supported range {OLDEST_OPSET} to {MAX_OPSET}",
            category="operator",
        )
    return opset


def check_supported(model: onnx.ModelProto, opset: int) -> None:
    """Raises one error listing every node whose operator has no converter, or (for a model older
    than MIN_OPSET) one listing every node whose operator has changed since its opset."""
    unsupported = []
    _find_unsupported(model.graph, opset, "", unsupported)
    if unsupported:
        raise unsupported_operators_error(
            "",
            unsupported,
            operators="operators",
            kind=lambda u: f"{u['domain']}::{u['op_type']}",
            describe=lambda u: f"{u['op_type']} (domain {u['domain']}, opset {u['opset']})",
        )
    changed = legacy.changed_since(model.graph, opset, MIN_OPSET) if opset < MIN_OPSET else []
    if changed:
        lines = [f"  {c['op_type']} at node '{c['node']}': {c['missing']}" for c in changed]
        raise UnsupportedOperatorError(
            f"opset {opset} is outside the supported range {MIN_OPSET} to {MAX_OPSET} for {len(changed)} "
            f"node(s) whose operator has changed since (convert the model to opset {MIN_OPSET} or "
            f"newer):\n" + "\n".join(lines),
            changed,
            category="operator",
        )


def _find_unsupported(graph: onnx.GraphProto, opset: int, prefix: str, found: list[dict]) -> None:
    """Every node of `graph` and of its subgraphs (If branches, Loop and Scan bodies) without a converter."""
    for index, node in enumerate(graph.node):
        name = prefix + (node.name or f"{node.op_type}_{index}")
        key = converter_key(node.domain, node.op_type)
        if key not in CONVERTERS and key not in OTHER_DOMAIN_CONVERTERS:
            found.append(
                {"op_type": node.op_type, "domain": node.domain or "ai.onnx", "opset": opset, "node": name}
            )
        for attribute in node.attribute:
            for subgraph in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                _find_unsupported(subgraph, opset, f"{name}/", found)


__all__ = [
    "CONVERTERS",
    "OTHER_DOMAIN_CONVERTERS",
    "Converter",
    "Importer",
    "Node",
    "ValueNeeded",
    "check_shapes",
    "check_supported",
    "default_opset",
    "import_onnx",
    "load_model",
    "with_dynamic_dims",
]
