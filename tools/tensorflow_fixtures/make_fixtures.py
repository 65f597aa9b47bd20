"""Builds the small frozen TensorFlow models the TensorFlow frontend's tests read.

Each model is built with Keras on fixed seeds, frozen (variables made constants) into a GraphDef
with TensorFlow's convert_variables_to_constants_v2, and written as `<name>.pb`, with TensorFlow's
outputs on fixed inputs as `<name>.npz` (`input_<placeholder>` and `output_<index>` arrays).

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install -r tools/tensorflow_fixtures/requirements.txt
    /tmp/tfvenv/bin/python tools/tensorflow_fixtures/make_fixtures.py [name ...]

Names given rebuild only those fixtures (every one by default).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "frontends" / "fixtures" / "tensorflow"
layers = tf.keras.layers


def cnn() -> tf.keras.Model:
    """Conv2D, BatchNormalization, ReLU, MaxPool, then global pooling and Dense."""
    x = inputs = layers.Input((16, 16, 3), batch_size=1)
    for filters in (8, 16):
        x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        x = layers.BatchNormalization()(x)
        x = layers.ReLU()(x)
        x = layers.MaxPool2D(2)(x)
    x = layers.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inputs, layers.Dense(10, activation="softmax")(x))


def depthwise() -> tf.keras.Model:
    """A depthwise-separable block: depthwise conv, batch norm, ReLU6, pointwise conv, residual."""
    inputs = layers.Input((12, 12, 8), batch_size=1)
    x = layers.DepthwiseConv2D(3, padding="same", depth_multiplier=1)(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU(6.0)(x)
    x = layers.Conv2D(8, 1)(x)
    x = layers.Add()([x, inputs])
    x = layers.AveragePooling2D(2, padding="same")(x)
    return tf.keras.Model(inputs, x)


def mlp() -> tf.keras.Model:
    inputs = layers.Input((20,), batch_size=2)
    x = layers.Dense(32, activation="relu")(inputs)
    x = layers.Dense(32, activation="tanh")(x)
    return tf.keras.Model(inputs, layers.Dense(5, activation="sigmoid")(x))


def transformer() -> tf.keras.Model:
    """Multi-head self-attention (Einsum), residuals, layer norm and a GELU feed-forward."""
    inputs = layers.Input((6, 16), batch_size=1)
    attention = layers.MultiHeadAttention(num_heads=2, key_dim=8)(inputs, inputs)
    x = layers.LayerNormalization()(inputs + attention)
    hidden = layers.Dense(32, activation="gelu")(x)
    return tf.keras.Model(inputs, layers.LayerNormalization()(x + layers.Dense(16)(hidden)))


class FusedBatchNorm(tf.Module):
    """TensorFlow's own ops (Keras 3 spells batch norm out): FusedBatchNormV3 between NHWC convs."""

    def __init__(self):
        rng = np.random.default_rng(7)
        self.w1 = tf.constant(rng.standard_normal((3, 3, 3, 4)).astype(np.float32) * 0.5)
        self.w2 = tf.constant(rng.standard_normal((3, 3, 4, 4)).astype(np.float32) * 0.5)
        self.stats = [tf.constant(v, tf.float32) for v in ([1.5, 0.5, 1.0, 2.0], [0.1, -0.2, 0.3, 0.0])]

    def __call__(self, x):
        y = tf.nn.conv2d(x, self.w1, 1, "SAME")
        y, *_ = tf.compat.v1.nn.fused_batch_norm(
            y,
            *self.stats,
            mean=tf.constant([0.2, -0.1, 0.0, 0.4]),
            variance=tf.constant([1.0, 0.5, 2.0, 1.5]),
            epsilon=1e-3,
            is_training=False,
        )
        y = tf.nn.leaky_relu(y, 0.1)
        y = tf.nn.max_pool2d(y, 3, 2, "SAME")
        y = tf.nn.conv2d(y, self.w2, 2, "VALID", dilations=1)
        y = tf.nn.elu(y)
        return tf.reduce_mean(y, axis=[1, 2])


