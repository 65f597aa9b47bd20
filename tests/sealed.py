"""Runs that must read no IR: every op's properties and attributes sealed (reading them raises)
and every call into xDSL refused, as a run of a loaded model must be (the emulator's run plan
prepares everything it reads from the IR at load)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from xdsl.ir import Operation


class Sealed(dict):
    """An op's properties or attributes that raise when read."""

    def _read(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an op's properties were read during a run")

    get = __getitem__ = __contains__ = items = keys = values = __iter__ = _read


@contextmanager
def reading_no_ir(modules: Iterable[Operation]) -> Iterator[None]:
    """Within the block, reading a property or attribute of any op of `modules` raises, and so
    does calling any function of xDSL (walking a block, reading a type's shape, building an
    attribute)."""
    ops = [op for module in modules for op in module.walk()]
    kept = [(op.properties, op.attributes) for op in ops]
    calls: list[str] = []

    def refuse(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and "/xdsl/" in frame.f_code.co_filename and not calls:
            caller = frame.f_back
            where = "?" if caller is None else f"{caller.f_code.co_filename}:{caller.f_lineno}"
            calls.append(f"{frame.f_code.co_name} of {frame.f_code.co_filename}, called at {where}")

    for op in ops:
        op.properties, op.attributes = Sealed(op.properties), Sealed(op.attributes)
    previous = sys.getprofile()
    sys.setprofile(refuse)
    try:
        yield
    finally:
        sys.setprofile(previous)
        for op, (properties, attributes) in zip(ops, kept, strict=True):
            op.properties, op.attributes = properties, attributes
    assert not calls, f"a run called into xDSL: {calls[0]}"
