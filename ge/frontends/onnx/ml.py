"""Converters of classic machine-learning operators: TfIdfVectorizer and the `ai.onnx.ml`
ArrayFeatureExtractor, Binarizer and TreeEnsemble, each decomposed into graph ops.

- TfIdfVectorizer compares every window of the input (gathered at positions known at import)
  with the n-grams of the pool, counts the matches, and maps the counts to output columns with
  a matmul by a 0/1 matrix.
- TreeEnsemble evaluates every decision node at once (gather of the features, comparisons),
  then finds the leaf each tree reaches with one matmul (a path is reached when none of its
  decisions goes the other way) and sums (or takes the least or greatest of) the leaf weights.
  Splits are rounded, in the direction each comparison needs, to the input's float type, so
  that comparing in that type decides as comparing with the split's own precision would.
"""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from ge.dialects import graph as ops
from ge.dialects.common import int_attr
from ge.dtypes import element_type, is_string, numpy_dtype, string_dtype
from ge.graph import Tensor

from .composite import Composer
from .importer import Converter, Importer, Node

# --------------------------------------------------------------------------------------------
# TfIdfVectorizer
# --------------------------------------------------------------------------------------------

_WEIGHTINGS = ("TF", "IDF", "TFIDF")


def _tf_idf_vectorizer(imp: Importer, node: Node) -> list[Tensor]:
    """Unigrams count once; longer n-grams once per skip distance (1 to max_skip_count + 1), as
    ONNX defines the operator. The i-th weight belongs to the i-th n-gram of the pool (as the
    specification and onnxruntime have it): TFIDF weighs each n-gram's count, IDF each output
    column that holds a count, by the weight of the last n-gram counted there."""
    c = Composer(imp, node)
    x = c.input(0, "X")
    c.static(x)
    mode = str(node.attr("mode", ""))
    if mode not in _WEIGHTINGS:
        raise node.invalid(f"unknown mode '{mode}' (known: {', '.join(_WEIGHTINGS)})")
    shortest, longest = int(node.attr("min_gram_length", 1)), int(node.attr("max_gram_length", 1))
    skips = int(node.attr("max_skip_count", 0))
    columns = [int(i) for i in node.attr("ngram_indexes", [])]
    if not columns or min(columns) < 0 or shortest < 1 or longest < shortest or skips < 0:
        raise node.invalid("the n-gram lengths, skip count and ngram_indexes are inconsistent")
    if len(x.shape) not in (1, 2):
        raise node.invalid(f"X must be [C] or [B, C], got {list(x.shape)}")
    rows = x if len(x.shape) == 2 else c.reshape(x, [1, x.shape[0]], "rows")
    rows, pool = _pool(c, rows)
    length = rows.shape[1]
    counts, ids = [], []
    for size, first_id, grams in _grams_by_size(node, pool):
        if not shortest <= size <= longest:
            continue
        # A skip so long that no n-gram fits in a row counts nothing: the distances stop there.
        distances = [1] if size == 1 else range(1, min(skips + 1, (length - 1) // (size - 1)) + 1)
        found = None
        for distance in distances:
            starts = length - (size - 1) * distance
            if starts < 1:
                continue
            matches = _count_matches(c, rows, grams, size, distance, starts)
            found = matches if found is None else c.op(ops.AddOp, [found, matches], f"count_{size}")
        if found is not None:
            counts.append(found)
            ids.extend(range(first_id, first_id + grams.shape[0]))
    width = max(columns) + 1
    batch = rows.shape[0]
    node.allocate([max(len(ids), batch), width], np.float32, "its output columns (ngram_indexes)")
    weights = [float(w) for w in node.attr("weights", [])]
    if weights and len(weights) != len(columns):
        raise node.invalid(f"{len(weights)} weights for {len(columns)} n-grams")
    # Counts go to their columns by a matmul; TFIDF weighs each n-gram's count on the way.
    scale = (
        np.array(weights, np.float32) if weights and mode == "TFIDF" else np.ones(len(columns), np.float32)
    )
    if counts:
        mapping = np.zeros((len(ids), width), np.float32)
        mapping[np.arange(len(ids)), [columns[i] for i in ids]] = scale[ids]
        found = c.concat(counts, 1, "counts")
        y = c.op(ops.MatMulOp, [found, c.constant(mapping, "columns")], "frequencies")
    else:
        y = c.zeros([batch, width], "float32", "frequencies")
    if mode == "IDF":
        present = c.op(ops.GreaterOp, [y, c.scalar(0, "float32", "zero")], "present")
        by_column = np.zeros(width, np.float32)
        by_column[columns] = weights or 1.0  # a column several n-grams share takes the last one's weight
        value = c.constant(by_column, "weights")
        y = c.op(ops.WhereOp, [present, value, c.scalar(0, "float32", "absent")], "idf")
    return [c.reshape(y, [width] if len(x.shape) == 1 else [batch, width], "")]


def _pool(c: Composer, rows: Tensor) -> tuple[Tensor, np.ndarray]:
    """The input and the pool of n-gram items, of one element type."""
    node = c.node
    strings = [s.decode() if isinstance(s, bytes) else s for s in node.attr("pool_strings", [])]
    if strings:
        if not is_string(rows.dtype):
            raise node.invalid(f"pool_strings cannot match an input of {rows.dtype}")
        pool = np.array(strings, dtype=np.str_)
        width = max(pool.dtype.itemsize, numpy_dtype(element_type(rows.dtype)).itemsize) // 4
        return c.cast(rows, string_dtype(width), "widened"), pool.astype(f"<U{width}")
    pool = np.array(node.attr("pool_int64s", []), dtype=np.int64)
    if not pool.size:
        raise node.invalid("neither pool_strings nor pool_int64s is given")
    if rows.dtype not in ("int32", "int64"):
        raise node.invalid(f"pool_int64s cannot match an input of {rows.dtype}")
    if rows.dtype == "int32" and np.abs(pool).max() < 2**31:
        return rows, pool.astype(np.int32)
    return c.cast(rows, "int64", "widened"), pool


def _grams_by_size(node: Node, pool: np.ndarray):
    """(n, id of the first, (count, n) items) for each n-gram size of the pool, in pool order."""
    starts = [int(s) for s in node.attr("ngram_counts", [])]
    next_id = 0
    for size, start in enumerate(starts, 1):
        end = starts[size] if size < len(starts) else pool.size
        if (end - start) % size or end < start:
            raise node.invalid(f"ngram_counts {starts} do not split a pool of {pool.size} into {size}-grams")
        grams = pool[start:end].reshape(-1, size)
        yield size, next_id, grams
        next_id += grams.shape[0]


def _count_matches(
    c: Composer, rows: Tensor, grams: np.ndarray, size: int, distance: int, starts: int
) -> Tensor:
    """(B, grams): how many windows of `size` items `distance` apart equal each n-gram."""
    part = f"{size}gram_skip{distance}"
    positions = np.arange(starts)[:, None] + distance * np.arange(size)[None, :]
    windows = c.op(
        ops.GatherOp,
        [rows, c.constant(positions.astype(np.int64), f"{part}_positions")],
        part,
        {"axis": int_attr(1)},
    )
    windows = c.reshape(windows, [rows.shape[0], starts, 1, size], f"{part}_windows")
    equal = c.op(ops.EqualOp, [windows, c.constant(grams, f"{part}_grams")], f"{part}_equal")
    whole = c.reduce(ops.ReduceMinOp, equal, [3], f"{part}_match")
    return c.reduce(ops.ReduceSumOp, c.cast(whole, "float32", f"{part}_ones"), [1], f"{part}_count")


# --------------------------------------------------------------------------------------------
# ai.onnx.ml
# --------------------------------------------------------------------------------------------


def _array_feature_extractor(imp: Importer, node: Node) -> list[Tensor]:
    """The last axis at the indices given (flattened); a 1-D input gives one row."""
    c = Composer(imp, node)
    x, indices = c.input(0, "X"), c.input(1, "Y")
    c.static(x, indices)
    if not x.shape:
        raise node.invalid("X must have at least one dimension")
    if len(x.shape) == 1:
        x = c.reshape(x, [1, x.shape[0]], "row")
    flat = c.reshape(indices, [-1], "indices")
    return [c.op(ops.GatherOp, [x, flat], "", {"axis": int_attr(len(x.shape) - 1)})]


def _binarizer(imp: Importer, node: Node) -> list[Tensor]:
    """1 where the input exceeds `threshold`, else 0, in the input's type."""
    c = Composer(imp, node)
    x = c.input(0, "X")
    threshold = float(node.attr("threshold", 0.0))
    if x.dtype.startswith(("int", "uint")):
        threshold = float(np.floor(threshold))  # an integer exceeds t exactly when it exceeds floor(t)
    above = c.op(ops.GreaterOp, [x, c.scalar(threshold, x.dtype, "threshold")], "above")
    return [c.op(ops.WhereOp, [above, c.scalar(1, x.dtype, "one"), c.scalar(0, x.dtype, "zero")], "")]


_LEQ, _LT, _GTE, _GT, _EQ, _NEQ, _MEMBER = range(7)
_COMPARISONS = {_LEQ: ops.LessEqualOp, _LT: ops.LessOp, _GTE: ops.GreaterEqualOp, _GT: ops.GreaterOp}
_AVERAGE, _SUM, _MIN, _MAX = range(4)
_POST_TRANSFORMS = {0: None, 1: ops.SoftmaxOp, 2: ops.SigmoidOp}


def _tree_ensemble(imp: Importer, node: Node) -> list[Tensor]:
    """Post transforms NONE, SOFTMAX and LOGISTIC; SOFTMAX_ZERO and PROBIT are refused."""
    c = Composer(imp, node)
    x = c.input(0, "X")
    c.static(x)
    if len(x.shape) != 2 or x.dtype not in ("float16", "float32", "float64"):
        raise node.invalid(f"X must be a 2-D float tensor, got {x.dtype} {list(x.shape)}")
    post = int(node.attr("post_transform", 0))
    if post not in _POST_TRANSFORMS:
        raise node.fail(f"post_transform {post} is not supported (NONE, SOFTMAX and LOGISTIC are)")
    aggregate = int(node.attr("aggregate_function", _SUM))
    if aggregate not in (_AVERAGE, _SUM, _MIN, _MAX):
        raise node.invalid(f"unknown aggregate_function {aggregate}")
    targets = int(node.attr("n_targets", 0))
    tree = _Trees(node)
    dtype = numpy_dtype(element_type(x.dtype))
    # Every decision at once: (B, nodes).
    features = c.op(
        ops.GatherOp, [x, c.constant(tree.features, "features")], "node_features", {"axis": int_attr(1)}
    )
    decision = c.constant(np.zeros(tree.modes.shape, bool), "no_decision")
    for mode in sorted(set(tree.modes.tolist())):
        if mode == _MEMBER:
            members = c.constant(_rounded_splits(tree.members, _EQ, dtype), "members")
            column = c.reshape(features, [*features.shape, 1], "features_column")
            hits = c.op(ops.EqualOp, [column, members], "member_hits")
            outcome = c.reduce(ops.ReduceMaxOp, hits, [2], "member")
        else:
            splits = c.constant(_rounded_splits(tree.splits, mode, dtype), f"splits_{mode}")
            op_class = _COMPARISONS.get(mode, ops.EqualOp)
            outcome = c.op(op_class, [features, splits], f"compare_{mode}")
            if mode == _NEQ:
                outcome = c.op(ops.NotOp, [outcome], "not_equal")
        chosen = c.constant(tree.modes == mode, f"mode_{mode}")
        decision = c.op(ops.WhereOp, [chosen, outcome, decision], f"decision_{mode}")
    if tree.tracks_missing.any():
        missing = c.op(ops.IsNaNOp, [features], "missing")
        tracked = c.op(ops.AndOp, [missing, c.constant(tree.tracks_missing, "tracks_missing")], "tracked")
        decision = c.op(ops.OrOp, [decision, tracked], "decision")
    # A path is reached when no decision on it goes the other way.
    wrong_turns = c.op(
        ops.AddOp,
        [
            c.op(
                ops.MatMulOp,
                [c.cast(decision, x.dtype, "decision_value"), c.constant(tree.turns.astype(dtype), "turns")],
                "turns",
            ),
            c.constant(tree.true_turns.astype(dtype), "true_turns"),
        ],
        "wrong_turns",
    )
    reached = c.op(ops.EqualOp, [wrong_turns, c.scalar(0, x.dtype, "none")], "reached")
    leaves = np.zeros((tree.paths, targets), dtype)
    if tree.targets.size and (tree.targets.min() < 0 or tree.targets.max() >= targets):
        raise node.invalid(f"leaf targets must lie in [0, {targets})")
    hit = np.zeros((tree.paths, targets), bool)
    hit[np.arange(tree.paths), tree.targets] = True
    if aggregate in (_SUM, _AVERAGE):
        leaves[np.arange(tree.paths), tree.targets] = tree.weights / (
            tree.roots if aggregate == _AVERAGE else 1
        )
        y = c.op(
            ops.MatMulOp, [c.cast(reached, x.dtype, "reached_value"), c.constant(leaves, "leaves")], "sum"
        )
    else:
        fill = np.finfo(dtype).max if aggregate == _MIN else np.finfo(dtype).min
        column = c.reshape(reached, [x.shape[0], tree.paths, 1], "reached_column")
        counts = c.op(ops.AndOp, [column, c.constant(hit, "leaf_targets")], "counted")
        weights = np.where(hit, tree.weights[:, None], 0).astype(dtype)
        values = c.op(
            ops.WhereOp,
            [counts, c.constant(weights, "leaf_weights"), c.scalar(fill, x.dtype, "fill")],
            "values",
        )
        extreme = c.reduce(ops.ReduceMinOp if aggregate == _MIN else ops.ReduceMaxOp, values, [1], "extreme")
        # A target no reached leaf names is 0, as onnxruntime has it.
        touched = c.reduce(ops.ReduceMaxOp, counts, [1], "touched")
        y = c.op(ops.WhereOp, [touched, extreme, c.scalar(0, x.dtype, "untouched")], "aggregate")
    if _POST_TRANSFORMS[post] is not None:
        props = {"axis": int_attr(-1)} if post == 1 else None
        y = c.op(_POST_TRANSFORMS[post], [y], "post_transform", props)
    return [y]


class _Trees:
    """The ensemble's decision nodes and the paths from each root to a leaf."""

    def __init__(self, node: Node):
        def ints(name: str) -> np.ndarray:
            return np.array(node.attr(name, []), np.int64)

        self.modes = _tensor(node, "nodes_modes").astype(np.int64)
        self.splits = _tensor(node, "nodes_splits").astype(np.float64)
        self.features = ints("nodes_featureids")
        true_ids, false_ids = ints("nodes_truenodeids"), ints("nodes_falsenodeids")
        true_leaf, false_leaf = ints("nodes_trueleafs"), ints("nodes_falseleafs")
        count = self.modes.size
        if any(
            a.size != count for a in (self.splits, self.features, true_ids, false_ids, true_leaf, false_leaf)
        ):
            raise node.invalid("the nodes_* attributes must all describe the same nodes")
        tracks = ints("nodes_missing_value_tracks_true")
        self.tracks_missing = tracks.astype(bool) if tracks.size else np.zeros(count, bool)
        self.members = self._members(node)
        roots = [int(r) for r in node.attr("tree_roots", [])]
        self.roots = len(roots)
        leaf_targets, leaf_weights = ints("leaf_targetids"), _tensor(node, "leaf_weights").astype(np.float64)
        paths: list[tuple[list[tuple[int, bool]], int]] = []
        for root in roots:
            if true_leaf[root] and false_leaf[root] and true_ids[root] == false_ids[root]:
                paths.append(([], root))  # a tree that is a single leaf
                continue
            stack = [(root, [])]
            while stack:
                index, turns = stack.pop()
                for branch, target, is_leaf in ((False, false_ids, false_leaf), (True, true_ids, true_leaf)):
                    route = [*turns, (index, branch)]
                    if len(route) > count:
                        raise node.invalid("the nodes do not form trees (a path repeats a node)")
                    if is_leaf[index]:
                        paths.append((route, int(target[index])))
                    else:
                        stack.append((int(target[index]), route))
        self.paths = len(paths)
        leaves = np.array([leaf for _, leaf in paths], np.int64)
        if leaves.size and (leaves.max() >= leaf_weights.size or leaves.max() >= leaf_targets.size):
            raise node.invalid("a node names a leaf that leaf_weights and leaf_targetids do not hold")
        self.targets, self.weights = leaf_targets[leaves], leaf_weights[leaves]
        # wrong turns = decision @ turns + true_turns: a true-turn is wrong where decision is 0.
        steps = np.array(
            [(p, index, branch) for p, (route, _) in enumerate(paths) for index, branch in route]
        )
        steps = steps.reshape(-1, 3).astype(np.int64)
        self.turns = np.zeros((count, self.paths))
        np.add.at(self.turns, (steps[:, 1], steps[:, 0]), np.where(steps[:, 2] == 1, -1.0, 1.0))
        self.true_turns = np.bincount(steps[:, 0], weights=steps[:, 2], minlength=self.paths).astype(
            np.float64
        )

    def _members(self, node: Node) -> np.ndarray:
        """(nodes, most members) values each set-membership node tests, NaN-padded."""
        chosen = np.flatnonzero(self.modes == _MEMBER)
        if not chosen.size:
            return np.full((self.modes.size, 1), np.nan)
        if "membership_values" not in node.attrs:
            raise node.invalid("set-membership nodes need membership_values")
        values = _tensor(node, "membership_values").astype(np.float64)
        ends = np.flatnonzero(np.isnan(values))
        if ends.size != chosen.size:
            raise node.invalid(f"membership_values holds {ends.size} sets for {chosen.size} membership nodes")
        sets = np.split(values, ends + 1)[: chosen.size]
        table = np.full((self.modes.size, max(1, max(len(s) - 1 for s in sets))), np.nan)
        for index, members in zip(chosen, sets, strict=True):
            table[index, : len(members) - 1] = members[:-1]
        return table


def _rounded_splits(splits: np.ndarray, mode: int, dtype: np.dtype) -> np.ndarray:
    """Splits in `dtype` that decide `x <mode> split` for every x of `dtype` as the exact split does."""
    narrow = splits.astype(dtype)
    wide = narrow.astype(np.float64)
    if mode in (_LEQ, _GT):  # the largest value not above the split
        return np.where(wide > splits, np.nextafter(narrow, dtype.type(-np.inf)), narrow)
    if mode in (_LT, _GTE):  # the smallest value not below the split
        return np.where(wide < splits, np.nextafter(narrow, dtype.type(np.inf)), narrow)
    return np.where(wide == splits, narrow, dtype.type(np.nan))  # equal only to a representable split


def _tensor(node: Node, name: str) -> np.ndarray:
    value = node.attr(name)
    if value is None:
        raise node.invalid(f"the attribute '{name}' is missing")
    return numpy_helper.to_array(value).reshape(-1)


CONVERTERS: dict[str, Converter] = {"TfIdfVectorizer": _tf_idf_vectorizer}

ML_CONVERTERS: dict[str, Converter] = {
    "ai.onnx.ml::ArrayFeatureExtractor": _array_feature_extractor,
    "ai.onnx.ml::Binarizer": _binarizer,
    "ai.onnx.ml::TreeEnsemble": _tree_ensemble,
}
"""Converters of the `ai.onnx.ml` domain, keyed as `converter_key` names them."""