class TensorOps(tf.Module):
    """Shape, slicing, indexing and elementwise ops of the supported list, on small tensors."""

    def __call__(self, x, image):
        outputs = []
        outputs.append(tf.concat([x[:, 1:3], x[:, ::2][:, :2]], axis=1))  # StridedSlice, ConcatV2
        outputs.append(tf.stack(tf.unstack(x, axis=1)[::-1], axis=2))  # Unpack, Pack
        a, b = tf.split(x, 2, axis=2)
        c, d = tf.split(x, [2, -1], axis=1)
        outputs += [a * b, tf.reduce_sum(c, 1) - tf.reduce_max(d, 1)]
        outputs.append(tf.squeeze(tf.expand_dims(x, 0) + 1.0, [0]))
        outputs.append(tf.slice(x, [0, 1, 2], [-1, 2, 3]))
        outputs.append(
            tf.pad(x, [[0, 0], [1, 2], [0, 1]]) + tf.pad(x, [[0, 0], [1, 2], [0, 1]], constant_values=2.0)
        )
        outputs.append(tf.pad(x, [[0, 0], [1, 1], [2, 1]], mode="REFLECT"))
        outputs.append(tf.tile(tf.transpose(x, [0, 2, 1]), [1, 2, 1]))
        outputs.append(tf.gather(x, [3, 0, 0], axis=1))
        outputs.append(
            tf.reduce_prod(x, axis=-1, keepdims=True) + tf.reduce_min(x, axis=[0, 2], keepdims=True)
        )
        outputs.append(tf.one_hot(tf.argmax(x, axis=2), 6, on_value=2.0, off_value=-1.0))
        outputs.append(tf.where(x > 0.0, tf.exp(x), tf.math.log(tf.abs(x) + 1.0)))
        outputs.append(tf.cast(tf.equal(x, x), tf.float32) + tf.cast(tf.less(x, 0.0), tf.float32))
        outputs.append(tf.pow(tf.abs(x) + 1.0, 0.5) / tf.maximum(x, 0.5) + tf.minimum(x, 0.0))
        outputs.append(
            tf.nn.selu(x) + tf.nn.softplus(-x) + tf.square(x) + tf.sqrt(tf.abs(x)) - tf.negative(x)
        )
        outputs.append(tf.nn.log_softmax(x) + tf.nn.relu6(x * 4.0) + tf.math.erf(x) + tf.math.sigmoid(x))
        outputs.append(tf.add_n([x, x * 2.0, tf.fill([2, 4, 6], 0.5)]))
        outputs.append(tf.reshape(x, [4, -1]) + tf.cast(tf.range(12), tf.float32))
        outputs.append(tf.reshape(x, [tf.shape(x)[0], -1]))  # Shape, StridedSlice, Pack
        outputs.append(
            tf.linalg.matmul(x, x, adjoint_b=True) + tf.linalg.matmul(x, x, adjoint_a=True)[:, :4, :4]
        )
        outputs.append(tf.linalg.matmul(x[0], x[1], transpose_b=True))
        outputs.append(tf.einsum("bij,bkj->bik", x, x))
        outputs.append(tf.image.resize(image, [6, 10], method="bilinear"))
        outputs.append(tf.image.resize(image, [8, 4], method="nearest"))
        outputs.append(tf.compat.v1.image.resize_bilinear(image, [7, 9], align_corners=True))
        kernel = tf.reshape(tf.range(3 * 3 * 2 * 3, dtype=tf.float32) / 20.0, [3, 3, 2, 3])
        outputs.append(tf.nn.conv2d_transpose(image, kernel, [1, 8, 10, 2], 2, "SAME"))
        outputs.append(
            tf.nn.avg_pool2d(image, 3, 2, "SAME") + tf.nn.bias_add(image, [1.0, 2.0, 3.0])[:, :2, :3]
        )
        return outputs


class StridedSlices(tf.Module):
    """Slices with every mask: reversed ranges from a masked begin, new axes, shrinks, ellipses."""

    def __call__(self, x):
        return [
            x[:, tf.newaxis, ::-1, 2:],
            x[..., ::-2],
            x[::-1, ..., tf.newaxis, 1],
            x[:, ::-3, ...],
            x[..., 1, :],
            x[1, ..., 2:5],
            x[tf.newaxis, ..., 0],
        ]


