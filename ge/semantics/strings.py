"""Strings: concatenation, splitting, normalization, regular expressions, label encoding, and
the string side of casts.

Strings are numpy `<UN` arrays; numpy's `strings` functions work on whole arrays. Splitting and
regular expressions have no such function, so they call Python's `str.split` and `re` once per
element (through `np.char.split` and `np.vectorize`); placing the results is vectorized. Each
result is returned at its result type's width, which the op's shape inference chose to hold
any answer.
"""

from __future__ import annotations

import itertools

import numpy as np

from ge.dialects import graph as ops
from ge.dialects.common import describe, get_flag, get_int
from ge.dialects.graph.strings import CASE_GROWTH, compile_pattern
from ge.dtypes import bfloat16, numpy_dtype
from ge.errors import GeError, RuntimeInputError

from .base import Compute, Implementation, Prepared


def split(x: np.ndarray, delimiter: str | None, maxsplit: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The pieces of every element of `x`, flattened in order, and how many each element gave.

    Without a delimiter (None or ""), runs of whitespace separate and the ends are trimmed; an
    empty string gives no pieces.
    """
    flat = x.reshape(-1)
    if not delimiter:
        flat, delimiter = np.strings.strip(flat), None
    present = flat != ""
    parts = np.char.split(flat[present], delimiter, -1 if maxsplit is None else maxsplit)
    lengths = np.zeros(flat.size, np.int64)
    lengths[present] = np.fromiter(map(len, parts), np.int64, count=parts.size)
    pieces = np.array(list(itertools.chain.from_iterable(parts)), dtype=x.dtype)
    return pieces, lengths.reshape(x.shape)


def kept(x: np.ndarray, stopwords: tuple[str, ...], case_sensitive: bool, action: str) -> np.ndarray:
    """Which elements of `x` are not stop words (compared in the case `action` gives, or in
    lower case when it gives none, unless `case_sensitive`)."""
    if not stopwords:
        return np.ones(x.shape, bool)
    stops = np.array(stopwords, dtype=np.str_)
    if not case_sensitive:
        compare = np.strings.upper if action == "UPPER" else np.strings.lower
        x, stops = compare(_widened(x)), compare(_widened(stops))
    return ~np.isin(x, stops)


@Prepared
def _string_concat(op: ops.StringConcatOp) -> Compute:
    dtype = numpy_dtype(op.result.type.element_type)
    return lambda lhs, rhs: np.asarray(np.strings.add(lhs, rhs), dtype)


@Prepared
def _string_split(op: ops.StringSplitOp) -> Compute:
    delimiter = op.delimiter.data if op.delimiter is not None else None
    maxsplit = get_int(op, "maxsplit") if op.maxsplit is not None else None
    count = get_int(op, "count")

    def string_split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pieces, lengths = split(x, delimiter, maxsplit)
        flat = lengths.reshape(-1)
        if flat.max(initial=0) != count:
            raise GeError(
                f"{describe(op)}: the input splits into at most {flat.max(initial=0)} pieces, but the graph "
                f"was specialized on {count}: specialize it again on this input"
            )
        padded = np.zeros((flat.size, count), x.dtype)
        starts = np.cumsum(flat) - flat
        rows = np.repeat(np.arange(flat.size), flat)
        padded[rows, np.arange(pieces.size) - starts[rows]] = pieces
        return padded.reshape(*x.shape, count), lengths

    return string_split


@Prepared
def _string_normalizer(op: ops.StringNormalizerOp) -> Compute:
    action = op.case_change_action.data if op.case_change_action is not None else "NONE"
    stopwords = tuple(s.data for s in op.stopwords.data) if op.stopwords is not None else ()
    case_sensitive = get_flag(op, "is_case_sensitive")
    given = get_int(op, "count") if op.count is not None else None
    dtype = numpy_dtype(op.result.type.element_type)

    def string_normalizer(x: np.ndarray) -> np.ndarray:
        keep = kept(x.reshape(-1), stopwords, case_sensitive, action)
        result = x.reshape(-1)[keep] if keep.any() else np.zeros(1, x.dtype)
        count = x.shape[-1] if given is None else given
        if result.size != count:
            raise GeError(
                f"{describe(op)}: {result.size} elements are no stop words, but the graph was specialized "
                f"on {count}: specialize it again on this input"
            )
        if action != "NONE":
            result = (np.strings.upper if action == "UPPER" else np.strings.lower)(_widened(result))
        return result.reshape(*x.shape[:-1], count).astype(dtype)

    return string_normalizer


@Prepared
def _regex_full_match(op: ops.RegexFullMatchOp) -> Compute:
    regex = compile_pattern(op.pattern.data)
    matches = np.vectorize(lambda s: regex.fullmatch(s) is not None, otypes=[np.bool_])
    return lambda x: np.asarray(matches(x))


def _label_encoder(
    op: ops.LabelEncoderOp, x: np.ndarray, keys: np.ndarray, values: np.ndarray, default: np.ndarray
) -> np.ndarray:
    if keys.size == 0:
        return np.broadcast_to(default, x.shape).copy()
    # A stable sort keeps repeated keys in order, so the last equal key at or before the
    # insertion point is the last one given, which ONNX says wins.
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    position = np.searchsorted(ordered, x, side="right") - 1
    clipped = np.maximum(position, 0)
    found = (position >= 0) & (ordered[clipped] == x)
    if x.dtype.kind == "f":
        found |= np.isnan(x) & np.isnan(ordered[-1])  # NaN keys sort last
        clipped = np.where(np.isnan(x), keys.size - 1, clipped)
    return np.where(found, values[order][clipped], default)


def cast(op: ops.CastOp, x: np.ndarray, target: np.dtype) -> np.ndarray:
    """A cast from or to strings: numbers formatted as numpy does (`str(np.float32(0.1))` is
    "0.1"), strings parsed as Python reads numbers, non-empty strings true; bfloat16 goes
    through float32, which numpy can format and parse."""
    via = np.dtype(np.float32) if target == bfloat16 else target
    source = x.astype(np.float32) if x.dtype == bfloat16 else x
    try:
        with np.errstate(all="ignore"):
            return source.astype(via).astype(target, copy=False)
    except (ValueError, OverflowError) as error:
        raise RuntimeInputError(f"{describe(op)}: cannot cast the input to {target}: {error}") from None


def _widened(x: np.ndarray) -> np.ndarray:
    """`x` wide enough for any case change of its strings."""
    return x.astype(f"<U{CASE_GROWTH * max(1, x.dtype.itemsize // 4)}")


IMPLEMENTATIONS: dict[type, Implementation] = {
    ops.StringConcatOp: _string_concat,
    ops.StringSplitOp: _string_split,
    ops.StringNormalizerOp: _string_normalizer,
    ops.RegexFullMatchOp: _regex_full_match,
    ops.LabelEncoderOp: _label_encoder,
}
