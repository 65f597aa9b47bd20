"""The `.ge` file: one compiled model, loadable without pickle.

Layout: the magic `GE-MODEL`, a little-endian u32 length, a JSON manifest of that length, the
stream-level IR as UTF-8 text, then the weight blob as raw bytes. The manifest holds the format
version, the SoC, the options, the byte lengths and SHA-256 checksums of the IR and the blob, and
the checksum of the manifest itself (`manifest_sha256`, over its other keys as written: sorted,
compact JSON), so no byte of the file goes unchecked.
A model with gears holds one IR per gear, one after the other, and its manifest lists the gears in
order, each with its input shapes and its IR's length and checksum; the blob they share follows
the last IR.
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
from ge.dialects.stream import BufferOp, ModelOp, model_of

from . import arguments
from .context import make_context
from .dtypes import shaped_type
from .errors import CompileError, GeError, InvalidModelError
from .gears import BatchPadding, Gear
from .options import check_optimization_level, check_options
from .soc import known_socs

MAGIC = b"GE-MODEL"
FORMAT_VERSION = 4
"""Version 4: the manifest carries its own checksum, and a model with gears is told by its
`gears` key. Version 3 was a model with gears, version 2 one of one shape, both with a manifest
no checksum covered (a flipped bit could change the recorded optimization level or options);
version 1 wrote stored shapes and format lists."""
READ_VERSIONS = (FORMAT_VERSION,)


@dataclass(frozen=True)
class Artifact:
    """What a `.ge` file holds; `ge.compiler.CompiledModel` is built from it and saves it."""

    module: ModuleOp
    weight_blob: bytes
    target: str
    optimization_level: int
    options: dict[str, Any]
    gears: tuple[Gear, ...] = ()
    """With gears, each gear's input shapes and module (the first is `module`)."""
    batch_padding: BatchPadding | None = None
    """With batch gears, whether a smaller batch runs padded on a larger gear."""


def save(model: Artifact, path: str | Path) -> None:
    """Writes `model` to `path` as the module docstring lays the file out."""
    arguments.path(path, "CompiledModel.save: path")
    irs = [str(gear.module).encode() for gear in model.gears] or [str(model.module).encode()]
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "target": model.target,
        "optimization_level": model.optimization_level,
        "options": model.options,
        "weight_bytes": len(model.weight_blob),
        "weight_sha256": hashlib.sha256(model.weight_blob).hexdigest(),
    }
    if model.gears:
        manifest["gears"] = [
            {
                "input_shapes": {name: list(shape) for name, shape in gear.input_shapes.items()},
                "ir_bytes": len(ir),
                "ir_sha256": hashlib.sha256(ir).hexdigest(),
            }
            for gear, ir in zip(model.gears, irs, strict=True)
        ]
        if model.batch_padding is not None:
            manifest["batch_padding"] = model.batch_padding.to_json()
    else:
        manifest |= {"ir_bytes": len(irs[0]), "ir_sha256": hashlib.sha256(irs[0]).hexdigest()}
    manifest["manifest_sha256"] = _manifest_checksum(manifest)
    header = _encode(manifest)
    try:
        Path(path).write_bytes(
            MAGIC + struct.pack("<I", len(header)) + header + b"".join(irs) + model.weight_blob
        )
    except OSError as error:
        raise GeError(f"CompiledModel.save cannot write '{path}': {error}") from None


