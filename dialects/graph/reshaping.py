"""The rule by which a reshape follows a new input shape: its result type states the shape, so
when the input changes (a specialized symbol, another batch size) the result must be worked out
again from the stated shape, the old input shape and the new one."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from .base import DYN


def reshaped(
    before: Sequence[int], after: Sequence[int], stated: Sequence[int], factors: Sequence[Fraction] = ()
) -> list[int]:
    """The result shape of a reshape of `before` into `stated` whose input is now `after`:
    a single `?` of the result is what the element count leaves; several are copies of the
    input's `?` dimensions, in order, when there are as many. A static result follows groups of
    dimensions of equal products: a group whose input grew by a ratio gives it to its one result
    dimension; over several, the ratio goes to the first, or, when it is the product of
    `factors`, each factor to the next dimension (batch-major: the batch, then the positions).
    ValueError when the result cannot hold the input's elements."""
    if len(after) != len(before):
        raise ValueError(f"a reshape of rank-{len(before)} {list(before)} cannot take {list(after)}")
    shape = list(stated)
    holes = [axis for axis, d in enumerate(shape) if d == DYN]
    copied = [a for b, a in zip(before, after, strict=True) if b == DYN]
    if len(holes) == 1 and DYN not in after:
        known = math.prod(d for d in shape if d != DYN)
        if known == 0 or math.prod(after) % known:
            raise ValueError(f"cannot reshape {list(after)} into {_shown(stated)}")
        shape[holes[0]] = math.prod(after) // known
    elif len(holes) > 1 and len(holes) == len(copied):
        for axis, size in zip(holes, copied, strict=True):
            shape[axis] = size
    elif not holes and DYN not in (*before, *after) and math.prod(before) != math.prod(after):
        shape = _followed(before, after, shape, factors)
    if DYN not in after and DYN not in shape and math.prod(after) != math.prod(shape):
        raise ValueError(f"cannot reshape {math.prod(after)} elements {list(after)} into {shape}")
    return shape


def _followed(
    before: Sequence[int], after: Sequence[int], stated: list[int], factors: Sequence[Fraction]
) -> list[int]:
    """A static reshape's result when its input's element count changed (see `reshaped`)."""
    cannot = ValueError(f"a reshape of {list(before)} into {list(stated)} cannot follow {list(after)}")
    shape = list(stated)
    try:
        groups = _groups(before, stated)
    except ValueError:
        raise cannot from None
    for group_in, group_out in groups:
        old = math.prod(before[k] for k in group_in)
        new = math.prod(after[k] for k in group_in)
        if new == old:
            continue
        if old == 0:
            raise cannot
        ratio = Fraction(new, old)
        if len(group_out) == 1 or not factors or ratio in factors:
            split = [ratio]
        elif ratio == math.prod(factors):
            split = list(factors)
        else:
            raise cannot
        for index, factor in zip(group_out, split, strict=False):
            scaled = shape[index] * factor
            if scaled.denominator != 1:
                raise cannot
            shape[index] = int(scaled)
    return shape


def _groups(before: Sequence[int], stated: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Input and result dimension indices in runs of equal products: (2, 8, 32) into (16, 32)
    gives ([0, 1], [0]) and ([2], [1])."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(before) and j < len(stated):
        group_in, group_out = [i], [j]
        left, right = before[i], stated[j]
        i, j = i + 1, j + 1
        while left != right:
            if left < right and i < len(before):
                left *= before[i]
                group_in.append(i)
                i += 1
            elif right < left and j < len(stated):
                right *= stated[j]
                group_out.append(j)
                j += 1
            else:
                raise ValueError(f"{list(before)} and {list(stated)} do not hold the same elements")
        groups.append((group_in, group_out))
    if groups:
        groups[-1][0].extend(range(i, len(before)))
        groups[-1][1].extend(range(j, len(stated)))
    return groups


def _shown(shape: Sequence[int]) -> str:
    return "[" + ", ".join("?" if d == DYN else str(d) for d in shape) + "]"
