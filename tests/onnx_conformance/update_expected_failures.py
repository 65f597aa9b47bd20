"""Rewrites `expected_failures.txt` from a run of the whole suite.

`python tests/onnx_conformance/update_expected_failures.py` runs every case at O3 (what `ge`
refuses does not depend on the level); a case that fails
with an `UnsupportedOperatorError` is listed with its category; a case that fails any other way
is printed and the script exits non-zero, since only what `ge` refuses may be listed.
"""

from __future__ import annotations

import multiprocessing
import sys
import unittest
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from suite import DEVICE_SUFFIX, EXPECTED_FAILURES, RUN, backend_test_classes  # noqa: E402

from ge.errors import UnsupportedOperatorError  # noqa: E402


def _cases() -> list[tuple[str, str]]:
    return [
        (class_name, name)
        for class_name, case in sorted(backend_test_classes("suite").items())
        for name in sorted(vars(case))
        if name.startswith("test_")
    ]


def _run(item: tuple[str, str]) -> tuple[str, str, str, str]:
    class_name, name = item
    case = backend_test_classes("suite")[class_name](name)
    RUN.reset(name.removesuffix(DEVICE_SUFFIX))
    try:
        getattr(case, name)()
    except UnsupportedOperatorError as error:
        return class_name, name, "unsupported", error.category
    except unittest.SkipTest as error:
        return class_name, name, "skipped", str(error)
    except Exception as error:  # noqa: BLE001 - every other failure is reported, not listed
        first_line = str(error).splitlines()[0] if str(error) else ""
        return class_name, name, "failed", f"{type(error).__name__}: {first_line}"
    return class_name, name, "passed", ""


def main() -> int:
    with warnings.catch_warnings(), multiprocessing.Pool() as pool:
        warnings.simplefilter("ignore", RuntimeWarning)  # cases feed inf and nan on purpose
        results = pool.map(_run, _cases(), chunksize=8)
    outcomes = Counter(outcome for _, _, outcome, _ in results)
    listed = sorted((name, detail) for _, name, outcome, detail in results if outcome == "unsupported")
    lines = [f"{name} {category}" for name, category in listed]
    EXPECTED_FAILURES.write_text(
        "# Cases ge refuses with UnsupportedOperatorError, by category; regenerate with\n"
        "# python tests/onnx_conformance/update_expected_failures.py\n" + "\n".join(lines) + "\n"
    )
    by_category = Counter(category for _, category in listed)
    print(
        f"passed {outcomes['passed']}, expected failures {len(listed)} {dict(by_category)}, "
        f"other failures {outcomes['failed']}, skipped {outcomes['skipped']}"
    )
    for suite in sorted({class_name for class_name, *_ in results}):
        mine = [(outcome, detail) for class_name, _, outcome, detail in results if class_name == suite]
        kinds = Counter(detail for outcome, detail in mine if outcome == "unsupported")
        passed = sum(outcome == "passed" for outcome, _ in mine)
        print(f"  {suite}: {passed} of {len(mine)} pass; expected failures {dict(kinds)}")
    for _, name, outcome, detail in results:
        if outcome == "failed":
            print(f"FAILED {name}: {detail}")
    return 1 if outcomes["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
