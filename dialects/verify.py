"""Verification that checks each distinct op once.

An op whose class derives from `LocalVerifier` declares that its verifier reads nothing but the
op itself: its operand and result types, properties, declared attributes, the kind of op it sits in and
whether it ends its block (where a terminator must stand), what its regions hold, and what its
`verification_context` returns (e.g. the target's figures). Two such ops with equal keys verify
alike, so `verify` runs the verifier on one op per key and, for the others, only the checks of
the links between ops (parents, erased operands). A region's content is its block arguments'
types and, for every op nested in it, its name, operand and result types, properties,
attributes and where each operand comes from (a value of the op's own regions, by position, or
one from outside), so an `IsolatedFromAbove` check reads nothing the key leaves out. Ops with
successors and every op whose class does not declare `LocalVerifier` get xDSL's full
verification, as `Operation.verify` gives it.

`verify` also checks the symbolic dimensions a function's arguments record as `ascend.dims`, once
per function, against their types (`check_argument_dims`); an op's verifier checks its own
(`check_result_dims`).

A graph of a thousand convolutions has a few dozen distinct ones; a pipeline that verifies after
every pass passes a `VerifiedSignatures` along, so an op a pass left alone is not checked again.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable

from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, FloatAttr, IntegerAttr, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, ErasedSSAValue, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

DIMS_ATTR = "ascend.dims"
"""The attribute recording a value's dimensions with their symbols: on a function argument (its
input's run-time sizes, e.g. `["batch", 3, 8, 8]`) and on an op (its results', as
`ge-annotate-symbols` writes them)."""


class LocalVerifier:
    """Mixin of an op class whose verifier reads only the op's key (see the module doc); an op
    that looks at its neighbours, its uses, the module or an attribute its definition does not
    declare must not derive from it, unless what it reads there is in its
    `verification_context`."""

    def verification_context(self) -> Hashable:
        """What else the verifier reads, beside the op (default: nothing)."""
        return ()


class VerifiedSignatures:
    """Keys of the ops verified so far, and per op the last key it verified with and what it
    was made of (its block, region and parent, operand values, results, properties,
    attributes, whether it ended its block, its verification context, and for an op with
    regions the block arguments and the parts of every op in them): an op whose parts are the
    same objects as then has the same key (SSA values never change type), so it is matched
    without building the key again."""

    def __init__(self) -> None:
        self.signatures: set[Hashable] = set()
        self.by_op: dict[Operation, tuple[Hashable, Hashable]] = {}


def _parts(op: Operation) -> Hashable:
    block = op.parent
    region = block.parent if block is not None else None
    return (
        block,
        region,
        region.parent if region is not None else None,
        region is not None and len(region.blocks) > 1,
        tuple(op.operands),
        op.results,
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
        block is not None and block.last_op is op,
        op.verification_context() if isinstance(op, LocalVerifier) else (),
    )


def signature(op: Operation) -> Hashable:
    """What a `LocalVerifier` op's verification depends on (with `region_content` for an op that
    holds regions)."""
    block = op.parent
    region = block.parent if block is not None else None
    return (
        type(op),
        type(op.parent_op()),
        block is not None and block.last_op is op,  # where a terminator must be, and only it
        region is not None and len(region.blocks) > 1,
        tuple([v.type for v in op.operands]),
        tuple([r.type for r in op.results]),
        tuple(op.properties.items()),
        tuple([(k, v) for k, v in op.attributes.items() if k in _declared(type(op))]),
        op.verification_context() if isinstance(op, LocalVerifier) else (),
    )


@functools.cache
def _declared(op_class: type[Operation]) -> frozenset[str]:
    """The attributes an op class's definition declares: the only ones its verifier checks (the
    others, such as a fused op's `sources`, are discardable, as in MLIR)."""
    if issubclass(op_class, IRDLOperation):
        return frozenset(op_class.get_irdl_definition().attributes)
    return frozenset()


def region_content(op: Operation, codes: dict[SSAValue, int] | None = None) -> Hashable:
    """What `op`'s regions hold, as its verifier may read it (see the module doc); operands are
    coded by where their value is defined within `op`, -1 for a value from outside."""
    codes = {} if codes is None else codes
    content: list[Hashable] = []
    for region in op.regions:
        content.append(len(region.blocks))
        for block in region.blocks:
            content.append(tuple([a.type for a in block.args]))
            for arg in block.args:
                codes[arg] = len(codes)
            for child in block.ops:
                content.append(
                    (
                        child.name,
                        tuple([codes.get(v, -1) for v in child.operands]),
                        tuple([v.type for v in child.operands]),
                        tuple([r.type for r in child.results]),
                        tuple(child.properties.items()),
                        tuple(child.attributes.items()),
                        len(child.successors),
                        region_content(child, codes) if child.regions else (),
                    )
                )
                for result in child.results:
                    codes[result] = len(codes)
    return tuple(content)


