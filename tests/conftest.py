"""Shared test helpers: onnxruntime as the independent reference."""

from __future__ import annotations

import numpy as np
import onnx
import pytest


def run_onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime

    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)
