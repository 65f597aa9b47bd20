"""The weight store: keys, read-only arrays, .npz round trip without pickle, and ge-opt --weights."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import ge
from ge.dtypes import bfloat16
from ge.semantics import constant_array
from ge.weights import WeightStore


def test_keys_are_unique_resource_handles() -> None:
    store = WeightStore()
    a = store.add(np.zeros(3), "conv1/weight:0")
    b = store.add(np.ones(3), "conv1/weight:0")
    c = store.add(np.ones(3), "0bad")
    assert (a, b, c) == ("conv1_weight_0", "conv1_weight_0_1", "w_0bad")
    with pytest.raises(ValueError):
        store.get(a)[0] = 1.0


def test_npz_round_trip_keeps_bfloat16_bytes(tmp_path) -> None:
    from xdsl.dialects.builtin import DenseResourceAttr, TensorType, bf16

    store = WeightStore()
    data = np.array([[1.5, -2.25], [3.0, 0.125]], dtype=bfloat16)
    key = store.add(data, "w")
    store.save(tmp_path / "w.npz")
    loaded = WeightStore.load(tmp_path / "w.npz")
    t = TensorType(bf16, [2, 2])
    restored = constant_array(DenseResourceAttr.from_params(key, t), t, loaded)
    assert restored.dtype == bfloat16
    np.testing.assert_array_equal(restored.astype(np.float32), data.astype(np.float32))


@pytest.mark.parametrize("name", ["float8_e5m2", "float8_e4m3fn", "int4"])
def test_npz_round_trip_keeps_narrow_dtype_bytes(tmp_path, name: str) -> None:
    import ml_dtypes
    from xdsl.dialects.builtin import DenseResourceAttr, TensorType

    from ge.dtypes import element_type

    dtype = np.dtype(getattr(ml_dtypes, name))
    data = np.array([1.0, -2.0, 3.0, 0.0], np.float32).astype(dtype)
    store = WeightStore()
    key = store.add(data, "w")
    store.save(tmp_path / "w.npz")
    t = TensorType(element_type(dtype.name), [4])
    restored = constant_array(DenseResourceAttr.from_params(key, t), t, WeightStore.load(tmp_path / "w.npz"))
    assert restored.dtype == dtype
    np.testing.assert_array_equal(restored.astype(np.float32), data.astype(np.float32))


def test_missing_weight_is_a_clear_error() -> None:
    with pytest.raises(
        ge.InvalidModelError, match=r"weight 'dense_resource<nope>' is not in the weight store"
    ):
        WeightStore().get("nope")


def test_ge_opt_reads_weights_file(tmp_path) -> None:
    ir = tmp_path / "m.mlir"
    ir.write_text(
        "func.func @main() -> tensor<4x8xf32> {\n"
        "  %w = ascend.graph.const dense_resource<fc.weight> : tensor<4x8xf32>\n"
        "  func.return %w : tensor<4x8xf32>\n}\n"
    )
    store = WeightStore()
    store.put("fc.weight", np.ones((4, 8), np.float32))
    store.save(tmp_path / "w.npz")
    command = [sys.executable, "-m", "ge.tools.ge_opt", str(ir), "-p", "ge-lower-graph-to-kernel"]
    ok = subprocess.run([*command, "--weights", str(tmp_path / "w.npz")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "dense_resource<fc.weight>" in ok.stdout
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    bad = subprocess.run([*command, "--weights", str(tmp_path / "bad.npz")], capture_output=True, text=True)
    assert bad.returncode == 1
    assert "cannot read weights file" in bad.stderr and "Traceback" not in bad.stderr
    (tmp_path / "w.txt").write_text("fc.weight = 1\n")
    text = subprocess.run([*command, "--weights", str(tmp_path / "w.txt")], capture_output=True, text=True)
    assert text.returncode == 1
    assert "it is not an .npz archive (numpy.savez writes one)" in text.stderr
    assert "pickle" not in text.stderr
