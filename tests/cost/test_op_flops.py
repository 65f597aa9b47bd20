"""`op_flops`: useful FLOPs of graph ops, against counts written out from the op definitions."""

from __future__ import annotations

from ge.cost import op_flops

CONV = """
func.func @f(%x: tensor<1x64x56x56xf16>, %w: tensor<64x64x3x3xf16>, %b: tensor<64xf16>)
    -> tensor<1x64x56x56xf16> {
  %y = ascend.graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>}
    : (tensor<1x64x56x56xf16>, tensor<64x64x3x3xf16>, tensor<64xf16>) -> tensor<1x64x56x56xf16>
  func.return %y : tensor<1x64x56x56xf16>
}
"""


def test_conv_counts_two_flops_per_mac_and_the_bias_add(parse_ops) -> None:
    (conv,) = parse_ops(CONV)
    macs = 1 * 64 * 56 * 56 * 64 * 3 * 3  # N * Cout * Ho * Wo * Cin * kh * kw
    assert op_flops(conv) == 2 * macs + 1 * 64 * 56 * 56


def test_grouped_strided_conv(parse_ops) -> None:
    (conv,) = parse_ops("""
    func.func @f(%x: tensor<2x32x15x15xf32>, %w: tensor<64x8x3x3xf32>) -> tensor<2x64x7x7xf32> {
      %y = ascend.graph.conv2d %x, %w {strides = array<i64: 2, 2>, groups = 4 : i64}
        : (tensor<2x32x15x15xf32>, tensor<64x8x3x3xf32>) -> tensor<2x64x7x7xf32>
      func.return %y : tensor<2x64x7x7xf32>
    }
    """)
    # Each of the 64 output channels sees 32 / 4 = 8 input channels; (15 - 3) / 2 + 1 = 7.
    assert op_flops(conv) == 2 * (2 * 64 * 7 * 7 * 8 * 3 * 3)


def test_gemm_with_transposed_b_and_bias(parse_ops) -> None:
    (gemm,) = parse_ops("""
    func.func @f(%a: tensor<8x512xf16>, %b: tensor<1000x512xf16>, %c: tensor<1000xf16>)
        -> tensor<8x1000xf16> {
      %y = ascend.graph.gemm %a, %b, %c {trans_b = true}
        : (tensor<8x512xf16>, tensor<1000x512xf16>, tensor<1000xf16>) -> tensor<8x1000xf16>
      func.return %y : tensor<8x1000xf16>
    }
    """)
    assert op_flops(gemm) == 2 * 8 * 512 * 1000 + 8 * 1000


def test_batched_matmul(parse_ops) -> None:
    same, broadcast = parse_ops("""
    func.func @f(%a: tensor<4x8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<2x1x8x16xf32>,
        %d: tensor<3x16x4xf32>) -> (tensor<4x8x32xf32>, tensor<2x3x8x4xf32>) {
      %y = ascend.graph.matmul %a, %b : (tensor<4x8x16xf32>, tensor<16x32xf32>) -> tensor<4x8x32xf32>
      %z = ascend.graph.matmul %c, %d : (tensor<2x1x8x16xf32>, tensor<3x16x4xf32>) -> tensor<2x3x8x4xf32>
      func.return %y, %z : tensor<4x8x32xf32>, tensor<2x3x8x4xf32>
    }
    """)
    assert op_flops(same) == 2 * 4 * 8 * 16 * 32
    assert op_flops(broadcast) == 2 * (2 * 3) * 8 * 16 * 4


def test_fused_conv_is_its_conv_and_its_epilogue(parse_ops) -> None:
    (fused,) = parse_ops("""
    func.func @f(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>,
        %res: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
      %y = ascend.graph.fused_conv2d %x, %w, %b, %res {pads = array<i64: 1, 1, 1, 1>, extras = 1 : i64}
        : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>, tensor<1x8x8x8xf32>)
        -> tensor<1x8x8x8xf32> {
      ^bb0(%acc: tensor<1x8x8x8xf32>, %r: tensor<1x8x8x8xf32>):
        %0 = ascend.graph.add %acc, %r : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
        %1 = ascend.graph.relu %0 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
        ascend.graph.yield %1 : tensor<1x8x8x8xf32>
      }
      func.return %y : tensor<1x8x8x8xf32>
    }
    """)
    out = 1 * 8 * 8 * 8
    conv = 2 * out * 8 * 3 * 3 + out  # products, then the bias add
    assert op_flops(fused) == conv + out + out  # + residual add + relu


def test_attention_counts_both_matmuls(parse_ops) -> None:
    (attention,) = parse_ops("""
    func.func @f(%q: tensor<2x8x64x32xf16>, %k: tensor<2x2x128x32xf16>, %v: tensor<2x2x128x16xf16>)
        -> tensor<2x8x64x16xf16> {
      %y = ascend.graph.attention %q, %k, %v
        : (tensor<2x8x64x32xf16>, tensor<2x2x128x32xf16>, tensor<2x2x128x16xf16>) -> tensor<2x8x64x16xf16>
      func.return %y : tensor<2x8x64x16xf16>
    }
    """)
    scores = 2 * 8 * 64 * 128
    matmuls = 2 * scores * 32 + 2 * scores * 16
    # The rest is vector arithmetic on the scores: at least the scale and softmax's exp, sum, divide.
    assert matmuls + 4 * scores <= op_flops(attention) <= matmuls + 8 * scores


def test_elementwise_and_data_movement(parse_ops) -> None:
    add, transpose, reshape = parse_ops("""
    func.func @f(%a: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<24xf32> {
      %s = ascend.graph.add %a, %b : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
      %t = ascend.graph.transpose %s {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
      %r = ascend.graph.reshape %t : (tensor<6x4xf32>) -> tensor<24xf32>
      func.return %r : tensor<24xf32>
    }
    """)
    assert op_flops(add) == 24
    assert op_flops(transpose) == 0
    assert op_flops(reshape) == 0
