"""`ge-fuse-gelu`: GELU written out as elementwise ops becomes one `ascend.graph.gelu`.

Exporters write `x * Phi(x)` as its formula: the erf form `0.5 * x * (1 + erf(x / sqrt(2)))`
(torch's default) and the tanh approximation `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715
* x^3)))`. The outer product may group and order its factors in any way (and divide by 2); the
argument of erf or tanh is matched as a polynomial in `x` (so `x / sqrt(2)`, `x * 0.7071...`,
`pow(x, 3)` and `x * x * x` all fit). Constants must match within a few ulps of their dtype, and
every intermediate must be used by the pattern alone.

```
%d = ascend.graph.div %x, %sqrt2 : (tensor<2x128xf32>, tensor<f32>) -> tensor<2x128xf32>
%e = ascend.graph.erf %d : (tensor<2x128xf32>) -> tensor<2x128xf32>
%a = ascend.graph.add %e, %one : (tensor<2x128xf32>, tensor<f32>) -> tensor<2x128xf32>
%m = ascend.graph.mul %x, %a : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
%y = ascend.graph.mul %m, %half : (tensor<2x128xf32>, tensor<f32>) -> tensor<2x128xf32>
```
becomes
```
%y = ascend.graph.gelu %x {sources = ["div", "erf", "add", "mul", "mul_1"]}
    : (tensor<2x128xf32>) -> tensor<2x128xf32>
```
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, cast

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)

from ge.dialects import graph
from ge.weights import WeightStore

from ..driver import RewritesOnly, rewrite
from ..session import CompileSession, current
from .match import (
    close,
    drops_rounding,
    intermediates_private,
    is_tensor,
    replace_pattern,
    scalar,
    tolerance,
)

Polynomial = dict[int, float]
"""Coefficient of each power of `x`."""
Term = tuple[Polynomial, list[Operation]]
"""A polynomial and the ops that compute it."""
Operand = Callable[[SSAValue], Term | None]
"""The polynomial of an operand, one level deeper."""

MAX_DEPTH = 8
"""How deep the formulas are searched: GELU's are shallower."""
MAX_OPS = 32
"""How many ops a product may span before the search gives up."""


@dataclass
class FuseGelu(RewritePattern):
    """`c * x * (1 + f(p(x)))`, anchored at the last product: `f` is `FUNCTION`, `c` must be 0.5
    and the polynomial `p` must be `ARGUMENT`."""

    session: CompileSession
    weights: WeightStore | None
    keep_rounding: bool = True

    FUNCTION: ClassVar[type[Operation]]
    ARGUMENT: ClassVar[Polynomial]
    APPROXIMATE: ClassVar[str]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.has_trait(graph.Scales):
            return
        for one_plus in _candidates(op, self.FUNCTION, self.weights):
            # `_candidates` found `self.FUNCTION` on one operand: the first such is the function.
            function = next(v.owner for v in one_plus.operands if isinstance(v.owner, self.FUNCTION))
            for x in _variables(function.operands[0], self.weights):
                if not is_tensor(x):
                    continue
                pattern = self._match(op, one_plus, function, x)
                if pattern is None:
                    continue
                applied = (
                    intermediates_private(pattern, op)
                    and op.results[0].type == x.type
                    and not drops_rounding(x.type.element_type, self.keep_rounding)
                )
                self.session.record(type(self).__name__, applied, op)
                if applied:
                    props = (
                        {} if self.APPROXIMATE == "none" else {"approximate": StringAttr(self.APPROXIMATE)}
                    )
                    gelu = graph.GeluOp.build_inferred([x], props)
                    replace_pattern(rewriter, pattern, op, [gelu], gelu.results[0])
                return

    def _match(
        self, root: Operation, one_plus: Operation, function: Operation, x: SSAValue[TensorType]
    ) -> list[Operation] | None:
        """The pattern's ops, if `root` computes the GELU of `x` through `one_plus`."""
        product = _product(root, x, one_plus.results[0], self.weights)
        if product is None:
            return None
        factor, leaves, products = product
        element = x.type.element_type
        if sorted(map(id, leaves)) != sorted((id(x), id(one_plus.results[0]))):
            return None
        if not close(factor, 0.5, element):
            return None
        argument = _polynomial(function.operands[0], x, self.weights)
        if argument is None or not _same_polynomial(argument[0], self.ARGUMENT, tolerance(element)):
            return None
        return [*products, one_plus, function, *argument[1]]


