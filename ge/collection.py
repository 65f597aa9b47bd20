"""Python's cyclic garbage collector, held off while the IR is built and rewritten.

xDSL's IR is a web of cycles (ops, blocks, regions, values and their uses point at each other),
and compiling allocates it by the hundred thousand. The collector's full passes are triggered by
the number of objects that survive, so they revisit the whole, growing IR again and again: a
third of the time of a compile. Importing and compiling run with automatic collection off and
give it back as it was; the garbage they leave is collected by the next automatic pass.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

Function = TypeVar("Function", bound=Callable[..., Any])


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Automatic garbage collection off for the block (nested blocks leave it to the outer one)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def without_collection(function: Function) -> Function:
    """`function` run with automatic garbage collection paused."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with collection_paused():
            return function(*args, **kwargs)

    return cast(Function, wrapper)  # functools.wraps keeps the signature
