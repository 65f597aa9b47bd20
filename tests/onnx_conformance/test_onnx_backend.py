"""Runs ONNX's backend test suite (node cases, light models, simple and pytorch suites)."""

from __future__ import annotations

from suite import backend_test_classes

globals().update(backend_test_classes(__name__))