@dataclass
class FuseErfGelu(FuseGelu):
    """`0.5 * x * (1 + erf(x / sqrt(2)))` is `gelu(x)`."""

    FUNCTION: ClassVar[type[Operation]] = graph.ErfOp
    ARGUMENT: ClassVar[Polynomial] = {1: 1 / math.sqrt(2)}
    APPROXIMATE: ClassVar[str] = "none"


@dataclass
class FuseTanhGelu(FuseGelu):
    """`0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))` is `gelu(x, approximate = "tanh")`."""

    FUNCTION: ClassVar[type[Operation]] = graph.TanhOp
    ARGUMENT: ClassVar[Polynomial] = {1: math.sqrt(2 / math.pi), 3: math.sqrt(2 / math.pi) * 0.044715}
    APPROXIMATE: ClassVar[str] = "tanh"


@dataclass(frozen=True)
class FuseGeluPass(RewritesOnly, ModulePass):
    """Replaces GELU formulas (erf and tanh forms) by `ascend.graph.gelu`."""

    name = "ge-fuse-gelu"

    keep_rounding: bool = True
    """Leave float16 and bfloat16 formulas alone (see `match.drops_rounding`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        session = current()
        weights = session.weights
        patterns = [
            FuseErfGelu(session, weights, self.keep_rounding),
            FuseTanhGelu(session, weights, self.keep_rounding),
        ]
        rewrite(op, patterns, session)


# --------------------------------------------------------------------------------------------
# Matching helpers
# --------------------------------------------------------------------------------------------


def _candidates(root: Operation, function: type[Operation], weights: WeightStore | None) -> list[Operation]:
    """The `add(f(...), 1)` ops among the factors of the product that `root` ends."""
    found: list[Operation] = []
    seen: set[Operation | Block] = {root}
    stack = [(root, 0)]
    while stack:
        op, depth = stack.pop()
        # A divisor is no factor of the product.
        scaling = op.get_trait(graph.Scales)
        operands = op.operands if scaling is not None and not scaling.reciprocal else op.operands[:1]
        for value in operands:
            owner = value.owner
            if owner in seen:
                continue
            seen.add(owner)
            if isinstance(owner, Operation) and owner.has_trait(graph.Scales) and depth < MAX_DEPTH:
                stack.append((owner, depth + 1))
            elif isinstance(owner, graph.AddOp) and _is_one_plus(owner, function, weights):
                found.append(owner)
    return found


def _is_one_plus(op: graph.AddOp, function: type[Operation], weights: WeightStore | None) -> bool:
    for value, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if isinstance(value.owner, function) and isinstance(value.type, TensorType):
            return close(scalar(other, weights), 1.0, value.type.element_type)
    return False


def _variables(argument: SSAValue, weights: WeightStore | None) -> list[SSAValue]:
    """The values in the argument's formula that may be its variable, outermost first."""
    found: list[SSAValue] = []
    frontier = [argument]
    for _ in range(MAX_DEPTH):
        next_frontier = []
        for value in frontier:
            if scalar(value, weights) is not None or value in found:
                continue
            if value is not argument:
                found.append(value)
            owner = value.owner
            if isinstance(owner, Operation) and type(owner) in _POLYNOMIAL_BUILDERS:
                next_frontier += list(owner.operands)
        frontier = next_frontier
    return found


def _product(
    root: Operation, x: SSAValue, one_plus: SSAValue, weights: WeightStore | None
) -> tuple[float, list[SSAValue], list[Operation]] | None:
    """`root` as `factor * leaves...` over its mul and div-by-constant ops, stopping at `x` and
    `one_plus`; None if it divides by something that is not a constant."""
    factor, leaves, ops = 1.0, [], []
    stack: list[tuple[SSAValue, bool, int]] = [(root.results[0], False, 0)]
    while stack:
        value, inverse, depth = stack.pop()
        number = scalar(value, weights)
        owner = value.owner
        if number is not None:
            if number == 0:
                return None
            factor *= 1 / number if inverse else number
        elif value is x or value is one_plus or depth > MAX_DEPTH:
            if inverse:
                return None
            leaves.append(value)
        elif len(ops) > MAX_OPS:
            return None
        elif isinstance(owner, graph.MulOp):
            ops.append(owner)
            stack += [(v, inverse, depth + 1) for v in owner.operands]
        elif isinstance(owner, graph.DivOp):
            ops.append(owner)
            stack += [(owner.operands[0], inverse, depth + 1), (owner.operands[1], not inverse, depth + 1)]
        else:
            if inverse:
                return None
            leaves.append(value)
    return factor, leaves, ops


