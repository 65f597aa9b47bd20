"""Reading a MINDIR file: the `ModelProto` (with ge's own classes of the format) and its tensors.

A tensor holds its data in the file (`raw_data` or a typed list) or in an external data file
beside the model (`external_data`: a location relative to the model's folder, an offset and a
length), as MindSpore writes models too large for one protobuf message.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from google.protobuf.message import DecodeError

from ge.errors import InvalidModelError, UnsupportedOperatorError

from . import mind_ir_pb2 as mind_ir

DTYPES: dict[int, np.dtype] = {
    mind_ir.TensorProto.FLOAT: np.dtype("float32"),
    mind_ir.TensorProto.UINT8: np.dtype("uint8"),
    mind_ir.TensorProto.INT8: np.dtype("int8"),
    mind_ir.TensorProto.UINT16: np.dtype("uint16"),
    mind_ir.TensorProto.INT16: np.dtype("int16"),
    mind_ir.TensorProto.INT32: np.dtype("int32"),
    mind_ir.TensorProto.INT64: np.dtype("int64"),
    mind_ir.TensorProto.BOOL: np.dtype("bool"),
    mind_ir.TensorProto.FLOAT16: np.dtype("float16"),
    mind_ir.TensorProto.DOUBLE: np.dtype("float64"),
    mind_ir.TensorProto.FLOAT64: np.dtype("float64"),
    mind_ir.TensorProto.UINT32: np.dtype("uint32"),
    mind_ir.TensorProto.UINT64: np.dtype("uint64"),
}
"""MINDIR element types ge reads, as numpy dtypes (little-endian, as MindSpore writes them)."""

AIR_SUFFIXES = (".air",)
PRODUCER = "MindSpore"
"""The `producer_name` MindSpore writes in every MINDIR file."""


def load_mindir(path: str | Path) -> mind_ir.ModelProto:
    """Reads a MINDIR file, whatever its extension; a missing file, an AIR file or one that is not
    a MINDIR model raises an `InvalidModelError` saying what to give instead."""
    if not isinstance(path, str | Path):
        raise InvalidModelError(f"a MindSpore model is a path to a .mindir file, got {type(path).__name__}")
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InvalidModelError(f"MindSpore model file '{path}' does not exist") from None
    except IsADirectoryError:
        raise InvalidModelError(f"MindSpore model '{path}' is a directory, not a .mindir file") from None
    except OSError as error:
        raise InvalidModelError(f"cannot read MindSpore model '{path}': {error.strerror}") from None
    try:
        return _parse(path, data)
    except InvalidModelError:
        # The content decides; the extension only names what the file most likely is.
        if path.suffix.lower() in AIR_SUFFIXES:
            raise InvalidModelError(
                f"'{path}' is not a MINDIR model; as an AIR model (its extension) ge does not read it: "
                "AIR is exported on Ascend hardware for Ascend's own tools; export the network as MINDIR "
                "(mindspore.export(..., file_format='MINDIR')) or as ONNX instead"
            ) from None
        raise


def tensor_array(tensor: mind_ir.TensorProto, folder: Path | None, where: str) -> np.ndarray:
    """The value of a tensor: its data in the file or in an external data file under `folder`."""
    dtype = DTYPES.get(tensor.data_type)
    if dtype is None:
        name = mind_ir.TensorProto.DataType.Name(tensor.data_type) if _known(tensor.data_type) else "?"
        raise UnsupportedOperatorError(
            f"{where}: tensor '{tensor.name}' has element type {name} ({tensor.data_type}), which ge does "
            f"not read (it reads {', '.join(sorted({d.name for d in DTYPES.values()}))})",
            [{"node": where, "dtype": name}],
            category="dtype",
        )
    shape = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in shape):
        raise InvalidModelError(f"{where}: tensor '{tensor.name}' has a negative dimension {list(shape)}")
    count = int(np.prod(shape, dtype=np.int64))
    if tensor.HasField("external_data"):
        raw = _external(tensor, folder, count * dtype.itemsize, where)
    elif tensor.HasField("raw_data"):
        raw = tensor.raw_data
    else:
        typed = _typed_data(tensor)
        if typed is None:
            raise InvalidModelError(f"{where}: tensor '{tensor.name}' holds no data")
        values = np.asarray(typed)
        if values.size != count:
            raise InvalidModelError(
                f"{where}: tensor '{tensor.name}' of shape {list(shape)} holds {values.size} values"
            )
        return values.astype(dtype).reshape(shape)
    if len(raw) != count * dtype.itemsize:
        raise InvalidModelError(
            f"{where}: tensor '{tensor.name}' of shape {list(shape)} and type {dtype.name} needs "
            f"{count * dtype.itemsize} bytes, its data has {len(raw)}"
        )
    return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype).reshape(shape)


def _known(data_type: int) -> bool:
    return data_type in mind_ir.TensorProto.DataType.values()


def _typed_data(tensor: mind_ir.TensorProto) -> list | None:
    for field in ("float_data", "int32_data", "int64_data", "double_data"):
        values = getattr(tensor, field)
        if len(values):
            return list(values)
    return [] if not tensor.dims or 0 in tensor.dims else None


def _external(tensor: mind_ir.TensorProto, folder: Path | None, size: int, where: str) -> bytes:
    """The bytes of a tensor kept in a file beside the model; the file must be inside its folder."""
    external = tensor.external_data
    if folder is None:
        raise InvalidModelError(f"{where}: tensor '{tensor.name}' has external data but no model folder")
    base = folder.resolve()
    path = (base / external.location).resolve()
    if base not in path.parents:
        raise InvalidModelError(
            f"{where}: the external data of tensor '{tensor.name}' is at '{external.location}', outside "
            f"the model's folder '{folder}'"
        )
    length = external.length if external.HasField("length") else size
    try:
        with path.open("rb") as file:
            file.seek(external.offset)
            raw = file.read(length)
    except FileNotFoundError:
        raise InvalidModelError(
            f"{where}: the external data file '{external.location}' of tensor '{tensor.name}' does not "
            f"exist; keep the files MindSpore wrote beside the model in '{folder}'"
        ) from None
    except OSError as error:
        raise InvalidModelError(f"{where}: cannot read '{path}': {error.strerror}") from None
    if len(raw) != length:
        raise InvalidModelError(
            f"{where}: the external data file '{external.location}' ends before offset "
            f"{external.offset} + {length} (tensor '{tensor.name}')"
        )
    return raw


def _parse(path: Path, data: bytes) -> mind_ir.ModelProto:
    """The model in `data` if it is a MINDIR model by content: MindSpore as its producer, a named
    graph with nodes that all have an op type (other protobuf models, ONNX's among them, parse with
    these classes too, into fields that do not hold what MINDIR's do)."""
    if not data:
        raise InvalidModelError(f"'{path}' is empty (0 bytes): not a MINDIR model")
    model = mind_ir.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as error:
        raise InvalidModelError(
            f"'{path}' is not a MINDIR model (it does not parse as one: {error}); an encrypted MINDIR "
            "must be exported again without enc_key"
        ) from None
    if model.producer_name != PRODUCER:
        made_by = f"was made by '{model.producer_name}'" if model.producer_name else "names no producer"
        raise InvalidModelError(
            f"'{path}' is not a MINDIR model ({made_by}, not {PRODUCER}; for an ONNX model use "
            "GraphParser().parse_onnx)"
        )
    if not model.HasField("graph") or not model.graph.node:
        raise InvalidModelError(
            f"'{path}' is not a MINDIR model (it has no graph); export it with mindspore.export(net, x, "
            "file_name=..., file_format='MINDIR')"
        )
    for graph in (model.graph, *model.functions):
        if not graph.name:
            raise InvalidModelError(f"'{path}' is not a MINDIR model (a graph has no name)")
        untyped = sum(1 for node in graph.node if not node.op_type)
        if untyped:
            raise InvalidModelError(
                f"'{path}' is not a MINDIR model ({untyped} node(s) of graph '{graph.name}' have no op_type)"
            )
    return model
