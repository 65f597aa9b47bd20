"""The lists that decide the suite's outcomes name real cases, say why, and match the docs."""

from __future__ import annotations

import sys
from pathlib import Path

import figures
import numpy as np
import onnx
from onnx.backend.test.runner import Runner
from suite import OVERRIDES, TIES, backend_test_classes, expected_failures, predicted_outcomes

from ge.errors import UnsupportedOperatorError

sys.path.insert(0, str(Path(__file__).parents[1]))
from oracle import run_onnxruntime, without_softmax  # noqa: E402

DOCS = Path(__file__).parents[2] / "docs" / "supported_ops.md"
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _case_names() -> set[str]:
    return {n for case in backend_test_classes("suite").values() for n in vars(case) if n.startswith("test_")}


def test_every_refusal_has_a_category() -> None:
    table = expected_failures()
    assert table, "the list is read"
    wrong = {
        name: category
        for name, category in table.items()
        if category not in UnsupportedOperatorError.CATEGORIES
    }
    assert not wrong, (
        f"only {UnsupportedOperatorError.CATEGORIES} may be listed (never a wrong value): {wrong}"
    )


def test_every_listed_case_is_a_case_of_the_suite() -> None:
    names = _case_names()
    unknown = sorted(set(expected_failures()) - names)
    unknown += sorted(f"{name} (override)" for name in OVERRIDES if f"{name}_cpu" not in names)
    unknown += sorted(f"{name} (rounding tie)" for name in TIES if f"{name}_cpu" not in names)
    assert not unknown, f"listed cases the suite does not have: {unknown[:5]}"


def test_every_override_gives_a_reason_and_a_tolerance() -> None:
    assert OVERRIDES, "the overrides are read"
    for name, override in OVERRIDES.items():
        assert len(override.reason.split()) >= 5, name
        assert (override.rtol or 0) > 0 or (override.atol or 0) > 0, name


def test_spec_undefined_cases_are_the_out_of_range_casts_into_integers() -> None:
    """The cases whose expected values depend on ml_dtypes' out-of-range conversions: Cast and
    CastLike (and its expansion) of float and float16 inputs into 4-bit and 2-bit integers."""
    undefined = sorted(n for n, o in predicted_outcomes()["node"].items() if o == "spec-undefined")
    want = sorted(
        f"test_{op}_{source}_to_{target}{expanded}_cpu"
        for op, expansions in (("cast", [""]), ("castlike", ["", "_expanded"]))
        for source in ("FLOAT", "FLOAT16")
        for target in ("INT4", "UINT4", "INT2", "UINT2")
        for expanded in expansions
    )
    assert undefined == want


def test_the_docs_show_the_suite_figures() -> None:
    assert DOCS.read_text().endswith("\n" + figures.render()), (
        "docs/supported_ops.md is stale: run `make docs`"
    )


def test_every_rounding_tie_is_a_tie_in_exact_arithmetic() -> None:
    """A listed case (a light model) ends in a softmax whose inputs are all equal: onnxruntime,
    which rounds every column alike, gives equal logits on the input the runner makes up."""
    assert TIES, "the rounding ties are read"
    for name in TIES:
        model = without_softmax(onnx.load(LIGHT / f"light_{name.removeprefix('test_')}.onnx"))
        initializers = {i.name for i in model.graph.initializer}
        (data,) = [i for i in model.graph.input if i.name not in initializers]
        x = Runner.generate_dummy_data(data, name=name)
        (logits,) = run_onnxruntime(model, {data.name: x})
        assert logits.size > 1 and np.unique(logits).size == 1, name
