"""Verification that checks each distinct op once.

An op whose class derives from `LocalVerifier` declares that its verifier reads nothing but the
op itself: its operand and result types, properties, attributes and the kind of op it sits in.
Two such ops with equal signatures verify alike, so `verify` runs the verifier on one op per
signature and, for the others, only the structural checks that depend on where the op stands.
Ops with regions or successors, terminators, the last op of a block and every op whose class
does not declare `LocalVerifier` get xDSL's full verification, as `Operation.verify` gives it.

A graph of a thousand convolutions has a few dozen distinct ones; a pipeline that verifies after
every pass passes a `VerifiedSignatures` along, so an op a pass left alone is not checked again.
"""

from __future__ import annotations

from collections.abc import Hashable

from xdsl.ir import ErasedSSAValue, Operation, Region
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException


class LocalVerifier:
    """Mixin of an op class whose verifier reads only the op's signature (see the module doc);
    an op that looks at its neighbours, its uses or the module must not derive from it."""


class VerifiedSignatures:
    """Signatures of the ops verified so far: as a set, and per op the last one it verified with,
    which an unchanged op matches without hashing its types again."""

    def __init__(self) -> None:
        self.signatures: set[Hashable] = set()
        self.by_op: dict[Operation, Hashable] = {}

    def __len__(self) -> int:
        return len(self.signatures)


def signature(op: Operation) -> Hashable:
    """What a `LocalVerifier` op's verification depends on."""
    parent = op.parent_op()
    return (
        type(op),
        type(parent),
        tuple(v.type for v in op.operands),
        tuple(r.type for r in op.results),
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
    )


def verify(root: Operation, verified: VerifiedSignatures | None = None) -> None:
    """`root.verify()`, with `LocalVerifier` ops of an already verified signature (in `verified`,
    which this call extends) checked only where they stand. Raises VerifyException (or, as xDSL
    does for an erased operand or a broken parent link, ValueError). Nested ops are checked
    before the op that holds them, as xDSL does."""
    seen = VerifiedSignatures() if verified is None else verified
    signatures, by_op = seen.signatures, seen.by_op
    for op in root.walk(region_first=True):
        for region in op.regions:
            _verify_region(region, op)
        block = op.parent
        if (
            isinstance(op, LocalVerifier)
            and not op.regions
            and not op.successors
            and block is not None
            and block.last_op is not op
        ):
            key = signature(op)
            if by_op.get(op) == key or key in signatures:
                if any(isinstance(v, ErasedSSAValue) for v in op.operands):
                    raise ValueError("Erased SSA value is used by the operation")
            else:
                op.verify(verify_nested_ops=False)
                signatures.add(key)
            by_op[op] = key
        else:
            op.verify(verify_nested_ops=False)


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
