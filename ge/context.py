"""The one function that builds the xDSL `Context` every tool, pass and API call uses.

Our dialects are named `ascend.graph`, `ascend.kernel` and `ascend.stream`; xDSL resolves op
names by their first dot, so they are loaded eagerly here, with the umbrella `ascend` dialect.
Compile state (weights, reports) is not here: it lives in the compile session the pass manager
makes current (`ge.passes.session`).
"""

from __future__ import annotations

import re

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.ir import Dialect
from xdsl.utils.mlir_lexer import MLIRLexer

from ge.dialects import ALL_DIALECTS


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


# xDSL 0.75 matches a string literal with `"(?:[^"...]+|escape)*"`: the nested repetition makes an
# unterminated literal backtrack exponentially in the rest of its line, so `ge-opt` hung on a
# stray quote. The same language without the inner `+` fails in linear time.
MLIRLexer._unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


def make_context() -> Context:
    """A context with builtin, func, arith and all `ascend` dialects loaded."""
    ctx = Context()
    for dialect in (_BUILTIN, Func, Arith, *ALL_DIALECTS):
        ctx.load_dialect(dialect)
    return ctx