def _polynomial(value: SSAValue, x: SSAValue, weights: WeightStore | None, depth: int = 0) -> Term | None:
    """`value` as a polynomial in `x` with constant coefficients, and the ops that compute it."""
    if value is x:
        return {1: 1.0}, []
    number = scalar(value, weights)
    if number is not None:
        return {0: number}, []
    owner = value.owner
    if depth > MAX_DEPTH or not isinstance(owner, Operation):
        return None
    build = _POLYNOMIAL_BUILDERS.get(type(owner))
    if build is None:
        return None

    def operand(inner: SSAValue) -> Term | None:
        return _polynomial(inner, x, weights, depth + 1)

    term = build(owner, operand, weights)
    return None if term is None else (term[0], [owner, *term[1]])


def _power(op: Operation, operand: Operand, weights: WeightStore | None) -> Term | None:
    """`base ** n` for a constant whole `n` from 0 to 4."""
    exponent = scalar(op.operands[1], weights)
    base = operand(op.operands[0])
    if base is None or exponent is None or exponent != int(exponent) or not 0 <= exponent <= 4:
        return None
    result: Polynomial = {0: 1.0}
    for _ in range(int(exponent)):
        result = _multiply(result, base[0])
    return result, base[1]


def _negation(op: Operation, operand: Operand, weights: WeightStore | None) -> Term | None:
    inner = operand(op.operands[0])
    return None if inner is None else ({k: -c for k, c in inner[0].items()}, inner[1])


def _quotient(op: Operation, operand: Operand, weights: WeightStore | None) -> Term | None:
    """A polynomial divided by a nonzero constant."""
    divisor = scalar(op.operands[1], weights)
    inner = operand(op.operands[0])
    if inner is None or not divisor:
        return None
    return {k: c / divisor for k, c in inner[0].items()}, inner[1]


def _sum(op: Operation, operand: Operand, weights: WeightStore | None) -> Term | None:
    return _combine(op, operand, lambda a, b: _add(a, b, 1.0))


def _difference(op: Operation, operand: Operand, weights: WeightStore | None) -> Term | None:
    return _combine(op, operand, lambda a, b: _add(a, b, -1.0))


def _product_of(op: Operation, operand: Operand, weights: WeightStore | None) -> Term | None:
    return _combine(op, operand, _multiply)


def _combine(
    op: Operation, operand: Operand, combine: Callable[[Polynomial, Polynomial], Polynomial]
) -> Term | None:
    parts = [operand(v) for v in op.operands]
    if any(p is None for p in parts):
        return None
    (a, a_ops), (b, b_ops) = cast(list[Term], parts)
    return combine(a, b), [*a_ops, *b_ops]


_POLYNOMIAL_BUILDERS: dict[
    type[Operation], Callable[[Operation, Operand, WeightStore | None], Term | None]
] = {
    graph.AddOp: _sum,
    graph.SubOp: _difference,
    graph.MulOp: _product_of,
    graph.DivOp: _quotient,
    graph.PowOp: _power,
    graph.NegOp: _negation,
}
"""The ops a polynomial is built of, and how each builds its polynomial from its operands'."""


def _add(a: Polynomial, b: Polynomial, sign: float) -> Polynomial:
    """`a + sign * b`."""
    combined = dict(a)
    for k, c in b.items():
        combined[k] = combined.get(k, 0.0) + sign * c
    return combined


def _multiply(a: Polynomial, b: Polynomial) -> Polynomial:
    product: Polynomial = {}
    for i, c in a.items():
        for j, d in b.items():
            product[i + j] = product.get(i + j, 0.0) + c * d
    return product


def _same_polynomial(actual: Polynomial, expected: Polynomial, rtol: float) -> bool:
    scale = max(abs(c) for c in expected.values())
    for power in set(actual) | set(expected):
        want, got = expected.get(power, 0.0), actual.get(power, 0.0)
        limit = rtol * abs(want) if want else rtol * scale
        if abs(got - want) > limit:
            return False
    return True
