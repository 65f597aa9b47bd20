"""Shared fixtures."""

from __future__ import annotations

import os

import numpy as np
import pytest

# Verify the IR after every pass in tests, so that a pass that breaks an invariant is named.
os.environ.setdefault("GE_VERIFY_EACH_PASS", "1")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)