class MathOps(tf.Module):
    """Elementwise ops of tf.math and Keras' activations: log1p and expm1 also near 0 (scaled
    back, so lost precision shows), roundings, trigonometry, floor division and remainders of
    floats and integers, predicates, logic, and the reductions over booleans and norms."""

    def __call__(self, x, n):
        tiny = x * 1e-6
        clipped = tf.clip_by_value(x, -0.9, 0.9)
        outputs = [
            tf.math.log1p(tiny) * 1e6,
            tf.math.expm1(tiny) * 1e6,
            tf.math.log1p(tf.abs(x)),
            tf.math.expm1(x),
            tf.math.softsign(x),
            tf.math.reciprocal(tf.abs(x) + 0.5),
            tf.math.floor(x * 3.0),
            tf.math.ceil(x * 3.0),
            tf.math.round(x * 3.0),
            tf.math.rint(x * 2.5),
            tf.math.sign(x),
            tf.math.sin(x) + tf.math.cos(x) + tf.math.tan(x * 0.5) + tf.math.atan(x),
            tf.math.sinh(x) + tf.math.cosh(x) + tf.math.asinh(x) + tf.math.acosh(tf.abs(x) + 1.0),
            tf.math.asin(clipped) + tf.math.acos(clipped) + tf.math.atanh(clipped),
            tf.math.floordiv(x, 0.7),
            tf.math.floormod(x, -0.7),
            tf.truncatemod(x, 0.7),
            tf.math.floordiv(n, -3),
            tf.math.floormod(n, 4),
            tf.math.floormod(n, -4),
            tf.truncatemod(n, -3),
            tf.math.divide_no_nan(x, tf.nn.relu(x)),
        ]
        ratio = x / tf.math.floor(tf.abs(x))  # inf where |x| < 1
        outputs += [
            tf.cast(tf.math.is_finite(ratio), tf.float32),
            tf.cast(tf.math.is_inf(ratio), tf.float32) + tf.cast(tf.math.is_nan(ratio * 0.0), tf.float32),
            tf.cast(tf.math.not_equal(n, 2), tf.int32) + tf.cast(tf.math.greater_equal(x, 0.1), tf.int32),
            tf.cast(tf.math.less_equal(x, 0.1), tf.int32),
            tf.cast(tf.logical_or(tf.logical_and(x > 0.0, x < 1.0), tf.logical_not(x > -0.5)), tf.int32),
            tf.cast(tf.reduce_any(x > 1.0, 1), tf.int32) + tf.cast(tf.reduce_all(x > -1.0, 1), tf.int32),
            tf.math.reduce_euclidean_norm(x, 2),
            tf.nn.l2_loss(x),
        ]
        return outputs


class IndexOps(tf.Module):
    """Indexing, ordering and scanning ops: argmin, top_k and sort, cumsum, reverse,
    broadcast_to, gather_nd, gather with batch_dims, band_part, SYMMETRIC padding and einsum
    with an ellipsis."""

    def __call__(self, x, w):
        top = tf.math.top_k(x, 3)
        return [
            tf.argmin(x, 2),
            tf.argmin(x, 1, output_type=tf.int32),
            top.values,
            top.indices,
            tf.sort(x, -1, direction="DESCENDING"),
            tf.math.cumsum(x, 1),
            tf.math.cumsum(x, 2, exclusive=True, reverse=True),
            tf.reverse(x, [0, 2]),
            tf.broadcast_to(x[:, :1], [2, 4, 6]),
            tf.gather_nd(x, [[0, 1], [1, 3]]),
            tf.gather_nd(x, [[[1, 2, 3]]]),
            tf.gather(x, [[0, 3, 1], [2, 0, 3]], axis=1, batch_dims=1),
            tf.gather(x, [[5, 0], [1, 1]], axis=2, batch_dims=1),
            tf.linalg.band_part(x, 1, 2),
            tf.linalg.band_part(x, -1, 0),
            tf.linalg.band_part(x, 0, -1),
            tf.pad(x, [[0, 0], [1, 2], [3, 0]], mode="SYMMETRIC"),
            tf.einsum("...j,jk->...k", x, w),
            tf.einsum("...ij,...kj->...ik", x, x),
        ]


