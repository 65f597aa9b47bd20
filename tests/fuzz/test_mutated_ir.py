"""Mutation fuzzing of `ge-opt`, in process: a small valid module's text mutated (tokens
inserted, spans deleted or copied elsewhere) and run through a pipeline. Whatever the mutant,
`ge-opt` prints its result or one `ge-opt: error:` line and exits 1; any other exception, or a
traceback, is a bug.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ge.tools.ge_opt import main

SEED = """func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %c = ascend.graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32>
  %one = ascend.graph.const splat<1.0 : f32> : tensor<1x8x8x8xf32>
  %a = ascend.graph.add %c, %one : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %r = ascend.graph.relu %a : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  func.return %r : tensor<1x8x8x8xf32>
}
"""
TOKENS = ["0", "-1", "4", "8", "x", "f16", "i8", "i648", "tensor<", ">", "%c", "%w", "{", "}", "(", ")", ":"]
TOKENS += [",", "ascend.graph.mul", "ascend.graph.softmax", "array<i64: 0>", "1x", "?x", "splat<", "dense<"]
PIPELINES = [
    "ge-O0",
    "ge-O3",
    "ge-constant-fold,ge-simplify,cse,dce",
    "ge-lower-graph-to-kernel,ge-assign-formats,ge-tile-kernels,ge-lower-kernel-to-stream",
    "ge-fuse-conv-bn,ge-fuse-bias-activation",
]

edit = st.tuples(
    st.sampled_from(["insert", "delete", "copy"]),
    st.integers(0, len(SEED) - 1),
    st.integers(0, len(SEED) - 1),
    st.sampled_from(TOKENS),
    st.integers(1, 10),
)


def mutated(edits) -> str:
    text = SEED
    for kind, position, source, token, length in edits:
        position %= max(len(text), 1)
        if kind == "insert":
            text = text[:position] + token + text[position:]
        elif kind == "delete":
            text = text[:position] + text[position + length :]
        else:
            source %= max(len(text), 1)
            text = text[:position] + text[source : source + length] + text[position:]
    return text


@pytest.fixture(scope="module")
def path(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ir") / "mutant.mlir"


@given(edits=st.lists(edit, min_size=1, max_size=3), pipeline=st.sampled_from(PIPELINES))
def test_an_ir_mutant_is_printed_or_gets_one_error_line(path: Path, edits, pipeline: str) -> None:
    path.write_text(mutated(edits))
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        try:
            main([str(path), "-p", pipeline])
        except SystemExit as exit:
            assert exit.code == 1, errors.getvalue()
            assert errors.getvalue().startswith("ge-opt: error:"), errors.getvalue()
    assert "Traceback" not in errors.getvalue()
