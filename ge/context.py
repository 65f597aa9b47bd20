"""The one function that builds the xDSL `Context` every tool, pass and API call uses.

Our dialects are named `ascend.graph`, `ascend.kernel` and `ascend.stream`; xDSL resolves op
names by their first dot, so they are loaded eagerly here, with the umbrella `ascend` dialect.
The context also carries the weight store, so passes reach weights without hidden globals.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.ir import Dialect

from ge.dialects import ALL_DIALECTS

from .weights import WeightStore


class _WeightResourceHandles(OpAsmDialectInterface):
    """Keeps `dense_resource<key>` keys as written.

    xDSL's own resource storage is process-global and renames a key it has seen before, so a
    second parse of the same text would point at another weight. Our weights live in the
    `WeightStore`, so keys are taken verbatim.
    """

    def declare_resource(self, key: str) -> str:
        return key


_BUILTIN = Dialect(
    "builtin",
    list(Builtin.operations),
    list(Builtin.attributes),
    [_WeightResourceHandles()],
)


class GeContext(Context):
    """An xDSL context that carries the weight store and the fusion counts of a compilation."""

    weights: WeightStore
    fusion_counts: dict[str, dict[str, int]]
    """Per fusion pattern: how many matches the passes found and how many they applied."""

    def __init__(self, weights: WeightStore | None = None, allow_unregistered: bool = False):
        super().__init__(allow_unregistered=allow_unregistered)
        self.weights = weights if weights is not None else WeightStore()
        self.fusion_counts = {}
        self.fusion_seen: set[tuple[str, int]] = set()

    def clone(self) -> GeContext:
        other = GeContext(self.weights, self.allow_unregistered)
        other.fusion_counts = self.fusion_counts
        other.fusion_seen = self.fusion_seen
        other._loaded_dialects = self._loaded_dialects.copy()
        other._loaded_ops = self._loaded_ops.copy()
        other._loaded_attrs = self._loaded_attrs.copy()
        other._loaded_types = self._loaded_types.copy()
        other._registered_dialects = self._registered_dialects.copy()
        return other


def make_context(weights: WeightStore | None = None) -> GeContext:
    """A context with builtin, func, arith and all `ascend` dialects loaded."""
    ctx = GeContext(weights)
    for dialect in (_BUILTIN, Func, Arith, *ALL_DIALECTS):
        ctx.load_dialect(dialect)
    return ctx