def text_cnn() -> tf.keras.Model:
    """Token ids through an Embedding, a dilated Conv1D (TensorFlow wraps it in
    SpaceToBatchND and BatchToSpaceND), global max pooling and a Dense softmax."""
    inputs = layers.Input((20,), batch_size=1, dtype="int32")
    x = layers.Embedding(50, 8)(inputs)
    x = layers.Conv1D(8, 3, activation="relu")(x)
    x = layers.Conv1D(6, 3, padding="same", dilation_rate=2)(x)
    x = layers.GlobalMaxPooling1D()(x)
    return tf.keras.Model(inputs, layers.Dense(4, activation="softmax")(x))


def causal_attention() -> tf.keras.Model:
    """Self-attention with a causal mask (MatrixBandPart, LogicalAnd) and a residual layer norm."""
    inputs = layers.Input((6, 16), batch_size=1)
    attention = layers.MultiHeadAttention(num_heads=2, key_dim=8)(inputs, inputs, use_causal_mask=True)
    return tf.keras.Model(inputs, layers.LayerNormalization()(inputs + attention))


def lstm() -> tf.keras.Model:
    """A Keras LSTM over 5 steps, frozen as TensorFlow lowers its while loop (Enter, Merge,
    Switch, LoopCond, NextIteration, Exit and tensor lists), then a Dense; short layer names keep
    the file small."""
    inputs = layers.Input((5, 3), batch_size=1, name="x")
    x = layers.LSTM(4, return_sequences=True, name="l")(inputs)
    return tf.keras.Model(inputs, layers.Dense(2, name="d")(x), name="m")


def gru_backwards() -> tf.keras.Model:
    """A GRU over the reversed sequence (the backward half of a Bidirectional layer), returning
    its last state."""
    inputs = layers.Input((4, 3), batch_size=1, name="x")
    return tf.keras.Model(inputs, layers.GRU(3, go_backwards=True, name="g")(inputs), name="m")


class SpatialOps(tf.Module):
    """SpaceToDepth and DepthToSpace, local response normalization, 3-D convolutions and pools."""

    def __init__(self):
        rng = np.random.default_rng(11)
        self.w3 = tf.constant(rng.standard_normal((3, 2, 3, 3, 4)).astype(np.float32) * 0.3)
        self.w1 = tf.constant(rng.standard_normal((1, 3, 3, 3, 2)).astype(np.float32) * 0.3)

    def __call__(self, image, volume):
        return [
            tf.nn.space_to_depth(image, 2),
            tf.nn.depth_to_space(image, 2),
            tf.nn.local_response_normalization(image, 1, 0.5, 0.3, 0.75),
            tf.nn.conv3d(volume, self.w3, [1, 1, 2, 1, 1], "SAME", dilations=[1, 2, 1, 1, 1]),
            tf.nn.conv3d(volume, self.w1, [1, 1, 1, 1, 1], "VALID"),
            tf.nn.max_pool3d(volume, [2, 3, 2], [1, 2, 2], "SAME"),
            tf.nn.avg_pool3d(volume, 3, 2, "SAME"),
        ]


class ScatterOps(tf.Module):
    """Scatters, diagonals (tf.eye too), roll, cumprod, integer bitwise ops and divisions,
    xlogy and atan2."""

    def __call__(self, x, n):
        square = x[:, :4, :4]
        return [
            tf.scatter_nd([[1], [3], [1]], x[0, :3], [5, 6]),
            tf.tensor_scatter_nd_update(x, [[0, 1], [1, 3]], tf.ones([2, 6])),
            tf.tensor_scatter_nd_add(x, [[1, 2, 3]], [5.0]),
            tf.roll(x, 2, axis=2),
            tf.roll(x, [1, -5], axis=[0, 1]),
            tf.math.cumprod(x, 1, exclusive=True),
            tf.linalg.diag_part(square),
            tf.linalg.diag(x[0, 0]),
            tf.linalg.set_diag(square, x[:, 0, :4]),
            tf.eye(4, 6) + x[0, :, :],
            tf.bitwise.bitwise_and(n, 6) + tf.bitwise.bitwise_or(n, 3) - tf.bitwise.bitwise_xor(n, 5),
            tf.bitwise.left_shift(n, 2) + tf.bitwise.right_shift(n, 1) + tf.bitwise.invert(n),
            tf.truncatediv(n, -3) + tf.truncatediv(n, 4),
            tf.math.xlogy(tf.nn.relu(x), tf.abs(x) + 0.5),
            tf.math.atan2(x, x[::-1]),
            tf.math.atan2(x, tf.zeros_like(x)),
        ]


