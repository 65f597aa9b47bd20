"""Common layers and tensor ops through the PyTorch frontend, each against eager PyTorch at O0
and O3: normalizations over a batch's own statistics (instance norm), selections (topk, sort),
masks, reductions without a dim, norms, the activations torch decomposes, tiling and flipping,
bicubic and nearest-exact resizing, grid sampling, pools of unbatched input and their indices, padding modes,
local response norm, indexing by several tensors and the writes (index_put, scatters, slice
assignment), and ops along a dim of 0-d tensors."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import ge


class _Apply(nn.Module):
    def __init__(self, function: Callable[..., torch.Tensor]):
        super().__init__()
        self.function = function

    def forward(self, *inputs):
        return self.function(*inputs)


class _Bags(nn.Module):
    """EmbeddingBag in each mode, by offsets (an empty bag among them) and by rows of a 2-D
    input, with the last offset included, a padding index (a bag of it alone is empty) and
    per-sample weights. An included last offset short of the count of indices ends no bag: ATen's
    kernel ends the last bag with the indices."""

    def __init__(self):
        super().__init__()
        self.sums = nn.EmbeddingBag(10, 6, mode="sum")
        self.means = nn.EmbeddingBag(10, 6, mode="mean", padding_idx=3)
        self.maxima = nn.EmbeddingBag(10, 6, mode="max", include_last_offset=True)

    def forward(self, x):
        ids = (x.flatten()[:12].abs() * 4).long() % 10
        offsets, last_included = torch.tensor([0, 3, 3, 7]), torch.tensor([0, 2, 2, 9, 11])
        weights = x.flatten()[20:32]
        return tuple(
            bag(ids, offsets, per_sample_weights=weights if bag is self.sums else None)
            for bag in (self.sums, self.means)
        ) + (
            self.maxima(ids, last_included),
            self.sums(ids.view(3, 4)),
            self.means(ids.view(4, 3)),
            self.means(torch.full([2, 2], 3)),
            F.embedding_bag(ids, self.sums.weight, offsets, mode="max", padding_idx=3),
        )


class _ProjectedLSTMs(nn.Module):
    """LSTMs with projections (proj_size): one layer, and two bidirectional layers without
    biases from given initial states, sequence-first."""

    def __init__(self):
        super().__init__()
        self.one = nn.LSTM(8, 6, proj_size=3, batch_first=True)
        self.two = nn.LSTM(8, 5, 2, bias=False, bidirectional=True, proj_size=2)

    def forward(self, x):
        h0, c0 = x[:, :4, :2].permute(1, 0, 2).contiguous(), x[:, :4, 2:7].permute(1, 0, 2).contiguous()
        return self.one(x), self.two(x.transpose(0, 1), (h0, c0))


class _Volumes(nn.Module):
    """3-D convolutions (grouped, strided, dilated), a transposed one and max pools."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 4, 3, padding=1, groups=2)
        self.grown = nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1, output_padding=1, dilation=(1, 2, 1))

    def forward(self, x):
        return (
            self.conv(x),
            F.conv3d(x, self.conv.weight[:, :1].repeat(1, 2, 1, 1, 1), stride=(1, 2, 2), dilation=(2, 1, 1)),
            self.grown(x),
            F.max_pool3d(x, 2, ceil_mode=True),
            F.max_pool3d(x, (1, 3, 3), (1, 2, 2), (0, 1, 1)),
        )


