"""Runs ONNX's backend test suite (node cases, light models, simple and pytorch suites) at O0 and
at O3; `conftest.py` turns each case's end into its outcome."""

from __future__ import annotations

from suite import LEVELS, backend_test_classes

for _level in LEVELS:
    globals().update(backend_test_classes(__name__, _level))
