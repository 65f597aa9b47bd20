"""Builds the MindSpore test fixtures: small LeNet-, ResNet- and MLP-style networks, a MobileNet
block, self-attention, and networks of the other primitives ge converts, exported as MINDIR with
MindSpore's own outputs on fixed inputs, into tests/frontends/fixtures/mindspore/.

MindSpore is not one of ge's dependencies: run this in a virtual environment of its own,

    python3.11 -m venv /tmp/msvenv
    /tmp/msvenv/bin/pip install -r tools/mindspore_fixtures/requirements.txt
    /tmp/msvenv/bin/python tools/mindspore_fixtures/make_fixtures.py [name ...]

Names given rebuild only those fixtures (every one by default).

Each fixture is `<name>.mindir` and `<name>.npz` (the input `x` and the outputs `y0`, `y1`, ...).
The MLP is saved as MindSpore saves a large model, its weights in `mlp_variables/data_0` beside
`mlp_graph.mindir`; the ResNet's residual blocks are `lazy_inline` cells, kept as sub-graphs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import lazy_inline, nn, ops
from mindspore.train import serialization

OUT = Path(__file__).resolve().parents[2] / "tests" / "frontends" / "fixtures" / "mindspore"
SEED = 20260601


class LeNet(nn.Cell):
    """LeNet-5 on a 1 x 32 x 32 image, as MindSpore's model zoo writes it."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.fc1 = nn.Dense(16 * 5 * 5, 32)
        self.fc2 = nn.Dense(32, classes)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.relu(self.fc1(self.flatten(x)))
        return self.fc2(x)


