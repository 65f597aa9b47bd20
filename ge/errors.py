"""The one exception hierarchy of `ge`: every message names the node or op and what would fix it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .checking import CheckFailure


class GeError(Exception):
    """Base of every error `ge` raises on purpose."""


class InvalidModelError(GeError):
    """The model file or graph is malformed: it cannot be read or is inconsistent."""


class UnsupportedOperatorError(GeError):
    """The model uses what `ge` cannot compile yet: an operator, a dtype, an attribute value.

    `category` says which: "operator", "dtype", "attribute" or "input" (a graph input that is not
    a tensor); `unsupported` lists the nodes concerned (op type, domain, opset, node, missing).
    """

    CATEGORIES = ("operator", "dtype", "attribute", "input")

    def __init__(
        self,
        message: str,
        unsupported: list[dict[str, object]] | None = None,
        category: str = "attribute",
    ):
        super().__init__(message)
        assert category in self.CATEGORIES, category
        self.unsupported = unsupported or []
        self.category = category


class VerificationError(GeError):
    """The IR broke an invariant of its dialect (a wrong shape, type or attribute)."""


class CompileError(GeError):
    """A pass could not compile the graph (for example an unknown target or a missing weight)."""


class CheckError(CompileError):
    """A pass changed what the graph computes (the `check_each` compile option): `failure` names
    the pass, the output, the worst difference and the ops the pass changed."""

    def __init__(self, failure: CheckFailure):
        super().__init__(failure.message)
        self.failure = failure


class RuntimeInputError(GeError):
    """Inputs given at run time do not match the compiled model (names, shapes, dtypes)."""
