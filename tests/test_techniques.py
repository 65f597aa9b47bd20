"""Optimization levels as sets of techniques, and the report of what each technique gives."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from importlib import resources

import numpy as np
import pytest

import ge
from ge.passes.pipelines import LEVELS, PIPELINES, TECHNIQUES, pipeline
from ge.techniques import TechniqueReport

TODAY = {
    0: [
        "ge-lower-graph-to-kernel{form_kernels=false}",
        "ge-tile-kernels",
        "ge-lower-kernel-to-stream",
    ],
    1: [
        *("ge-constant-fold", "ge-simplify", "cse", "dce"),
        *("ge-lower-graph-to-kernel{form_kernels=false}", "ge-tile-kernels", "ge-lower-kernel-to-stream"),
    ],
    2: [
        *("ge-constant-fold", "ge-simplify", "dce"),
        *("ge-fuse-conv-bn", "ge-fuse-gelu", "ge-fuse-layer-norm", "ge-fuse-attention"),
        "ge-fuse-bias-activation",
        *("ge-constant-fold", "ge-simplify", "cse", "dce"),
        *("ge-lower-graph-to-kernel{form_kernels=false}", "ge-tile-kernels", "ge-lower-kernel-to-stream"),
    ],
    3: [
        *("ge-constant-fold", "ge-simplify", "dce"),
        *("ge-fuse-conv-bn", "ge-fuse-gelu", "ge-fuse-layer-norm", "ge-fuse-attention"),
        "ge-fuse-bias-activation",
        *("ge-constant-fold", "ge-simplify", "cse", "dce"),
        *("ge-lower-graph-to-kernel", "ge-assign-formats", "ge-tile-kernels", "ge-lower-kernel-to-stream"),
        *("ge-assign-streams", "ge-plan-memory"),
    ],
}
"""The pass specs of each level as they were before levels became sets of techniques."""

FUSIONS = [
    "ge-fuse-conv-bn",
    "ge-fuse-gelu",
    "ge-fuse-layer-norm",
    "ge-fuse-attention",
    "ge-fuse-bias-activation",
]
PREPARE = ["ge-constant-fold", "ge-simplify", "dce"]
CLEANUP = ["ge-constant-fold", "ge-simplify", "cse", "dce"]

OFF_FROM_O3 = {
    # technique: (passes O3 has that the row lacks, passes the row has that O3 lacks)
    "constant-folding": ([*PREPARE, *FUSIONS, *CLEANUP], []),
    "operator-fusion": ([*PREPARE, *FUSIONS], []),
    "kernel-formation": (["ge-lower-graph-to-kernel"], ["ge-lower-graph-to-kernel{form_kernels=false}"]),
    "device-formats": (["ge-assign-formats"], []),
    "multi-stream": (["ge-assign-streams"], []),
    "memory-reuse": (["ge-plan-memory"], []),
    "sinking": ([], []),
}
ON_FROM_O0 = {
    # technique: (passes the row adds to O0, passes of O0 the row lacks)
    "constant-folding": (CLEANUP, []),
    "operator-fusion": ([*PREPARE, *FUSIONS, *CLEANUP], []),
    "kernel-formation": (["ge-lower-graph-to-kernel"], ["ge-lower-graph-to-kernel{form_kernels=false}"]),
    "device-formats": (["ge-assign-formats"], []),
    "multi-stream": (["ge-assign-streams"], []),  # 4 streams, the fastest kept: the pass's defaults
    "memory-reuse": (["ge-plan-memory"], []),
    "sinking": ([], []),
}

HOST_LAUNCH_US = 5.0
SUNK_TASK_US = 0.5
"""`host_launch_us` and `sunk_task_us` of ge/soc/Ascend910B2.json, the "npu" target."""


def _specs(passes: list) -> list[str]:
    return [str(p.pipeline_pass_spec()) for p in passes]


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_pipelines_derived_from_techniques_are_todays(level: int) -> None:
    assert _specs(pipeline(level)) == TODAY[level]
    assert [s.replace("form-kernels", "form_kernels") for s in PIPELINES[level]] == TODAY[level]


def test_levels_are_the_techniques_they_name() -> None:
    assert LEVELS[0] == frozenset()
    assert LEVELS[1] == {"constant-folding"}
    assert LEVELS[2] == {"constant-folding", "operator-fusion"}
    assert LEVELS[3] == {
        *("constant-folding", "operator-fusion", "kernel-formation", "device-formats"),
        *("multi-stream", "memory-reuse", "sinking"),
    }


@pytest.mark.parametrize("technique", list(OFF_FROM_O3))
def test_a_technique_off_from_o3_lacks_exactly_its_passes(technique: str) -> None:
    chosen = LEVELS[3] - {technique} - ({"operator-fusion"} if technique == "constant-folding" else set())
    row = Counter(_specs(pipeline(3, techniques=chosen)))
    full = Counter(TODAY[3])
    lacks, adds = OFF_FROM_O3[technique]
    assert full - row == Counter(lacks) and row - full == Counter(adds)


@pytest.mark.parametrize("technique", list(ON_FROM_O0))
def test_a_technique_on_from_o0_adds_exactly_its_passes(technique: str) -> None:
    chosen = {technique} | ({"constant-folding"} if technique == "operator-fusion" else set())
    row = Counter(_specs(pipeline(0, techniques=chosen)))
    base = Counter(TODAY[0])
    adds, lacks = ON_FROM_O0[technique]
    assert row - base == Counter(adds) and base - row == Counter(lacks)


def test_the_technique_option_is_checked() -> None:
    compiler = ge.GraphCompiler()
    graph = _tiny_cnn()
    with pytest.raises(ge.CompileError, match="technique operator-fusion needs constant-folding"):
        compiler.compile(graph, techniques=["operator-fusion"])
    with pytest.raises(ge.CompileError, match="unknown techniques: fusion"):
        compiler.compile(graph, techniques=["fusion"])
    with pytest.raises(ge.CompileError, match="list of technique names"):
        compiler.compile(graph, techniques="sinking")


def test_techniques_and_the_sinking_they_imply_survive_save_and_load(tmp_path) -> None:
    compiled = ge.GraphCompiler().compile(_tiny_cnn(), techniques={"memory-reuse", "sinking"})
    assert compiled.sunk and compiled.options["techniques"] == ("memory-reuse", "sinking")
    compiled.save(tmp_path / "m.ge")
    loaded = ge.GraphCompiler.load(tmp_path / "m.ge")
    assert loaded.sunk and loaded.techniques == {"memory-reuse", "sinking"}
    assert loaded.modelled_latency_us() == compiled.modelled_latency_us()
    assert not ge.GraphCompiler().compile(_tiny_cnn(), techniques=["memory-reuse"]).sunk


@cache
def _tiny_cnn() -> ge.Graph:
    """conv + batch norm + relu, then conv + relu, max pool, global average pool, linear, softmax."""
    model = resources.files("ge").joinpath("models/tiny_cnn.onnx").read_bytes()
    return ge.GraphParser().parse_onnx(model)


@cache
def _branches() -> ge.Graph:
    """Three independent branches of one input, concatenated: work for several streams."""
    g = ge.Graph()
    x = g.add_input("x", shape=[1, 32, 28, 28])
    a = g.add_relu(g.add_conv2d(x, out_channels=32, kernel_size=3, padding=1))
    b = g.add_relu(g.add_conv2d(x, out_channels=32, kernel_size=1))
    c = g.add_maxpool(x, kernel_size=3, stride=1, padding=1)
    g.add_output(g.add_concat([a, b, c], axis=1))
    return g


@cache
def _report(name: str) -> TechniqueReport:
    return ge.GraphOptimizer().report(_tiny_cnn() if name == "tiny_cnn" else _branches(), target="npu")


def test_fusion_off_does_not_lower_the_kernels_and_reuse_off_does_not_shrink_the_arena() -> None:
    report = _report("tiny_cnn")
    o3 = report.baseline("O3")
    assert report.row("operator-fusion", "off").kernels >= o3.kernels
    assert report.row("memory-reuse", "off").arena_bytes > o3.arena_bytes
    assert report.row("memory-reuse", "on").arena_bytes < report.baseline("O0").arena_bytes


def test_sinking_off_costs_the_host_launches_on_one_stream() -> None:
    report = _report("tiny_cnn")
    for change, sunk, host in (("off", "O3", None), ("on", None, "O0")):
        row = report.row("sinking", change)
        sunk_row = report.baseline(sunk) if sunk else row
        host_row = report.baseline(host) if host else row
        assert sunk_row.streams == host_row.streams == 1
        assert sunk_row.kernels == host_row.kernels
        extra = sunk_row.kernels * (HOST_LAUNCH_US - SUNK_TASK_US)
        assert host_row.latency_us - sunk_row.latency_us == pytest.approx(extra, abs=1e-6)


def test_multi_stream_off_gives_one_stream() -> None:
    report = _report("branches")
    assert report.baseline("O3").streams > 1
    assert report.row("multi-stream", "off").streams == 1
    assert report.row("multi-stream", "off").latency_us > report.baseline("O3").latency_us


def test_mixed_precision_changes_the_outputs_a_little() -> None:
    row = _report("tiny_cnn").row(None, "precision")
    assert row.precision_mode == "allow_mix_precision"
    assert row.max_error is not None and 0 < row.max_error < 1e-2
    assert row.weight_bytes < _report("tiny_cnn").baseline("O3").weight_bytes


@pytest.mark.parametrize("name", ["tiny_cnn", "branches"])
def test_rows_are_what_compiling_directly_gives(name: str) -> None:
    graph = _tiny_cnn() if name == "tiny_cnn" else _branches()
    compiler = ge.GraphCompiler()
    o0 = {"optimization_level": 0}
    o3 = {"optimization_level": 3}
    all_fusions_off = {"Switch": {"GraphFusion": dict.fromkeys(FUSIONS, "off")}}
    direct = {
        ("O0", "baseline"): o0,
        ("O3", "baseline"): o3,
        ("operator-fusion", "off"): {**o3, "fusion_switch_file": all_fusions_off},
        ("multi-stream", "off"): {**o3, "max_streams": 1},
        ("sinking", "off"): {**o3, "sink": False},
        ("sinking", "on"): {**o0, "sink": True},
        ("constant-folding", "on"): {"optimization_level": 1},
        ("operator-fusion", "on"): {"optimization_level": 2},
        ("kernel-formation", "on"): {"techniques": ["kernel-formation"]},
        ("device-formats", "off"): {"techniques": sorted(LEVELS[3] - {"device-formats"})},
        ("memory-reuse", "on"): {"techniques": ["memory-reuse"]},
    }
    report = _report(name)
    for (key, change), options in direct.items():
        row = report.baseline(key) if change == "baseline" else report.row(key, change)
        compiled = compiler.compile(graph, target="npu", **options)
        memory = compiled.memory
        assert (row.latency_us, row.kernels, row.arena_bytes, row.weight_bytes) == (
            compiled.modelled_latency_us(),
            compiled.num_operators,
            memory.arena_bytes,
            memory.weight_bytes,
        ), (key, change)


def test_the_report_is_a_table_and_json() -> None:
    report = _report("tiny_cnn")
    assert [(r.technique, r.change) for r in report.rows] == [
        (None, "baseline"),
        (None, "baseline"),
        *[(name, change) for name in TECHNIQUES for change in ("off", "on")],
        (None, "precision"),
    ]
    text = str(report)
    for row in report.rows:
        assert row.label in text
    assert "O3 - constant folding (with operator fusion)" in text
    assert "O0 + operator fusion (with constant folding)" in text
    data = json.loads(report.to_json())
    assert data["target"] == "Ascend910B2" and len(data["rows"]) == 2 + 2 * 7 + 1
    assert data["rows"][1]["techniques"] == list(TECHNIQUES)
    with pytest.raises(ge.GeError, match="no row"):
        report.row("sinking", "sideways")


def test_an_overflow_is_an_infinite_error_not_nan() -> None:
    from ge.techniques import _difference

    expected = np.array([1.0, 2.0, np.inf, np.nan], np.float32)
    assert _difference(expected, expected.copy()) == 0.0
    assert _difference(expected, np.array([1.0, 2.5, np.inf, np.nan], np.float16)) == 0.5
    assert _difference(expected, np.array([1.0, np.inf, np.inf, np.nan], np.float16)) == np.inf
    assert _difference(expected, np.array([1.0, 2.0, np.inf, 0.0], np.float16)) == np.inf


def test_sink_and_techniques_that_disagree_are_refused() -> None:
    graph = _tiny_cnn()
    with pytest.raises(ge.CompileError, match=r"sink=False and techniques \['sinking'\] disagree"):
        ge.GraphCompiler().compile(graph, sink=False, techniques=["sinking"])
    with pytest.raises(ge.CompileError, match=r"sink=True and techniques \[\] disagree"):
        ge.GraphCompiler().compile(graph, sink=True, techniques=[])
    assert ge.GraphCompiler().compile(graph, sink=True, techniques=["sinking"]).sunk
