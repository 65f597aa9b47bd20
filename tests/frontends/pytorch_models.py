"""Small PyTorch models of the common families, with random weights, for the frontend's tests."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

# --------------------------------------------------------------------------------------------


class ResNetStyle(nn.Module):
    """conv-bn-relu stem, max pool, one basic residual block, global pool, linear."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU()
        )
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.pool(self.stem(x))
        y = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(y)) + x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class MobileNetV2Style(nn.Module):
    """An inverted residual (1x1 expand, 3x3 depthwise, relu6, 1x1 project, skip), hardswish."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.Hardswish())
        self.block = nn.Sequential(
            nn.Conv2d(8, 24, 1, bias=False),
            nn.BatchNorm2d(24),
            nn.ReLU6(),
            nn.Conv2d(24, 24, 3, padding=1, groups=24, bias=False),
            nn.BatchNorm2d(24),
            nn.ReLU6(),
            nn.Conv2d(24, 8, 1, bias=False),
            nn.BatchNorm2d(8),
        )
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.block(x)
        return self.head(nn.functional.avg_pool2d(x, x.shape[-1]).flatten(1))


class UNetStyle(nn.Module):
    """Two levels: conv, max pool, transposed-conv and nearest upsampling, skip concat."""

    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU())
        self.bottom = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.fuse = nn.Conv2d(8 + 4, 4, 3, padding=1)
        self.out = nn.Conv2d(4, 1, 1)

    def forward(self, x):
        skip = self.down(x)
        deep = self.bottom(F.max_pool2d(skip, 2))
        upsampled = F.interpolate(deep, scale_factor=2.0, mode="nearest")
        x = torch.cat([skip, self.up(deep), upsampled], dim=1)
        return self.out(F.relu(self.fuse(x[:, :12])))


class BertStyle(nn.Module):
    """One encoder layer: explicit scaled-dot-product attention, residuals, layer norms, GELU MLP."""

    def __init__(self, width=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=-1)
        q, k, v = (t.reshape(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (width // self.heads) ** 0.5
        attended = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(batch, length, width)
        x = self.norm1(x + self.proj(attended))
        return self.norm2(x + self.mlp(x))


class GPT2Style(nn.Module):
    """Token and position embeddings, a pre-norm decoder block whose causal mask is a buffer."""

    def __init__(self, vocabulary=20, length=6, width=16, heads=2):
        super().__init__()
        self.heads = heads
        self.tokens, self.positions = nn.Embedding(vocabulary, width), nn.Embedding(length, width)
        self.register_buffer("causal", torch.tril(torch.ones(length, length, dtype=torch.bool)))
        self.register_buffer("position_ids", torch.arange(length))
        self.ln1, self.ln2, self.ln_f = nn.LayerNorm(width), nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"), nn.Linear(4 * width, width)
        )
        self.head = nn.Linear(width, vocabulary, bias=False)

    def forward(self, ids):
        batch, length = ids.shape
        x = self.tokens(ids) + self.positions(self.position_ids[:length])
        q, k, v = self.attn(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / (q.shape[-1] ** 0.5))
        scores = scores.masked_fill(~self.causal[:length, :length], float("-inf"))
        y = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).contiguous().view(batch, length, -1)
        x = x + self.proj(y)
        x = x + self.mlp(self.ln2(x))
        return self.head(self.ln_f(x))


class ViTStyle(nn.Module):
    """Patch embedding conv, class token, position embedding, a transformer block using
    F.scaled_dot_product_attention, and a head on the class token."""

    def __init__(self, width=16, heads=2, patches=4):
        super().__init__()
        self.heads = heads
        self.patch = nn.Conv2d(3, width, 4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, width))
        self.position = nn.Parameter(torch.randn(1, patches + 1, width))
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.head = nn.Linear(width, 3)

    def forward(self, image):
        x = self.patch(image).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.position
        batch, length, width = x.shape
        qkv = self.qkv(self.ln1(x)).reshape(batch, length, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        x = x + self.proj(y.transpose(1, 2).reshape(batch, length, width))
        x = x + self.mlp(self.ln2(x))
        return self.head(x[:, 0])


class LSTMStyle(nn.Module):
    """A two-layer batch-first nn.LSTM, a linear layer on its last step, and its final states."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 6, num_layers=2, batch_first=True)
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        y, (h, c) = self.lstm(x)
        return self.fc(y[:, -1]), h, c


