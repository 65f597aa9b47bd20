"""Real models with a symbolic batch and sequence, end to end: a BERT-like encoder and a
residual CNN from PyTorch (`dynamic_shapes` with `torch.export.Dim`), run by a symbolic-graph
executor (compiled once per size), compiled with gears, through ONNX and `ge.backend`, and
through `torch.compile`; each checked against eager PyTorch or onnxruntime."""

from __future__ import annotations

import io
import logging
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from torch import nn
from torch.export import Dim

import ge
import ge.backend
from bench.gears import ResidualCnn  # the model bench/gears.py measures
from ge.frontends.pytorch import dynamo
from ge.gears import BatchPadding

RTOL, ATOL = 1e-4, 1e-5
VOCAB, WIDTH, MAX_SEQ = 32, 16, 32


class EncoderLayer(nn.Module):
    """Post-norm self-attention written out (heads split by reshape), then a GELU MLP."""

    def __init__(self, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.out = nn.Linear(WIDTH, WIDTH)
        self.norm1 = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 2 * WIDTH), nn.GELU(), nn.Linear(2 * WIDTH, WIDTH))
        self.norm2 = nn.LayerNorm(WIDTH)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        batch, seq, width = h.shape
        head = width // self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.reshape(batch, seq, self.heads, head).transpose(1, 2)

        q, k, v = (split(t) for t in self.qkv(h).chunk(3, dim=-1))
        attention = torch.softmax(q @ k.transpose(-1, -2) / head**0.5, dim=-1) @ v
        h = self.norm1(h + self.out(attention.transpose(1, 2).reshape(batch, seq, width)))
        return self.norm2(h + self.mlp(h))