def load(path: str | Path) -> Artifact:
    """Reads a `.ge` file, checking magic, version, lengths and checksums before parsing, then the
    IR of every gear, the SoC and the recorded options; a damaged file is an InvalidModelError."""
    arguments.path(path, "GraphCompiler.load: path")
    data, manifest, ir_start = _read(path)
    entries = manifest.get("gears") or [manifest]
    blob_start = ir_start + sum(entry["ir_bytes"] for entry in entries)
    blob = data[blob_start:]
    _check_checksum(blob, manifest, "weight", "weight blob", path)
    modules = []
    for index, entry in enumerate(entries):
        ir = data[ir_start : ir_start + entry["ir_bytes"]]
        ir_start += entry["ir_bytes"]
        what = f"IR of gear {index}" if "gears" in manifest else "IR"
        _check_checksum(ir, entry, "ir", what, path)
        try:
            module = Parser(make_context(), ir.decode()).parse_module()
            module.verify()
        except (
            ParseError,
            VerifyException,
            UnicodeDecodeError,
            ValueError,
            OverflowError,
            RecursionError,
        ) as error:
            raise InvalidModelError(f"'{path}': the stream {what} is invalid: {error}") from None
        assert isinstance(module, ModuleOp)
        _check_contents(module, manifest, path)
        modules.append(module)
    gears: tuple[Gear, ...] = ()
    if "gears" in manifest:
        gears = tuple(
            Gear({name: tuple(shape) for name, shape in entry["input_shapes"].items()}, module)
            for entry, module in zip(manifest["gears"], modules, strict=True)
        )
        gears = check_gears(gears, len(blob), path)
    padding = _batch_padding(manifest.get("batch_padding"), modules[0], path) if gears else None
    return Artifact(
        module=modules[0],
        weight_blob=blob,
        target=manifest["target"],
        optimization_level=manifest["optimization_level"],
        options=manifest["options"],
        gears=gears,
        batch_padding=padding,
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
    if start + length > len(data):
        raise InvalidModelError(
            f"'{path}': the header gives a manifest of {length:,} bytes, past the end of the "
            f"{len(data):,}-byte file (the file is truncated or damaged)"
        )
    header = data[start : start + length]
    try:
        manifest = json.loads(header)
    except (ValueError, RecursionError):  # bad JSON or UTF-8, too many digits, too deeply nested
        raise InvalidModelError(f"'{path}': the manifest is damaged") from None
    _check_manifest(manifest, header, path)
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
    "manifest_sha256": str,
}
"""The manifest's keys and the JSON type of each, for a model of one shape (a model with gears
has `gears`, and maybe `batch_padding`, instead of the `ir_` keys)."""
GEAR_ENTRY: dict[str, type | tuple[type, ...]] = {"input_shapes": dict, "ir_bytes": int, "ir_sha256": str}
"""The keys of the manifest's `gears` entries and the JSON type of each."""


def _encode(manifest: dict[str, Any]) -> bytes:
    """The manifest as a file holds it: sorted keys, compact JSON."""
    return json.dumps(manifest, sort_keys=True).encode()


def _manifest_checksum(manifest: dict[str, Any]) -> str:
    """The SHA-256 of the manifest's other keys, encoded as the file holds them."""
    return hashlib.sha256(_encode({k: v for k, v in manifest.items() if k != "manifest_sha256"})).hexdigest()


def _check_manifest(manifest: object, header: bytes, path: str | Path) -> None:
    if not isinstance(manifest, dict):
        raise InvalidModelError(f"'{path}': the manifest is a JSON {type(manifest).__name__}, not an object")
    version = manifest.get("format_version")
    if version not in READ_VERSIONS or isinstance(version, bool):
        raise InvalidModelError(
            f"'{path}': manifest format_version is {version!r} ({type(version).__name__}); this ge "
            f"reads version{'s' if len(READ_VERSIONS) > 1 else ''} "
            f"{' and '.join(map(str, READ_VERSIONS))} (integers), so recompile the model with this ge"
        )
    keys = dict(MANIFEST)
    if "gears" in manifest:
        del keys["ir_bytes"], keys["ir_sha256"]
        keys["gears"] = list
    optional = {"batch_padding"} if "gears" in manifest else set()
    _check_keys(manifest, keys, "manifest", path, optional)
    if header != _encode(manifest) or manifest["manifest_sha256"] != _manifest_checksum(manifest):
        raise InvalidModelError(f"'{path}': the manifest does not match its checksum (the file is damaged)")
    if "gears" in manifest:
        if len(manifest["gears"]) < 2:
            raise InvalidModelError(
                f"'{path}': the manifest lists {len(manifest['gears'])} gears, not 2 or more"
            )
        for index, entry in enumerate(manifest["gears"]):
            if not isinstance(entry, dict):
                raise InvalidModelError(
                    f"'{path}': manifest gear {index} is not an object (the file is damaged)"
                )
            _check_keys(entry, GEAR_ENTRY, f"manifest gear {index}", path)
            for name, shape in entry["input_shapes"].items():
                if not isinstance(shape, list) or not all(
                    isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
                ):
                    raise InvalidModelError(
                        f"'{path}': manifest gear {index} gives input '{name}' the shape {shape!r}; "
                        "a shape is a list of sizes (integers, 0 or more)"
                    )
    try:
        check_optimization_level(manifest["optimization_level"])
        check_options(manifest["options"])
    except CompileError as error:
        raise InvalidModelError(f"'{path}': the manifest records what no compile gives: {error}") from None


