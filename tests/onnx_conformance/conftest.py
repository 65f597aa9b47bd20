"""Turns each case's end into its outcome (see suite.py) and holds it to the predicted one: a
listed refusal must fail as listed, an override must still be needed, and anything else is wrong
(a listed rounding tie's wrong values only fail where the BLAS rounds equal columns alike)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from suite import (  # noqa: E402
    DEVICE_SUFFIX,
    EXPECTED_FAILURES,
    OVERRIDES_FILE,
    RUN,
    TIES,
    expected_failures,
    predicted_outcomes,
    suite_of,
    tie_broken_by_rounding,
)

from ge.emulator import blas  # noqa: E402
from ge.errors import UnsupportedOperatorError  # noqa: E402

_EXPECTED = expected_failures()


def _is_suite_case(item: pytest.Item) -> bool:
    cls = getattr(item, "cls", None)
    return cls is not None and cls.__name__.startswith("OnnxBackend")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if _is_suite_case(item):
        RUN.reset(item.name.removesuffix(DEVICE_SUFFIX))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or not _is_suite_case(item):
        return
    suite, level = suite_of(item.cls.__name__)  # type: ignore[union-attr]
    predicted = predicted_outcomes()[suite][item.name]
    error = call.excinfo.value if call.excinfo is not None else None
    problem = None
    if predicted == "refused":
        category = _EXPECTED[item.name]
        if error is None:
            problem = f"{item.name} passes now: remove it from {EXPECTED_FAILURES.name}"
        elif not (isinstance(error, UnsupportedOperatorError) and error.category == category):
            problem = (
                f"{item.name} is listed as an unsupported {category}, but failed with "
                f"{type(error).__name__}: {error}"
            )
        else:
            report.outcome = "skipped"
            report.wasxfail = f"refused ({category}): {str(error).splitlines()[0]}"
    elif error is not None:
        report.conformance = f"{suite}|{level}|wrong"
        if RUN.mismatched and RUN.name in TIES and not blas.columns_alike() and tie_broken_by_rounding(level):
            report.outcome = "skipped"
            report.wasxfail = (
                f"logits within 1e-6 of onnxruntime's, their tie broken by {blas.kernel_set()} BLAS "
                f"kernels that round equal columns differently: {TIES[RUN.name].split('. ')[0]}"
            )
            return
        if report.skipped:  # the runner's SkipTest: every case must run
            report.longrepr = f"{item.name} was skipped: {error}"
        report.outcome = "failed"
        return
    elif RUN.compared == 0:
        problem = f"{item.name} compared no output"
    elif RUN.outcome() != predicted:
        problem = f"{item.name} ended as '{RUN.outcome()}', but '{predicted}' was predicted"
        if predicted == "passed with an override":
            problem += f": it passes at the suite's tolerance, so remove its entry from {OVERRIDES_FILE.name}"
    elif predicted == "spec-undefined":
        report.outcome = "skipped"
        report.wasxfail = (
            f"spec-undefined: {RUN.undefined} elements are out-of-range float-to-integer casts; "
            "every other element matches"
        )
    if problem is not None:
        report.outcome = "failed"
        report.longrepr = problem
        report.conformance = f"{suite}|{level}|wrong"
    else:
        report.conformance = f"{suite}|{level}|{predicted}"
