"""`ge-annotate-symbols`: records every op result's symbolic dimensions as an attribute.

Builtin tensor types hold only `?`; which run-time size a `?` stands for is the symbolic shape
analysis' answer (`ge.symbolic.symbolic_shapes`: each op's own `infer` run at probe sizes, one
pass over the ops per probe). This analysis pass writes that answer next to each op whose results
have a symbol, as `ascend.dims` (the attribute the function's arguments carry): the dimensions of
its result, or a list per result for an op with several. Static ops are left alone, and the
annotation changes no semantics, so it is for reading (`ge-opt -p ge-annotate-symbols`); running
it again rewrites the same attributes.

```
func.func @main(%x: tensor<?x3x8x8xf32> {ascend.name = "x", ascend.dims = ["batch", 3 : i64, ...]}) {
  %y = ascend.graph.flatten %x {axis = 1 : i64} : (tensor<?x3x8x8xf32>) -> tensor<?x192xf32>
```
becomes
```
  %y = ascend.graph.flatten %x {ascend.dims = ["batch", 192 : i64], axis = 1 : i64} : ...
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from ge.symbolic import DIMS_ATTR, dims_attr, symbolic_shapes


@dataclass(frozen=True)
class AnnotateSymbolsPass(ModulePass):
    """Writes each op result's symbolic dimensions as `ascend.dims` (an analysis; no rewrite)."""

    name = "ge-annotate-symbols"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if not isinstance(func, FuncOp) or not func.body.blocks:
                continue
            shapes = symbolic_shapes(func)
            for inner in func.body.block.ops:
                dims = [shapes.get(result) for result in inner.results]
                if not any(d is not None and any(isinstance(x, str) for x in d) for d in dims):
                    inner.attributes.pop(DIMS_ATTR, None)
                    continue
                listed = [dims_attr(d or ()) for d in dims]
                inner.attributes[DIMS_ATTR] = listed[0] if len(listed) == 1 else ArrayAttr(listed)
