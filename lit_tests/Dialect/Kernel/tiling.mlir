// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// A kernel's tiles are typed attributes that print as they are written, sizes in a fixed order.

// CHECK-LABEL: func.func @tiled
// CHECK:       ascend.kernel.cube
// CHECK-SAME:    tiling = #ascend.cube_tiling<m = 256, n = 64, k = 64, db = 2, tiles = 49>
// CHECK:       ascend.kernel.vector
// CHECK-SAME:    tiling = #ascend.vector_tiling<tile = 4096, db = 1, tiles = 8>
func.func @tiled(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = ascend.kernel.cube(%x, %w) {block_dim = 24 : i64, tiling = #ascend.cube_tiling<m = 256, n = 64, k = 64, db = 2, tiles = 49>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%a : tensor<64x64xf32>, %b : tensor<64x64xf32>):
    %0 = ascend.graph.matmul %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    ascend.kernel.yield %0 : tensor<64x64xf32>
  }
  %r = ascend.kernel.vector(%y) {tiling = #ascend.vector_tiling<tile = 4096, db = 1, tiles = 8>} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%a : tensor<64x64xf32>):
    %0 = ascend.graph.relu %a : (tensor<64x64xf32>) -> tensor<64x64xf32>
    ascend.kernel.yield %0 : tensor<64x64xf32>
  }
  func.return %r : tensor<64x64xf32>
}

// The units and kinds of outlined kernels are typed too.
// CHECK:       ascend.stream.kernel @convert {unit = #ascend.unit<vector>, kind = #ascend.kind<trans_data>}
// CHECK-SAME:    : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>
ascend.stream.kernel @convert {unit = #ascend.unit<vector>, kind = #ascend.kind<trans_data>} : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>> {
^bb0(%a : tensor<1x16x2x2xf32>):
  ascend.stream.return %a : tensor<1x16x2x2xf32>
}