def _check_keys(
    table: dict[str, Any],
    keys: dict[str, type | tuple[type, ...]],
    where: str,
    path: str | Path,
    optional: set[str] | frozenset[str] = frozenset(),
) -> None:
    """Every key of `keys` is in `table`, of its JSON type, and no other but the `optional` ones;
    byte counts are not negative."""
    unknown = sorted(set(table) - set(keys) - optional)
    if unknown:
        raise InvalidModelError(
            f"'{path}': the {where} has keys no ge writes: {', '.join(map(repr, unknown))} "
            "(the file is damaged)"
        )
    for key, kind in keys.items():
        if key not in table:
            raise InvalidModelError(f"'{path}': the {where} lacks '{key}' (the file is damaged)")
        value = table[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise InvalidModelError(
                f"'{path}': {where} '{key}' is {value!r} ({type(value).__name__}), "
                f"it must be {getattr(kind, '__name__', kind)}"
            )
        if key.endswith("_bytes") and value < 0:
            raise InvalidModelError(f"'{path}': {where} '{key}' is negative ({value})")


def _check_checksum(content: bytes, table: dict[str, Any], key: str, what: str, path: str | Path) -> None:
    if len(content) != table[f"{key}_bytes"] or hashlib.sha256(content).hexdigest() != table[f"{key}_sha256"]:
        raise InvalidModelError(f"'{path}': the {what} does not match its checksum (the file is damaged)")


def check_gears(gears: tuple[Gear, ...], blob_bytes: int, path: str | Path) -> tuple[Gear, ...]:
    """The gears, after checking that each one's model takes the input shapes its manifest entry
    names (returned in the model's input order; the manifest's keys are sorted) and addresses the
    whole shared blob, and that no two gears have the same shapes."""
    seen: list[dict[str, tuple[int, ...]]] = []
    ordered = []
    for index, gear in enumerate(gears):
        model = model_of(gear.module)
        names = [s.data for s in model.input_names.data]
        shapes = {
            names[op.input.value.data]: tuple(op.buffer.type.get_shape())
            for op in model.body.block.ops
            if isinstance(op, BufferOp) and op.input is not None
        }
        shapes = {name: shapes[name] for name in names if name in shapes}
        if shapes != gear.input_shapes:
            raise InvalidModelError(
                f"'{path}': gear {index}'s IR takes {shapes}, its manifest entry says {gear.input_shapes}"
            )
        if model.weight_size.value.data != blob_bytes:
            raise InvalidModelError(
                f"'{path}': gear {index} addresses a {model.weight_size.value.data}-byte weight blob, "
                f"the file holds {blob_bytes} bytes"
            )
        if gear.input_shapes in seen:
            raise InvalidModelError(f"'{path}': gear {index} repeats the input shapes {gear.input_shapes}")
        seen.append(gear.input_shapes)
        ordered.append(Gear(shapes, gear.module))
    return tuple(ordered)


def _batch_padding(entry: object, module: ModuleOp, path: str | Path) -> BatchPadding | None:
    """The manifest's `batch_padding` (absent for gears that are not batch sizes): either each
    output's sample axis, within its rank, or the op that blocks padding."""
    if entry is None:
        return None
    last = model_of(module).body.block.last_op
    ranks = [len(shaped_type(v).get_shape()) for v in last.operands] if last is not None else []
    if isinstance(entry, dict) and set(entry) == {"blocker"} and isinstance(entry["blocker"], str):
        return BatchPadding(None, entry["blocker"])
    axes = entry.get("output_axes") if isinstance(entry, dict) and set(entry) == {"output_axes"} else None
    if (
        not isinstance(axes, list)
        or len(axes) != len(ranks)
        or not all(
            a is None or (isinstance(a, int) and not isinstance(a, bool) and 0 <= a < rank)
            for a, rank in zip(axes, ranks, strict=True)
        )
    ):
        raise InvalidModelError(
            f"'{path}': manifest batch_padding is {entry!r}; it must be {{\"output_axes\": [...]}} with one "
            f'axis (or null) within the rank of each of the {len(ranks)} outputs, or {{"blocker": "..."}}'
        )
    return BatchPadding(tuple(axes))


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
