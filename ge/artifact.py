"""The `.ge` file: one compiled model, loadable without pickle.

Layout: the magic `GE-MODEL`, a little-endian u32 length, a JSON manifest of that length, the
stream-level IR as UTF-8 text, then the weight blob as raw bytes. The manifest holds the format
version, the SoC, the options, the byte lengths and SHA-256 checksums of the IR and the blob.
Loading checks the magic, the version, the lengths and the checksums before parsing the IR, then
that the IR is one `ascend.stream` model for the SoC the manifest names, and the recorded options
by the rules `compile` applies (`ge.options`).
Compiling the same model twice gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from ge.dialects.common import TARGET_ATTR_NAME, TargetAttr
from ge.dialects.stream import ModelOp

from . import arguments
from .context import make_context
from .errors import CompileError, GeError, InvalidModelError
from .options import check_optimization_level, check_options
from .soc import known_socs

MAGIC = b"GE-MODEL"
FORMAT_VERSION = 2
"""Version 2: buffers are memrefs of the logical shape with the device format as their layout,
and kernel types carry formats as encodings (version 1 wrote stored shapes and format lists)."""


@dataclass(frozen=True)
class Artifact:
    """What a `.ge` file holds; `ge.compiler.CompiledModel` is built from it and saves it."""

    module: ModuleOp
    weight_blob: bytes
    target: str
    optimization_level: int
    options: dict[str, Any]


def save(model: Artifact, path: str | Path) -> None:
    arguments.path(path, "CompiledModel.save: path")
    ir = str(model.module).encode()
    manifest = {
        "format_version": FORMAT_VERSION,
        "target": model.target,
        "optimization_level": model.optimization_level,
        "options": model.options,
        "ir_bytes": len(ir),
        "ir_sha256": hashlib.sha256(ir).hexdigest(),
        "weight_bytes": len(model.weight_blob),
        "weight_sha256": hashlib.sha256(model.weight_blob).hexdigest(),
    }
    header = json.dumps(manifest, sort_keys=True).encode()
    try:
        Path(path).write_bytes(MAGIC + struct.pack("<I", len(header)) + header + ir + model.weight_blob)
    except OSError as error:
        raise GeError(f"CompiledModel.save cannot write '{path}': {error}") from None


def load(path: str | Path) -> Artifact:
    arguments.path(path, "GraphCompiler.load: path")
    data, manifest, ir_start = _read(path)
    blob_start = ir_start + manifest["ir_bytes"]
    ir, blob = data[ir_start:blob_start], data[blob_start:]
    for what, content, key in (("IR", ir, "ir"), ("weight blob", blob, "weight")):
        if (
            len(content) != manifest[f"{key}_bytes"]
            or hashlib.sha256(content).hexdigest() != manifest[f"{key}_sha256"]
        ):
            raise InvalidModelError(f"'{path}': the {what} does not match its checksum (the file is damaged)")
    try:
        module = Parser(make_context(), ir.decode()).parse_module()
        module.verify()
    except (ParseError, VerifyException, UnicodeDecodeError) as error:
        raise InvalidModelError(f"'{path}': the stream IR is invalid: {error}") from None
    assert isinstance(module, ModuleOp)
    _check_contents(module, manifest, path)
    return Artifact(
        module=module,
        weight_blob=blob,
        target=manifest["target"],
        optimization_level=manifest["optimization_level"],
        options=manifest["options"],
    )


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The manifest of a `.ge` file (format version, SoC, options, lengths and checksums), checked
    as `load` checks it, without reading the IR."""
    arguments.path(path, "read_manifest: path")
    return _read(path)[1]


def _read(path: str | Path) -> tuple[bytes, dict[str, Any], int]:
    """The file's bytes, its checked manifest, and where the IR starts."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise InvalidModelError(f"cannot read '{path}': {error}") from None
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        raise InvalidModelError(f"'{path}' is not a .ge model file")
    (length,) = struct.unpack_from("<I", data, len(MAGIC))
    start = len(MAGIC) + 4
    try:
        manifest = json.loads(data[start : start + length])
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InvalidModelError(f"'{path}': the manifest is damaged") from None
    _check_manifest(manifest, path)
    return data, manifest, start + length


MANIFEST: dict[str, type | tuple[type, ...]] = {
    "format_version": int,
    "target": str,
    "optimization_level": int,
    "options": dict,
    "ir_bytes": int,
    "ir_sha256": str,
    "weight_bytes": int,
    "weight_sha256": str,
}
"""The manifest's keys and the JSON type of each."""


def _check_manifest(manifest: object, path: str | Path) -> None:
    if not isinstance(manifest, dict):
        raise InvalidModelError(f"'{path}': the manifest is a JSON {type(manifest).__name__}, not an object")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise InvalidModelError(
            f"'{path}': manifest format_version is {version!r} ({type(version).__name__}); this ge reads "
            f"version {FORMAT_VERSION} (the integer), so recompile the model with this ge"
        )
    for key, kind in MANIFEST.items():
        if key not in manifest:
            raise InvalidModelError(f"'{path}': the manifest lacks '{key}' (the file is damaged)")
        value = manifest[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise InvalidModelError(
                f"'{path}': manifest '{key}' is {value!r} ({type(value).__name__}), "
                f"it must be {getattr(kind, '__name__', kind)}"
            )
        if key.endswith("_bytes") and value < 0:
            raise InvalidModelError(f"'{path}': manifest '{key}' is negative ({value})")
    try:
        check_optimization_level(manifest["optimization_level"])
        check_options(manifest["options"])
    except CompileError as error:
        raise InvalidModelError(f"'{path}': the manifest records what no compile gives: {error}") from None


def _check_contents(module: ModuleOp, manifest: dict[str, Any], path: str | Path) -> None:
    """The IR is one stream-level model, for the SoC the manifest names."""
    models = [op for op in module.body.block.ops if isinstance(op, ModelOp)]
    if len(models) != 1:
        raise InvalidModelError(
            f"'{path}': the IR holds {len(models)} 'ascend.stream.model' ops; a .ge file holds one "
            "compiled model (a graph is compiled by ge.GraphCompiler().compile first)"
        )
    target = module.attributes.get(TARGET_ATTR_NAME)
    soc = target.soc.data if isinstance(target, TargetAttr) else None
    if manifest["target"] != soc:
        raise InvalidModelError(
            f"'{path}': the manifest's target {manifest['target']!r} contradicts the IR's "
            f"#ascend.target ({soc!r}); the file is damaged"
        )
    if soc not in known_socs():
        raise InvalidModelError(
            f"'{path}': the model is compiled for {soc!r}, which is no known SoC "
            f"({', '.join(known_socs())}; a SoC of your own is found through GE_SOC_PATH)"
        )
