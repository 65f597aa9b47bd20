"""The `.ge` artifact: round trip, identical bytes per compile, tamper and version detection."""

from __future__ import annotations

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
        path.read_bytes().replace(b'"format_version": 1', b'"format_version": 9')
    )
    with pytest.raises(ge.InvalidModelError, match="format version 9"):
        ge.GraphCompiler.load(tmp_path / "old.ge")
    (tmp_path / "junk.ge").write_bytes(b"not a model")
    with pytest.raises(ge.InvalidModelError, match="is not a .ge model file"):
        ge.GraphCompiler.load(tmp_path / "junk.ge")
