"""The locks pin the whole dependency tree: every requirement is `name==version` with hashes,
pylock.toml (the standard format) and uv.lock pin exactly the dev lock's versions, and the build
backend pyproject.toml asks for is the locked one."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ("requirements.txt", "requirements-dev.txt", "requirements/torch.txt", "requirements/tensorflow.txt")


def _pins(path: Path) -> dict[str, str]:
    """The `name==version` lines of a pip-compile lock, names normalized as PEP 503 does."""
    pins = {}
    for line in path.read_text().splitlines():
        if match := re.match(r"^([A-Za-z0-9_.\-]+)==([^ \\]+)", line):
            pins[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[2]
    return pins


@pytest.mark.parametrize("lock", LOCKS)
def test_every_requirement_is_pinned_with_hashes(lock: str) -> None:
    text = (ROOT / lock).read_text()
    requirements = [
        line for line in text.splitlines() if line and not line[0].isspace() and not line.startswith("#")
    ]
    assert requirements, f"{lock} pins nothing"
    assert all("==" in line for line in requirements), [line for line in requirements if "==" not in line]
    assert text.count("--hash=sha256:") >= len(requirements)


def test_pylock_pins_the_dev_locks_versions() -> None:
    pylock = tomllib.loads((ROOT / "pylock.toml").read_text())
    assert pylock["lock-version"] == "1.0"
    locked = {re.sub(r"[-_.]+", "-", p["name"]).lower(): p["version"] for p in pylock["packages"]}
    assert locked == _pins(ROOT / "requirements-dev.txt")
    assert all(p.get("wheels") or p.get("sdist") for p in pylock["packages"])


def test_pylock_points_at_pypi_not_at_this_machines_cache() -> None:
    # A fresh machine has PyPI, and the CPU build of torch in /opt/wheels; a package cache's
    # file:// address would hold nothing there.
    pylock = tomllib.loads((ROOT / "pylock.toml").read_text())
    urls = [wheel["url"] for p in pylock["packages"] for wheel in p.get("wheels", [])]
    elsewhere = [
        url
        for url in urls
        if not url.startswith("https://files.pythonhosted.org/")
        and not re.match(r"file:///opt/wheels/torch-[^/]+\+cpu-", url.replace("%2B", "+"))
    ]
    assert urls and not elsewhere, elsewhere
    assert all(wheel["hashes"]["sha256"] for p in pylock["packages"] for wheel in p.get("wheels", []))


def test_the_build_backend_is_the_locked_setuptools() -> None:
    # A build in an isolated environment resolves [build-system] requires on its own: only an
    # exact pin keeps it on the version the locks install.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    locked = {lock: _pins(ROOT / lock)["setuptools"] for lock in ("requirements.txt", "requirements-dev.txt")}
    assert pyproject["build-system"]["requires"] == [f"setuptools=={locked['requirements-dev.txt']}"]
    assert len(set(locked.values())) == 1, locked


def test_uv_lock_pins_the_dev_locks_versions() -> None:
    uv = tomllib.loads((ROOT / "uv.lock").read_text())
    packages = [p for p in uv["package"] if p["name"] != "ge"]
    locked = {re.sub(r"[-_.]+", "-", p["name"]).lower(): p["version"] for p in packages}
    assert len(locked) == len(packages), "one version of each package"
    assert locked == _pins(ROOT / "requirements-dev.txt")
    # Every package from PyPI, its files hashed; torch is the CPU build every machine keeps on disk.
    from_pypi = [p for p in packages if p["name"] != "torch"]
    assert all(p["source"] == {"registry": "https://pypi.org/simple"} for p in from_pypi)
    assert all(file["hash"].startswith("sha256:") for p in from_pypi for file in p.get("wheels", []))
    (torch,) = [p for p in packages if p["name"] == "torch"]
    assert torch["source"] == {"registry": "/opt/wheels"}
