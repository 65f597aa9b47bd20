"""Models at the edges of their operators' domains, found by mutating the ONNX node suite's
models: empty axes, attributes far beyond the input they act on, shapes that disagree. Each is
computed as onnxruntime computes it, or refused naming the node as onnxruntime refuses it;
none raises a Python exception at run time or allocates for the attribute's size.
"""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto
from test_bad_onnx_models import info, init, model, n, parse, run

from ge.errors import GeError, InvalidModelError, VerificationError

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def onnxruntime_run(proto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = onnxruntime.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.mark.parametrize(
    ("call", "error", "fragment"),
    [
        (
            parse(model([n("GlobalMaxPool", ["x"], ["y"], name="g")], [info("x", F, [1, 1, 3, 0])])),
            VerificationError,
            "global_max_pool pools over an empty plane: input shape [1, 1, 3, 0]",
        ),
        (
            parse(model([n("GlobalAveragePool", ["x"], ["y"], name="g")], [info("x", F, [1, 2, 0, 4])])),
            VerificationError,
            "global_avg_pool pools over an empty plane",
        ),
        (
            parse(
                model(
                    [n("GridSample", ["x", "grid"], ["y"], name="s")],
                    [info("x", F, [1, 1, 0, 2]), info("grid", F, [1, 2, 4, 2])],
                    opset=20,
                )
            ),
            VerificationError,
            "an input of shape [1, 1, 0, 2] has no point to sample",
        ),
        (
            parse(
                model(
                    [n("GatherElements", ["x", "i"], ["y"], name="g", axis=1)],
                    [info("x", F, [3, 5]), info("i", I64, [5, 1])],
                )
            ),
            VerificationError,
            "indices [5, 1] exceed data [3, 5] along axis 0",
        ),
        (
            parse(
                model(
                    [n("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], name="nll")],
                    [info("x", F, [3, 5]), info("t", I64, [5])],
                )
            ),
            InvalidModelError,
            "at node 'nll': an input of shape [3, 5] needs a target of shape [3], got [5]",
        ),
        (
            parse(
                model(
                    [
                        n(
                            "TfIdfVectorizer",
                            ["x"],
                            ["y"],
                            name="tf",
                            mode="TF",
                            min_gram_length=1,
                            max_gram_length=1,
                            max_skip_count=0,
                            ngram_counts=[0],
                            ngram_indexes=[2**40],
                            pool_int64s=[1],
                        )
                    ],
                    [info("x", I64, [2, 4])],
                    initializers=[],
                )
            ),
            InvalidModelError,
            "TfIdfVectorizer at node 'tf': its output columns (ngram_indexes) would hold a tensor of",
        ),
    ],
    ids=[
        "global max pool of an empty plane",
        "global average pool of an empty plane",
        "grid sample of an empty image",
        "gather elements beyond the data off the axis",
        "a loss target of another batch",
        "tf-idf columns past max_tensor_bytes",
    ],
)
def test_refused_as_onnxruntime_refuses(call, error, fragment) -> None:
    with pytest.raises(error) as raised:
        call()
    assert fragment in str(raised.value), str(raised.value)


def test_a_convolution_over_no_channels_is_its_bias() -> None:
    proto = model(
        [
            n(
                "Conv",
                ["x", "w", "b"],
                ["y"],
                name="c",
                kernel_shape=[3, 3],
                strides=[2, 2],
                auto_pad="SAME_LOWER",
            )
        ],
        [info("x", F, [1, 0, 5, 5])],
        initializers=[
            init("w", np.zeros((2, 0, 3, 3), np.float32)),
            init("b", np.array([0.5, -1.0], np.float32)),
        ],
    )
    x = np.zeros((1, 0, 5, 5), np.float32)
    [got] = run(proto, x)()
    [want] = onnxruntime_run(proto, {"x": x})
    assert got.shape == want.shape == (1, 2, 3, 3)
    np.testing.assert_array_equal(got, want)


def test_a_skip_count_longer_than_the_rows_counts_as_onnxruntime_does() -> None:
    """max_skip_count = 2^31 - 1 looped over every skip distance; no bigram fits past the row."""
    proto = model(
        [
            n(
                "TfIdfVectorizer",
                ["x"],
                ["y"],
                name="tf",
                mode="TF",
                min_gram_length=1,
                max_gram_length=2,
                max_skip_count=2**31 - 1,
                ngram_counts=[0, 2],
                ngram_indexes=[0, 1, 2],
                pool_int64s=[2, 3, 2, 3],
            )
        ],
        [info("x", I64, [2, 6])],
    )
    x = np.array([[2, 3, 2, 4, 3, 2], [3, 2, 2, 3, 3, 3]], np.int64)
    [got] = run(proto, x)()
    [want] = onnxruntime_run(proto, {"x": x})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("op_type", "attrs"),
    [("MaxPool", {}), ("LpPool", {"p": 2}), ("AveragePool", {}), ("AveragePool", {"count_include_pad": 1})],
)
@pytest.mark.parametrize(
    "window",
    [
        {"kernel_shape": [2**20 - 1, 2], "auto_pad": "SAME_LOWER"},
        {"kernel_shape": [3, 40], "pads": [1, 39, 1, 39]},
        {"kernel_shape": [7, 9], "auto_pad": "SAME_UPPER", "strides": [2, 3]},
    ],
    ids=["kernel 2^20 - 1 over 5 rows", "pads of 39 beside 6 columns", "kernels wider than the input"],
)
def test_pools_wider_than_their_input_as_onnxruntime(op_type, attrs, window) -> None:
    """A window's taps that read padding in every window are left out: a kernel of 2^20 - 1 rows
    padded as many rows before."""
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 6)).astype(np.float32)
    proto = model(
        [n(op_type, ["x"], ["y"], name="p", **attrs, **window)], [info("x", F, list(x.shape))], opset=19
    )
    [got] = run(proto, x)()
    [want] = onnxruntime_run(proto, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_a_max_pool_of_2_to_the_31_rows_pads_a_few() -> None:
    """Padding 2^31 rows was a MemoryError; onnxruntime computes it (quickly for a maximum only)."""
    x = np.random.default_rng(1).standard_normal((1, 2, 5, 6)).astype(np.float32)
    window = {"kernel_shape": [2**31 - 1, 2], "auto_pad": "SAME_LOWER"}
    proto = model([n("MaxPool", ["x"], ["y"], name="p", **window)], [info("x", F, list(x.shape))], opset=19)
    [got] = run(proto, x)()
    [want] = onnxruntime_run(proto, {"x": x})
    np.testing.assert_array_equal(got, want)


def test_conv_transpose_whose_windows_reach_past_max_tensor_bytes_is_refused() -> None:
    """A stride of 2^31 with a small output_shape scattered 320 GiB of products before cropping."""
    proto = model(
        [n("ConvTranspose", ["x", "w"], ["y"], name="t", strides=[3, 2**31], output_shape=[10, 8])],
        [info("x", F, [1, 1, 3, 3])],
        initializers=[init("w", np.ones((1, 2, 3, 3), np.float32))],
    )
    with pytest.raises(
        InvalidModelError, match="ConvTranspose at node 't': the cells its windows reach would hold"
    ):
        parse(proto)()


def test_a_recurrent_sequence_too_long_for_its_lengths_is_refused() -> None:
    """Default sequence lengths are int32: a sequence of 2^40 steps raised xDSL's VerifyException."""
    proto = model(
        [n("RNN", ["x", "w", "r"], ["y"], name="rnn", hidden_size=2)],
        [info("x", F, [2**40, 1, 3])],
        initializers=[init("w", np.ones((1, 2, 3), np.float32)), init("r", np.ones((1, 2, 2), np.float32))],
    )
    with pytest.raises(GeError, match=r"'rnn.default_4': 1099511627776 is out of the range of int32"):
        parse(proto)()