def grouped_conv() -> tf.keras.Model:
    """Keras' Conv2D with groups runs through a jit-compiled function, which freezing keeps as a
    StatefulPartitionedCall of the graph's library; a ConvNeXt-style depthwise 7x7 as well."""
    inputs = layers.Input((8, 8, 4), batch_size=1)
    x = layers.Conv2D(6, 3, groups=2, padding="same")(inputs)
    x = layers.Conv2D(6, 7, groups=6, padding="same")(x)
    return tf.keras.Model(inputs, layers.LayerNormalization()(x))


class ControlFlow(tf.Module):
    """A tf.function's own control flow, kept as functional While and If (frozen with
    lower_control_flow=False): an autograph loop over tf.range and a cond on a static size."""

    def __call__(self, x):
        total = x
        for step in tf.range(3):
            total = total * 0.5 + tf.cast(step, tf.float32)
        wide = tf.size(x) > 6
        return [total, tf.cond(wide, lambda: total * 2.0, lambda: total - 1.0)]


class ImageResizes(tf.Module):
    """The resizes TensorFlow computes with ResizeArea and ScaleAndTranslate: area, antialiased
    bilinear and bicubic, lanczos, gaussian, mitchellcubic, a box kernel, down and up."""

    def __call__(self, image):
        resize = tf.image.resize
        outputs = [
            resize(image, [3, 5], "area"),
            resize(image, [9, 13], "area"),
            tf.compat.v1.image.resize_area(image, [4, 7], align_corners=True),
            resize(image, [3, 4], "bilinear", antialias=True),
            resize(image, [4, 5], "bicubic", antialias=True),
            resize(image, [9, 11], "lanczos3"),
            resize(image, [4, 6], "lanczos5"),
            resize(image, [5, 3], "gaussian"),
            resize(image, [9, 11], "mitchellcubic"),
        ]
        outputs.append(
            tf.raw_ops.ScaleAndTranslate(
                images=image, size=[5, 7], scale=[5 / 6, 7 / 8], translation=[0.25, -0.5], kernel_type="box"
            )
        )
        return outputs


def strided_slices():
    return StridedSlices(), [tf.TensorSpec([2, 4, 6], tf.float32, name="x")]


def math_ops():
    return MathOps(), [
        tf.TensorSpec([2, 4, 6], tf.float32, name="x"),
        tf.TensorSpec([2, 4, 6], tf.int32, name="n"),
    ]


def spatial_ops():
    specs = [
        tf.TensorSpec([1, 4, 6, 8], tf.float32, name="image"),
        tf.TensorSpec([1, 5, 6, 4, 3], tf.float32, name="volume"),
    ]
    return SpatialOps(), specs


def scatter_ops():
    return ScatterOps(), [
        tf.TensorSpec([2, 4, 6], tf.float32, name="x"),
        tf.TensorSpec([2, 5], tf.int32, name="n"),
    ]


def control_flow():
    return ControlFlow(), [tf.TensorSpec([2, 4], tf.float32, name="x")]


def image_resizes():
    return ImageResizes(), [tf.TensorSpec([1, 6, 8, 3], tf.float32, name="image")]


def index_ops():
    return IndexOps(), [
        tf.TensorSpec([2, 4, 6], tf.float32, name="x"),
        tf.TensorSpec([6, 3], tf.float32, name="w"),
    ]


def fused_batch_norm():
    return FusedBatchNorm(), [tf.TensorSpec([1, 10, 10, 3], tf.float32, name="image")]


def tensor_ops():
    specs = [
        tf.TensorSpec([2, 4, 6], tf.float32, name="x"),
        tf.TensorSpec([1, 4, 5, 3], tf.float32, name="image"),
    ]
    return TensorOps(), specs