def _cases() -> dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]]:
    """name -> (a module maker, the input shape)."""
    image, sequence = (2, 4, 6, 6), (2, 5, 8)
    return {
        "instance norm": (lambda: nn.InstanceNorm2d(4, affine=True), image),
        "instance norm without affine": (lambda: nn.InstanceNorm2d(4), image),
        "conv, instance norm, relu": (
            lambda: nn.Sequential(
                nn.Conv2d(4, 8, 3, padding=1), nn.InstanceNorm2d(8, affine=True), nn.ReLU()
            ),
            image,
        ),
        "batch norm without running statistics": (
            lambda: nn.BatchNorm2d(4, track_running_stats=False),
            image,
        ),
        "topk": (lambda: _Apply(lambda x: torch.topk(x, 3, -1)), sequence),
        "topk smallest along 1": (lambda: _Apply(lambda x: torch.topk(x, 2, 1, largest=False)), sequence),
        "sort": (lambda: _Apply(lambda x: torch.sort(x, -1)), sequence),
        "sort descending": (lambda: _Apply(lambda x: torch.sort(x, 1, descending=True)), sequence),
        "bidirectional GRU": (lambda: nn.GRU(8, 6, batch_first=True, bidirectional=True), sequence),
        "std": (lambda: _Apply(lambda x: x.std(-1)), sequence),
        "biased variance kept": (
            lambda: _Apply(lambda x: x.var((1, 2), keepdim=True, unbiased=False)),
            sequence,
        ),
        "mean, sum, max, min of all": (
            lambda: _Apply(lambda x: x.mean() + x.sum() + x.max() - x.min()),
            sequence,
        ),
        "product along 1": (lambda: _Apply(lambda x: x.prod(1)), sequence),
        "normalize": (lambda: _Apply(lambda x: F.normalize(x, dim=-1)), sequence),
        "norms 1 and inf": (
            lambda: _Apply(
                lambda x: torch.linalg.vector_norm(x, 1) + torch.linalg.vector_norm(x, float("inf"))
            ),
            sequence,
        ),
        "softplus": (lambda: _Apply(lambda x: F.softplus(x * 10)), sequence),
        "softplus beta 2 threshold 1": (lambda: nn.Softplus(2.0, 1.0), sequence),
        "selu": (lambda: nn.SELU(), sequence),
        "log1p": (lambda: _Apply(lambda x: torch.log1p(x.abs())), sequence),
        "masks and, or, xor": (
            lambda: _Apply(lambda x: ((((x > 0) & (x < 1)) | (x < -1)) ^ (x > 0.5)).float()),
            sequence,
        ),
        "integer and": (lambda: _Apply(lambda x: (x * 10).int() & 6), sequence),
        "repeat": (lambda: _Apply(lambda x: x.repeat(1, 2, 1)), sequence),
        "repeat into more dims": (lambda: _Apply(lambda x: x.repeat(2, 1, 2, 1)), sequence),
        "flip": (lambda: _Apply(lambda x: x.flip(1, 2)), sequence),
        "index_select": (lambda: _Apply(lambda x: x.index_select(1, torch.tensor([0, 2]))), sequence),
        # A 0-d index keeps the dim, with size 1.
        "index_select by a 0-d index": (
            lambda: _Apply(lambda x: x.index_select(-1, torch.tensor(3))),
            sequence,
        ),
        "adaptive max pool to 2x2": (lambda: nn.AdaptiveMaxPool2d(2), image),
        "adaptive max pool to 1x1": (lambda: nn.AdaptiveMaxPool2d(1), image),
        "unbatched pools": (
            lambda: _Apply(
                lambda x: (
                    F.max_pool2d(x, 2),
                    F.avg_pool2d(x, 3, 1, 1),
                    F.adaptive_avg_pool2d(x, 2),
                    F.adaptive_avg_pool2d(x, 1),
                    F.adaptive_max_pool2d(x, 3),
                    F.adaptive_max_pool2d(x, 1),
                )
            ),
            image[1:],
        ),
        # ATen's indices count within each (H, W) plane, padding included in no count.
        "max pool indices": (lambda: _Apply(lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True)), image),
        "max pool indices used": (
            lambda: _Apply(lambda x: F.max_pool2d(x, 2, return_indices=True)[1] * 2),
            image,
        ),
        "unbatched max pool indices": (
            lambda: _Apply(lambda x: F.max_pool2d(x, 2, return_indices=True)),
            image[1:],
        ),
        "adaptive max pool indices": (
            lambda: _Apply(
                lambda x: (
                    F.adaptive_max_pool2d(x, 3, return_indices=True),
                    F.adaptive_max_pool2d(x, 1, return_indices=True),
                )
            ),
            image,
        ),
        "clamp between tensors": (
            lambda: _Apply(lambda x: x.clamp(torch.tensor(-0.5), torch.tensor(0.5))),
            sequence,
        ),
        "round, sign, isnan": (
            lambda: _Apply(lambda x: torch.round(x * 3) + torch.sign(x) + torch.isnan(x).float()),
            sequence,
        ),
        "power of a number": (lambda: _Apply(lambda x: torch.pow(2.0, x)), sequence),
        "remainder and fmod": (
            lambda: _Apply(lambda x: torch.remainder(x * 5, 3) + torch.fmod(x * 5, 3)),
            sequence,
        ),
        "tan, atan, sinh, asinh": (
            lambda: _Apply(lambda x: torch.tan(x) + torch.atan(x) + torch.sinh(x) + torch.asinh(x)),
            sequence,
        ),
        "full_like": (lambda: _Apply(lambda x: x + torch.full_like(x, 2.5)), sequence),
        "bicubic resize": (lambda: _Apply(lambda x: F.interpolate(x, size=(9, 4), mode="bicubic")), image),
        "bicubic resize, corners aligned": (
            lambda: _Apply(lambda x: F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=True)),
            image,
        ),
        "bicubic resize by 1.7, corners aligned": (
            lambda: _Apply(lambda x: F.interpolate(x, scale_factor=1.7, mode="bicubic", align_corners=True)),
            image,
        ),
        "integers clamped between floats": (
            lambda: _Apply(lambda x: (x * 3).long().clamp(torch.tensor(-0.5), torch.tensor(2.5))),
            sequence,
        ),
        "nearest-exact resize": (
            lambda: _Apply(lambda x: F.interpolate(x, size=(9, 4), mode="nearest-exact")),
            image,
        ),
        "atan2": (lambda: _Apply(lambda x: torch.atan2(x[0], x[1])), sequence),
        "any and all": (
            lambda: _Apply(
                lambda x: (
                    (x > 0).any(),
                    (x > 0).all(1),
                    x.any(-1, keepdim=True),
                    (x > -3).all(dim=(0, 1)),
                    (x > -3).all(),
                    (x > 0).to(torch.uint8).any(1),
                )
            ),
            sequence,
        ),
        "one_hot": (lambda: _Apply(lambda x: F.one_hot((x.abs() * 2).long().clamp(max=4), 5)), sequence),
        "circular padding": (lambda: _Apply(lambda x: F.pad(x, (1, 2, 2, 1), mode="circular")), image),
        "reflect and replicate padding": (
            lambda: _Apply(
                lambda x: (F.pad(x, (1, 2, 2, 1), mode="reflect"), F.pad(x, (0, 3, 1, 0), mode="replicate"))
            ),
            image,
        ),
        "conv with circular padding": (lambda: nn.Conv2d(4, 3, 3, padding=1, padding_mode="circular"), image),
        "local response norm": (lambda: nn.LocalResponseNorm(3), image),
        "local response norm of a sequence": (
            lambda: nn.LocalResponseNorm(2, alpha=1e-2, beta=0.5, k=2.0),
            sequence,
        ),
        # Several index tensors: together after a sliced dim, apart (their dims go first), and
        # negative; their writes (index_put, with accumulate), as `x[i, j] = v` and index_add give.
        "index by several tensors": (
            lambda: _Apply(
                lambda x: (
                    x[:, torch.tensor([[0, 4], [2, -1]]), torch.tensor([1, 7])],
                    x[torch.tensor([1, 0, 1]), :, torch.tensor([-2])],
                    x[torch.tensor([1, 0]), torch.tensor([3, 4])],
                )
            ),
            sequence,
        ),
        "index_put by several tensors": (
            lambda: _Apply(
                lambda x: (
                    _written_apart(x),
                    x.index_put((torch.tensor([0, 0, 1]), torch.tensor([1, 1, -1])), torch.tensor(1.5), True),
                    x.index_add(2, torch.tensor([0, 3, 3, 1]), x[..., :4], alpha=2.0),
                )
            ),
            sequence,
        ),
        "unfold and fold": (
            lambda: nn.Sequential(
                nn.Unfold(3, dilation=(1, 2), padding=1, stride=2), nn.Fold((6, 6), (3, 3), (1, 2), 1, 2)
            ),
            image,
        ),
        "trilinear and 3-D nearest resize": (
            lambda: _Apply(
                lambda x: (
                    F.interpolate(x, size=(3, 7, 5), mode="trilinear"),
                    F.interpolate(x, scale_factor=(2, 1, 1.5)),
                )
            ),
            (2, 2, 4, 5, 6),
        ),
        "scatter, scatter_add and scatter_reduce": (
            lambda: _Apply(
                lambda x: (
                    x.scatter(1, torch.tensor([[[4, 0, 2]], [[1, 3, 0]]]), x[:, :1, 3:] * 10),
                    x.scatter(-1, torch.tensor([[[7], [0], [2], [5], [3]]] * 2), -7.0),
                    x.scatter_add(1, torch.tensor([[[0, 1, 2, 1, 0, 2, 2, 4]] * 5] * 2), x),
                    *(
                        x.scatter_reduce(
                            1, torch.tensor([[[0, 1, 2, 1, 0, 2, 2, 0]] * 3] * 2), x[:, :3], op, **kw
                        )
                        for op in ("sum", "prod", "mean", "amax", "amin")
                        for kw in ({}, {"include_self": False})
                    ),
                )
            ),
            sequence,
        ),
        "writes into slices": (lambda: _Apply(_written_slices), sequence),
        "3-D convolutions and max pools": (_Volumes, (2, 2, 5, 6, 6)),
        "adaptive pools to sizes not dividing the input": (
            lambda: _Apply(
                lambda x: (
                    F.adaptive_avg_pool2d(x, (4, 5)),
                    F.adaptive_max_pool2d(x, (5, 4)),
                    F.adaptive_avg_pool2d(x, (None, 4)),
                    F.adaptive_avg_pool1d(x.flatten(2), 7),
                    F.adaptive_max_pool1d(x.flatten(2), 5),
                    F.adaptive_avg_pool2d(x[0], 4),
                )
            ),
            image,
        ),
        "average pools with a divisor": (
            lambda: _Apply(
                lambda x: (
                    F.avg_pool2d(x, 2, divisor_override=3),
                    F.avg_pool2d(x, 3, 2, 1, divisor_override=5),
                )
            ),
            image,
        ),
        "exp2, log2, log10, trunc, celu": (
            lambda: _Apply(
                lambda x: (
                    torch.exp2(x),
                    torch.log2(x.abs() + 0.1),
                    torch.log10(x.abs() + 0.1),
                    torch.trunc(x * 3),
                    F.celu(x * 3, 1.3),
                )
            ),
            sequence,
        ),
        "shifts": (lambda: _Apply(lambda x: ((x * 50).long() >> 2, (x * 50).int() << 3)), sequence),
        # ATen multiplies and adds flags in isfinite, isclose and user code.
        "arithmetic of flags": (
            lambda: _Apply(
                lambda x: (
                    torch.isfinite(x / (x - x[:, :1])),
                    torch.isclose(x, x.round(), atol=0.2),
                    (x > 0) * (x < 1),
                    (x > 0) + (x < -1),
                )
            ),
            sequence,
        ),
        "rms_norm over two dims": (lambda: nn.RMSNorm((5, 8), eps=1e-5), sequence),
        "var_mean and std_mean": (
            lambda: _Apply(lambda x: (*torch.var_mean(x, 1), *torch.std_mean(x, (2, 0), keepdim=True))),
            sequence,
        ),
        "norms of orders 3, 0.5, 0 and -inf": (
            lambda: _Apply(
                lambda x: (
                    torch.norm(x, 3, dim=-1),
                    torch.linalg.vector_norm(x, 0.5, dim=(0, 2)),
                    torch.linalg.vector_norm(x.relu(), 0),
                    torch.linalg.vector_norm(x, -float("inf"), dim=1, keepdim=True),
                )
            ),
            sequence,
        ),
        "attention over 3-D and 5-D tensors": (
            lambda: _Apply(
                lambda x: (
                    F.scaled_dot_product_attention(x, x * 0.5, x, attn_mask=x[:, :, :5] > 0),
                    F.scaled_dot_product_attention(
                        x[:, None, :4], x[:, None, 1:], x[:, None, 1:], is_causal=True
                    ),
                    F.scaled_dot_product_attention(
                        x.view(2, 1, 5, 2, 4), x.view(2, 1, 5, 2, 4), x.view(2, 1, 5, 2, 4)
                    ),
                )
            ),
            sequence,
        ),
        "diagonal": (
            lambda: _Apply(
                lambda x: (
                    x.diagonal(),
                    x.diagonal(2, 1, 2),
                    x.diagonal(-3, -1, 1),
                    torch.einsum("bii->b", x[:, :, :5]),
                )
            ),
            sequence,
        ),
        # Points of the grid reach 1.5 past the edges, so every padding mode is used.
        "grid_sample, every mode and padding": (
            lambda: _Apply(
                lambda x: tuple(
                    F.grid_sample(
                        x, torch.tanh(x[:, :2].permute(0, 2, 3, 1)) * 1.5, mode, padding, align_corners=align
                    )
                    for mode in ("bilinear", "nearest", "bicubic")
                    for padding in ("zeros", "border", "reflection")
                    for align in (False, True)
                )
            ),
            image,
        ),
        "grid_sample in 3-D": (
            lambda: _Apply(
                lambda x: tuple(
                    F.grid_sample(
                        x, torch.tanh(x[:, :, :3].permute(0, 2, 3, 4, 1)) * 1.2, mode, padding, False
                    )
                    for mode, padding in (
                        ("bilinear", "zeros"),
                        ("nearest", "border"),
                        ("bilinear", "reflection"),
                    )
                )
            ),
            (2, 3, 4, 5, 6),
        ),
        # Rounded values make ties, whose indices are the latest; the NaN stays in cummax and
        # cummin from where it occurs, with its own index.
        "cumprod, cummax, cummin, logcumsumexp": (
            lambda: _Apply(
                lambda x: (
                    torch.cumprod(x, 1),
                    torch.cumprod((x * 2).long(), -1),
                    *torch.cummax(x.round(), -1),
                    *torch.cummin(x.round(), 1),
                    *torch.cummax(torch.where(x > 1.5, torch.nan, x), 2),
                    *torch.cummin(torch.where(x > 1.5, torch.nan, x), 2),
                    *torch.cummax((x * 2).long(), 0),
                    *torch.cummin(x > 0, -1),
                    torch.logcumsumexp(x * 300, 1),
                    torch.logcumsumexp(x, -1),
                )
            ),
            sequence,
        ),
        # Distinct values, so that each index is defined; medians of odd and even counts.
        "median and kthvalue": (
            lambda: _Apply(
                lambda x: (
                    x.median(),
                    x[:, :4].median(),
                    *x.median(1),
                    *x.median(-1, keepdim=True),
                    *torch.kthvalue(x, 3),
                    *torch.kthvalue(x, 1, 0, True),
                    *torch.kthvalue(x, 5, 1),
                    *(x * 100).long().median(2),
                    torch.tensor(2.5).median(),
                    # NaN: median gives it, with its first index; kthvalue ranks it last (which
                    # of several NaN it picks depends on ATen's selection, so one per row here).
                    torch.where(x > 1.5, torch.nan, x).median(),
                    *torch.where(x > 1.2, torch.nan, x).median(-1),
                    *torch.kthvalue(torch.where((x > 0) & (torch.arange(8) == 3), torch.nan, x), 8),
                )
            ),
            sequence,
        ),
        # Past 25 points a side torch.cdist of order 2 goes through a matrix product.
        "cdist of orders 1, 2, inf, 0, 3 and 0.5": (
            lambda: _Apply(
                lambda x: (
                    *(torch.cdist(x[:, :3], x[:, 1:], p) for p in (1.0, 2.0, float("inf"), 0.0, 3.0, 0.5)),
                    torch.cdist(x.reshape(80, 1), x.reshape(80, 1)[::2] + 0.5),
                    torch.cdist(x[0], x[1], compute_mode="use_mm_for_euclid_dist"),
                    torch.cdist(x[:, :4] + 1.0, x[:1], compute_mode="donot_use_mm_for_euclid_dist"),
                )
            ),
            sequence,
        ),
        "addmv": (
            lambda: _Apply(
                lambda x: (
                    torch.addmv(x[0, :, 0], x[0], x[1, 0]),
                    torch.addmv(x[1, :, 1], x[1], x[0, 2], beta=0.5, alpha=-2.0),
                    torch.addmv(x[0, 0] / 0, x[0].T, x[1, :, 2], beta=0),
                )
            ),
            sequence,
        ),
        # Rounded values fall on boundaries (left and right differ there) and NaN goes last.
        "searchsorted and bucketize": (
            lambda: _Apply(
                lambda x: (
                    torch.searchsorted(torch.tensor([-1.0, 0.0, 0.0, 0.5, 1.0]), x.round()),
                    torch.searchsorted(torch.tensor([-1.0, 0.0, 0.0, 0.5, 1.0]), x.round(), right=True),
                    torch.searchsorted(
                        x.sort(-1).values.round(), x[..., :3].round().contiguous(), side="right"
                    ),
                    torch.searchsorted(x.sort(-1).values, x[..., :3].contiguous(), out_int32=True),
                    torch.searchsorted(torch.tensor([1, 2, 4]), (x * 3).long()),
                    torch.searchsorted(torch.tensor([0.0, 1.0]), 0.5),
                    torch.searchsorted(torch.tensor([0, 1, 1, 3]), 0.5, right=True),
                    torch.bucketize(1, torch.tensor([0, 1, 1, 3])),
                    torch.bucketize(torch.where(x > 1.5, torch.nan, x), torch.tensor([-0.5, 0.0, 0.5])),
                    torch.bucketize(x.round(), torch.tensor([-1.0, 0.0, 1.0]), right=True),
                    torch.bucketize((x * 3).long(), torch.tensor([-1, 0, 2]), out_int32=True),
                )
            ),
            sequence,
        ),
        "EmbeddingBag": (_Bags, sequence),
        "adaptive 3-D pools": (
            lambda: _Apply(
                lambda x: (
                    F.adaptive_avg_pool3d(x, (2, 3, 4)),
                    F.adaptive_max_pool3d(x, (3, 2, 4)),
                    F.adaptive_avg_pool3d(x, 1),
                    F.adaptive_max_pool3d(x, 1),
                    F.adaptive_avg_pool3d(x, (None, 3, 2)),
                    F.adaptive_max_pool3d(x[:, :, :4, :4], 2),
                    F.adaptive_avg_pool3d(x[0], (3, 4, 5)),
                    F.adaptive_max_pool3d(x[1], 2),
                )
            ),
            (2, 3, 5, 6, 7),
        ),
        "LSTM with projections": (_ProjectedLSTMs, sequence),
    }