class Encoder(nn.Module):
    """Token and position embeddings (position ids given, as BERT's forward takes them), two
    encoder layers."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, WIDTH)
        self.positions = nn.Embedding(MAX_SEQ, WIDTH)
        self.layers = nn.ModuleList(EncoderLayer() for _ in range(2))

    def forward(self, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        h = self.tokens(ids) + self.positions(positions)
        for layer in self.layers:
            h = layer(h)
        return h


def tokens(batch: int, seq: int) -> list[np.ndarray]:
    ids = np.random.default_rng(batch * 100 + seq).integers(0, VOCAB, (batch, seq))
    positions = np.broadcast_to(np.arange(seq), (batch, seq)).copy()
    return [ids.astype(np.int64), positions.astype(np.int64)]


def images(batch: int, channels: int = 3) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, channels, 8, 8)).astype(np.float32)


def eager(model: nn.Module, *arrays: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model(*(torch.from_numpy(a) for a in arrays)).numpy()


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    torch.manual_seed(0)
    return Encoder().eval()


@pytest.fixture(scope="module")
def encoder_graph(encoder: Encoder) -> ge.Graph:
    batch, seq = Dim("batch"), Dim("seq", max=MAX_SEQ)
    example = tuple(torch.from_numpy(a) for a in tokens(2, 8))
    dims = {"ids": {0: batch, 1: seq}, "positions": {0: batch, 1: seq}}
    return ge.GraphParser().parse_pytorch(encoder, example, dynamic_shapes=dims)


@pytest.fixture(scope="module")
def cnn() -> ResidualCnn:
    torch.manual_seed(1)
    model = ResidualCnn()
    for module in model.modules():  # statistics of a trained network, not the identity
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.2, 0.2)
    return model.eval()


@pytest.fixture(scope="module")
def cnn_graph(cnn: ResidualCnn) -> ge.Graph:
    return ge.GraphParser().parse_pytorch(
        cnn, (torch.from_numpy(images(2)),), dynamic_shapes={"x": {0: Dim("batch")}}
    )


@pytest.fixture(scope="module")
def cnn_gears(cnn_graph: ge.Graph) -> ge.CompiledModel:
    return ge.GraphCompiler().compile(cnn_graph, dynamic_batch_size=[1, 4, 8])


# --------------------------------------------------------------------------------------------
# A BERT-like encoder with a symbolic batch and sequence
# --------------------------------------------------------------------------------------------


def test_the_encoder_records_its_symbols(encoder_graph: ge.Graph) -> None:
    assert encoder_graph.input_dims == {"ids": ("batch", "seq"), "positions": ("batch", "seq")}


def test_the_encoder_compiles_once_per_size_and_matches_torch(
    encoder: Encoder, encoder_graph: ge.Graph
) -> None:
    executor = ge.GraphExecutor()
    executor.load_graph(encoder_graph)
    for batch, seq in ((2, 8), (3, 8), (2, 12)):
        feeds = tokens(batch, seq)
        (got,) = executor.run(feeds)
        np.testing.assert_allclose(got, eager(encoder, *feeds), rtol=RTOL, atol=ATOL)
    assert executor.recompiles == 2
    for batch, seq in ((3, 8), (2, 8), (2, 12)):
        executor.run(tokens(batch, seq))
    assert executor.recompiles == 2


def test_the_encoder_with_dynamic_dims_gears_matches_torch_and_pads_nothing(
    encoder: Encoder, encoder_graph: ge.Graph
) -> None:
    # atc's dynamic_dims gives a value to every -1, input by input, in order
    compiled = ge.GraphCompiler().compile(
        encoder_graph,
        input_shape={"ids": [-1, -1], "positions": [-1, -1]},
        dynamic_dims=[[1, 8, 1, 8], [2, 8, 2, 8], [2, 16, 2, 16]],
        input_format="ND",
    )
    assert [gear.input_shapes["ids"] for gear in compiled.gears] == [(1, 8), (2, 8), (2, 16)]
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    for batch, seq in ((1, 8), (2, 8), (2, 16)):
        feeds = tokens(batch, seq)
        np.testing.assert_allclose(executor.run(feeds)[0], eager(encoder, *feeds), rtol=RTOL, atol=ATOL)
    # padding is proven only for dynamic_batch_size: a batch of 1 at seq 16 runs on no gear
    assert compiled.batch_padding is None
    with pytest.raises(ge.RuntimeInputError, match=r"only in a model compiled with dynamic_batch_size"):
        executor.run(tokens(1, 16))


def test_the_encoder_with_batch_gears_runs_a_smaller_batch_padded(
    encoder: Encoder, encoder_graph: ge.Graph
) -> None:
    # attention mixes positions of one sample, never two samples: the batch pads
    compiled = ge.GraphCompiler().compile(
        encoder_graph, input_shape={"ids": [-1, 8], "positions": [-1, 8]}, dynamic_batch_size=[1, 4]
    )
    assert compiled.batch_padding == BatchPadding((0,))
    executor = ge.GraphExecutor()
    executor.load_graph(compiled)
    for batch in (1, 3, 4):
        feeds = tokens(batch, 8)
        np.testing.assert_allclose(executor.run(feeds)[0], eager(encoder, *feeds), rtol=RTOL, atol=ATOL)


def test_a_slice_of_a_static_buffer_to_a_symbolic_length_is_refused() -> None:
    class SlicedPositions(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("position_ids", torch.arange(MAX_SEQ).unsqueeze(0))

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return ids + self.position_ids[:, : ids.shape[1]]

    with pytest.raises(
        ge.UnsupportedOperatorError, match=r"slice of axis 1 \(size 32\) ending at \w+, a symbolic size other"
    ):
        ge.GraphParser().parse_pytorch(
            SlicedPositions().eval(),
            (torch.zeros(2, 8, dtype=torch.int64),),
            dynamic_shapes={"ids": {1: Dim("seq", max=MAX_SEQ)}},
        )


# --------------------------------------------------------------------------------------------
# A residual CNN with a symbolic batch
# --------------------------------------------------------------------------------------------


def test_cnn_batch_gears_share_one_weight_blob_and_the_largest_arena(
    cnn_graph: ge.Graph, cnn_gears: ge.CompiledModel
) -> None:
    alone = [ge.GraphCompiler().compile(cnn_graph.specialize({"batch": b})) for b in (1, 4, 8)]
    assert len(cnn_gears.weight_blob) == len(alone[0].weight_blob)
    arenas = [model.memory.arena_bytes for model in alone]
    assert [m.arena_bytes for m in cnn_gears.gear_memory()] == arenas
    assert cnn_gears.memory.arena_bytes == max(arenas)
    assert cnn_gears.batch_padding is not None and cnn_gears.batch_padding.output_axes == (0,)


@pytest.mark.parametrize("batch", [1, 4, 8, 3, 6])
def test_cnn_batch_gears_match_torch_at_each_gear_and_padded(
    cnn: ResidualCnn, cnn_gears: ge.CompiledModel, batch: int
) -> None:
    executor = ge.GraphExecutor()
    executor.load_graph(cnn_gears)
    x = images(batch)
    np.testing.assert_allclose(executor.run(x)[0], eager(cnn, x), rtol=RTOL, atol=ATOL)


def test_cnn_exported_to_onnx_runs_in_the_backend_as_onnxruntime(cnn: ResidualCnn) -> None:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter needs no onnxscript
        torch.onnx.export(
            cnn,
            (torch.from_numpy(images(1)),),
            buffer,
            dynamo=False,
            input_names=["x"],
            output_names=["y"],
            dynamic_axes={"x": {0: "N"}, "y": {0: "N"}},
        )
    model = onnx.load_from_string(buffer.getvalue())
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rep = ge.backend.prepare(model, "CPU")
    for batch in (1, 2, 5):
        x = images(batch)
        (got,) = rep.run([x])
        np.testing.assert_allclose(got, session.run(None, {"x": x})[0], rtol=RTOL, atol=ATOL)
    assert rep.recompiles == 2


@pytest.fixture
def fresh_dynamo():
    torch._dynamo.reset()
    dynamo.reset()
    yield
    torch._dynamo.reset()
    dynamo.reset()


def test_torch_compile_compiles_once_per_shape(
    cnn: ResidualCnn, fresh_dynamo: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiles: list[int] = []
    compile_graph = ge.GraphCompiler.compile

    def counted(self, graph, *args, **kwargs):
        compiles.append(1)
        return compile_graph(self, graph, *args, **kwargs)

    monkeypatch.setattr(ge.GraphCompiler, "compile", counted)
    shape_compiles = dynamo.SHAPE_COMPILES[0]
    fast = torch.compile(cnn, backend="ge")
    with torch.no_grad():
        for batch in (2, 3, 4):
            x = images(batch)
            np.testing.assert_allclose(fast(torch.from_numpy(x)).numpy(), eager(cnn, x), rtol=RTOL, atol=ATOL)
        fast(torch.from_numpy(images(3)))
    assert len(compiles) == 3
    # batch 2 was compiled static; Dynamo made the batch symbolic at 3, and 3 and 4 compiled then
    assert dynamo.SHAPE_COMPILES[0] - shape_compiles == 2


# --------------------------------------------------------------------------------------------
# Inputs contradicting a static dimension, and a gear model through a file
# --------------------------------------------------------------------------------------------


def test_a_wrong_channel_count_is_refused_naming_input_and_axis(
    cnn: ResidualCnn, cnn_graph: ge.Graph, cnn_gears: ge.CompiledModel
) -> None:
    wrong = images(2, channels=4)
    for model, declared in ((cnn_graph, "declared 3"), (cnn_gears, "declared 3 by every gear")):
        executor = ge.GraphExecutor()
        executor.load_graph(model)
        with pytest.raises(ge.RuntimeInputError, match=rf"input 'x' axis 1: {declared}, 4 given"):
            executor.run(wrong)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            cnn,
            (torch.from_numpy(images(1)),),
            buffer,
            dynamo=False,
            input_names=["x"],
            dynamic_axes={"x": {0: "N"}},
        )
    rep = ge.backend.prepare(onnx.load_from_string(buffer.getvalue()), "CPU")
    with pytest.raises(ge.RuntimeInputError, match=r"input 'x' axis 1: the model declares 3, 4 given"):
        rep.run([wrong])


def test_a_three_gear_model_saved_and_loaded_runs_as_before(
    cnn_gears: ge.CompiledModel, tmp_path: Path
) -> None:
    path = tmp_path / "cnn.ge"
    cnn_gears.save(path)
    loaded = ge.GraphCompiler.load(path)
    before, after = ge.GraphExecutor(), ge.GraphExecutor()
    before.load_graph(cnn_gears)
    after.load_graph(loaded)
    assert len(loaded.gears) == 3 and loaded.batch_padding == cnn_gears.batch_padding
    for batch in (1, 4, 8, 2, 5):
        x = images(batch)
        np.testing.assert_array_equal(after.run(x)[0], before.run(x)[0])


def test_recompiles_are_logged_on_the_ge_logger(
    encoder_graph: ge.Graph, caplog: pytest.LogCaptureFixture
) -> None:
    executor = ge.GraphExecutor()
    executor.load_graph(encoder_graph)
    with caplog.at_level(logging.INFO, logger="ge"):
        executor.run(tokens(1, 4))
        executor.run(tokens(1, 6))
    lines = [r.getMessage() for r in caplog.records if "recompiling" in r.getMessage()]
    assert lines == ["recompiling graph 'main' for new input sizes batch=1, seq=6 (recompile 1)"]
