"""Prints the ONNX backend suite's figures as docs/supported_ops.md shows them (`make docs`).

The figures are the outcomes every case must end in (suite.py); a run that ends otherwise fails,
so these are also the figures `make test` prints, at O0 and at O3 alike.
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).parent))

from suite import OUTCOMES, counts, predicted_outcomes  # noqa: E402

HEADING = "## ONNX backend test suite"


def render() -> str:
    lines = [
        HEADING,
        "",
        f"`make test` runs the backend test suite of onnx {onnx.__version__} on `ge.backend` through",
        "`onnx.backend.test.BackendTest`, at O0 and at O3 (the backend's default); each level gives",
        "these figures, and a case that ends otherwise fails the run. *Passed with an override*: the",
        "case matches only at the tolerance `tests/onnx_conformance/overrides.toml` gives it, with",
        "the reason. *Spec-undefined*: some expected elements are out-of-range float-to-integer casts,",
        "which ONNX leaves undefined and whose expected values come from the installed ml_dtypes;",
        "`ge` follows onnxruntime on x86-64 there (see `ge/semantics/casts.py`), and every other",
        "element must match. *Refused*: `ge` raises the `UnsupportedOperatorError` of the category",
        "`tests/onnx_conformance/expected_failures.txt` lists. The table counts `test_squeezenet` as",
        "passed, which it is where numpy's BLAS rounds the equal columns of a product alike, as the",
        "cube does: every weight of that light model is 0.02, its logits are equal in exact",
        "arithmetic, and a softmax over them turns a last-ulp difference into its whole output.",
        'OpenBLAS\'s AVX2 ("Haswell") kernels round some columns differently; where they run, a',
        "mismatch of that case whose logits match onnxruntime's is reported as an expected failure",
        "and tallied as wrong in the run's summary (`tests/onnx_conformance/rounding_ties.toml`).",
        "",
        "| suite | cases | " + " | ".join(OUTCOMES) + " |",
        "|---|" + "---:|" * (len(OUTCOMES) + 1),
    ]
    for suite, outcomes in predicted_outcomes().items():
        tally = counts(outcomes)
        figures = " | ".join(f"{tally[o]:,}" for o in OUTCOMES)
        lines.append(f"| {suite} | {len(outcomes):,} | {figures} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print("\n" + render(), end="")