def verify(root: Operation, verified: VerifiedSignatures | None = None) -> None:
    """`root.verify()`, with `LocalVerifier` ops of an already verified signature (in `verified`,
    which this call extends) checked only where they stand. Raises VerifyException (or, as xDSL
    does for an erased operand or a broken parent link, ValueError). Nested ops are checked
    before the op that holds them, as xDSL does."""
    seen = VerifiedSignatures() if verified is None else verified
    signatures, by_op = seen.signatures, seen.by_op
    parts_of: dict[Operation, Hashable] = {}
    for op in root.walk(region_first=True):
        if isinstance(op, FuncOp):
            check_argument_dims(op)
        for region in op.regions:
            _verify_region(region, op)
        parts = _parts(op)
        if op.regions:  # what its regions hold, made of the parts of the ops in them (seen before)
            parts = (parts, _nested_parts(op, parts_of))
        parts_of[op] = parts
        if isinstance(op, LocalVerifier) and not op.successors and op.parent is not None:
            last = by_op.get(op)
            if last is not None and last[0] == parts:
                continue  # the same op as when it verified, made of the same objects
            key = (signature(op), region_content(op)) if op.regions else signature(op)
            if key in signatures:
                if any(isinstance(v, ErasedSSAValue) for v in op.operands):
                    raise ValueError("Erased SSA value is used by the operation")
            else:
                op.verify(verify_nested_ops=False)
                signatures.add(key)
            by_op[op] = (parts, key)
        else:
            op.verify(verify_nested_ops=False)


def check_argument_dims(func: FuncOp) -> None:
    """Checks the `ascend.dims` of a function's arguments against their types: a symbol name for
    each `?` and the size for each other dimension. Raises VerifyException naming the argument,
    the index and the value."""
    if func.arg_attrs is None or not func.body.blocks:
        return
    for index, (arg, attrs) in enumerate(zip(func.body.block.args, func.arg_attrs.data, strict=False)):
        if (entry := attrs.data.get(DIMS_ATTR)) is not None:
            name = attrs.data.get("ascend.name")
            shown = f" ('{name.data}')" if isinstance(name, StringAttr) else ""
            _check_entry(f"argument #{index}{shown}", entry, arg.type, exact=True)


def check_result_dims(op: Operation) -> None:
    """Checks the `ascend.dims` an op carries (as `ge-annotate-symbols` writes them) against its
    result types: the dimensions of its one result, or a list per result, each of the result's
    rank, and each integer equal to the size where the type has one (a symbol may name a size
    the graph was specialized to since). An op's verifier calls it."""
    entry = op.attributes.get(DIMS_ATTR)
    if entry is None:
        return
    results = list(op.results)
    if len(results) == 1:
        _check_entry(f"'{op.name}': result #0", entry, results[0].type, exact=False)
        return
    if not isinstance(entry, ArrayAttr) or len(entry.data) != len(results):
        raise VerifyException(
            f"'{op.name}': {DIMS_ATTR} = {_shown(entry)} must list the dimensions of each of "
            f"its {len(results)} results"
        )
    for index, (dims, result) in enumerate(zip(entry.data, results, strict=True)):
        _check_entry(f"'{op.name}': result #{index}", dims, result.type, exact=False)


def _check_entry(what: str, entry: Attribute, t: Attribute, exact: bool) -> None:
    """`exact`: a symbol for each `?` and an integer for each other dimension (an argument)."""
    if not isinstance(t, TensorType):
        raise VerifyException(f"{what}: {DIMS_ATTR} describes a tensor, the type is {t}")
    shape = t.get_shape()
    if not isinstance(entry, ArrayAttr) or len(entry.data) != len(shape):
        raise VerifyException(
            f"{what}: {DIMS_ATTR} = {_shown(entry)} must list {len(shape)} dimensions, one per "
            f"dimension of {t}"
        )
    for index, (dim, size) in enumerate(zip(entry.data, shape, strict=True)):
        if not isinstance(dim, StringAttr | IntegerAttr):
            problem = "a dimension is a symbol name or an integer"
        elif isinstance(dim, IntegerAttr) and size != DYNAMIC_INDEX and dim.value.data != size:
            problem = f"the type's dimension is {size}"
        elif isinstance(dim, StringAttr) and size != DYNAMIC_INDEX and exact:
            problem = f"a symbol stands for a '?' only, the type's dimension is {size}"
        elif isinstance(dim, IntegerAttr) and size == DYNAMIC_INDEX and exact:
            problem = "the type's dimension is '?', which a symbol names"
        else:
            continue
        raise VerifyException(
            f"{what}: {DIMS_ATTR} = {_shown(entry)} does not fit {t}: index {index} is {_shown(dim)}: "
            + problem
        )


def _shown(entry: Attribute) -> str:
    """An `ascend.dims` entry as written by hand: `["batch", 5]`."""
    if isinstance(entry, ArrayAttr):
        return "[" + ", ".join(_shown(d) for d in entry.data) + "]"
    if isinstance(entry, IntegerAttr | FloatAttr):
        return str(entry.value.data)
    if isinstance(entry, StringAttr):
        return f'"{entry.data}"'
    return str(entry)


def _nested_parts(op: Operation, parts_of: dict[Operation, Hashable]) -> Hashable:
    return tuple(
        tuple((tuple(block.args), tuple([parts_of[child] for child in block.ops])) for block in region.blocks)
        for region in op.regions
    )


def _verify_region(region: Region, owner: Operation) -> None:
    for block in region.blocks:
        if block.parent is not region:
            raise ValueError("Parent pointer of block does not refer to containing region")
        for op in block.ops:
            if op.parent is not block:
                raise ValueError("Parent pointer of operation does not refer to containing region")
        if block.first_op is None and len(region.blocks) == 1 and not owner.has_trait(NoTerminator):
            raise VerifyException(
                f"Operation {owner.name} contains empty block in single-block region that "
                "expects at least a terminator"
            )
