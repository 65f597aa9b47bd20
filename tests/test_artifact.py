"""The `.ge` artifact: round trip, identical bytes per compile, tamper and version detection."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import numpy as np
import pytest
from models import cnn

import ge


def test_round_trip_runs_the_same(tmp_path: Path, rng) -> None:
    twin = cnn()
    compiled = ge.GraphCompiler().compile(twin.graph, optimization_level=3)
    compiled.save(tmp_path / "cnn.ge")
    loaded = ge.GraphCompiler.load(tmp_path / "cnn.ge")
    assert loaded.target == compiled.target and loaded.num_operators == compiled.num_operators
    x = rng.standard_normal(twin.input_shape).astype(np.float32)
    outputs = []
    for model in (compiled, loaded):
        executor = ge.GraphExecutor()
        executor.load_graph(model)
        outputs.append(executor.run(x)[0])
    np.testing.assert_array_equal(outputs[0], outputs[1])


def test_same_model_same_bytes(tmp_path: Path) -> None:
    for name in ("a", "b"):
        ge.GraphCompiler().compile(cnn().graph).save(tmp_path / f"{name}.ge")
    assert (tmp_path / "a.ge").read_bytes() == (tmp_path / "b.ge").read_bytes()


def test_tampering_and_versions_are_detected(tmp_path: Path) -> None:
    path = tmp_path / "m.ge"
    ge.GraphCompiler().compile(cnn().graph).save(path)
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF  # a byte of the weight blob
    (tmp_path / "bad.ge").write_bytes(bytes(data))
    with pytest.raises(ge.InvalidModelError, match="weight blob does not match its checksum"):
        ge.GraphCompiler.load(tmp_path / "bad.ge")
    (tmp_path / "old.ge").write_bytes(
        path.read_bytes().replace(b'"format_version": 4', b'"format_version": 9')
    )
    with pytest.raises(ge.InvalidModelError, match="format_version is 9 .int.; this ge reads version 4"):
        ge.GraphCompiler.load(tmp_path / "old.ge")
    (tmp_path / "junk.ge").write_bytes(b"not a model")
    with pytest.raises(ge.InvalidModelError, match="is not a .ge model file"):
        ge.GraphCompiler.load(tmp_path / "junk.ge")


def _with_manifest(path: Path, edit, signed: bool = False) -> bytes:
    """The .ge file at `path` with its manifest changed by `edit` (lengths kept consistent; with
    `signed`, the manifest's checksum made right again, as a writer other than ge would)."""
    data = path.read_bytes()
    (length,) = struct.unpack_from("<I", data, 8)
    manifest = edit(json.loads(data[12 : 12 + length]))
    if signed:
        manifest.pop("manifest_sha256")
        manifest["manifest_sha256"] = hashlib.sha256(
            json.dumps(manifest, sort_keys=True).encode()
        ).hexdigest()
    header = json.dumps(manifest, sort_keys=signed).encode()
    return data[:8] + struct.pack("<I", len(header)) + header + data[12 + length :]


def _gears() -> ge.CompiledModel:
    g = ge.Graph()
    g.add_output(g.add_relu(g.add_input("x", ["N", 4])))
    return ge.GraphCompiler().compile(g, dynamic_batch_size=[1, 2])


def test_every_byte_of_the_manifest_is_checked(tmp_path: Path) -> None:
    """A changed value the JSON still reads (one bit turns optimization level 3 into 2, which
    changes what the model reports of itself), spacing, a repeated key or a renamed one (a
    gear model's batch_padding, dropped silently) are a damaged file, not another model."""
    path = tmp_path / "m.ge"
    ge.GraphCompiler().compile(cnn().graph, optimization_level=3).save(path)
    data = path.read_bytes()
    level = data.index(b'"optimization_level": 3') + len(b'"optimization_level": ')
    changed = [
        data[:level] + bytes([data[level] ^ 1]) + data[level + 1 :],  # 3 -> 2
        _spaced(data),
    ]
    _gears().save(tmp_path / "g.ge")
    gears = (tmp_path / "g.ge").read_bytes()
    changed.append(gears.replace(b'"batch_padding"', b'"batch_pqdding"'))
    for index, damaged in enumerate(changed):
        (tmp_path / "bad.ge").write_bytes(damaged)
        with pytest.raises(
            ge.InvalidModelError, match="does not match its checksum|keys no ge writes"
        ) as error:
            ge.GraphCompiler.load(tmp_path / "bad.ge")
        assert "damaged" in str(error.value), index


def _spaced(data: bytes) -> bytes:
    """`data` with one more space in its manifest and the header's length says so: the JSON
    reads the same."""
    length = int.from_bytes(data[8:12], "little")
    manifest = data[12 : 12 + length].replace(b'"target": ', b'"target":  ', 1)
    return data[:8] + struct.pack("<I", len(manifest)) + manifest + data[12 + length :]


def test_a_manifest_json_cannot_break_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "m.ge"
    ge.GraphCompiler().compile(cnn().graph).save(path)
    rest = path.read_bytes()[12 + int.from_bytes(path.read_bytes()[8:12], "little") :]
    for header in (b"[" * 100_000 + b"]" * 100_000, b'{"format_version": ' + b"9" * 5000 + b"}"):
        (tmp_path / "bad.ge").write_bytes(b"GE-MODEL" + struct.pack("<I", len(header)) + header + rest)
        with pytest.raises(ge.InvalidModelError, match="the manifest is damaged"):
            ge.GraphCompiler.load(tmp_path / "bad.ge")
    (tmp_path / "bad.ge").write_bytes(path.read_bytes()[:8] + struct.pack("<I", 1 << 31) + rest)
    with pytest.raises(ge.InvalidModelError, match="manifest of 2,147,483,648 bytes, past the end"):
        ge.GraphCompiler.load(tmp_path / "bad.ge")


@pytest.mark.parametrize(
    "shape", [3, [1, "4"], [1, -4], [1, True], None], ids=["int", "text", "negative", "bool", "null"]
)
def test_a_gear_shape_in_the_manifest_is_checked(tmp_path: Path, shape) -> None:
    _gears().save(tmp_path / "g.ge")

    def edit(manifest):
        manifest["gears"][0]["input_shapes"]["x"] = shape
        return manifest

    (tmp_path / "bad.ge").write_bytes(_with_manifest(tmp_path / "g.ge", edit, signed=True))
    with pytest.raises(
        ge.InvalidModelError, match=r"manifest gear 0 gives input 'x' the shape .*a shape is a list"
    ):
        ge.GraphCompiler.load(tmp_path / "bad.ge")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda m: {**m, "format_version": "4"},
            "format_version is '4' (str); this ge reads version 4 (integers)",
        ),
        (lambda m: {k: v for k, v in m.items() if k != "ir_bytes"}, "the manifest lacks 'ir_bytes'"),
        (lambda m: {**m, "weight_bytes": "12"}, "manifest 'weight_bytes' is '12' (str), it must be int"),
        (lambda m: {**m, "options": []}, "manifest 'options' is [] (list), it must be dict"),
        (lambda m: {**m, "ir_bytes": -4}, "manifest 'ir_bytes' is negative"),
        (lambda m: [m], "the manifest is a JSON list, not an object"),
    ],
    ids=["version-as-text", "missing-key", "mistyped-key", "options-list", "negative-length", "a-list"],
)
def test_a_damaged_manifest_is_named(tmp_path: Path, edit, message: str) -> None:
    path = tmp_path / "m.ge"
    ge.GraphCompiler().compile(cnn().graph).save(path)
    (tmp_path / "bad.ge").write_bytes(_with_manifest(path, edit))
    with pytest.raises(ge.InvalidModelError) as error:
        ge.GraphCompiler.load(tmp_path / "bad.ge")
    assert message in str(error.value)


