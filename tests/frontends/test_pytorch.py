"""The PyTorch frontend: small models of the common families (random weights), parsed, compiled at
O0 and O3 and run, against eager PyTorch; and what the frontend refuses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import ge
from ge.errors import CompileError, GeError, InvalidModelError, UnsupportedOperatorError
from ge.frontends.pytorch import CONVERTERS, KEPT_WHOLE, load_model_file, supported_ops_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs" / "frontends.md"


# --------------------------------------------------------------------------------------------
# The models
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


MODELS = {
    "resnet": (ResNetStyle, lambda: (torch.randn(2, 3, 16, 16),)),
    "mobilenet_v2": (MobileNetV2Style, lambda: (torch.randn(1, 3, 16, 16),)),
    "unet": (UNetStyle, lambda: (torch.randn(1, 2, 8, 8),)),
    "bert": (BertStyle, lambda: (torch.randn(2, 5, 16),)),
    "gpt2": (GPT2Style, lambda: (torch.randint(0, 20, (2, 6)),)),
    "vit": (ViTStyle, lambda: (torch.randn(2, 3, 8, 8),)),
    "lstm": (LSTMStyle, lambda: (torch.randn(2, 5, 4),)),
}


def _model(name: str) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    cls, inputs = MODELS[name]
    model = cls().eval()
    for module in model.modules():  # batch norm statistics that are not the identity
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 1.5)
    return model, inputs()


def _run(graph: ge.Graph, feeds: dict[str, np.ndarray], level: int) -> list[np.ndarray]:
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(graph, optimization_level=level))
    return executor.run(feeds)


def _expected(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> list[np.ndarray]:
    with torch.no_grad():
        result = model(*inputs)
    results = result if isinstance(result, tuple) else (result,)
    return [r.numpy() for r in results]


# --------------------------------------------------------------------------------------------
# Models against eager PyTorch
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_eager_pytorch(name, level):
    model, inputs = _model(name)
    graph = ge.GraphParser().parse_pytorch(model, inputs)
    argument = "ids" if name == "gpt2" else "image" if name == "vit" else "x"
    assert graph.inputs == [argument]
    expected = _expected(model, inputs)
    actual = _run(graph, {argument: inputs[0].numpy()}, level)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_parameters_and_buffers_become_weights_not_inputs():
    model, inputs = _model("resnet")
    graph = ge.GraphParser().parse_pytorch(model, inputs)
    assert graph.inputs == ["x"]
    # Tensors of more than 16 elements go to the weight store under their parameter's name.
    assert set(graph.weights) == {"stem.0.weight", "conv1.weight", "conv2.weight", "fc.weight"}
    np.testing.assert_array_equal(graph.weights.get("fc.weight"), model.fc.weight.detach().numpy())


def test_an_exported_program_is_taken_as_it_is():
    model, inputs = _model("bert")
    program = torch.export.export(model, inputs)
    graph = ge.GraphParser().parse_pytorch(program)
    np.testing.assert_allclose(
        _run(graph, {"x": inputs[0].numpy()}, 0)[0], _expected(model, inputs)[0], rtol=1e-4, atol=1e-5
    )


def test_kept_whole_ops_stay_whole():
    """A linear layer is one gemm, a layer norm one layer_norm, a GELU one gelu: not their pieces."""
    model, inputs = _model("bert")
    kinds = [node.op_type for node in ge.GraphParser().parse_pytorch(model, inputs).nodes]
    assert kinds.count("layer_norm") == 2
    assert kinds.count("gelu") == 1
    assert kinds.count("softmax") == 1
    assert "erf" not in kinds and "reduce_mean" not in kinds


def test_a_symbolic_batch_becomes_a_dynamic_dimension():
    model, inputs = _model("resnet")
    batch = torch.export.Dim("batch", min=2, max=8)
    graph = ge.GraphParser().parse_pytorch(model, inputs, dynamic_shapes={"x": {0: batch}})
    assert "tensor<?x3x16x16xf32>" in str(graph)
    with pytest.raises(CompileError, match="dynamic dimension at axis 0"):
        ge.GraphCompiler().compile(graph, optimization_level=0)


# --------------------------------------------------------------------------------------------
# .pt2 archives
# --------------------------------------------------------------------------------------------


def test_load_model_file_reads_a_torch_export_archive(tmp_path):
    model, inputs = _model("lstm")
    path = tmp_path / "lstm.pt2"
    torch.export.save(torch.export.export(model, inputs), path)
    graph = load_model_file(path)
    assert graph.outputs == ["output_0", "output_1", "output_2"]
    for got, want in zip(_run(graph, {"x": inputs[0].numpy()}, 3), _expected(model, inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_load_model_file_refuses_what_is_not_an_archive(tmp_path):
    with pytest.raises(InvalidModelError, match="does not exist"):
        load_model_file(tmp_path / "missing.pt2")
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not a zip archive")
    with pytest.raises(InvalidModelError, match="not a torch.export archive"):
        load_model_file(bad)


# --------------------------------------------------------------------------------------------
# What is refused
# --------------------------------------------------------------------------------------------


@torch.library.custom_op("ge_test::twice", mutates_args=())
def _twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_twice.register_fake
def _(x):
    return torch.empty_like(x)


class Unsupported(nn.Module):
    def forward(self, x):
        return torch.ops.ge_test.twice(torch.sort(x).values).cumsum(0) + torch.atan2(x, x)


def test_every_unsupported_op_is_listed_at_once():
    with pytest.raises(UnsupportedOperatorError) as caught:
        ge.GraphParser().parse_pytorch(Unsupported().eval(), (torch.randn(4),))
    message = str(caught.value)
    for op in ("aten.sort.default", "ge_test.twice.default", "aten.cumsum.default", "aten.atan2.default"):
        assert op in message
    assert "4 node(s)" in message
    assert caught.value.category == "operator"
    assert {u["op_type"] for u in caught.value.unsupported} == {
        "aten.sort.default",
        "ge_test.twice.default",
        "aten.cumsum.default",
        "aten.atan2.default",
    }


@pytest.mark.parametrize("model", ["model.onnx", 3, np.zeros(3)])
def test_what_is_not_a_module_is_refused(model):
    with pytest.raises(GeError, match="takes a torch.nn.Module or a torch.export.ExportedProgram"):
        ge.GraphParser().parse_pytorch(model, (torch.randn(1),))


def test_a_module_in_training_mode_is_refused():
    with pytest.raises(GeError, match=r"training mode.*model\.eval\(\)"):
        ge.GraphParser().parse_pytorch(nn.Linear(2, 2), (torch.randn(1, 2),))


def test_a_module_without_example_inputs_is_refused():
    with pytest.raises(GeError, match="needs example_inputs"):
        ge.GraphParser().parse_pytorch(nn.Linear(2, 2).eval())


def test_importing_ge_does_not_import_torch():
    code = "import sys, ge; ge.GraphParser(); assert 'torch' not in sys.modules, 'torch was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------------------------
# The registry and the docs
# --------------------------------------------------------------------------------------------


def test_every_op_kept_whole_has_a_converter():
    assert set(KEPT_WHOLE) <= set(CONVERTERS)


def test_docs_list_the_registry():
    assert supported_ops_markdown() in DOCS.read_text()


# --------------------------------------------------------------------------------------------
# torch.compile(backend="ge")
# --------------------------------------------------------------------------------------------


@pytest.fixture
def compiled_graphs(monkeypatch):
    """The graphs the backend compiles, in order."""
    torch._dynamo.reset()
    graphs = []
    compile = ge.GraphCompiler.compile

    def recording(self, graph, *args, **kwargs):
        graphs.append((graph, kwargs))
        return compile(self, graph, *args, **kwargs)

    monkeypatch.setattr(ge.GraphCompiler, "compile", recording)
    yield graphs
    torch._dynamo.reset()


def test_torch_compile_runs_on_ge_with_parameters_as_weights(compiled_graphs, caplog):
    model, (x,) = _model("mobilenet_v2")
    compiled = torch.compile(model, backend="ge", options={"optimization_level": 0})
    with torch.no_grad():
        actual = compiled(x)
    np.testing.assert_allclose(actual.numpy(), _expected(model, (x,))[0], rtol=1e-4, atol=1e-5)
    (graph, options), *_ = compiled_graphs
    assert len(graph.inputs) == 1  # the image; every parameter and buffer is a constant
    assert options == {"optimization_level": 0}
    assert "eagerly" not in caplog.text


def test_torch_compile_falls_back_to_eager_naming_why(compiled_graphs, caplog):
    model = Unsupported().eval()
    x = torch.randn(4)
    with torch.no_grad():
        actual = torch.compile(model, backend="ge")(x)
    np.testing.assert_allclose(actual.numpy(), _expected(model, (x,))[0], rtol=1e-6)
    assert compiled_graphs == []
    assert "running the graph eagerly" in caplog.text and "aten.sort.default" in caplog.text


def test_torch_compile_leaves_a_graph_needing_autograd_to_eager(compiled_graphs, caplog):
    model, (x,) = _model("bert")
    actual = torch.compile(model, backend="ge")(x)  # grad enabled: parameters require grad
    assert actual.requires_grad
    assert compiled_graphs == []
    assert "needs autograd" in caplog.text
