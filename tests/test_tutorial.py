"""docs/tutorial.md stays true: its `>>>` lines run as Python's doctest, then its `$ ge ...` lines
run as commands in the same folder, and both must print what the page shows (`...` matches any
text, runs of whitespace are one). The page's pictures exist."""

from __future__ import annotations

import doctest
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def commands(text: str) -> list[tuple[str, str]]:
    """Each `$ command` of the page's console blocks with the output shown under it."""
    found = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, output = chunk.partition("\n")
            found.append((command, output))
    return found


def test_the_tutorial_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = TUTORIAL.read_text()
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(text, {}, "tutorial", str(TUTORIAL), 0)
    failures: list[str] = []
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)
    checker = doctest.OutputChecker()
    for command, expected in commands(text):
        argv = shlex.split(command)
        assert argv[0] == "ge", f"the tutorial's commands are ge's, not {argv[0]}"
        installed = Path(sys.executable).with_name("ge")  # the console script, as a user runs it
        done = subprocess.run([installed, *argv[1:]], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"$ {command}\n{done.stderr}"
        assert checker.check_output(expected, done.stdout, OPTIONS), (
            f"$ {command}\nexpected:\n{expected}\ngot:\n{done.stdout}"
        )


def test_the_tutorials_pictures_exist() -> None:
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", TUTORIAL.read_text())
    assert pictures
    for picture in pictures:
        assert (TUTORIAL.parent / picture).is_file(), picture
