"""`kernel_cost`: each unit's time and the latency of kernels, worked out by hand from the SoC
profiles' figures (HARDWARE.md gives the formulas: fractal tiles, bytes per cycle, HBM bandwidth)."""

from __future__ import annotations

import dataclasses
import math

import pytest
from xdsl.parser import Parser

from ge.context import make_context
from ge.cost import KernelInfo, default_block_dim, kernel_cost, model_latency_us, roofline_check
from ge.dialects.formats import with_format
from ge.errors import CompileError
from ge.passes.kernel.assign_formats import AssignFormatsPass
from ge.soc import load_profile

B2 = load_profile("Ascend910B2").figures
A = load_profile("Ascend910A").figures


def conv_text(dtype: str) -> str:
    """A 1x64x56x56 input through a 3x3 convolution, 64 -> 64 channels, padding 1."""
    x, w = f"tensor<1x64x56x56x{dtype}>", f"tensor<64x64x3x3x{dtype}>"
    return f"""
    func.func @f(%x: {x}, %w: {w}) -> {x} {{
      %y = ascend.graph.conv2d %x, %w {{pads = array<i64: 1, 1, 1, 1>}} : ({x}, {w}) -> {x}
      func.return %y : {x}
    }}
    """


def hbm_us(nbytes: int, soc) -> float:
    return nbytes / (soc["hbm_gbps"] * 1e9) * 1e6


def cycles_us(cycles: float, soc) -> float:
    return cycles / (soc["clock_mhz"] * 1e6) * 1e6


def with_default_block_dim(info: KernelInfo, soc) -> KernelInfo:
    return dataclasses.replace(info, block_dim=default_block_dim(info, soc))