MODELS = {"cnn": cnn, "depthwise": depthwise, "mlp": mlp, "transformer": transformer}
MODULES = {"fused_batch_norm": fused_batch_norm, "tensor_ops": tensor_ops}
MORE_MODELS = {
    "text_cnn": text_cnn,
    "causal_attention": causal_attention,
    "lstm": lstm,
    "gru_backwards": gru_backwards,
    "grouped_conv": grouped_conv,
    "lstm_unlowered": lstm,
}
MORE_MODULES = {
    "strided_slices": strided_slices,
    "math_ops": math_ops,
    "index_ops": index_ops,
    "spatial_ops": spatial_ops,
    "scatter_ops": scatter_ops,
    "control_flow": control_flow,
    "image_resizes": image_resizes,
}
UNLOWERED = {"control_flow", "lstm_unlowered"}
"""Fixtures frozen with lower_control_flow=False: their While and If stay functional."""
"""Added later: seeded after the first ones, so those keep their inputs."""


def freeze(model: tf.keras.Model, lower_control_flow: bool = True):
    spec = [tf.TensorSpec(t.shape, t.dtype, name=f"input_{i}") for i, t in enumerate(model.inputs)]
    function = tf.function(lambda *xs: model(list(xs) if len(xs) > 1 else xs[0], training=False))
    return convert_variables_to_constants_v2(
        function.get_concrete_function(*spec), lower_control_flow=lower_control_flow
    )


def built():
    """Each fixture's name and frozen function."""
    yield from _built(MODELS, MODULES, 0)
    yield from _built(MORE_MODELS, MORE_MODULES, len(MODELS))


def _built(models, modules, first_seed: int):
    for index, (name, build) in enumerate(models.items(), first_seed):
        tf.keras.utils.set_random_seed(index)
        model = build()
        # Batch-norm statistics away from 0 and 1, so that the test sees them applied.
        for layer in model.layers:
            if isinstance(layer, layers.BatchNormalization):
                channels = layer.moving_mean.shape[0]
                layer.moving_mean.assign(np.linspace(-0.5, 0.5, channels).astype(np.float32))
                layer.moving_variance.assign(np.linspace(0.5, 2.0, channels).astype(np.float32))
        yield name, freeze(model, name not in UNLOWERED)
    for name, build in modules.items():
        module, specs = build()
        function = tf.function(module.__call__).get_concrete_function(*specs)
        yield name, convert_variables_to_constants_v2(function, lower_control_flow=name not in UNLOWERED)


def main(names: list[str]) -> None:
    """Writes the fixtures `names` lists (all by default)."""
    OUT.mkdir(parents=True, exist_ok=True)
    for index, (name, frozen) in enumerate(built()):
        if names and name not in names:
            continue
        rng = np.random.default_rng(index)
        feeds = {}
        for t in frozen.inputs:
            name_of_input = t.name.partition(":")[0]
            if t.dtype.is_integer:  # a Keras model's token ids; else integers to divide, some negative
                values = rng.integers(1, 50, t.shape)
                if not name_of_input.startswith("input_"):
                    values *= rng.choice([-1, 1], t.shape)
                feeds[name_of_input] = values.astype(t.dtype.as_numpy_dtype)
            else:
                feeds[name_of_input] = rng.standard_normal(t.shape).astype(np.float32)
        results = frozen(*[tf.constant(v) for v in feeds.values()])
        results = results if isinstance(results, list | tuple) else [results]
        (OUT / f"{name}.pb").write_bytes(frozen.graph.as_graph_def().SerializeToString())
        arrays = {f"input_{k}": v for k, v in feeds.items()}
        arrays.update({f"output_{i}": np.asarray(r) for i, r in enumerate(results)})
        arrays["outputs"] = np.array([t.name for t in frozen.outputs])
        np.savez(OUT / f"{name}.npz", **arrays)
        ops = sorted({n.op for n in frozen.graph.as_graph_def().node})
        print(f"{name}: {len(frozen.graph.as_graph_def().node)} nodes, ops {ops}")


if __name__ == "__main__":
    main(sys.argv[1:])