def _written_slices(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[:, 1:3] = 0.5
    y[..., ::3] = y[..., 1::3] * 2
    y[:, -1] = x[:, 0]
    y[0] = 7.0
    return y


def _written_apart(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[torch.tensor([1, 0]), :, torch.tensor([-2, 0])] = x[0, :, :2].T * 3
    return y


CASES = _cases()


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("name", list(CASES))
def test_layer_matches_eager_pytorch(name, level):
    make, shape = CASES[name]
    torch.manual_seed(0)
    assert_matches_eager(make().eval(), (torch.randn(*shape),), level)


def assert_matches_eager(
    model: nn.Module, inputs: tuple[torch.Tensor, ...], level: int, rtol: float = 1e-4, atol: float = 1e-5
) -> list[np.ndarray]:
    """`model` imported and compiled at `level` gives eager PyTorch's results: their shapes and
    dtypes, integers and flags exactly, floats within the tolerances. Returns ge's results."""
    graph = ge.GraphParser().parse_pytorch(model, inputs)
    with torch.no_grad():
        expected = [r.numpy() for r in torch.utils._pytree.tree_leaves(model(*inputs))]
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(graph, optimization_level=level))
    actual = executor.run([x.numpy() for x in inputs])
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        assert got.shape == want.shape and got.dtype == want.dtype
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return actual


def test_attention_with_a_key_padding_mask_matches_eager():
    """nn.MultiheadAttention and TransformerEncoderLayer with `key_padding_mask` (a
    `full_like` of -inf where the mask holds)."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dropout=0.0).eval()
    model = _Apply(lambda x, mask: layer(x, src_key_padding_mask=mask)).eval()
    x, mask = torch.randn(2, 5, 8), torch.zeros(2, 5, dtype=torch.bool)
    mask[1, 3:] = True
    graph = ge.GraphParser().parse_pytorch(model, (x, mask))
    with torch.no_grad():
        want = model(x, mask).numpy()
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(graph, optimization_level=3))
    (got,) = executor.run([x.numpy(), mask.numpy()])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_an_elu_with_an_input_scale_is_refused_naming_it():
    scaled = _Apply(lambda x: torch.ops.aten.elu(x, 1.0, 1.0, 2.0))
    with pytest.raises(ge.errors.UnsupportedOperatorError, match="input_scale 2.0"):
        ge.GraphParser().parse_pytorch(scaled.eval(), (torch.randn(3),))


def test_symbolic_bounds_other_than_the_axis_own_are_refused_not_taken_whole():
    """`x[:, : x.shape[1] - 1]` and a static 1 expanded to a symbolic batch: both were imported
    as if the bound were the axis' own size."""
    length = torch.export.Dim("length", min=3, max=64)
    shorter = _Apply(lambda x: x[:, : x.shape[1] - 1] * 2).eval()
    with pytest.raises(ge.errors.UnsupportedOperatorError, match="ending at .*, a symbolic size other"):
        ge.GraphParser().parse_pytorch(shorter, (torch.randn(2, 6, 3),), dynamic_shapes=(({1: length},),))
    token = torch.zeros(1, 3)
    grown = _Apply(lambda x: token.expand(x.shape[0], 3) + x).eval()
    batch = torch.export.Dim("batch", min=2, max=64)
    with pytest.raises(
        ge.errors.UnsupportedOperatorError, match="expanding axis 0 of size 1 to the symbolic"
    ):
        ge.GraphParser().parse_pytorch(grown, (torch.randn(4, 3),), dynamic_shapes=(({0: batch},),))


@pytest.mark.parametrize("level", [0, 3])
def test_log1p_keeps_tiny_values(level):
    """log1p(x) is x to float32's precision for |x| below 1e-6; `log(1 + x)` rounds 1 + x first
    and was 4.6% off at 1e-6 and 0 at 1e-8."""
    x = torch.tensor([1e-6, -1e-6, 3e-7, 1e-7, -5e-8, 1e-8, 0.0, 0.5, 20.0])
    assert_matches_eager(_Apply(torch.log1p).eval(), (x,), level, rtol=2e-7, atol=0)


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize(("dtype", "rtol"), [(torch.float32, 2e-7), (torch.float64, 1e-15)])
def test_expm1_keeps_tiny_values_and_its_limits(dtype, rtol, level):
    """expm1(+-1e-10) keeps every digit (x + x^2 / 2), where `exp(x) - 1` rounds exp(x) to 1
    first and gives 0; it is -1 at -inf and far below 0, inf at inf and past the dtype's range
    (89 in float32, 710 in float64), NaN for NaN, and a zero keeps its sign: as eager torch and
    np.expm1."""
    inf, nan = float("inf"), float("nan")
    values = [1e-10, -1e-10, 1e-6, -1e-6, 3e-8, 0.0, -0.0, 0.5, -0.5, 20.0, 88.0, 89.0, 700.0, 710.0]
    x = torch.tensor([*values, -20.0, -100.0, inf, -inf, nan], dtype=dtype)
    (got,) = assert_matches_eager(_Apply(torch.expm1).eval(), (x,), level, rtol=rtol, atol=0)
    with np.errstate(over="ignore"):
        want = np.expm1(x.numpy())
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got[-4:-1], [-1.0, inf, -1.0])


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize(("dtype", "rtol"), [(torch.float32, 2e-7), (torch.float64, 1e-15)])
def test_erfc_keeps_its_relative_precision_far_out(dtype, rtol, level):
    """erfc(x) for large x is tiny but exact to the last digit, where `1 - erf(x)` is 0 from x = 4
    in float32 (6 in float64); it is 2 far below 0, 0 past the dtype's range (10.05 in float32
    subnormals, 27.3 in float64), NaN for NaN: as eager torch and math.erfc."""
    inf, nan = float("inf"), float("nan")
    values = [0.0, -0.0, 1e-10, 0.2, 0.5, 0.9, 1.1, 2.0, 3.0, 4.0, 5.5, 8.0, 9.0, 20.0, 26.5, 30.0]
    x = torch.tensor([*values, -0.5, -1.0, -3.0, -7.0, -100.0, inf, -inf, nan], dtype=dtype)
    (got,) = assert_matches_eager(_Apply(torch.erfc).eval(), (x,), level, rtol=rtol, atol=0)
    want = np.array([math.erfc(v) for v in x.tolist()]).astype(x.numpy().dtype)
    normal = np.abs(want) >= np.finfo(want.dtype).tiny
    np.testing.assert_allclose(got[normal], want[normal], rtol=rtol, atol=0)
    np.testing.assert_array_equal(got[-3:-1], [0.0, 2.0])


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64, torch.int32])
def test_log2_and_log10_are_exact_on_powers(dtype, level):
    """log2 and log10 of an exact power of their base are that integer, as eager torch: `log(x) /
    log(b)` gave 13.000001 for float32 log2(2**13), -9.99 for float16 log2(2**-10), and floor of
    log2(2**15) 14. An integer input is promoted to float (it failed verification)."""
    if dtype.is_floating_point:
        twos = torch.tensor([2.0**k for k in range(-10, 16)], dtype=dtype)
        tens = torch.tensor([10.0**k for k in range(-4, 5)], dtype=dtype)
    else:
        twos = torch.tensor([2**k for k in range(0, 16)], dtype=dtype)
        tens = torch.tensor([10**k for k in range(0, 5)], dtype=dtype)
    model = _Apply(lambda a, b: (torch.log2(a), torch.log2(a).floor(), torch.log10(b))).eval()
    exponents = assert_matches_eager(model, (twos, tens), level, rtol=0, atol=0)
    np.testing.assert_array_equal(exponents[1], np.log2(twos.double().numpy()))


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_float_floor_division_by_zero_is_the_true_quotient(dtype, level):
    """ATen's float floor division gives a / b where b is 0: +-inf, and NaN for 0 / 0 (the
    remainder, NaN by 0, made every one NaN); elsewhere Python's floor division (1 // 0.1 is 9)."""
    a = torch.tensor([5.0, -5.0, 0.0, -0.0, 5.0, float("inf"), 1.0, 1.0, 7.0, -7.0], dtype=dtype)
    b = torch.tensor([0.0, 0.0, 0.0, 0.0, -0.0, 0.0, 0.1, float("inf"), 2.0, 2.0], dtype=dtype)
    (got,) = assert_matches_eager(_Apply(torch.floor_divide).eval(), (a, b), level, rtol=0, atol=0)
    np.testing.assert_array_equal(got[:6], [np.inf, -np.inf, np.nan, np.nan, -np.inf, np.inf])


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_float_floor_division_matches_aten_bit_for_bit(dtype, level):
    """Infinite divisors (-1 // inf is -1: the divisor-signed remainder is inf there and the
    quotient was NaN), the sign of a zero quotient (-1 // -inf is +0, -0 // 3 is -0), and 4,000
    quotients over ten decades, where rounding the quotient half to even differed from ATen's
    floor-plus-one-past-a-half in float32 (11922.445 // 0.0018683368 is 6381313)."""
    inf = float("inf")
    a = [-1.0, 1.0, -1.0, 1.0, 3.0, -0.0, 0.0, 11922.4453125]
    b = [inf, inf, -inf, -inf, -inf, 3.0, -3.0, 0.0018683368107303977]
    rng = np.random.default_rng(3)
    spread = rng.standard_normal((2, 4000)) * 10.0 ** rng.integers(-5, 6, (2, 4000))
    x = torch.tensor(np.concatenate([a, spread[0]]), dtype=dtype)
    y = torch.tensor(np.concatenate([b, spread[1]]), dtype=dtype)
    (got,) = assert_matches_eager(_Apply(torch.floor_divide).eval(), (x, y), level, rtol=0, atol=0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(torch.floor_divide(x, y).numpy()))


