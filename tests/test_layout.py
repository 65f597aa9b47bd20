"""The repository layout and import rules of DESIGN.md, checked on the source."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Which of our modules each part may import (prefixes of `ge.` module names).
FORBIDDEN = {
    "dialects": ("ge.",),
    "passes": (
        "ge.emulator",
        "ge.frontends",
        "ge.graph",
        "ge.compiler",
        "ge.executor",
        "ge.tools",
        "ge.parser",
        "ge.interpreter",
        "ge.demo",
    ),
    "ge/semantics": (
        "ge.passes",
        "ge.emulator",
        "ge.frontends",
        "ge.graph",
        "ge.compiler",
        "ge.executor",
        "ge.tools",
        "ge.parser",
        "ge.interpreter",
        "ge.soc",
    ),
    "ge/emulator": (
        "ge.passes",
        "ge.frontends",
        "ge.graph",
        "ge.compiler",
        "ge.executor",
        "ge.tools",
        "ge.parser",
    ),
    "ge/frontends": ("ge.passes", "ge.emulator", "ge.compiler", "ge.executor", "ge.tools"),
}
ALLOWED_IN_DIALECTS = ("ge.dialects",)


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("part", sorted(FORBIDDEN))
def test_import_rules(part: str) -> None:
    for path in sorted((ROOT / part).rglob("*.py")):
        for name in _imports(path):
            if part == "dialects" and name.startswith(ALLOWED_IN_DIALECTS):
                continue
            bad = [p for p in FORBIDDEN[part] if name == p.rstrip(".") or name.startswith(p)]
            assert not bad, f"{path.relative_to(ROOT)} imports {name}"


def test_every_package_is_installed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    roots = {"ge": ROOT / "ge", "ge.dialects": ROOT / "dialects", "ge.passes": ROOT / "passes"}
    found = set()
    for name, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder).parts
            found.add(".".join((name, *rel)))
    assert found == listed


def test_no_top_level_dialects_or_passes(tmp_path: Path) -> None:
    code = (
        "import importlib.util as u, ge.dialects, ge.passes;"
        "print(u.find_spec('dialects'), u.find_spec('passes'), ge.dialects.__file__)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    spec_dialects, spec_passes, location = out.stdout.split()
    assert (spec_dialects, spec_passes) == ("None", "None")
    assert Path(location).parent.name == "dialects"
