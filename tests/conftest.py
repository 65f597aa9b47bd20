"""Shared fixtures."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import settings

# Property tests and fuzzers: the same examples on every `make test` run (CI is never flaky);
# `make fuzz` draws 10,000 fresh ones per test.
settings.register_profile("ci", derandomize=True, deadline=None, database=None, max_examples=500)
settings.register_profile("fuzz", deadline=None, database=None, max_examples=10_000)
settings.load_profile(os.environ.get("GE_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


# --------------------------------------------------------------------------------------------
# The ONNX backend suite's figures, printed at the end of the run (outcomes: onnx_conformance)
# --------------------------------------------------------------------------------------------

_OUTCOMES = ("passed", "passed with an override", "spec-undefined", "refused", "wrong")
_conformance: dict[tuple[str, str], dict[str, int]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    tag = getattr(report, "conformance", None)
    if report.when == "call" and tag:
        suite, level, outcome = tag.split("|")
        tally = _conformance.setdefault((suite, level), dict.fromkeys(_OUTCOMES, 0))
        tally[outcome] += 1


def pytest_terminal_summary(terminalreporter) -> None:
    if not _conformance:
        return
    write = terminalreporter.write_line
    terminalreporter.section("ONNX backend test suite")
    header = f"{'suite':<18} {'level':<5} {'cases':>5}  " + "  ".join(_OUTCOMES)
    write(header)
    for (suite, level), tally in sorted(_conformance.items()):
        figures = "  ".join(f"{tally[o]:>{len(o)}}" for o in _OUTCOMES)
        write(f"{suite:<18} {level:<5} {sum(tally.values()):>5}  {figures}")
