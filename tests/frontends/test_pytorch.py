"""The PyTorch frontend: small models of the common families (random weights), parsed, compiled at
O0 and O3 and run, against eager PyTorch; and what the frontend refuses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from pytorch_models import MODELS, Unsupported, make_model, make_selections
from torch import nn

import ge
from ge.errors import CompileError, GeError, InvalidModelError, UnsupportedOperatorError
from ge.frontends.pytorch import CONVERTERS, KEPT_WHOLE, load_model_file, supported_ops_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs" / "frontends.md"


def _run(graph: ge.Graph, feeds: dict[str, np.ndarray], level: int) -> list[np.ndarray]:
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(graph, optimization_level=level))
    return executor.run(feeds)


def _expected(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> list[np.ndarray]:
    with torch.no_grad():
        result = model(*inputs)
    return [r.numpy() for r in torch.utils._pytree.tree_leaves(result)]


# --------------------------------------------------------------------------------------------
# Models against eager PyTorch
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_eager_pytorch(name, level):
    model, inputs = make_model(name)
    graph = ge.GraphParser().parse_pytorch(model, inputs)
    argument = "ids" if name == "gpt2" else "image" if name == "vit" else "x"
    assert graph.inputs == [argument]
    expected = _expected(model, inputs)
    actual = _run(graph, {argument: inputs[0].numpy()}, level)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("level", [0, 3])
def test_selections_rounding_divisions_and_group_norm_match_eager(level):
    """max/min along a dim, argmax/argmin, cumsum, gather, index, arange, floor and trunc
    division of floats and of integers of both signs, and a group norm kept whole; the dict
    of results names the outputs by its keys."""
    model, (x, ints) = make_selections()
    graph = ge.GraphParser().parse_pytorch(model, (x, ints))
    assert graph.outputs == [
        "max.0", "max.1", "min.0", "min.1", "argmax", "argmin", "cumsum", "gather", "index",
        "arange", "floor", "trunc", "int_floor", "int_trunc", "group_norm",
    ]  # fmt: skip
    assert [n.op_type for n in graph.nodes].count("group_norm") == 1
    actual = dict(zip(graph.outputs, _run(graph, {"x": x.numpy(), "ints": ints.numpy()}, level), strict=True))
    for name, want in zip(graph.outputs, _expected(model, (x, ints)), strict=True):
        assert actual[name].shape == want.shape and actual[name].dtype == want.dtype, name
        np.testing.assert_allclose(actual[name], want, rtol=1e-4, atol=1e-5, err_msg=name)
    # Worked by hand: 7 // 2, -7 // -3, 9 // 4, -10 // -5, 6 // 7 and their truncations.
    np.testing.assert_array_equal(actual["int_floor"], [3, 2, 2, 2, 0])
    np.testing.assert_array_equal(
        actual["int_trunc"], [3, 2, 2, 2, 0]
    )  # same signs divide alike; mixed signs below
    mixed = ge.GraphParser().parse_pytorch(_Divide().eval(), (torch.tensor([-7, 7, -1, 1, 0]),))
    floor, trunc = _run(mixed, {"x": np.array([-7, 7, -1, 1, 0])}, level)
    np.testing.assert_array_equal(floor, [-4, -4, -1, -1, 0])
    np.testing.assert_array_equal(trunc, [-3, -3, 0, 0, 0])


class _Divide(nn.Module):
    def forward(self, x):
        divisor = torch.tensor([2, -2, 2, -2, -2])
        return torch.div(x, divisor, rounding_mode="floor"), torch.div(x, divisor, rounding_mode="trunc")


def test_outputs_are_named_by_their_pytree_path():
    class Nested(nn.Module):
        def forward(self, x):
            return {"a": x + 1, "b": (x * 2, x - 1)}

    class Pair(nn.Module):
        def forward(self, x):
            return x + 1, x * 2

    x = torch.tensor([1.0, -2.0])
    nested = ge.GraphParser().parse_pytorch(Nested().eval(), (x,))
    assert nested.outputs == ["a", "b.0", "b.1"]
    for got, want in zip(_run(nested, {"x": x.numpy()}, 0), [[2, -1], [2, -4], [0, -3]], strict=True):
        np.testing.assert_array_equal(got, want)
    assert ge.GraphParser().parse_pytorch(Pair().eval(), (x,)).outputs == ["output_0", "output_1"]
    assert ge.GraphParser().parse_pytorch(nn.ReLU().eval(), (x,)).outputs == ["output"]


def test_parameters_and_buffers_become_weights_not_inputs():
    model, inputs = make_model("resnet")
    graph = ge.GraphParser().parse_pytorch(model, inputs)
    assert graph.inputs == ["x"]
    # Tensors of more than 16 elements go to the weight store under their parameter's name.
    assert set(graph.weights) == {"stem.0.weight", "conv1.weight", "conv2.weight", "fc.weight"}
    np.testing.assert_array_equal(graph.weights.get("fc.weight"), model.fc.weight.detach().numpy())


def test_an_exported_program_is_taken_as_it_is():
    model, inputs = make_model("bert")
    program = torch.export.export(model, inputs)
    graph = ge.GraphParser().parse_pytorch(program)
    np.testing.assert_allclose(
        _run(graph, {"x": inputs[0].numpy()}, 0)[0], _expected(model, inputs)[0], rtol=1e-4, atol=1e-5
    )


def test_kept_whole_ops_stay_whole():
    """A linear layer is one gemm, a layer norm one layer_norm, a GELU one gelu: not their pieces."""
    model, inputs = make_model("bert")
    kinds = [node.op_type for node in ge.GraphParser().parse_pytorch(model, inputs).nodes]
    assert kinds.count("layer_norm") == 2
    assert kinds.count("gelu") == 1
    assert kinds.count("softmax") == 1
    assert "erf" not in kinds and "reduce_mean" not in kinds


def test_a_symbolic_batch_becomes_a_dynamic_dimension():
    model, inputs = make_model("resnet")
    batch = torch.export.Dim("batch", min=2, max=8)
    graph = ge.GraphParser().parse_pytorch(model, inputs, dynamic_shapes={"x": {0: batch}})
    assert "tensor<?x3x16x16xf32>" in str(graph)
    with pytest.raises(CompileError, match="dynamic dimension at axis 0"):
        ge.GraphCompiler().compile(graph, optimization_level=0)


def test_a_dims_name_becomes_the_graph_symbol_and_each_batch_runs_as_torch_does():
    model, inputs = make_model("resnet")
    batch = torch.export.Dim("batch", min=2, max=8)
    graph = ge.GraphParser().parse_pytorch(model, inputs, dynamic_shapes={"x": {0: batch}})
    assert graph.input_dims == {"x": ("batch", 3, 16, 16)}
    executor = ge.GraphExecutor()
    executor.load_graph(graph)
    for size in (2, 3):
        x = torch.randn(size, 3, 16, 16)
        with torch.no_grad():
            want = model(x).numpy()
        np.testing.assert_allclose(executor.run(x.numpy())[0], want, rtol=1e-4, atol=1e-5)
    assert executor.recompiles == 1


class _Apply(nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, x):
        return self.function(x)


NEGATIVE_BOUNDS = {
    "drop the last": lambda x: x[:, :-1] * 2,
    "keep the last": lambda x: x[:, -1:] * 2,
    "shifted difference": lambda x: x[:, 1:] - x[:, :-1],
    "range from -1": lambda x: x + torch.arange(-1, 4),
    "reflect pad": lambda x: nn.functional.pad(x, (2, 1), mode="reflect"),
    "replicate pad": lambda x: nn.functional.pad(x, (1, 2), mode="replicate"),
}


@pytest.mark.parametrize("name", list(NEGATIVE_BOUNDS))
def test_a_literal_minus_one_is_a_number_not_a_symbolic_size(name):
    """-1 as a slice bound or a range start (reflect and replicate padding decompose to
    `arange(-1, n)`) counts from the end, as in torch."""
    model, x = _Apply(NEGATIVE_BOUNDS[name]).eval(), torch.randn(2, 6, 5)
    graph = ge.GraphParser().parse_pytorch(model, (x,))
    (want,) = _expected(model, (x,))
    (got,) = _run(graph, {"x": x.numpy()}, 3)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_slice_to_minus_one_of_a_symbolic_axis_drops_the_last_at_every_length():
    model = _Apply(lambda x: x[:, :-1] * 2).eval()
    length = torch.export.Dim("length", min=3, max=64)
    graph = ge.GraphParser().parse_pytorch(model, (torch.randn(2, 6, 3),), dynamic_shapes=({1: length},))
    executor = ge.GraphExecutor()
    executor.load_graph(graph)
    for size in (6, 9, 3):
        x = torch.randn(2, size, 3)
        (got,) = executor.run([x.numpy()])
        assert got.shape == (2, size - 1, 3)
        np.testing.assert_array_equal(got, x.numpy()[:, :-1] * 2)


def test_size_arithmetic_lets_a_symbolic_batch_split_attention_heads():
    """`batch * heads` (Python's multiplication of sizes) takes the value the export recorded."""
    torch.manual_seed(0)
    attention = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    model = _Apply(lambda x: attention(x, x, x, need_weights=False)[0]).eval()
    batch = torch.export.Dim("batch", min=1, max=16)
    graph = ge.GraphParser().parse_pytorch(model, (torch.randn(3, 5, 8),), dynamic_shapes=({0: batch},))
    executor = ge.GraphExecutor()
    executor.load_graph(graph)
    for size in (3, 1, 7):
        x = torch.randn(size, 5, 8)
        (want,) = _expected(model, (x,))
        (got,) = executor.run([x.numpy()])
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_reshape_merging_symbolic_sizes_or_a_size_as_a_value_is_refused_at_import():
    dims = {0: torch.export.Dim.AUTO, 1: torch.export.Dim.AUTO}
    merged = _Apply(lambda x: x.reshape(x.shape[0], -1) * 1).eval()
    with pytest.raises(UnsupportedOperatorError, match=r"aten.view.default at node .*several symbolic sizes"):
        ge.GraphParser().parse_pytorch(merged, (torch.randn(2, 6, 5),), dynamic_shapes=(dims,))
    scaled = _Apply(lambda x: x * x.shape[1]).eval()
    length = torch.export.Dim("length", min=3, max=64)
    with pytest.raises(UnsupportedOperatorError, match=r"a symbolic size \(\w+\) used as a value"):
        ge.GraphParser().parse_pytorch(scaled, (torch.randn(2, 6, 5),), dynamic_shapes=({1: length},))


# --------------------------------------------------------------------------------------------
# .pt2 archives
# --------------------------------------------------------------------------------------------


def test_load_model_file_reads_a_torch_export_archive(tmp_path):
    model, inputs = make_model("lstm")
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


def test_a_renamed_onnx_file_or_an_empty_file_is_refused_in_one_quiet_line(tmp_path, capfd):
    import onnx

    renamed = tmp_path / "model.pt2"
    onnx.save(onnx.helper.make_model(onnx.helper.make_graph([], "g", [], [])), renamed)
    empty = tmp_path / "empty.pt2"
    empty.write_bytes(b"")
    for path in (renamed, empty):
        with pytest.raises(InvalidModelError) as caught:
            load_model_file(path)
        assert str(caught.value) == (
            f"'{path}' is not a torch.export archive (.pt2, written by torch.export.save)"
        )
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


def test_parsing_prints_no_torch_warnings(capfd):
    model, inputs = make_model("lstm")
    ge.GraphParser().parse_pytorch(model, inputs)
    assert capfd.readouterr().err == ""


def test_a_forward_writing_a_buffer_in_place_is_refused_naming_it():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(1))

        def forward(self, x):
            self.count.add_(1)
            return x + self.count

    with pytest.raises(UnsupportedOperatorError) as caught:
        ge.GraphParser().parse_pytorch(Counter().eval(), (torch.randn(2),))
    assert str(caught.value) == (
        "forward writes buffer 'count' in place; ge graphs keep no state: return the new value "
        "as an output, or drop the write"
    )
    assert "eval()" not in str(caught.value)


