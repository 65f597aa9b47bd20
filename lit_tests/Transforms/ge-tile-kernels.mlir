// RUN: ge-opt %s -p ge-tile-kernels | filecheck %s

// Tiles are sized for the module's target (Ascend910B2 here: 64 KiB L0A/L0B, 128 KiB L0C,
// 192 KiB UB, 24 cube and 48 vector cores) and block_dim is min(cores, tiles).

// The conv is a 3136 x 576 by 576 x 64 product: tiles start at 256 x 64 x 256 and halve their
// largest side until two of each fit L0A (m x k x 4 bytes), L0B and L0C: 64 x 64 x 128 fills
// L0A and L0B exactly; 49 x 1 tiles, on all 24 cube cores.
// CHECK:      ascend.kernel.cube
// CHECK-SAME:   tiling = #ascend.cube_tiling<m = 64, n = 64, k = 128, db = 2, tiles = 49>, block_dim = 24 : i64

// The relu streams 8 bytes per element (in and out, fp32): the largest power of two that fits
// the UB twice is 8192 elements, 25 tiles of 200,704, one per vector core.
// CHECK:      ascend.kernel.vector
// CHECK-SAME:   tiling = #ascend.vector_tiling<tile = 8192, db = 2, tiles = 25>, block_dim = 25 : i64

// An AI CPU kernel runs on one core, untiled.
// CHECK:      ascend.kernel.aicpu
// CHECK-SAME:   block_dim = 1 : i64
// CHECK-NOT:    tiling
builtin.module attributes {ascend.target = #ascend.target<"Ascend910B2", {cube_cores = 24 : i64, vector_cores = 48 : i64, l0a_bytes = 65536 : i64, l0b_bytes = 65536 : i64, l0c_bytes = 131072 : i64, ub_bytes = 196608 : i64}>} {
  func.func @main(%x: tensor<1x64x56x56xf32>, %d: tensor<4xf64>) -> (tensor<1x64x56x56xf32>, tensor<4xf64>) {
    %w = ascend.graph.const splat<0.5 : f32> : tensor<64x64x3x3xf32>
    %c = ascend.kernel.cube(%x, %w) : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32> {
    ^bb0(%a: tensor<1x64x56x56xf32>, %b: tensor<64x64x3x3xf32>):
      %0 = ascend.graph.conv2d %a, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
      ascend.kernel.yield %0 : tensor<1x64x56x56xf32>
    }
    %r = ascend.kernel.vector(%c) : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
    ^bb0(%a: tensor<1x64x56x56xf32>):
      %0 = ascend.graph.relu %a : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
      ascend.kernel.yield %0 : tensor<1x64x56x56xf32>
    }
    %e = ascend.kernel.aicpu(%d) : (tensor<4xf64>) -> tensor<4xf64> {
    ^bb0(%a: tensor<4xf64>):
      %0 = ascend.graph.exp %a : (tensor<4xf64>) -> tensor<4xf64>
      ascend.kernel.yield %0 : tensor<4xf64>
    }
    func.return %r, %e : tensor<1x64x56x56xf32>, tensor<4xf64>
  }
}
