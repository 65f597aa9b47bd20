"""Turns the expected-failure list into outcomes: a listed case must fail as listed, or fail the run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from suite import EXPECTED_FAILURES, expected_failures  # noqa: E402

from ge.errors import UnsupportedOperatorError  # noqa: E402

_EXPECTED = expected_failures()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or item.name not in _EXPECTED:
        return
    category = _EXPECTED[item.name]
    error = call.excinfo.value if call.excinfo is not None else None
    if error is None:
        report.outcome = "failed"
        report.longrepr = f"{item.name} passes now: remove it from {EXPECTED_FAILURES.name}"
    elif isinstance(error, UnsupportedOperatorError) and error.category == category:
        report.outcome = "skipped"
        report.wasxfail = f"unsupported {category}: {str(error).splitlines()[0]}"
    else:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.name} is listed as an unsupported {category}, but failed with "
            f"{type(error).__name__}: {error}"
        )
