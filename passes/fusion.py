"""Provenance of fused ops: a fused op names the source ops it replaced in its `sources` attribute.

(A fusion pass counts the matches it finds, rewritten or refused, with `CompileSession.record`;
the compiler gathers the counts into the fusion report.)
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import ArrayAttr, NameLoc, StringAttr
from xdsl.ir import Operation

SOURCES = "sources"
"""Attribute of a fused op: the names of the ops it replaced, in program order."""


def source_names(ops: Iterable[Operation]) -> ArrayAttr[StringAttr]:
    """The provenance of a fusion of `ops`: their names, or the names they already carry."""
    names: list[str] = []
    for op in ops:
        carried = op.attributes.get(SOURCES)
        if isinstance(carried, ArrayAttr):
            names += [s.data for s in carried.data if isinstance(s, StringAttr)]
        elif isinstance(op.location, NameLoc):
            names.append(op.location.desc.data)
        else:
            names.append(op.name.removeprefix("ascend.graph."))
    return ArrayAttr([StringAttr(n) for n in names])
