"""The one exception hierarchy of `ge`: every message names the node or op and what would fix it."""

from __future__ import annotations


class GeError(Exception):
    """Base of every error `ge` raises on purpose."""


class InvalidModelError(GeError):
    """The model file or graph is malformed: it cannot be read or is inconsistent."""


class UnsupportedOperatorError(GeError):
    """The model uses operators (or attribute values) that `ge` cannot compile yet."""

    def __init__(self, message: str, unsupported: list[dict[str, object]] | None = None):
        super().__init__(message)
        self.unsupported = unsupported or []


class VerificationError(GeError):
    """The IR broke an invariant of its dialect (a wrong shape, type or attribute)."""


class CompileError(GeError):
    """A pass could not compile the graph (for example an unknown target or a missing weight)."""


class RuntimeInputError(GeError):
    """Inputs given at run time do not match the compiled model (names, shapes, dtypes)."""
