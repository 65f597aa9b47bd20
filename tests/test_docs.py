"""Generated documentation stays current with the code."""

from __future__ import annotations

from pathlib import Path

from ge.tools.supported_ops import render

ROOT = Path(__file__).resolve().parents[1]


def test_supported_ops_table_is_current() -> None:
    # The file ends with the conformance figures, which tests/onnx_conformance checks.
    current = (ROOT / "docs" / "supported_ops.md").read_text()
    operators = current.split("\n## ONNX backend test suite\n", 1)[0]
    assert operators == render(), "docs/supported_ops.md is stale: run `make docs`"