def test_every_unsupported_op_is_listed_at_once():
    with pytest.raises(UnsupportedOperatorError) as caught:
        ge.GraphParser().parse_pytorch(Unsupported().eval(), (torch.randn(4),))
    message = str(caught.value)
    for op in ("aten.erfinv.default", "ge_test.twice.default", "aten.digamma.default", "aten.lgamma.default"):
        assert op in message
    assert "4 node(s)" in message
    assert caught.value.category == "operator"
    assert {u["op_type"] for u in caught.value.unsupported} == {
        "aten.erfinv.default",
        "ge_test.twice.default",
        "aten.digamma.default",
        "aten.lgamma.default",
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
    from ge.frontends.pytorch import dynamo

    torch._dynamo.reset()
    dynamo.reset()
    graphs = []
    compile = ge.GraphCompiler.compile

    def recording(self, graph, *args, **kwargs):
        graphs.append((graph, kwargs))
        return compile(self, graph, *args, **kwargs)

    monkeypatch.setattr(ge.GraphCompiler, "compile", recording)
    yield graphs
    torch._dynamo.reset()


@pytest.mark.parametrize("level", [0, 3])
def test_torch_compile_runs_on_ge_with_parameters_as_weights(compiled_graphs, caplog, level):
    model, (x,) = make_model("mobilenet_v2")
    compiled = torch.compile(model, backend="ge", options={"optimization_level": level})
    with torch.no_grad():
        actual = compiled(x)
    np.testing.assert_allclose(actual.numpy(), _expected(model, (x,))[0], rtol=1e-4, atol=1e-5)
    (graph, options), *_ = compiled_graphs
    assert len(graph.inputs) == 1  # the image; every parameter and buffer is a constant
    assert options == {"optimization_level": level}
    assert "eagerly" not in caplog.text


@pytest.mark.parametrize("name", ["resnet", "unet", "bert", "gpt2", "vit", "lstm"])
def test_torch_compile_runs_every_model_family_on_ge_at_o3(compiled_graphs, caplog, name):
    """The other model families through torch.compile at O3, against eager; Dynamo hands RNN
    modules to a backend only with `allow_rnn`."""
    model, inputs = make_model(name)
    with torch.no_grad(), torch._dynamo.config.patch(allow_rnn=True):
        actual = torch.compile(model, backend="ge", options={"optimization_level": 3})(*inputs)
    expected = _expected(model, inputs)
    got = torch.utils._pytree.tree_leaves(actual)
    assert len(got) == len(expected)
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(value.numpy(), want, rtol=1e-4, atol=1e-5)
    assert compiled_graphs and "eagerly" not in caplog.text


def test_torch_compile_falls_back_to_eager_naming_why(compiled_graphs, caplog):
    model = Unsupported().eval()
    x = torch.randn(4)
    with torch.no_grad():
        actual = torch.compile(model, backend="ge")(x)
    np.testing.assert_allclose(actual.numpy(), _expected(model, (x,))[0], rtol=1e-6)
    assert compiled_graphs == []
    assert "running the graph eagerly" in caplog.text and "aten.erfinv.default" in caplog.text


class _Branching(nn.Module):
    """A data-dependent branch (a graph break) and a float argument, which Dynamo's second call
    passes as a tensor whose export fails only when decomposed."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x, flag: bool, scale: float):
        y = self.a(x)
        if y.sum().item() > 0:
            y = y * scale
        return self.b(y) if flag else y


def test_torch_compile_falls_back_to_eager_when_torch_cannot_decompose_the_export(compiled_graphs, caplog):
    torch.manual_seed(1)
    model = _Branching().eval()
    compiled = torch.compile(model, backend="ge")
    with torch.no_grad():
        for flag, scale in [(True, 0.5), (False, 1.5)]:
            x = torch.randn(2, 4)
            want = model(x, flag, scale).numpy()
            np.testing.assert_allclose(compiled(x, flag, scale).numpy(), want, atol=1e-5)
    assert "running the graph eagerly: torch.export could not trace the graph" in caplog.text


def test_torch_compile_leaves_a_graph_needing_autograd_to_eager(compiled_graphs, caplog):
    model, (x,) = make_model("bert")
    actual = torch.compile(model, backend="ge")(x)  # grad enabled: parameters require grad
    assert actual.requires_grad
    assert compiled_graphs == []
    assert "needs autograd" in caplog.text


def test_torch_compile_compiles_again_when_a_parameter_changes(compiled_graphs, caplog):
    """An in-place write to a parameter (as an optimizer step makes) is seen: the graph is
    compiled again with the new values, logged and counted; an unchanged call is not."""
    from ge.frontends.pytorch import dynamo

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Tanh()).eval()
    x = torch.randn(3, 8)
    compiled = torch.compile(model, backend="ge", options={"optimization_level": 0})
    before = dynamo.RECOMPILES[0]
    with torch.no_grad():
        compiled(x)
        compiled(x)
        assert len(compiled_graphs) == 1 and dynamo.RECOMPILES[0] == before
        model[0].weight.mul_(2.0)
        actual = compiled(x)
    np.testing.assert_allclose(actual.numpy(), _expected(model, (x,))[0], rtol=1e-4, atol=1e-5)
    assert len(compiled_graphs) == 2 and dynamo.RECOMPILES[0] == before + 1
    assert (
        "parameter or buffer '0.weight' changed since the graph was compiled; compiling again" in caplog.text
    )


def test_torch_compile_tells_parameters_and_buffers_from_inputs_by_dynamo_source(
    compiled_graphs, monkeypatch
):
    """Dynamo names where each graph input comes from; if that naming changes, the weights
    would become run-time inputs, which this sees."""
    from ge.frontends.pytorch import dynamo

    seen = []
    recorded = dynamo.is_weight

    def recording(source, tensor):
        seen.append((source, recorded(source, tensor)))
        return seen[-1][1]

    monkeypatch.setattr(dynamo, "is_weight", recording)
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2)).eval()
    with torch.no_grad():
        torch.compile(model, backend="ge", options={"optimization_level": 0})(torch.randn(5, 4))
    weights = sorted(dynamo.weight_name(source) for source, weight in seen if weight)
    assert weights == sorted(
        f"parameter or buffer '{name}'"
        for name in (
            "0.weight",
            "0.bias",
            "1.weight",
            "1.bias",
            "1.running_mean",
            "1.running_var",
            "2.weight",
            "2.bias",
        )
    )
    assert len([source for source, weight in seen if not weight]) == 1
    assert len(compiled_graphs[0][0].inputs) == 1


def test_torch_compile_compiles_once_per_batch_size(compiled_graphs, caplog):
    """A new batch size makes Dynamo's dimension symbolic; the backend compiles the new shape
    rather than running eagerly, and a shape it compiled already is not compiled again."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Tanh()).eval()
    compiled = torch.compile(model, backend="ge", options={"optimization_level": 0})
    with torch.no_grad():
        for batch in (2, 3, 2):
            x = torch.randn(batch, 8)
            np.testing.assert_allclose(compiled(x).numpy(), _expected(model, (x,))[0], rtol=1e-4, atol=1e-5)
    assert len(compiled_graphs) == 2
    assert "tensor<2x8xf32>" in str(compiled_graphs[0][0]) and "tensor<3x8xf32>" in str(compiled_graphs[1][0])
    assert "eagerly" not in caplog.text


@pytest.mark.parametrize(
    "norm_first, activation, masks",
    [(False, "relu", ("padding",)), (True, "gelu", ("padding", "causal")), (False, "gelu", ("causal",))],
)
def test_torch_compile_runs_the_encoder_layer_fast_path_on_ge(
    compiled_graphs, caplog, norm_first, activation, masks
):
    """Without autograd, a batch-first nn.TransformerEncoderLayer calls torch's fused
    `_transformer_encoder_layer_fwd`, which Dynamo captures whole; it ran eagerly."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        16, 4, 32, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
    ).eval()
    x, padding = torch.randn(2, 5, 16), torch.zeros(2, 5, dtype=torch.bool)
    padding[0, 3:] = True
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)  # of the padding mask's type, as torch asks

    def run(x, padding):
        return layer(
            x,
            src_mask=causal if "causal" in masks else None,
            src_key_padding_mask=padding if "padding" in masks else None,
        )

    with torch.no_grad():
        actual = torch.compile(run, backend="ge", options={"optimization_level": 3})(x, padding)
        expected = run(x, padding)
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
    assert compiled_graphs and "eagerly" not in caplog.text