def _with_ir(path: Path, edit) -> bytes:
    """The one-shape .ge file at `path` with its IR text changed by `edit`, every checksum made
    right again: a file that is whole, holding a model that is not."""
    data = path.read_bytes()
    (length,) = struct.unpack_from("<I", data, 8)
    manifest = json.loads(data[12 : 12 + length])
    start = 12 + length
    ir = edit(data[start : start + manifest["ir_bytes"]].decode()).encode()
    blob = data[start + manifest["ir_bytes"] :]

    def sign(m):
        return {**m, "ir_bytes": len(ir), "ir_sha256": hashlib.sha256(ir).hexdigest()}

    header = _with_manifest(path, sign, signed=True)
    (length,) = struct.unpack_from("<I", header, 8)
    return header[: 12 + length] + ir + blob


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (  # the last launch gone: the output buffer was never written and read zeros
            lambda ir: "\n".join(line for line in ir.split("\n") if "launch @relu(" not in line),
            "'ascend.stream.outputs': reads %relu before any launch writes it",
        ),
        (  # the first launch writing the input it reads: the caller's array was changed
            lambda ir: ir.replace("@softmax(%x) -> (%softmax)", "@softmax(%x) -> (%x)", 1),
            "'ascend.stream.launch': writes %x, model input 0: the caller's array",
        ),
    ],
    ids=["missing-launch", "input-written"],
)
def test_a_whole_file_with_a_broken_task_list_is_refused(tmp_path: Path, edit, message: str) -> None:
    g = ge.Graph()
    g.add_output(g.add_relu(g.add_softmax(g.add_input("x", [2, 4]))))
    path = tmp_path / "m.ge"
    ge.GraphCompiler().compile(g, optimization_level=0).save(path)
    (tmp_path / "bad.ge").write_bytes(_with_ir(path, edit))
    with pytest.raises(ge.InvalidModelError, match=message):
        ge.GraphCompiler.load(tmp_path / "bad.ge")


