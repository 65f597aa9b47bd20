"""The `.ge` artifact: round trip, identical bytes per compile, tamper and version detection."""

from __future__ import annotations

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
        path.read_bytes().replace(b'"format_version": 2', b'"format_version": 9')
    )
    with pytest.raises(
        ge.InvalidModelError, match="format_version is 9 .int.; this ge reads versions 2 and 3"
    ):
        ge.GraphCompiler.load(tmp_path / "old.ge")
    (tmp_path / "junk.ge").write_bytes(b"not a model")
    with pytest.raises(ge.InvalidModelError, match="is not a .ge model file"):
        ge.GraphCompiler.load(tmp_path / "junk.ge")


def _with_manifest(path: Path, edit) -> bytes:
    """The .ge file at `path` with its manifest changed by `edit` (lengths kept consistent)."""
    data = path.read_bytes()
    (length,) = struct.unpack_from("<I", data, 8)
    manifest = json.loads(data[12 : 12 + length])
    header = json.dumps(edit(manifest)).encode()
    return data[:8] + struct.pack("<I", len(header)) + header + data[12 + length :]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda m: {**m, "format_version": "2"},
            "format_version is '2' (str); this ge reads versions 2 and 3 (integers)",
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
