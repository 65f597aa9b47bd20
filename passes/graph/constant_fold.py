"""`ge-constant-fold`: computes at compile time every graph op whose operands are constants.

Values are computed with the shared op semantics, so folding means exactly what running means.
A result whose elements are all equal becomes a splat; a small one an inline `dense`; a larger
one a `dense_resource` in the compilation's weight store. Results above `max-elements` are left
alone, so folding never explodes memory. Constants left without users are erased.

```
%a = ascend.graph.const splat<2.0 : f32> : tensor<4xf32>
%b = ascend.graph.const dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
%c = ascend.graph.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
```
becomes
```
%c = ascend.graph.const dense<[2.0, 4.0, 6.0, 8.0]> : tensor<4xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyDenseElement,
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.hints import isa

from ge.dialects import graph
from ge.errors import GeError
from ge.semantics import constant_array, evaluate
from ge.weights import WeightStore

from ..driver import RewritesOnly, rewrite
from ..session import current

INLINE_LIMIT = 16
"""Folded results with at most this many elements stay inline as `dense<...>`."""


@dataclass
class FoldConstantOperands(RewritePattern):
    """Replaces an op whose operands are all constants by constants holding its results."""

    weights: WeightStore
    max_elements: int

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.name.startswith("ascend.graph.") or isinstance(op, graph.ConstOp):
            return
        producers = [v.owner for v in op.operands if isinstance(v.owner, graph.ConstOp)]
        if not op.results or len(producers) != len(op.operands):
            return
        sizes = []
        result_types: list[TensorType] = []
        for result in op.results:
            if not isinstance(result.type, TensorType):
                return
            shape = result.type.get_shape()
            if any(d < 0 for d in shape):
                return
            sizes.append(int(np.prod(shape)))
            result_types.append(result.type)
        if sum(sizes) > self.max_elements:
            return
        inputs = [constant_array(p.value, p.result.type, self.weights) for p in producers]
        try:
            values = evaluate(op, inputs, self.weights)
        except GeError:
            return  # e.g. an integer division by zero: leave it to fail at run time, as written
        constants = [
            graph.ConstOp(self._value(value, result_type, op), result_type)
            for value, result_type in zip(values, result_types, strict=True)
        ]
        for const in constants:
            const.location = op.location
        rewriter.replace(op, constants, [c.result for c in constants])
        for producer in set(producers):
            if not any(r.uses for r in producer.results):
                rewriter.erase(producer)

    def _value(self, value: np.ndarray, t: TensorType, op: Operation) -> Attribute:
        flat = value.reshape(-1)
        element = t.element_type
        strings = value.dtype.kind == "U"  # neither splats nor builtin `dense` hold strings
        if flat.size > 1 and not strings and _all_equal(flat):
            scalar = flat[0].item()
            # The semantics compute in the result's dtype, so the element type says float or int.
            if isinstance(element, AnyFloat):
                return FloatAttr(float(scalar), element)
            if isinstance(element, IntegerType | IndexType):
                return IntegerAttr(int(scalar), element)
        if flat.size <= INLINE_LIMIT and not strings and isa(t, TensorType[AnyDenseElement]):
            data = value.astype(bool).astype(np.uint8) * 255 if value.dtype == np.bool_ else value
            return DenseIntOrFPElementsAttr(t, BytesAttr(np.ascontiguousarray(data).tobytes()))
        key = self.weights.add(value, f"folded_{op.name.removeprefix('ascend.graph.')}")
        return DenseResourceAttr.from_params(key, t)


def _all_equal(flat: np.ndarray) -> bool:
    first = flat[:1]
    if flat.dtype.kind == "f" and np.isnan(first.astype(np.float32))[0]:
        return bool(np.isnan(flat.astype(np.float32)).all())
    return bool((flat == first).all())


@dataclass(frozen=True)
class ConstantFoldPass(RewritesOnly, ModulePass):
    """Folds graph ops on constants through the shared semantics."""

    name = "ge-constant-fold"

    max_elements: int = 1 << 24
    """Results with more elements than this are not folded."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        session = current()
        rewrite(op, [FoldConstantOperands(session.weights, self.max_elements)], session)
