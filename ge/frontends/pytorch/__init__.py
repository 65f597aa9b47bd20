"""The PyTorch frontend: an `nn.Module` or a `torch.export.ExportedProgram` into a `ge.Graph` of
`ascend.graph` ops.

`torch.export` traces the model, torch's default decompositions bring it down to core ATen but for
the ops of KEPT_WHOLE, and one converter per ATen overload (CONVERTERS, grouped by family in this
package's modules) appends graph ops. torch is imported only when a model is parsed, so `import
ge` works without it (`pip install ge[torch]` installs it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ge.graph import Graph

from . import elementwise, indexing, linalg, nn, recurrent, sampling, scans, tensor
from .exporter import KEPT_WHOLE, export_program, load_program
from .importer import Converter, Node, check_supported, import_program

CONVERTERS: dict[str, Converter] = {
    **elementwise.CONVERTERS,
    **indexing.CONVERTERS,
    **linalg.CONVERTERS,
    **nn.CONVERTERS,
    **recurrent.CONVERTERS,
    **sampling.CONVERTERS,
    **scans.CONVERTERS,
    **tensor.CONVERTERS,
}
"""The converter of each supported ATen overload, by its name (`aten.convolution.default`)."""


def import_pytorch(
    model: Any, example_inputs: Sequence[Any] | Any | None = None, dynamic_shapes: Any = None
) -> Graph:
    """A `Graph` computing `model` (an `nn.Module` in eval mode, traced on `example_inputs`, or
    an `ExportedProgram`); see `GraphParser.parse_pytorch`."""
    return import_program(export_program(model, example_inputs, dynamic_shapes), CONVERTERS, dynamic_shapes)


def load_model_file(path: str | Path) -> Graph:
    """The `Graph` of a `torch.export.save` archive (`.pt2`); its inputs are named after the
    exported forward's arguments, its outputs by their place in what forward returns (`output`
    for one tensor, `output_0`, `output_1`, ... for a tuple, a dict's keys)."""
    return import_program(export_program(load_program(path)), CONVERTERS)


def supported_ops_markdown() -> str:
    """The Markdown lists of docs/frontends.md: the ops kept whole and every supported ATen op."""
    kept = "\n".join(f"- `{name}`" for name in KEPT_WHOLE)
    supported = "\n".join(f"- `{name}`" for name in sorted(CONVERTERS))
    return (
        f"Kept whole (taken out of torch's decomposition table), {len(KEPT_WHOLE)} ops:\n\n{kept}\n\n"
        f"Supported ATen ops, {len(CONVERTERS)}:\n\n{supported}\n"
    )


__all__ = [
    "CONVERTERS",
    "KEPT_WHOLE",
    "Converter",
    "Node",
    "check_supported",
    "import_pytorch",
    "load_model_file",
    "supported_ops_markdown",
]