class BasicBlock(nn.Cell):
    """A residual block."""

    def __init__(self, channels_in: int, channels: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels, 3, stride, pad_mode="pad", padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, 1, pad_mode="same")
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()
        self.shortcut = None
        if stride != 1 or channels_in != channels:
            self.shortcut = nn.SequentialCell(
                [nn.Conv2d(channels_in, channels, 1, stride, pad_mode="valid"), nn.BatchNorm2d(channels)]
            )

    def construct(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        identity = x if self.shortcut is None else self.shortcut(x)
        return self.relu(y + identity)


class SubGraphBlock(BasicBlock):
    """The residual block, kept a sub-graph of the exported model by `lazy_inline` (which MindSpore
    does not run on CPU: the outputs come from the same network built of `BasicBlock`s)."""

    @lazy_inline
    def __init__(self, channels_in: int, channels: int, stride: int):
        super().__init__(channels_in, channels, stride)


class SmallResNet(nn.Cell):
    """A stem, two residual stages (one downsampling), global average pooling, a classifier."""

    def __init__(self, classes: int = 10, block: type[BasicBlock] = SubGraphBlock):
        super().__init__()
        self.stem = nn.SequentialCell([nn.Conv2d(3, 8, 3, pad_mode="same"), nn.BatchNorm2d(8), nn.ReLU()])
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        self.layer1 = block(8, 8, 1)
        self.layer2 = block(8, 16, 2)
        self.avg = nn.AvgPool2d(kernel_size=2, stride=2)
        self.fc = nn.Dense(16, classes)

    def construct(self, x):
        x = self.pool(self.stem(x))
        x = self.layer2(self.layer1(x))
        x = self.avg(x)
        x = ops.mean(x, axis=(2, 3), keep_dims=False)
        return ops.softmax(self.fc(x), axis=-1)


class MLP(nn.Cell):
    """Dense layers with the tensor ops an MLP head uses: reshape, transpose, concat, cast, mean."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(16, 32, activation="relu")
        self.fc2 = nn.Dense(32, 32)
        self.fc3 = nn.Dense(64, 8)
        self.scale = ms.Parameter(ms.Tensor(np.linspace(0.5, 1.5, 32, dtype=np.float32)), name="scale")

    def construct(self, x):
        h = self.fc1(x)
        g = ops.sigmoid(self.fc2(h)) * self.scale + 0.25
        t = ops.transpose(ops.reshape(g, (-1, 4, 8)), (0, 2, 1))
        t = ops.reshape(t, (-1, 32))
        c = ops.concat((h, t - g), axis=1)
        c = ops.cast(ops.cast(c, ms.float16), ms.float32)
        y = self.fc3(c)
        return ops.softmax(y, axis=1), ops.mean(y, axis=1, keep_dims=True)


class Ops(nn.Cell):
    """The elementwise, reduction and shape primitives the three networks above do not use."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(SEED)
        self.w = ms.Parameter(ms.Tensor(rng.standard_normal((6, 5)).astype(np.float32)), name="w")
        self.b = ms.Parameter(ms.Tensor(rng.standard_normal(6).astype(np.float32)), name="b")

    def construct(self, x):
        a = ops.abs(x)
        b = ops.exp(-a)
        m = ops.maximum(ops.log(a + 1.0), ops.sqrt(a))
        n = ops.minimum(ops.tanh(x), ops.erf(x))
        r = m / (b + 1.0) + n
        s = ops.squeeze(ops.expand_dims(ops.reduce_sum(r, 2), 1), 1)
        extremes = ops.amax(x, axis=1) - ops.amin(x, axis=1, keepdims=False)
        products = ops.bmm(x, ops.transpose(x, (0, 2, 1)))
        dense = ops.dense(x, self.w, self.b)
        return s, extremes, ops.log_softmax(products, -1), dense


class MobileBlock(nn.Cell):
    """A MobileNet-style block: depthwise (grouped) convolution, ReLU6, HSwish, adaptive average pooling."""

    def __init__(self):
        super().__init__()
        self.expand = nn.Conv2d(8, 16, 1, has_bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.dw = nn.Conv2d(16, 16, 3, pad_mode="pad", padding=1, group=16, has_bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.project = nn.Conv2d(16, 8, 1, has_bias=True)
        self.act = nn.ReLU6()
        self.hs = nn.HSwish()
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Dense(8, 5)
        self.flatten = nn.Flatten()

    def construct(self, x):
        y = self.act(self.bn1(self.expand(x)))
        y = self.hs(self.bn2(self.dw(y)))
        y = self.project(y) + x
        return self.fc(self.flatten(self.pool(y)))


class Attention(nn.Cell):
    """Self-attention written with Split, MatMul, a scalar division, softmax, LayerNorm, GELU and Dropout."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Dense(16, 48)
        self.out = nn.Dense(16, 16)
        self.norm = nn.LayerNorm((16,))
        self.ff = nn.Dense(16, 32)
        self.ff2 = nn.Dense(32, 16)
        self.gelu = nn.GELU(approximate=False)
        self.drop = nn.Dropout(p=0.1)
        self.norm2 = nn.LayerNorm((16,))

    def construct(self, x):
        b, t, c = x.shape
        q, k, v = ops.split(self.qkv(x), 16, axis=-1)
        q = ops.transpose(ops.reshape(q, (b, t, 2, 8)), (0, 2, 1, 3))
        k = ops.transpose(ops.reshape(k, (b, t, 2, 8)), (0, 2, 1, 3))
        v = ops.transpose(ops.reshape(v, (b, t, 2, 8)), (0, 2, 1, 3))
        a = ops.softmax(ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) / 8**0.5, axis=-1)
        y = ops.reshape(ops.transpose(ops.matmul(a, v), (0, 2, 1, 3)), (b, t, c))
        x = self.norm(x + self.drop(self.out(y)))
        return self.norm2(x + self.ff2(self.gelu(self.ff(x))))


class Activations(nn.Cell):
    """Activation cells and the elementwise primitives of ops, on one tensor."""

    def __init__(self):
        super().__init__()
        self.acts = nn.CellList(
            [
                nn.LeakyReLU(0.1),
                nn.SiLU(),
                nn.GELU(),
                nn.GELU(approximate=False),
                nn.HSigmoid(),
                nn.ELU(),
                nn.Tanh(),
                nn.Sigmoid(),
                nn.Mish(),
                nn.ReLU(),
                nn.Softsign(),
                nn.PReLU(),
            ]
        )

    def construct(self, x):
        outs = ()
        for c in self.acts:
            outs = outs + (c(x),)
        return outs + (
            ops.clamp(x, -0.5, 0.5),
            ops.pow(ops.abs(x), 1.5),
            ops.rsqrt(ops.abs(x) + 1),
            ops.square(x),
            ops.reciprocal(x + 5),
            ops.floor(x),
            ops.neg(x),
            ops.sign(x),
            ops.sin(x),
            ops.cos(x),
            ops.log1p(ops.abs(x)),
            ops.round(x * 3),
            ops.expm1(x),  # not near 0: MindSpore's CPU kernel computes exp(x) - 1 there
            ops.atan2(x, x * 0.5 - 0.2),
        )


class Einsum(nn.Cell):
    """Einsum primitives: a batched product, one with an ellipsis, a trace-like contraction.
    MindSpore has no CPU kernel for Einsum, so this fixture holds the model and its input only."""

    def construct(self, x):
        return (
            ops.einsum("bij,bkj->bik", x, x),
            ops.einsum("...ij->...ji", x),
            ops.einsum("bij,bij->b", x, x),
        )


class TensorOps(nn.Cell):
    """Splitting, stacking, slicing, gathering, tiling, padding, selecting and ordering primitives."""

    def construct(self, x):
        a, b = ops.split(x, 2, axis=2)
        return (
            ops.concat((a, b * 2), 1),
            ops.stack((a, b), 0),
            x[:, 1:3],
            x[:, ::2, 1],
            ops.gather(x, ms.Tensor([2, 0], ms.int32), 1),
            ops.tile(x, (1, 2, 1)),
            ops.broadcast_to(x[:, :1], (2, 4, 6)),
            ops.pad(x, (1, 2)),
            ops.where(x > 0, x, -x),
            ops.cast(x > 0, ms.float32),
            ops.one_hot(ops.argmax(x, -1), 6, ms.Tensor(1.0), ms.Tensor(0.0)),
            ops.cumsum(x, 1),
            ops.topk(x, 2)[0],
            ops.squeeze(x[:, :1], 1),
            ops.zeros_like(x) + 1,
            ops.argmin(x, 1),
            ops.reduce_max(x, (1, 2)),
            ops.mean(x, 2, True),
            ops.prod(x, 1),
            ops.reverse(x, [2]),
            ops.expand_dims(x, 0),
            ops.transpose(x, (2, 0, 1)),
            ops.flatten(x),
            ops.maximum(x, 0.1),
            ops.logical_and(x > 0, x < 1),
            ops.equal(x, x),
            ops.sub(1.0, x),
            ops.div(x, 2.0),
        )


class Upsample(nn.Cell):
    """Resizes (bilinear, nearest, align_corners), a transposed convolution and pools."""

    def __init__(self):
        super().__init__()
        self.up = nn.Conv2dTranspose(3, 4, 2, stride=2)
        self.mp = nn.MaxPool2d(3, 2, pad_mode="same")
        self.ap = nn.AvgPool2d(2, 2)
        self.apool = nn.AdaptiveAvgPool2d((2, 4))

    def construct(self, x):
        return (
            ops.interpolate(x, size=(12, 16), mode="bilinear", align_corners=False),
            ops.interpolate(x, scale_factor=2.0, mode="nearest", recompute_scale_factor=True),
            self.up(x),
            self.mp(x),
            self.ap(x),
            self.apool(x),
            ops.interpolate(x, size=(9, 11), mode="bilinear", align_corners=True),
        )


class Sequence(nn.Cell):
    """Token ids through an Embedding, a Conv1d, BatchNorm1d and 1-D pools; sums and maxima."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(40, 8)
        self.conv = nn.Conv1d(8, 6, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm1d(6)
        self.pool = nn.MaxPool1d(2, 2)
        self.apool = nn.AvgPool1d(2, 2)

    def construct(self, x):
        x = self.bn(self.conv(ops.transpose(self.emb(x), (0, 2, 1))))
        return self.pool(ops.relu(x)), self.apool(x), ops.sum(x, 2), ops.max(x, 2)[0], ops.max(x, 2)[1]


class Norms(nn.Cell):
    """GroupNorm, PixelShuffle, Upsample, a dilated convolution with SeLU, LogSoftmax, and a Conv3d."""

    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(2, 4)
        self.ps = nn.PixelShuffle(2)
        self.up = nn.Upsample(scale_factor=2.0, mode="nearest", recompute_scale_factor=True)
        self.conv = nn.Conv2d(4, 8, 3, pad_mode="pad", padding=2, dilation=2, has_bias=True)
        self.selu = nn.SeLU()
        self.lsm = nn.LogSoftmax(1)
        self.conv3d = nn.Conv3d(1, 3, 3, pad_mode="same", has_bias=True)

    def construct(self, x):
        volume = self.conv3d(ops.expand_dims(x, 1))
        return self.gn(x), self.ps(x), self.up(x), self.selu(self.conv(x)), self.lsm(x), volume


class Recurrent(nn.Cell):
    """nn.LSTM of two bidirectional layers, batch first: one LSTM primitive per layer and
    direction, the backward ones over a reversed sequence."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 4, num_layers=2, bidirectional=True, batch_first=True)

    def construct(self, x):
        y, (h, c) = self.lstm(x)
        return y, h, c


class Gru(nn.Cell):
    """nn.GRU, which MindSpore exports as a loop over time steps written out, its outputs kept in
    a Python list (make_list) and stacked."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 4, batch_first=True)

    def construct(self, x):
        y, h = self.gru(x)
        return y, h


class Misc(nn.Cell):
    """Standard deviation and variance, triangles, narrow, masked_fill, isnan, floor division of
    floats and integers, diag, eye and linspace."""

    def construct(self, x):
        return (
            ops.std(x, 1),
            ops.var(x, 1),
            ops.triu(x[0]),
            ops.tril(x[0], 1),
            ops.narrow(x, 1, 1, 2),
            ops.masked_fill(x, x > 0, 0.5),
            ops.isnan(x),
            ops.floor_divide(x, 0.7),
            ops.floor_divide(ops.cast(x * 10, ms.int32), -3),
            ops.diag(x[0, 0]),
            ops.eye(3, 4, ms.float32) + 1,
            ops.linspace(0.0, 1.0, 5),
            ops.std(x, (1, 2), keepdims=True),
        )


EXPORT_ONLY = (Einsum,)
"""Networks of primitives MindSpore cannot run on CPU: their tests compute the outputs."""


def main(names: list[str]) -> None:
    """Writes the fixtures `names` lists (all by default)."""

    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    networks = {
        "lenet": (LeNet, rng.standard_normal((2, 1, 32, 32)).astype(np.float32), False),
        "resnet": (SmallResNet, rng.standard_normal((2, 3, 16, 16)).astype(np.float32), False),
        "mlp": (MLP, rng.standard_normal((4, 16)).astype(np.float32), True),
        "ops": (Ops, rng.standard_normal((3, 4, 5)).astype(np.float32), False),
        "mobile": (MobileBlock, rng.standard_normal((1, 8, 8, 8)).astype(np.float32), False),
        "attention": (Attention, rng.standard_normal((1, 6, 16)).astype(np.float32), False),
        "activations": (Activations, rng.standard_normal((2, 3, 4)).astype(np.float32), False),
        "tensor_ops": (TensorOps, rng.standard_normal((2, 4, 6)).astype(np.float32), False),
        "upsample": (Upsample, rng.standard_normal((1, 3, 6, 8)).astype(np.float32), False),
        "sequence": (Sequence, rng.integers(0, 40, (1, 12)).astype(np.int32), False),
        "norms": (Norms, rng.standard_normal((1, 4, 6, 8)).astype(np.float32), False),
        "recurrent": (Recurrent, rng.standard_normal((1, 6, 5)).astype(np.float32), False),
        "gru": (Gru, rng.standard_normal((1, 4, 3)).astype(np.float32), False),
        "misc": (Misc, rng.standard_normal((2, 4, 6)).astype(np.float32), False),
        "einsum": (Einsum, rng.standard_normal((2, 3, 4)).astype(np.float32), False),
    }
    for name, (network, x, external) in networks.items():
        if names and name not in names:
            continue
        ms.set_seed(SEED)
        net = network()
        net.set_train(False)
        if external:
            # MindSpore keeps weights in files beside the model past TOTAL_SAVE KiB; a small model
            # takes the same path when that threshold is 0.
            serialization.TOTAL_SAVE = 0
        ms.export(net, ms.Tensor(x), file_name=str(OUT / name), file_format="MINDIR")
        serialization.TOTAL_SAVE = 1024 * 1024
        for written in OUT.glob(f"{name}*"):  # MindSpore writes them read-only
            for path in [written, *written.glob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
        if network is SmallResNet:
            twin = SmallResNet(block=BasicBlock)
            twin.set_train(False)
            ms.load_param_into_net(twin, net.parameters_dict(), strict_load=True)
            net = twin
        if network in EXPORT_ONLY:
            np.savez(OUT / f"{name}.npz", x=x)
            continue
        outputs = net(ms.Tensor(x))
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        arrays = {f"y{i}": out.asnumpy() for i, out in enumerate(outputs)}
        np.savez(OUT / f"{name}.npz", x=x, **arrays)
        print(name, {key: value.shape for key, value in arrays.items()}, file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
