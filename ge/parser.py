"""`GraphParser`: framework models into `ge.Graph`s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import onnx

from .collection import without_collection
from .errors import GeError
from .graph import Graph
from .limits import DEFAULT_MAX_TENSOR_BYTES, check_limit, check_max_tensor_bytes


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
    def parse_pytorch(
        self,
        module_or_exported_program: Any,
        example_inputs: Sequence[Any] | Any | None = None,
        dynamic_shapes: Any = None,
    ) -> Graph:
        """Imports a PyTorch model: a `torch.nn.Module` in eval mode, which `torch.export.export`
        traces on `example_inputs` (a tuple of tensors; `dynamic_shapes` as torch.export takes
        it), or an already exported `torch.export.ExportedProgram`.

        Parameters and buffers become the graph's weights, the forward's tensor arguments its
        inputs (named after them), its results its outputs (`output`, or `output_0`, ...); a
        symbolic size becomes a `?` dimension. Needs torch (`pip install ge[torch]`).

        Raises `UnsupportedOperatorError` listing every ATen op of the model ge does not support,
        and `GeError` for what is neither a module nor an exported program.
        """
        from .errors import InvalidModelError
        from .frontends.pytorch import import_pytorch

        graph = import_pytorch(module_or_exported_program, example_inputs, dynamic_shapes)
        check_max_tensor_bytes(graph.module, self.max_tensor_bytes, InvalidModelError)
        return graph

    @without_collection
    def parse_tensorflow(
        self,
        path: str | Path | bytes,
        outputs: Sequence[str] | None = None,
        input_shapes: Mapping[str, Sequence[int]] | None = None,
    ) -> Graph:
        """Imports a frozen TensorFlow GraphDef: a binary `.pb` or text `.pbtxt` file (or the
        serialized bytes), read without TensorFlow; a SavedModel directory needs TensorFlow, which
        freezes it.

        `outputs` names the output tensors (`name:0`, or a node name for its first output; by
        default every node output nothing reads); `input_shapes` fixes Placeholder shapes by name.
        NHWC convolutions and pools import as NCHW ops between transposes, which the compiler's
        simplification cancels. Raises `UnsupportedOperatorError` listing every unsupported op,
        and `InvalidModelError` for a file that is not a GraphDef.
        """
        from .errors import InvalidModelError
        from .frontends.tensorflow import import_tensorflow

        graph = import_tensorflow(path, outputs, input_shapes, self.max_tensor_bytes)
        check_max_tensor_bytes(graph.module, self.max_tensor_bytes, InvalidModelError)
        return graph

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
