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
