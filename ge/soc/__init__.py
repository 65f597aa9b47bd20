"""SoC profiles: the figures of each Ascend SoC `ge` can target, kept as JSON data files.

A user adds a SoC by dropping a `<Name>.json` next to these or into a folder listed in the
`GE_SOC_PATH` environment variable (colon-separated); no code changes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ge.dialects.common import TargetAttr
from ge.errors import CompileError

DEFAULT_SOC = "Ascend910B2"
ALIASES = {"npu": DEFAULT_SOC}
FORMAT_VERSION = 1

TARGET_FIGURES = (
    "ai_cores",
    "cube_cores",
    "vector_cores",
    "clock_mhz",
    "l0a_bytes",
    "l0b_bytes",
    "l0c_bytes",
    "l1_bytes",
    "ub_bytes",
    "c0_fp16",
    "c0_int8",
)


@dataclass(frozen=True)
class SocProfile:
    name: str
    figures: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.figures[key]

    def target_attr(self) -> TargetAttr:
        """The `#ascend.target` of this SoC: every numeric figure, for verifiers and the cost model."""
        numbers = {
            k: int(v) if isinstance(v, bool) else v
            for k, v in self.figures.items()
            if isinstance(v, int | float) and k != "format_version"
        }
        return TargetAttr(self.name, numbers)


def _search_path() -> list[Path]:
    extra = [Path(p) for p in os.environ.get("GE_SOC_PATH", "").split(os.pathsep) if p]
    return [*extra, Path(__file__).parent]


def known_socs() -> list[str]:
    names = {p.stem for folder in _search_path() if folder.is_dir() for p in folder.glob("*.json")}
    return sorted(names)


def load_profile(name: str = "npu") -> SocProfile:
    """The profile of `name` ("npu" for the default SoC); an unknown name lists the known. Only the
    names of profiles found are taken, so a target cannot reach a file outside their folders."""
    known = known_socs()
    soc = ALIASES.get(name, name) if isinstance(name, str) else None
    if soc not in known:
        raise CompileError(
            f"unknown target {name!r}; known SoCs: {', '.join(known)} (or 'npu' for the default, "
            f"{DEFAULT_SOC}; a SoC of your own is a <Name>.json in a folder of GE_SOC_PATH)"
        )
    for folder in _search_path():
        path = folder / f"{soc}.json"
        if path.is_file():
            return _read(path)
    raise CompileError(f"the SoC profile of {soc} is gone from {', '.join(map(str, _search_path()))}")


def _read(path: Path) -> SocProfile:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise CompileError(f"cannot read SoC profile {path}: {error}") from None
    if data.get("format_version") != FORMAT_VERSION:
        raise CompileError(f"SoC profile {path} has format_version {data.get('format_version')}")
    missing = [k for k in TARGET_FIGURES if k not in data]
    if missing:
        raise CompileError(f"SoC profile {path} lacks {', '.join(missing)}")
    return SocProfile(data.get("name", path.stem), data)