@pytest.mark.parametrize("level", [0, 3])
def test_the_norm_of_order_0_counts_nan_as_nonzero(level):
    """vector_norm(ord=0) counts the elements other than 0, NaN among them, as eager torch (`|x| >
    0` left NaN out); cdist(p=0), which ATen sums as min(ceil(|d|), 1), is NaN from a NaN."""
    nan = float("nan")
    x = torch.tensor([[1.0, nan, 0.0, -0.0], [2.0, 0.0, -2.0, 0.0], [nan, nan, -2.0, 0.0]])
    y = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, nan, 5.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    model = _Apply(lambda a, b: (torch.linalg.vector_norm(a, 0, dim=1), torch.cdist(a, b, p=0))).eval()
    assert_matches_eager(model, (x, y), level, rtol=0, atol=0)


def test_an_error_of_torch_decompositions_is_a_ge_error_naming_them():
    """torch's run_decompositions raises a bare AttributeError on attention over inputs that
    share storage (a query sliced from the keys); parse_pytorch names what failed instead."""
    keys = torch.randn(2, 3, 2, 4, 8)
    model = _Apply(lambda q, k: F.scaled_dot_product_attention(q, k, k)).eval()
    with pytest.raises(ge.errors.InvalidModelError, match=r"could not decompose .*\(AttributeError\)"):
        ge.GraphParser().parse_pytorch(model, (keys[:1], keys))


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_truncation_keeps_the_sign_of_zero_and_the_infinities(dtype, level):
    """trunc and a division of rounding_mode "trunc" give -0.0 for -0.5 and -0.0 (trunc gave
    +0.0), and +-inf for an infinite quotient (`q - fmod(q, 1)` gave NaN), as eager torch."""
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([-2.5, -0.5, -0.0, 0.0, 0.7, 3.9, -3.9, inf, -inf, nan], dtype=dtype)
    y = torch.tensor([2.0, 2.0, 1.0, -3.0, 0.0, -0.0, 0.5, 1.0, 2.0, 1.0], dtype=dtype)
    model = _Apply(lambda a, b: (torch.trunc(a), torch.div(a, b, rounding_mode="trunc"))).eval()
    results = assert_matches_eager(model, (x, y), level, rtol=0, atol=0)
    with torch.no_grad():
        wants = model(x, y)
    for got, want in zip(results, wants, strict=True):
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want.numpy()))


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("rounding", [torch.trunc, torch.floor, torch.ceil, torch.round])
def test_rounding_integers_gives_the_input(rounding, level):
    """torch.trunc, floor, ceil and round return an integer tensor as it is; ge built the graph's
    float rounding ops on it, which failed verification."""
    x = torch.tensor([-3, 0, 4, 2**40], dtype=torch.int64)
    assert_matches_eager(_Apply(lambda a: rounding(a) * 2).eval(), (x,), level)


