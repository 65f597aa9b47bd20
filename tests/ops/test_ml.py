"""TfIdfVectorizer and the `ai.onnx.ml` ArrayFeatureExtractor, Binarizer and TreeEnsemble against
onnxruntime, through `ge.backend`.

Tree ensembles are drawn at random (complete trees over a few features, every comparison mode,
set membership, missing values that follow the true branch) and fed small integers, so that
equalities and memberships hit.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from oracle import run_onnxruntime

import ge.backend
from ge.errors import InvalidModelError, UnsupportedOperatorError


def model_of(
    op_type: str, inputs: dict[str, np.ndarray], domain: str = "", outputs: int = 1, **attrs
) -> onnx.ModelProto:
    """A one-node model over graph inputs `inputs` (name -> example value)."""
    node = helper.make_node(
        op_type, list(inputs), [f"out{i}" for i in range(outputs)], domain=domain, **attrs
    )
    graph = helper.make_graph(
        [node],
        op_type,
        [
            helper.make_tensor_value_info(
                name,
                TensorProto.STRING
                if value.dtype.kind in "OU"
                else helper.np_dtype_to_tensor_dtype(value.dtype),
                value.shape,
            )
            for name, value in inputs.items()
        ],
        [helper.make_empty_tensor_value_info(f"out{i}") for i in range(outputs)],
    )
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5 if domain else 3)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def check(op_type: str, inputs: dict[str, np.ndarray], domain: str = "", tolerance: float = 1e-6, **attrs):
    model = model_of(op_type, inputs, domain, **attrs)
    (got,) = ge.backend.prepare(model).run(inputs)
    (want,) = run_onnxruntime(model, inputs)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype.kind in "OU":
        np.testing.assert_array_equal(got.astype(str), want.astype(str))
    else:
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
    return got


# --------------------------------------------------------------------------------------------
# TfIdfVectorizer
# --------------------------------------------------------------------------------------------

POOL = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 3, 3, 5, 4, 2, 6]  # 4 unigrams, 3 bigrams, 2 trigrams (at 4, 10)
COUNTS = [0, 4, 10]


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize(
    ("shortest", "longest", "skips"), [(1, 1, 0), (2, 2, 0), (1, 2, 3), (1, 3, 2), (3, 3, 1)]
)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_tf_idf_vectorizer(mode, shortest, longest, skips, dtype, rng) -> None:
    x = rng.integers(2, 9, (3, 12)).astype(dtype)
    attrs = {
        "mode": mode,
        "min_gram_length": shortest,
        "max_gram_length": longest,
        "max_skip_count": skips,
        "ngram_counts": COUNTS,
        "ngram_indexes": [8, 0, 1, 2, 3, 4, 5, 6, 7],
        "pool_int64s": POOL,
    }
    if mode != "TF":
        attrs["weights"] = rng.uniform(0.5, 2.0, 9).round(2).tolist()
    check("TfIdfVectorizer", {"X": x}, **attrs)


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("weighted", [False, True])
def test_tf_idf_vectorizer_of_one_row_and_shared_columns(mode, weighted, rng) -> None:
    x = rng.integers(2, 9, 15).astype(np.int32)
    attrs = {"min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 1, "ngram_counts": [0, 4]}
    if weighted:
        attrs["weights"] = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75]
    pool = [2, 3, 5, 7, 5, 6, 7, 8, 6, 7]
    check(
        "TfIdfVectorizer", {"X": x}, mode=mode, ngram_indexes=[0, 0, 1, 2, 3, 3, 4], pool_int64s=pool, **attrs
    )


def test_tf_idf_vectorizer_of_strings() -> None:
    words = np.array(
        [["a", "quick", "fox", "a", "quick", "dog"], ["the", "fox", "a", "quick", "fox", "x"]], object
    )
    attrs = {"min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 1, "ngram_counts": [0, 3]}
    pool = ["a", "fox", "dog", "a", "quick", "quick", "fox"]
    check(
        "TfIdfVectorizer", {"X": words}, mode="TF", ngram_indexes=[0, 1, 2, 3, 4], pool_strings=pool, **attrs
    )


def test_tf_idf_vectorizer_unknown_mode(rng) -> None:
    model = model_of(
        "TfIdfVectorizer",
        {"X": np.zeros(4, np.int64)},
        mode="BM25",
        min_gram_length=1,
        max_gram_length=1,
        max_skip_count=0,
        ngram_counts=[0],
        ngram_indexes=[0],
        pool_int64s=[1],
    )
    with pytest.raises(InvalidModelError, match="unknown mode 'BM25'"):
        ge.backend.prepare(model).run({"X": np.zeros(4, np.int64)})


# --------------------------------------------------------------------------------------------
# ArrayFeatureExtractor and Binarizer
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "indices"), [((4,), [3, 0]), ((3, 5), [4, 1, 1]), ((2, 3, 4), [[0], [3]]), ((2, 3), [2])]
)
def test_array_feature_extractor(shape, indices, rng) -> None:
    x = rng.standard_normal(shape).astype(np.float32)
    check("ArrayFeatureExtractor", {"X": x, "Y": np.array(indices, np.int64)}, domain="ai.onnx.ml")


def test_array_feature_extractor_of_strings() -> None:
    x = np.array([["a", "bb", "ccc"], ["d", "ee", "f"]], object)
    check("ArrayFeatureExtractor", {"X": x, "Y": np.array([2, 0], np.int64)}, domain="ai.onnx.ml")


@pytest.mark.parametrize("threshold", [0.0, 0.7, -1.5])
def test_binarizer(threshold, rng) -> None:
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    check("Binarizer", {"X": x}, domain="ai.onnx.ml", threshold=threshold)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_binarizer_of_other_types(dtype, rng) -> None:
    """onnxruntime binarizes float32 only: the others are checked against the definition."""
    x = (rng.standard_normal((4, 6)) * 3).astype(dtype)
    model = model_of("Binarizer", {"X": x}, domain="ai.onnx.ml", threshold=1.5)
    (got,) = ge.backend.prepare(model).run({"X": x})
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, (x > 1.5).astype(dtype))


# --------------------------------------------------------------------------------------------
# TreeEnsemble
# --------------------------------------------------------------------------------------------


def forest(
    rng: np.random.Generator,
    trees: int,
    depth: int,
    features: int,
    targets: int,
    modes: tuple[int, ...],
    split_type: int = TensorProto.FLOAT,
) -> dict[str, object]:
    """The attributes of `trees` complete trees of `depth` decisions, the true branch on the left."""
    internal, leaves = 2**depth - 1, 2**depth
    attrs: dict[str, list] = {
        key: [] for key in ("modes", "features", "splits", "true", "false", "true_leaf")
    }
    attrs.update(false_leaf=[], targets=[], weights=[], roots=[], members=[], tracks=[])
    for tree in range(trees):
        attrs["roots"].append(tree * internal)
        for local in range(internal):
            mode = int(rng.choice(modes))
            attrs["modes"].append(mode)
            attrs["features"].append(int(rng.integers(features)))
            attrs["splits"].append(float(rng.integers(0, 5)) + (0.5 if mode < 4 else 0.0))
            attrs["tracks"].append(int(rng.integers(2)))
            if mode == 6:
                attrs["members"] += [float(v) for v in rng.choice(5, 2, replace=False)] + [np.nan]
            for branch, child in (("true", 2 * local + 1), ("false", 2 * local + 2)):
                is_leaf = child >= internal
                attrs[f"{branch}_leaf"].append(int(is_leaf))
                attrs[branch].append(tree * leaves + child - internal if is_leaf else tree * internal + child)
        attrs["targets"] += [int(t) for t in rng.integers(0, targets, leaves)]
        attrs["weights"] += [float(w) for w in rng.uniform(-3, 3, leaves).round(2)]
    count = len(attrs["modes"])
    result = {
        "n_targets": targets,
        "tree_roots": attrs["roots"],
        "nodes_modes": helper.make_tensor("modes", TensorProto.UINT8, (count,), attrs["modes"]),
        "nodes_featureids": attrs["features"],
        "nodes_splits": helper.make_tensor("splits", split_type, (count,), attrs["splits"]),
        "nodes_truenodeids": attrs["true"],
        "nodes_trueleafs": attrs["true_leaf"],
        "nodes_falsenodeids": attrs["false"],
        "nodes_falseleafs": attrs["false_leaf"],
        "nodes_missing_value_tracks_true": attrs["tracks"],
        "leaf_targetids": attrs["targets"],
        "leaf_weights": helper.make_tensor("weights", split_type, (len(attrs["weights"]),), attrs["weights"]),
    }
    if attrs["members"]:
        members = attrs["members"]
        result["membership_values"] = helper.make_tensor("members", split_type, (len(members),), members)
    return result


def inputs(rng: np.random.Generator, rows: int, features: int, dtype) -> np.ndarray:
    x = rng.integers(0, 5, (rows, features)).astype(dtype)
    x[rng.random(x.shape) < 0.1] = np.nan
    return x


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tree_ensemble_aggregates(aggregate, dtype, rng) -> None:
    split_type = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    attrs = forest(rng, trees=4, depth=3, features=3, targets=3, modes=(0, 1, 2, 3), split_type=split_type)
    check(
        "TreeEnsemble", {"X": inputs(rng, 20, 3, dtype)}, "ai.onnx.ml", aggregate_function=aggregate, **attrs
    )


def test_tree_ensemble_every_mode(rng) -> None:
    attrs = forest(rng, trees=3, depth=4, features=4, targets=2, modes=(0, 1, 2, 3, 4, 5, 6))
    check("TreeEnsemble", {"X": inputs(rng, 30, 4, np.float32)}, "ai.onnx.ml", **attrs)


@pytest.mark.parametrize("post_transform", [1, 2])
def test_tree_ensemble_post_transforms(post_transform, rng) -> None:
    """SOFTMAX (1) and LOGISTIC (2) of the scores onnxruntime computes (its own transforms take 1
    for LOGISTIC and 2 for SOFTMAX, against the specification)."""
    attrs = forest(rng, trees=2, depth=2, features=2, targets=3, modes=(0, 3))
    x = inputs(rng, 10, 2, np.float32)
    model = model_of("TreeEnsemble", {"X": x}, "ai.onnx.ml", post_transform=post_transform, **attrs)
    (got,) = ge.backend.prepare(model).run({"X": x})
    (scores,) = run_onnxruntime(model_of("TreeEnsemble", {"X": x}, "ai.onnx.ml", **attrs), {"X": x})
    if post_transform == 1:
        want = np.exp(scores - scores.max(axis=1, keepdims=True))
        want /= want.sum(axis=1, keepdims=True)
    else:
        want = 1 / (1 + np.exp(-scores))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_tree_ensemble_splits_between_floats() -> None:
    """A double split between two float32 values decides as the exact comparison does (a model
    onnxruntime refuses, whose splits and input differ in type: checked by hand)."""
    split = 0.1  # not a float32
    attrs = forest(np.random.default_rng(0), 1, 1, 1, 1, (0,), TensorProto.DOUBLE)
    attrs["nodes_splits"] = helper.make_tensor("splits", TensorProto.DOUBLE, (1,), [split])
    below, above = np.float32(split), np.nextafter(np.float32(split), np.float32(1))
    if float(below) > split:
        below, above = np.nextafter(below, np.float32(0)), below
    x = np.array([[below], [above]], np.float32)
    model = model_of("TreeEnsemble", {"X": x}, "ai.onnx.ml", **attrs)
    (got,) = ge.backend.prepare(model).run({"X": x})
    weights = onnx.numpy_helper.to_array(attrs["leaf_weights"])
    np.testing.assert_allclose(got[:, 0], [weights[0], weights[1]], rtol=1e-6)  # x <= split, then not


def test_tree_ensemble_probit_is_refused(rng) -> None:
    attrs = forest(rng, trees=1, depth=1, features=1, targets=1, modes=(0,))
    x = np.zeros((1, 1), np.float32)
    model = model_of("TreeEnsemble", {"X": x}, "ai.onnx.ml", post_transform=4, **attrs)
    with pytest.raises(UnsupportedOperatorError, match="post_transform 4"):
        ge.backend.prepare(model).run({"X": x})
