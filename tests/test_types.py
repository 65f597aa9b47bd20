"""basedpyright (pyproject's `[tool.basedpyright]`: standard mode) finds no type error in `ge`.

`dialects/` and `passes/` install as `ge.dialects` and `ge.passes` (pyproject's package-dir), which
a type checker cannot resolve from the source tree; the test copies the tree into that installed
layout and checks the copy, naming errors by their paths in the source tree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Source folder -> where it sits in the installed package.
LAYOUT = {"ge": "ge", "dialects": "ge/dialects", "passes": "ge/passes"}


def test_basedpyright_finds_no_type_errors(tmp_path: Path) -> None:
    for source, installed in LAYOUT.items():
        shutil.copytree(REPO / source, tmp_path / installed, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    checker = Path(sys.executable).parent / "basedpyright"
    result = subprocess.run(
        [str(checker), "--pythonpath", sys.executable, "--project", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(source_paths(result.stdout + result.stderr, tmp_path), pytrace=False)


def source_paths(report: str, root: Path) -> str:
    """pyright's report with the copy's paths replaced by the source tree's."""
    for source, installed in sorted(LAYOUT.items(), key=lambda item: -len(item[1])):
        report = report.replace(f"{root}/{installed}/", f"{source}/")
    return report