@pytest.mark.parametrize("level", [0, 3])
def test_attention_over_a_broadcast_batch_matches_eager(level):
    """5-D and 3-D attention with a query of batch 1 against keys of batch 2 (and a mask of its
    own batch): each was reshaped to 4-D by its own shape and failed verification."""
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 3, 2, 4, 8), torch.randn(2, 3, 2, 6, 8), torch.randn(2, 1, 2, 6, 5)
    mask = torch.randn(3, 1, 4, 6)
    five = _Apply(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)).eval()
    assert_matches_eager(five, (q, k, v, mask), level)
    three = _Apply(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)).eval()
    assert_matches_eager(three, (q[:, 0, 0], k[:, 0, 0], v[:, 0, 0]), level)


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8])
def test_bitwise_shifts_by_a_python_int(dtype, level):
    """bitwise_left_shift and bitwise_right_shift by a Python int (their Tensor_Scalar forms,
    which were refused), as eager torch."""
    x = torch.tensor([0, 1, 5, 100, 127], dtype=dtype)
    model = _Apply(lambda a: (torch.bitwise_left_shift(a, 2), torch.bitwise_right_shift(a, 1))).eval()
    assert_matches_eager(model, (x,), level)


ON_A_0D_TENSOR: dict[str, Callable[[torch.Tensor], object]] = {
    "sum(0)": lambda x: x.sum(0),
    "sum(-1)": lambda x: x.sum(-1),
    "mean(-1, keepdim)": lambda x: x.mean(-1, keepdim=True),
    "amax(0), amin(-1), prod(0)": lambda x: x.amax(0) + x.amin(-1) + x.prod(0),
    "std(0, unbiased=False)": lambda x: x.std(0, unbiased=False),
    "var_mean(0, correction=0)": lambda x: torch.var_mean(x, 0, correction=0),
    "var_mean(-1, keepdim)": lambda x: torch.var_mean(x, -1, correction=0, keepdim=True),
    "std_mean(0, correction=0)": lambda x: torch.std_mean(x, 0, correction=0),
    "vector_norm(dim=0)": lambda x: torch.linalg.vector_norm(x, dim=0),
    "max(0)": lambda x: x.max(0),
    "argmax(0, keepdim)": lambda x: x.argmax(0, keepdim=True),
    "cumsum(-1)": lambda x: x.cumsum(-1),
    "gather(0)": lambda x: x.gather(0, torch.tensor(0)),
    "topk(1, 0)": lambda x: torch.topk(x, 1, 0),
    "sort(-1)": lambda x: torch.sort(x, -1),
    "softmax(0), log_softmax(-1)": lambda x: x.softmax(0) + x.log_softmax(-1),
    "flip(0)": lambda x: x.flip(0),
    "index_select(0)": lambda x: x.index_select(0, torch.tensor([0])),
}


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("name", list(ON_A_0D_TENSOR))
def test_dims_0_and_minus_1_of_a_0d_tensor_are_its_one_axis(name, level):
    """ATen takes dim 0 or -1 of a 0-d tensor as a one-element axis; the converters wrapped the
    dim modulo the rank (0), and the graph ops refuse an axis of a 0-d tensor."""
    assert_matches_eager(_Apply(ON_A_0D_TENSOR[name]).eval(), (torch.tensor(-1.5),), level)


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_sign_of_nan_is_zero_as_in_eager_torch(dtype, level):
    """torch.sign gives 0 for NaN; the graph's sign (ONNX's, as onnxruntime computes it) keeps NaN."""
    x = torch.tensor([float("nan"), -2.5, -0.0, 0.0, 3.0, float("inf"), -float("inf")])
    x = x.nan_to_num(7.0, 9.0, -9.0).to(dtype) if dtype == torch.int32 else x.to(dtype)
    assert_matches_eager(_Apply(torch.sign).eval(), (x,), level, rtol=0, atol=0)


