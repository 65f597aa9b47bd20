"""`ge-fuse-conv-bn` and `ge-fuse-bias-activation`: same results before and after, and the
counts the light models reach at O2."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np
import onnx
import pytest

import ge
from ge.interpreter import run_function
from ge.passes.manager import PassManager
from ge.passes.pipelines import graph_passes, make_pass
from ge.passes.session import CompileSession

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _run_passes(g: ge.Graph, names: list[str]):
    module = g.module.clone()
    session = PassManager([make_pass(name) for name in names]).run(module, CompileSession(g.weights.copy()))
    return module, session


def _top_level(module) -> collections.Counter:
    func = next(op for op in module.body.block.ops if op.name == "func.func")
    return collections.Counter(
        op.name.removeprefix("ascend.graph.")
        for op in func.body.block.ops
        if op.name.startswith("ascend.graph.") and op.name != "ascend.graph.const"
    )


def _residual_block(dtype: str = "float32") -> ge.Graph:
    g = ge.Graph(seed=3)
    x = g.add_input("x", shape=[2, 8, 10, 10], dtype=dtype)
    y = g.add_relu(g.add_batchnorm(g.add_conv2d(x, 8, 3, padding=1, bias=False)))
    y = g.add_batchnorm(g.add_conv2d(y, 8, 3, padding=1))
    scale = g.add_constant(np.linspace(0.5, 1.5, 8, dtype=np.float32).reshape(8, 1, 1), dtype=dtype)
    shift = g.add_constant(np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1, 1), dtype=dtype)
    y = g.add_add(g.add_mul(y, scale), shift)
    y = g.add_relu(g.add_add(y, x))
    g.add_output(g.add_linear(g.add_flatten(g.add_global_avgpool(y)), 5))
    return g


@pytest.mark.parametrize(("dtype", "tolerance"), [("float32", 1e-5), ("float16", 2e-2)])
def test_residual_block_keeps_its_results(dtype: str, tolerance: float, rng: np.random.Generator) -> None:
    g = _residual_block(dtype)
    fold = "ge-fuse-conv-bn" if dtype == "float32" else "ge-fuse-conv-bn{keep-rounding=false}"
    module, ctx = _run_passes(g, [fold, "ge-constant-fold", "ge-fuse-bias-activation", "dce"])
    counts = _top_level(module)
    assert "batch_norm" not in counts and "mul" not in counts and "relu" not in counts
    assert counts["fused_conv2d"] == 2 and counts["fused_gemm"] + counts["gemm"] == 1
    assert ctx.patterns["ge-fuse-conv-bn"]["FoldBatchNormIntoConv"] == {"matched": 2, "applied": 2}
    x = rng.standard_normal((2, 8, 10, 10)).astype(dtype)
    before = run_function(g.module, [x], g.weights)[0].astype(np.float32)
    after = run_function(module, [x], ctx.weights)[0].astype(np.float32)
    np.testing.assert_allclose(after, before, rtol=tolerance, atol=tolerance * np.abs(before).max())


def test_float16_convolutions_keep_their_rounding_unless_a_precision_mode_allows(
    rng: np.random.Generator,
) -> None:
    """Folding a float16 batch norm into its conv rounds once where the graph rounds twice: at
    the default precision the fold is left alone (matched, not applied) and the numbers stay the
    graph's, bit for bit; a precision mode lets it apply."""
    g = _residual_block("float16")
    module, ctx = _run_passes(g, ["ge-fuse-conv-bn", "ge-constant-fold", "dce"])
    assert _top_level(module)["batch_norm"] == 2
    assert ctx.patterns["ge-fuse-conv-bn"]["FoldBatchNormIntoConv"] == {"matched": 2, "applied": 0}
    x = rng.standard_normal((2, 8, 10, 10)).astype(np.float16)
    before = run_function(g.module, [x], g.weights)[0]
    np.testing.assert_array_equal(run_function(module, [x], ctx.weights)[0], before)
    for mode in ("must_keep_origin_dtype", "allow_mix_precision"):
        compiled = ge.GraphCompiler().compile(
            _residual_block("float16"), optimization_level=2, precision_mode=mode
        )
        folded = compiled.fusion_report["passes"]["ge-fuse-conv-bn"]["FoldBatchNormIntoConv"]["applied"]
        assert folded == (0 if mode == "must_keep_origin_dtype" else 2), mode


def test_switch_file_turns_fusions_off_and_the_report_counts(tmp_path: Path) -> None:
    g = _residual_block()
    switch = tmp_path / "fusion.json"
    switch.write_text(json.dumps({"Switch": {"GraphFusion": {"ge-fuse-bias-activation": "off"}}}))
    report = tmp_path / "report.json"
    compiled = ge.GraphCompiler().compile(
        g, optimization_level=2, fusion_switch_file=switch, fusion_report=report
    )
    written = json.loads(report.read_text())
    assert written == compiled.fusion_report
    assert written["disabled"] == ["ge-fuse-bias-activation"]
    assert "ge-fuse-bias-activation" not in written["passes"]
    assert written["passes"]["ge-fuse-conv-bn"]["FoldBatchNormIntoConv"] == {"matched": 2, "applied": 2}
    full = ge.GraphCompiler().compile(g, optimization_level=2)
    assert full.fusion_report["passes"]["ge-fuse-bias-activation"]["AbsorbElementwiseTail"]["applied"] >= 3
    assert full.num_operators < compiled.num_operators
    with pytest.raises(ge.CompileError, match="unknown fusion passes in the switch: ge-fuse-nothing"):
        ge.GraphCompiler().compile(
            g, fusion_switch_file={"Switch": {"GraphFusion": {"ge-fuse-nothing": "off"}}}
        )


@pytest.mark.parametrize("name", sorted(p.stem.removeprefix("light_") for p in LIGHT.glob("light_*.onnx")))
def test_light_models_after_o2(name: str) -> None:
    """No batch norm left after a conv; resnet50 reaches the floor of fusion."""
    g = ge.GraphParser().parse_onnx(str(LIGHT / f"light_{name}.onnx"))
    module = g.module.clone()
    PassManager(graph_passes(2)).run(module, CompileSession(g.weights.copy()))
    counts = _top_level(module)
    func = next(op for op in module.body.block.ops if op.name == "func.func")
    for op in func.body.block.ops:
        if op.name == "ascend.graph.batch_norm":
            assert "conv" not in op.operands[0].owner.name, f"{name}: a batch norm after a conv is left"
    if name == "resnet50":
        assert sum(counts.values()) <= 60, counts