# --------------------------------------------------------------------------------------------
# A convolution on the cube
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "width"), [("f16", 2), ("f32", 4)])
def test_conv_on_910b2(kernel, dtype: str, width: int) -> None:
    assert B2["cube_fp16_macs_per_cycle"] == 16 * 16 * 16  # one fp16 tile product per cycle
    assert B2["fp32_cube"] is True
    cycles_per_tile = 1 if dtype == "f16" else 1 / B2["fp32_cube_rate"]
    info = kernel(
        conv_text(dtype), "cube", ["NC1HWC0", "FRACTAL_Z"], ["NC1HWC0"], weights=[1], tiling={"tiles": 49}
    )
    block_dim = default_block_dim(info, B2)
    # Implicit GEMM: M = 56 * 56 = 3136 pixels in 196 row tiles, N = 64 channels in 4 column tiles.
    assert block_dim == min(B2["cube_cores"], 196 * 4) == 24
    cost = kernel_cost(dataclasses.replace(info, block_dim=block_dim), B2)

    tiles = 196 * (64 // 16 * 3 * 3) * 4  # M tiles * K tiles (C0 = 16 channels per kernel position) * N tiles
    assert cost.cube_us == pytest.approx(cycles_us(tiles * cycles_per_tile / 24, B2))
    activation = 1 * (64 // 16) * 56 * 56 * 16 * width  # NC1HWC0, C0 = 16
    weight = (64 // 16 * 3 * 3) * (64 // 16) * 16 * 16 * width  # FRACTAL_Z
    assert (cost.mte2_bytes, cost.mte3_bytes) == (activation + weight, activation)
    assert cost.mte2_us == pytest.approx(hbm_us(activation + weight, B2))
    assert cost.mte3_us == pytest.approx(hbm_us(activation, B2))
    assert cost.vector_us == 0.0  # device formats in and out: nothing to convert
    assert cost.flops == 2 * 3136 * 64 * 64 * 9
    # Double buffered over 49 tiles: the cube sets the pace, memory only shows in the first tile.
    memory = cost.mte2_us + cost.mte3_us
    assert cost.cube_us > memory
    assert cost.latency_us == pytest.approx(cost.cube_us + memory / 49 + B2["sunk_task_us"])
    assert cost.bound == "cube"
    peak_flops_per_s = B2["cube_cores"] * 4096 * 2 * B2["clock_mhz"] * 1e6 / cycles_per_tile
    roofline = max(cost.flops / peak_flops_per_s * 1e6, hbm_us(activation * 2 + weight, B2))
    assert cost.roofline_us == pytest.approx(roofline + B2["sunk_task_us"])


def test_conv_converts_a_plain_input_on_load(kernel) -> None:
    info = kernel(conv_text("f16"), "cube", ["NCHW", "FRACTAL_Z"], ["NC1HWC0"], weights=[1], block_dim=24)
    cost = kernel_cost(info, B2)
    plain = 1 * 64 * 56 * 56 * 2
    # MTE2 lays the NCHW rows out as C0 blocks: one vector pass over them, no extra HBM traffic.
    assert cost.vector_us == pytest.approx(cycles_us(plain / B2["vector_bytes_per_cycle"] / 24, B2))
    weight = 36 * 4 * 16 * 16 * 2
    assert cost.mte2_bytes == plain + weight


def test_an_operand_typed_with_its_format_is_still_the_bodys_argument(kernel) -> None:
    """A compiled model's kernel operands carry their format in their type, its body computes on
    the plain types: the plain input is still found, and its conversion on load charged."""
    plain = kernel(conv_text("f16"), "cube", ["NCHW", "FRACTAL_Z"], ["NC1HWC0"], weights=[1], block_dim=24)
    typed = dataclasses.replace(
        plain,
        inputs=tuple(dataclasses.replace(o, type=with_format(o.type, o.format)) for o in plain.inputs),
        outputs=tuple(dataclasses.replace(o, type=with_format(o.type, o.format)) for o in plain.outputs),
    )
    assert typed.inputs[1].type != plain.inputs[1].type  # FRACTAL_Z in the type
    cost = kernel_cost(typed, B2)
    assert cost.vector_us > 0.0
    assert cost.vector_us == pytest.approx(kernel_cost(plain, B2).vector_us)


def test_fixpipe_converts_the_output_for_free(kernel) -> None:
    assert B2["fixpipe"] is True
    assert A["fixpipe"] is False  # Ascend910A has no FixPipe
    formats = (["NC1HWC0", "FRACTAL_Z"], ["NCHW"])
    with_fixpipe = kernel_cost(kernel(conv_text("f16"), "cube", *formats, weights=[1], block_dim=24), B2)
    without = kernel_cost(kernel(conv_text("f16"), "cube", *formats, weights=[1], block_dim=32), A)
    assert with_fixpipe.vector_us == 0.0
    output = 1 * 64 * 56 * 56 * 2
    assert without.vector_us == pytest.approx(cycles_us(output / A["vector_bytes_per_cycle"] / 32, A))
    # The same accumulator layout on store costs nothing even without FixPipe.
    native = kernel_cost(
        kernel(conv_text("f16"), "cube", formats[0], ["NC1HWC0"], weights=[1], block_dim=32), A
    )
    assert native.vector_us == 0.0


def test_fp32_matmul_runs_on_the_vector_unit_without_an_fp32_cube(kernel) -> None:
    assert A["fp32_cube"] is False
    text = """
    func.func @f(%a: tensor<256x512xf32>, %b: tensor<512x128xf32>) -> tensor<256x128xf32> {
      %c = ascend.graph.matmul %a, %b : (tensor<256x512xf32>, tensor<512x128xf32>) -> tensor<256x128xf32>
      func.return %c : tensor<256x128xf32>
    }
    """
    info = with_default_block_dim(kernel(text, "cube", ["ND", "ND"], ["ND"], weights=[1]), A)
    assert info.block_dim == min(A["cube_cores"], 16 * 8)
    cost = kernel_cost(info, A)
    assert cost.cube_us == 0.0
    flops = 2 * 256 * 512 * 128
    lanes = A["vector_bytes_per_cycle"] / 4  # fp32 lanes per cycle
    assert cost.vector_us == pytest.approx(cycles_us(flops / lanes / info.block_dim, A))
    assert cost.bound == "vector"
    # The same kernel on a SoC with an fp32 cube runs there, at `fp32_cube_rate` of the fp16 rate.
    on_cube = kernel_cost(with_default_block_dim(info, B2), B2)
    tiles = 16 * 32 * 8
    assert on_cube.cube_us == pytest.approx(cycles_us(tiles / B2["fp32_cube_rate"] / 24, B2))


def test_int8_matmul_takes_k_tiles_of_32(kernel) -> None:
    text = """
    func.func @f(%a: tensor<64x128xi8>, %b: tensor<128x32xi8>, %za: tensor<i8>, %zb: tensor<i8>)
        -> tensor<64x32xi32> {
      %c = ascend.graph.matmul_integer %a, %b, %za, %zb
        : (tensor<64x128xi8>, tensor<128x32xi8>, tensor<i8>, tensor<i8>) -> tensor<64x32xi32>
      func.return %c : tensor<64x32xi32>
    }
    """
    info = kernel(text, "cube", ["FRACTAL_NZ", "FRACTAL_NZ", "ND", "ND"], ["FRACTAL_NZ"], block_dim=2)
    cost = kernel_cost(info, B2)
    assert B2["cube_int8_macs_per_cycle"] == 16 * 32 * 16  # one int8 tile product per cycle
    tiles = (64 // 16) * (128 // 32) * (32 // 16)
    assert cost.cube_us == pytest.approx(cycles_us(tiles / 2, B2))


# --------------------------------------------------------------------------------------------
# Vector, trans_data and AI CPU kernels
# --------------------------------------------------------------------------------------------

ADD = """
func.func @f(%a: tensor<1x64x56x56xf16>, %b: tensor<1x64x56x56xf16>) -> tensor<1x64x56x56xf16> {
  %c = ascend.graph.{op} %a, %b : (tensor<1x64x56x56xf16>, tensor<1x64x56x56xf16>) -> tensor<1x64x56x56xf16>
  func.return %c : tensor<1x64x56x56xf16>
}
"""


def test_vector_add(kernel) -> None:
    info = kernel(ADD.replace("{op}", "add"), "vector", ["NCHW", "NCHW"], ["NCHW"])
    nbytes = 64 * 56 * 56 * 2
    blocks = math.ceil(nbytes / (32 * 1024))  # one core per 32 KiB of output
    assert default_block_dim(info, B2) == min(B2["vector_cores"], blocks) == 13
    cost = kernel_cost(with_default_block_dim(info, B2), B2)
    assert cost.vector_us == pytest.approx(cycles_us(nbytes / B2["vector_bytes_per_cycle"] / 13, B2))
    assert cost.cube_us == 0.0
    assert (cost.mte2_bytes, cost.mte3_bytes) == (2 * nbytes, nbytes)
    assert cost.flops == 64 * 56 * 56
    assert cost.bound == "memory"
    assert cost.latency_us == pytest.approx(cost.vector_us + hbm_us(3 * nbytes, B2) + B2["sunk_task_us"])


def test_transcendental_ops_run_slower(kernel) -> None:
    add = kernel_cost(kernel(ADD.replace("{op}", "add"), "vector", ["ND"] * 2, ["ND"], block_dim=8), B2)
    div = kernel_cost(kernel(ADD.replace("{op}", "div"), "vector", ["ND"] * 2, ["ND"], block_dim=8), B2)
    assert div.vector_us == pytest.approx(add.vector_us / B2["vector_transcendental_rate"])


def test_pooling_sweeps_every_window(kernel) -> None:
    text = """
    func.func @f(%x: tensor<1x64x112x112xf16>) -> tensor<1x64x56x56xf16> {
      %y = ascend.graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
        pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf16>) -> tensor<1x64x56x56xf16>
      func.return %y : tensor<1x64x56x56xf16>
    }
    """
    cost = kernel_cost(kernel(text, "vector", ["NCHW"], ["NCHW"], block_dim=4), B2)
    reads = 64 * 56 * 56 * 9
    assert cost.vector_us == pytest.approx(cycles_us(reads * 2 / B2["vector_bytes_per_cycle"] / 4, B2))


def test_trans_data_is_one_vector_pass_over_the_bytes_moved() -> None:
    from xdsl.dialects.builtin import TensorType, f16

    from ge.cost import Operand

    t = TensorType(f16, [1, 3, 224, 224])
    info = KernelInfo("to_5hd", "trans_data", (), (Operand(t, "NCHW"),), (Operand(t, "NC1HWC0"),))
    plain, padded = 3 * 224 * 224 * 2, 1 * 224 * 224 * 16 * 2  # C = 3 padded to C0 = 16
    blocks = math.ceil(padded / (32 * 1024))
    info = with_default_block_dim(info, B2)
    assert info.block_dim == min(B2["vector_cores"], blocks)
    cost = kernel_cost(info, B2)
    assert (cost.mte2_bytes, cost.mte3_bytes) == (plain, padded)
    moved = (plain + padded) / B2["vector_bytes_per_cycle"] / info.block_dim
    assert cost.vector_us == pytest.approx(cycles_us(moved, B2))
    assert cost.flops == 0


def test_aicpu_kernel(kernel) -> None:
    text = """
    func.func @f(%a: tensor<1000xf64>, %b: tensor<1000xf64>) -> tensor<1000xf64> {
      %c = ascend.graph.add %a, %b : (tensor<1000xf64>, tensor<1000xf64>) -> tensor<1000xf64>
      func.return %c : tensor<1000xf64>
    }
    """
    info = kernel(text, "aicpu", ["ND", "ND"], ["ND"])
    assert default_block_dim(info, B2) == 1
    cost = kernel_cost(info, B2)
    compute = 1000 / (B2["aicpu_gflops"] * 1e9) * 1e6  # one FLOP per element
    assert cost.scalar_us == pytest.approx(compute + B2["aicpu_launch_us"])
    assert (cost.mte2_bytes, cost.mte3_bytes) == (16000, 8000)
    expected = compute + B2["aicpu_launch_us"] + hbm_us(24000, B2) + B2["sunk_task_us"]
    assert cost.latency_us == pytest.approx(expected)
    assert cost.bound == "aicpu"


def test_aicpu_counts_elements_of_ops_without_arithmetic(kernel) -> None:
    text = """
    func.func @f(%a: tensor<20x50xi64>) -> tensor<50x20xi64> {
      %t = ascend.graph.transpose %a {perm = array<i64: 1, 0>} : (tensor<20x50xi64>) -> tensor<50x20xi64>
      func.return %t : tensor<50x20xi64>
    }
    """
    cost = kernel_cost(kernel(text, "aicpu", ["ND"], ["ND"]), B2)
    assert cost.flops == 0
    assert cost.scalar_us == pytest.approx(1000 / (B2["aicpu_gflops"] * 1e3) + B2["aicpu_launch_us"])


# --------------------------------------------------------------------------------------------
# Launch, overlap, roofline, whole models
# --------------------------------------------------------------------------------------------


def test_launch_overhead_sunk_or_not(kernel) -> None:
    info = kernel(ADD.replace("{op}", "add"), "vector", ["ND", "ND"], ["ND"], block_dim=13)
    sunk, launched = kernel_cost(info, B2, sunk=True), kernel_cost(info, B2, sunk=False)
    assert sunk.launch_us == B2["sunk_task_us"]
    assert launched.launch_us == B2["host_launch_us"]
    assert launched.latency_us - sunk.latency_us == pytest.approx(B2["host_launch_us"] - B2["sunk_task_us"])


def test_tiny_kernels_are_launch_bound(kernel) -> None:
    text = """
    func.func @f(%a: tensor<16xf16>) -> tensor<16xf16> {
      %r = ascend.graph.relu %a : (tensor<16xf16>) -> tensor<16xf16>
      func.return %r : tensor<16xf16>
    }
    """
    assert kernel_cost(kernel(text, "vector", ["ND"], ["ND"]), B2, sunk=False).bound == "launch"


def test_double_buffering_overlaps_units(kernel) -> None:
    serial = kernel(conv_text("f16"), "cube", ["NCHW", "FRACTAL_Z"], ["NCHW"], [1], 24, {"db": 1, "tiles": 8})
    overlapped = dataclasses.replace(serial, tiling={"db": 2, "tiles": 8})
    one, two = kernel_cost(serial, A), kernel_cost(overlapped, A)
    units = [one.cube_us, one.vector_us, one.mte2_us + one.mte3_us]
    assert all(u > 0 for u in units)
    assert one.latency_us == pytest.approx(sum(units) + A["sunk_task_us"])
    fill = (sum(units) - max(units)) / 8
    assert two.latency_us == pytest.approx(max(units) + fill + A["sunk_task_us"])
    # Absent tiling means double buffering over a single tile: no overlap left to gain.
    default = kernel_cost(dataclasses.replace(serial, tiling={}), A)
    assert default.latency_us == pytest.approx(one.latency_us)


def test_model_latency_is_the_sum_on_one_stream(kernel) -> None:
    conv = kernel(conv_text("f16"), "cube", ["NC1HWC0", "FRACTAL_Z"], ["NC1HWC0"], [1], 24)
    add = kernel(ADD.replace("{op}", "add"), "vector", ["ND", "ND"], ["ND"], block_dim=13)
    for sunk in (True, False):
        expected = kernel_cost(conv, B2, sunk=sunk).latency_us + kernel_cost(add, B2, sunk=sunk).latency_us
        assert model_latency_us([conv, add], B2, sunk=sunk) == pytest.approx(expected)
    assert model_latency_us([], B2, sunk=True) == 0.0


def test_more_cores_than_the_unit_has_do_not_help(kernel) -> None:
    info = kernel(conv_text("f16"), "cube", ["NC1HWC0", "FRACTAL_Z"], ["NC1HWC0"], [1], 24)
    greedy = dataclasses.replace(info, block_dim=1000)
    assert kernel_cost(greedy, B2).cube_us == pytest.approx(kernel_cost(info, B2).cube_us)


def test_cores_share_output_tiles_only(kernel) -> None:
    text = """
    func.func @f(%a: tensor<16x64xf16>, %b: tensor<64x16xf16>) -> tensor<16x16xf16> {
      %c = ascend.graph.matmul %a, %b : (tensor<16x64xf16>, tensor<64x16xf16>) -> tensor<16x16xf16>
      func.return %c : tensor<16x16xf16>
    }
    """
    info = kernel(text, "cube", ["FRACTAL_NZ"] * 2, ["FRACTAL_NZ"])
    assert default_block_dim(info, B2) == 1  # one output tile
    alone = kernel_cost(info, B2)
    assert alone.cube_us == pytest.approx(cycles_us(64 // 16, B2))  # four K tiles, one after the other
    assert kernel_cost(dataclasses.replace(info, block_dim=24), B2).cube_us == pytest.approx(alone.cube_us)


def test_physical_bytes_pad_each_format(kernel) -> None:
    text = """
    func.func @f(%a: tensor<17x17xf16>, %w: tensor<32x1x3x3xf16>, %x: tensor<1x32x8x8xf16>)
        -> tensor<1x32x8x8xf16> {
      %y = ascend.graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64}
        : (tensor<1x32x8x8xf16>, tensor<32x1x3x3xf16>) -> tensor<1x32x8x8xf16>
      func.return %y : tensor<1x32x8x8xf16>
    }
    """
    info = kernel(text, "cube", ["FRACTAL_NZ", "FRACTAL_Z", "NC1HWC0"], ["NC1HWC0"], weights=[1])
    cost = kernel_cost(info, B2)
    nz = 2 * 2 * 16 * 16 * 2  # 17 x 17 -> 2 x 2 fractals
    depthwise = 32 * 1 * 3 * 3 * 1 * 16 * 16 * 2  # 32 groups, each one C0 block of one channel
    activation = 1 * 2 * 8 * 8 * 16 * 2
    assert cost.mte2_bytes == nz + depthwise + activation


def test_unknown_kinds_and_formats_are_errors(kernel) -> None:
    with pytest.raises(CompileError, match="unknown kind"):
        kernel_cost(kernel(ADD.replace("{op}", "add"), "tensor", ["ND", "ND"], ["ND"]), B2)
    with pytest.raises(CompileError, match="unknown format"):
        kernel_cost(kernel(ADD.replace("{op}", "add"), "vector", ["NHWC", "ND"], ["ND"]), B2)


SPREAD = {
    "conv_f16": (conv_text("f16"), "cube", ["NCHW", "NCHW"], ["NCHW"]),
    "conv_f32": (conv_text("f32"), "cube", ["NC1HWC0", "FRACTAL_Z"], ["NC1HWC0"]),
    "conv_bf16": (conv_text("bf16"), "cube", ["NC1HWC0", "FRACTAL_Z"], ["NCHW"]),
    "gemm": (
        """
        func.func @f(%a: tensor<8x512xf16>, %b: tensor<1000x512xf16>, %c: tensor<1000xf16>)
            -> tensor<8x1000xf16> {
          %y = ascend.graph.gemm %a, %b, %c {trans_b = true, alpha = 5.000000e-01 : f32}
            : (tensor<8x512xf16>, tensor<1000x512xf16>, tensor<1000xf16>) -> tensor<8x1000xf16>
          func.return %y : tensor<8x1000xf16>
        }
        """,
        "cube",
        ["ND", "FRACTAL_NZ", "ND"],
        ["ND"],
    ),
    "batched_matmul_f32": (
        """
        func.func @f(%a: tensor<12x128x64xf32>, %b: tensor<12x64x128xf32>) -> tensor<12x128x128xf32> {
          %y = ascend.graph.matmul %a, %b
            : (tensor<12x128x64xf32>, tensor<12x64x128xf32>) -> tensor<12x128x128xf32>
          func.return %y : tensor<12x128x128xf32>
        }
        """,
        "cube",
        ["FRACTAL_NZ", "FRACTAL_NZ"],
        ["FRACTAL_NZ"],
    ),
    "attention": (
        """
        func.func @f(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>, %v: tensor<2x8x128x64xf16>)
            -> tensor<2x8x128x64xf16> {
          %y = ascend.graph.attention %q, %k, %v {is_causal = true}
            : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>)
            -> tensor<2x8x128x64xf16>
          func.return %y : tensor<2x8x128x64xf16>
        }
        """,
        "cube",
        ["ND", "ND", "ND"],
        ["ND"],
    ),
    "conv_transpose": (
        """
        func.func @f(%x: tensor<1x32x16x16xf16>, %w: tensor<32x16x4x4xf16>) -> tensor<1x16x32x32xf16> {
          %y = ascend.graph.conv_transpose2d %x, %w
            {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
            : (tensor<1x32x16x16xf16>, tensor<32x16x4x4xf16>) -> tensor<1x16x32x32xf16>
          func.return %y : tensor<1x16x32x32xf16>
        }
        """,
        "cube",
        ["NCHW", "NCHW"],
        ["NCHW"],
    ),
    "rnn": (
        """
        func.func @f(%x: tensor<5x2x3xf16>, %w: tensor<1x4x3xf16>, %r: tensor<1x4x4xf16>, %b: tensor<1x8xf16>,
            %lens: tensor<2xi32>, %h0: tensor<1x2x4xf16>) -> tensor<5x1x2x4xf16> {
          %y, %h = ascend.graph.rnn %x, %w, %r, %b, %lens, %h0
            : (tensor<5x2x3xf16>, tensor<1x4x3xf16>, tensor<1x4x4xf16>, tensor<1x8xf16>, tensor<2xi32>,
            tensor<1x2x4xf16>) -> (tensor<5x1x2x4xf16>, tensor<1x2x4xf16>)
          func.return %y : tensor<5x1x2x4xf16>
        }
        """,
        "cube",
        ["ND"] * 6,
        ["ND"],
    ),
    "softmax_chain": (
        """
        func.func @f(%x: tensor<64x1024xf32>, %s: tensor<1024xf32>) -> tensor<64x1024xf32> {
          %m = ascend.graph.mul %x, %s : (tensor<64x1024xf32>, tensor<1024xf32>) -> tensor<64x1024xf32>
          %y = ascend.graph.softmax %m {axis = -1 : i64} : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
          func.return %y : tensor<64x1024xf32>
        }
        """,
        "vector",
        ["ND", "ND"],
        ["ND"],
    ),
    "layer_norm": (
        """
        func.func @f(%x: tensor<8x128x768xf16>, %g: tensor<768xf16>, %b: tensor<768xf16>)
            -> tensor<8x128x768xf16> {
          %y, %mean, %rstd = ascend.graph.layer_norm %x, %g, %b {axis = -1 : i64}
            : (tensor<8x128x768xf16>, tensor<768xf16>, tensor<768xf16>)
            -> (tensor<8x128x768xf16>, tensor<8x128x1xf32>, tensor<8x128x1xf32>)
          func.return %y : tensor<8x128x768xf16>
        }
        """,
        "vector",
        ["ND"] * 3,
        ["ND"],
    ),
    "reshape_only": (
        """
        func.func @f(%x: tensor<4x256xf16>) -> tensor<1024xf16> {
          %y = ascend.graph.reshape %x : (tensor<4x256xf16>) -> tensor<1024xf16>
          func.return %y : tensor<1024xf16>
        }
        """,
        "vector",
        ["ND"],
        ["ND"],
    ),
    "aicpu_f64": (
        """
        func.func @f(%x: tensor<300xf64>) -> tensor<300xf64> {
          %y = ascend.graph.exp %x : (tensor<300xf64>) -> tensor<300xf64>
          func.return %y : tensor<300xf64>
        }
        """,
        "aicpu",
        ["ND"],
        ["ND"],
    ),
}


@pytest.mark.parametrize("soc_name", ["Ascend910A", "Ascend910B2", "Ascend310P3"])
@pytest.mark.parametrize("name", sorted(SPREAD))
def test_never_faster_than_the_roofline(kernel, soc_name: str, name: str) -> None:
    soc = load_profile(soc_name).figures
    text, kind, in_formats, out_formats = SPREAD[name]
    base = kernel(text, kind, in_formats, out_formats)
    block_dims = {1, default_block_dim(base, soc), 10_000}
    tilings: list[dict[str, int]] = [{}, {"db": 1}, {"db": 2, "tiles": 1_000_000}]
    for block_dim in block_dims:
        for tiling in tilings:
            info = dataclasses.replace(base, block_dim=block_dim, tiling=tiling)
            assert roofline_check(info, soc) >= 1.0
            for sunk in (True, False):
                cost = kernel_cost(info, soc, sunk=sunk)
                assert cost.latency_us >= cost.roofline_us - 1e-9
                # The roofline itself: the memory bound alone, plus the launch.
                memory = hbm_us(cost.mte2_bytes + cost.mte3_bytes, soc)
                assert cost.roofline_us >= memory + cost.launch_us - 1e-9


def test_einsum_contracts_on_the_cube_and_multiplies_elementwise_on_the_vector_unit(kernel) -> None:
    text = """
    func.func @f(%a: tensor<4x32x64xf16>, %b: tensor<4x64x48xf16>, %c: tensor<4x32x64xf16>)
        -> (tensor<4x32x48xf16>, tensor<4x32x64xf16>) {
      %y = ascend.graph.einsum %a, %b {equation = "bij,bjk->bik"}
        : (tensor<4x32x64xf16>, tensor<4x64x48xf16>) -> tensor<4x32x48xf16>
      %z = ascend.graph.einsum %a, %c {equation = "bij,bij->bij"}
        : (tensor<4x32x64xf16>, tensor<4x32x64xf16>) -> tensor<4x32x64xf16>
      func.return %y, %z : tensor<4x32x48xf16>, tensor<4x32x64xf16>
    }
    """
    info = kernel(text, "cube", ["FRACTAL_NZ"] * 3, ["FRACTAL_NZ"] * 2, block_dim=1)
    contraction, product = (dataclasses.replace(info, ops=(op,)) for op in info.ops)
    cost = kernel_cost(contraction, B2)
    assert cost.flops == 2 * 4 * 32 * 64 * 48
    assert cost.cube_us == pytest.approx(cycles_us(4 * 2 * 4 * 3, B2))  # batch * M * K * N tiles
    elementwise = kernel_cost(product, B2)
    assert elementwise.cube_us == 0.0
    nbytes = 4 * 32 * 64 * 2
    assert elementwise.vector_us == pytest.approx(cycles_us(2 * nbytes / B2["vector_bytes_per_cycle"], B2))


def test_dynamic_shapes_are_errors(kernel) -> None:
    text = """
    func.func @f(%a: tensor<?x8xf16>) -> tensor<?x8xf16> {
      %r = ascend.graph.relu %a : (tensor<?x8xf16>) -> tensor<?x8xf16>
      func.return %r : tensor<?x8xf16>
    }
    """
    with pytest.raises(CompileError, match="static shapes"):
        kernel_cost(kernel(text, "vector", ["ND"], ["ND"]), B2)


def test_a_target_without_a_figure_the_gate_reads_is_a_compile_error() -> None:
    """`ge-assign-formats` costs chained products on the module's target: a target naming only
    some figures (as a hand-written module may) gets a CompileError naming the missing one."""
    text = """
    builtin.module attributes {ascend.target = #ascend.target<"Ascend910B2", {cube_cores = 24 : i64,
        vector_cores = 48 : i64, l0a_bytes = 65536 : i64, l0b_bytes = 65536 : i64,
        l0c_bytes = 131072 : i64, ub_bytes = 196608 : i64}>} {
      func.func @f(%x: tensor<32x64xf32>) -> tensor<32x16xf32> {
        %w1 = ascend.graph.const splat<0.5 : f32> : tensor<64x128xf32>
        %w2 = ascend.graph.const splat<0.5 : f32> : tensor<128x16xf32>
        %h = ascend.kernel.cube(%x, %w1) : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32> {
        ^bb0(%a: tensor<32x64xf32>, %b: tensor<64x128xf32>):
          %0 = ascend.graph.matmul %a, %b : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
          ascend.kernel.yield %0 : tensor<32x128xf32>
        }
        %y = ascend.kernel.cube(%h, %w2) : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32> {
        ^bb0(%a: tensor<32x128xf32>, %b: tensor<128x16xf32>):
          %0 = ascend.graph.matmul %a, %b : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32>
          ascend.kernel.yield %0 : tensor<32x16xf32>
        }
        func.return %y : tensor<32x16xf32>
      }
    }
    """
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(CompileError, match="has no figure '.*', which the cost model reads"):
        AssignFormatsPass().apply(make_context(), module)