def test_a_result_ge_does_not_compute_is_refused_naming_its_node():
    """A batch norm's saved mean (for training's backward) is not computed; a program that
    reads it was refused with an AttributeError of the reading converter."""
    mean, var = torch.zeros(4), torch.ones(4)
    norm = torch.ops.aten._native_batch_norm_legit_no_training
    model = _Apply(lambda x: norm(x, None, None, mean, var, 0.1, 1e-5)[1])
    with pytest.raises(
        ge.errors.UnsupportedOperatorError,
        match="node '_native_batch_norm_legit_no_training': its result 1, which node 'getitem_1' reads, "
        "is not computed",
    ):
        ge.GraphParser().parse_pytorch(model.eval(), (torch.randn(2, 4, 3, 3),))


def test_max_pool_indices_over_a_symbolic_plane_are_refused_naming_the_node():
    height = torch.export.Dim("height", min=2, max=64)
    model = _Apply(lambda x: F.adaptive_max_pool2d(x, 1, return_indices=True)[1] + 1).eval()
    with pytest.raises(
        ge.errors.UnsupportedOperatorError,
        match="node 'adaptive_max_pool2d': the indices of a max pool over a symbolic height",
    ):
        ge.GraphParser().parse_pytorch(model, (torch.randn(1, 2, 4, 4),), dynamic_shapes=(({2: height},),))
    # Without its indices read, the pool imports.
    pooled = _Apply(lambda x: F.adaptive_max_pool2d(x, 1)).eval()
    ge.GraphParser().parse_pytorch(pooled, (torch.randn(1, 2, 4, 4),), dynamic_shapes=(({2: height},),))


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool, torch.float32])
def test_bitwise_not_isnan_isinf_of_any_dtype(dtype, level):
    """`~x` complements an integer's bits and negates a bool; integers and bools are never NaN or
    infinite. The converters gave integers to ops of bools and floats, which verification refused."""
    values = torch.tensor([[0.0, 1.0, -3.0], [7.0, 200.0, float("nan")], [float("inf"), -float("inf"), 5.0]])
    x = values if dtype.is_floating_point else values.nan_to_num(2.0, 9.0, 0.0).long().to(dtype)
    model = _Apply(lambda x: (torch.isnan(x), torch.isinf(x), x if dtype.is_floating_point else ~x)).eval()
    assert_matches_eager(model, (x,), level)


@pytest.mark.parametrize("level", [0, 3])
def test_atan2_on_the_axes_and_at_the_origin(level):
    """Signed zeros pick the side as in torch: atan2(0, -0) is pi, atan2(-0, -1) is -pi; two
    infinities give an odd multiple of pi / 4."""
    inf = float("inf")
    y = torch.tensor(
        [0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 0.0, 0.0, -0.0, 2.0, -2.0, 3.0, -3.0, 1.0, 1.0, inf, -inf, inf]
    )
    x = torch.tensor(
        [0.0, 0.0, -0.0, -0.0, 0.0, -0.0, 1.0, -1.0, -1.0, 2.0, -2.0, -4.0, -4.0, 1e30, -1e30, inf, -inf, 1.0]
    )
    (got,) = assert_matches_eager(_Apply(torch.atan2).eval(), (y, x), level, rtol=1e-6, atol=0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(torch.atan2(y, x).numpy()))