def _diamond() -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("x", [16, 32])
    g.add_output(g.add_add(g.add_relu(x), g.add_softmax(x)))
    return g


def _two_weights() -> ge.Graph:
    g = ge.Graph()
    x = g.add_input("x", [16, 32])
    added = g.add_add(x, g.add_constant(np.ones((16, 32), np.float32)))
    g.add_output(g.add_mul(added, g.add_constant(np.full((16, 32), 3, np.float32))))
    return g


def _matmul() -> ge.Graph:
    g = ge.Graph()
    weights = np.arange(32 * 16, dtype=np.float32).reshape(32, 16) / 100
    g.add_output(g.add_matmul(g.add_input("x", [8, 32]), g.add_constant(weights)))
    return g


@pytest.mark.parametrize(
    ("graph", "options", "edit", "message"),
    [
        (  # %softmax one byte down, over the last byte of %relu, which the add still reads
            _diamond,
            {},
            lambda ir: ir.replace(
                "%softmax = ascend.stream.buffer offset 2048", "%softmax = ascend.stream.buffer offset 2047"
            ),
            r"'ascend.stream.buffer': arena bytes \[2047, 2048\) are in two buffers live at once: "
            r"%relu at \[0, 2048\), live from @relu \(launch 0, stream 0\) to @add",
        ),
        (  # the add on stream 1 no longer waits for the relu on stream 0
            _diamond,
            {"max_streams": 2},
            lambda ir: "\n".join(line for line in ir.split("\n") if "event_wait" not in line),
            r"'ascend.stream.launch': reads %relu on stream 1, written by @relu \(launch 0, stream 0\), "
            "and no event orders the write before the read",
        ),
        (  # the second constant moved over half of the first: the mul read ones for threes
            _two_weights,
            {},
            lambda ir: ir.replace(
                "offset 2048 size 2048 : memref<16x32xf32>", "offset 1024 size 2048 : memref<16x32xf32>"
            ),
            r"'ascend.stream.weight': weight dense_resource<const_1> at \[1024, 3072\) overlaps weight "
            r"dense_resource<const> at \[0, 2048\)",
        ),
        (  # the tiling renamed away: the emulator took all of K in one step, another rounding
            _matmul,
            {},
            lambda ir: ir.replace("tiling = #ascend.cube_tiling", "tilling = #ascend.cube_tiling"),
            "'ascend.stream.kernel': cube kernel @matmul computes 'ascend.graph.matmul' with no tiling",
        ),
    ],
    ids=["buffer-overlap", "missing-event", "weight-overlap", "cube-tiling-renamed"],
)
def test_a_whole_file_whose_model_breaks_a_rule_is_refused(
    tmp_path: Path, graph, options, edit, message: str
) -> None:
    path = tmp_path / "m.ge"
    ge.GraphCompiler().compile(graph(), optimization_level=0, **options).save(path)
    (tmp_path / "bad.ge").write_bytes(_with_ir(path, edit))
    with pytest.raises(ge.InvalidModelError, match=message):
        ge.GraphCompiler.load(tmp_path / "bad.ge")
