"""The one exception hierarchy of `ge`: every message names the node or op and what would fix it."""

from __future__ import annotations

from dataclasses import dataclass


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


SHOWN_OPS = 8
"""How many changed ops a failure names."""


@dataclass(frozen=True)
class OpChanges:
    """The ops a pass changed, each by name and location."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    """Ops kept whose name, properties, attributes, operands, result types or block changed."""

    def __str__(self) -> str:
        """The changes, at most SHOWN_OPS ops of them."""
        kinds = {"added": self.added, "removed": self.removed, "modified": self.modified}
        total = sum(len(ops) for ops in kinds.values())
        if not total:
            return "it changed no op, only weights"
        groups, room = [], SHOWN_OPS
        for kind, ops in kinds.items():
            if ops[:room]:
                groups.append(f"{kind} {', '.join(ops[:room])}")
            room -= len(ops[:room])
        more = f" (and {total - SHOWN_OPS} more)" if total > SHOWN_OPS else ""
        return f"ops it changed: {'; '.join(groups)}{more}"


@dataclass(frozen=True)
class CheckFailure:
    """The first pass whose output left the tolerance, as `CheckError` reports it."""

    pass_name: str
    pass_index: int
    """The pass's position in the pipeline (from 0)."""
    problem: str
    """What is wrong, e.g. "output 'y' differs: max |diff| 3.2 at [0, 3] (...)"."""
    output: str | None
    """The first output out of tolerance (None: the stage did not run)."""
    max_diff: float | None
    """Its largest difference to the reference (inf for a NaN against a number)."""
    changes: OpChanges
    actions: tuple[int, int]
    """The session's pattern action count when the pass started and when it ended."""

    @property
    def message(self) -> str:
        return f"{self.pass_name}: {self.problem}; {self.changes}"


class CheckError(CompileError):
    """A pass changed what the graph computes (the `check_each` compile option): `failure` names
    the pass, the output, the worst difference and the ops the pass changed."""

    def __init__(self, failure: CheckFailure):
        super().__init__(failure.message)
        self.failure = failure


class RuntimeInputError(GeError):
    """Inputs given at run time do not match the compiled model (names, shapes, dtypes)."""
