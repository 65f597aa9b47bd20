"""`GraphParser`: framework models into `ge.Graph`s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import onnx

from .collection import without_collection
from .errors import GeError
from .graph import Graph
from .limits import DEFAULT_MAX_TENSOR_BYTES, check_limit


class GraphParser:
    """`GraphParser().parse_onnx("model.onnx")`, `.parse_mindspore("model.mindir")` -> `Graph`.

    `max_tensor_bytes` (default 4 GiB) refuses a model with a larger tensor, before ONNX's shape
    inference or anything else would allocate it.
    """

    def __init__(self, max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES):
        self.max_tensor_bytes = check_limit(max_tensor_bytes, GeError)

    @without_collection
    def parse_onnx(
        self,
        model: str | Path | bytes | onnx.ModelProto,
        input_shapes: Mapping[str, Sequence[int]] | None = None,
        outputs: Sequence[str] | None = None,
    ) -> Graph:
        """Imports an ONNX model (a path, serialized bytes or a `ModelProto`), opset 6 and up.

        `input_shapes` fixes the shapes of some inputs by name (atc's `--input_shape`): a dynamic
        dimension takes the size given, a static one must be given as it is (or -1). `outputs`
        names the values (ONNX tensor names) that become the graph's outputs instead of the
        model's (atc's `--out_nodes`). Either, when wrong, raises a `CompileError` naming the input
        and axis, or the output, and what the model has.

        Raises `UnsupportedOperatorError` listing every unsupported operator of the model, and
        `InvalidModelError` for a file that is not a valid ONNX model.
        """
        from .errors import UnsupportedOperatorError
        from .frontends.onnx import ValueNeeded, import_onnx, load_model
        from .frontends.onnx.selection import check_input_shapes, with_outputs

        try:
            if input_shapes is not None or outputs is not None:
                model = load_model(model)
                if input_shapes is not None:
                    input_shapes = check_input_shapes(model, input_shapes)
                if outputs is not None:
                    model = with_outputs(model, outputs)
            return import_onnx(model, input_shapes=input_shapes, max_tensor_bytes=self.max_tensor_bytes)
        except ValueNeeded as needed:
            raise UnsupportedOperatorError(
                f"{needed.consumer}: input '{needed.name}' decides a shape, so its value must be "
                f"known when the model is imported; make it a constant (an initializer), or run the "
                f"model through ge.backend, which specializes on the values given at run time"
            ) from None

    @without_collection
    def parse_mindspore(
        self, path: str | Path, input_shapes: Mapping[str, Sequence[int]] | None = None
    ) -> Graph:
        """Imports a MindSpore MINDIR file (`mindspore.export(net, x, file_name=..., file_format="MINDIR")`);
        weights MindSpore kept in files beside it are read from there. MindSpore need not be installed.

        `input_shapes` fixes dynamic dimensions of inputs by name. Raises `UnsupportedOperatorError`
        listing every unsupported primitive, and `InvalidModelError` for an AIR file (export MINDIR or
        ONNX instead) or a file that is not a MINDIR model.
        """
        from .errors import InvalidModelError
        from .frontends.mindspore import import_mindspore
        from .limits import check_max_tensor_bytes

        graph = import_mindspore(path, input_shapes)
        check_max_tensor_bytes(graph.module, self.max_tensor_bytes, InvalidModelError)
        return graph
