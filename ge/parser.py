"""`GraphParser`: framework models into `ge.Graph`s."""

from __future__ import annotations

from pathlib import Path

import onnx

from .collection import without_collection
from .errors import GeError
from .graph import Graph
from .limits import DEFAULT_MAX_TENSOR_BYTES, check_limit


class GraphParser:
    """`GraphParser().parse_onnx("model.onnx")` -> `Graph`.

    `max_tensor_bytes` (default 4 GiB) refuses a model with a larger tensor, before ONNX's shape
    inference or anything else would allocate it.
    """

    def __init__(self, max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES):
        self.max_tensor_bytes = check_limit(max_tensor_bytes, GeError)

    @without_collection
    def parse_onnx(self, model: str | Path | bytes | onnx.ModelProto) -> Graph:
        """Imports an ONNX model (a path, serialized bytes or a `ModelProto`), opset 6 and up.

        Raises `UnsupportedOperatorError` listing every unsupported operator of the model, and
        `InvalidModelError` for a file that is not a valid ONNX model.
        """
        from .errors import UnsupportedOperatorError
        from .frontends.onnx import ValueNeeded, import_onnx

        try:
            return import_onnx(model, max_tensor_bytes=self.max_tensor_bytes)
        except ValueNeeded as needed:
            raise UnsupportedOperatorError(
                f"{needed.consumer}: input '{needed.name}' decides a shape, so its value must be "
                f"known when the model is imported; make it a constant (an initializer), or run the "
                f"model through ge.backend, which specializes on the values given at run time"
            ) from None
