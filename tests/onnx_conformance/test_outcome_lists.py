"""The expected-failure list only names real cases, each with a category of what ge refuses."""

from __future__ import annotations

from suite import backend_test_classes, expected_failures

from ge.errors import UnsupportedOperatorError


def test_every_entry_has_a_refusal_category() -> None:
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


def test_every_entry_names_a_case_of_the_suite() -> None:
    names = {
        n for case in backend_test_classes("suite").values() for n in vars(case) if n.startswith("test_")
    }
    unknown = sorted(set(expected_failures()) - names)
    assert not unknown, f"listed cases the suite does not have: {unknown[:5]}"