class Assorted(nn.Module):
    """One of each op the families above leave out: bilinear upsampling, padded and ceil-mode
    pools, constant padding, 1-D convolution, a bidirectional LSTM, activations, reductions."""

    def __init__(self):
        super().__init__()
        self.conv1d = nn.Conv1d(3, 4, 3, padding=1, stride=2)
        self.lstm = nn.LSTM(4, 3, bidirectional=True)

    def forward(self, x):
        a = F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False)
        b = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
        c = F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False) + F.avg_pool2d(x, 2)
        d = F.max_pool2d(x, 3, stride=2, ceil_mode=True)
        e = F.pad(x, (1, 2, 0, 1), value=0.5)
        f = F.leaky_relu(x, 0.2) + F.elu(x) + F.silu(x) + F.hardsigmoid(x) + x.clamp(-0.5, 0.3)
        f = f + torch.sigmoid(x) * torch.tanh(x)
        g = x.mean(dim=(2, 3)) + x.sum(dim=-1).amax(dim=-1) + F.log_softmax(x.flatten(1), -1)[:, :3]
        p, q = torch.split(x, [1, 2], dim=1)
        h = torch.where(p > q[:, :1], p, -q[:, 1:]) + (x != 0).float().sum()
        i = F.adaptive_avg_pool2d(x, (2, 4))
        j = self.conv1d(x.flatten(2)[..., :5])
        k, _ = self.lstm(x.flatten(2)[..., :4].transpose(0, 1))
        m = torch.sqrt(x.abs() + 1).rsqrt() - torch.exp(-x.abs()) / 2 + (1 - x) ** 2
        return a, b, c, d, e, f, g, h, i, j, k, m


MODELS = {
    "resnet": (ResNetStyle, lambda: (torch.randn(2, 3, 16, 16),)),
    "mobilenet_v2": (MobileNetV2Style, lambda: (torch.randn(1, 3, 16, 16),)),
    "unet": (UNetStyle, lambda: (torch.randn(1, 2, 8, 8),)),
    "bert": (BertStyle, lambda: (torch.randn(2, 5, 16),)),
    "gpt2": (GPT2Style, lambda: (torch.randint(0, 20, (2, 6)),)),
    "vit": (ViTStyle, lambda: (torch.randn(2, 3, 8, 8),)),
    "lstm": (LSTMStyle, lambda: (torch.randn(2, 5, 4),)),
    "assorted": (Assorted, lambda: (torch.randn(2, 3, 8, 8),)),
}


def make_model(name: str) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    cls, inputs = MODELS[name]
    model = cls().eval()
    for module in model.modules():  # batch norm statistics that are not the identity
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 1.5)
    return model, inputs()


@torch.library.custom_op("ge_test::twice", mutates_args=())
def _twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_twice.register_fake
def _(x):
    return torch.empty_like(x)


class Unsupported(nn.Module):
    def forward(self, x):
        return torch.digamma(torch.ops.ge_test.twice(torch.erfinv(x))) + torch.lgamma(x)


class Selections(nn.Module):
    """The ops that pick along an axis, index, accumulate, count and divide with rounding, and a
    group norm; several results, in a dict so that its keys name the outputs."""

    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(2, 4)

    def forward(self, x, ints):
        values, indices = torch.max(x, dim=1)
        low, low_at = torch.min(x, dim=-1, keepdim=True)
        picked = torch.gather(x, 2, (x.abs() * 3).long().clamp(0, 4))
        rows = x[:, torch.tensor([2, 0, 3])]
        steps = torch.arange(1, 11, 2) * 0.5
        divisor = torch.tensor([2, -3, 4, -5, 7])
        return {
            "max": (values, indices),
            "min": (low, low_at),
            "argmax": x.argmax(dim=2),
            "argmin": x.argmin(),
            "cumsum": x.cumsum(1) + ints.cumsum(0).sum(),
            "gather": picked,
            "index": rows,
            "arange": x[..., 0, :] + steps,
            "floor": torch.div(x, 0.3, rounding_mode="floor"),
            "trunc": torch.div(x, -0.3, rounding_mode="trunc"),
            "int_floor": torch.div(ints, divisor, rounding_mode="floor"),
            "int_trunc": torch.div(ints, divisor, rounding_mode="trunc"),
            "group_norm": self.norm(x.unsqueeze(0).flatten(1, 2)[:, :4]),
        }


def make_selections() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """Selections with random weights, a float input and integers of both signs."""
    torch.manual_seed(0)
    model = Selections().eval()
    with torch.no_grad():
        model.norm.weight.uniform_(0.5, 1.5)
        model.norm.bias.uniform_(-0.5, 0.5)
    x = torch.randn(2, 4, 5)
    ints = torch.tensor([7, -7, 9, -10, 6])
    return model, (x, ints)
