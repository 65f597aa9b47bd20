// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// `ascend.kernel.cube` and `ascend.kernel.vector` round trip with their bodies.

// CHECK-LABEL: func.func @cube
// CHECK-SAME:    (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
// CHECK-NEXT:    %[[Y:.*]] = ascend.kernel.cube(%[[X]], %[[W]]) {kernel_name = "conv_0"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<1x3x8x8xf32>, %[[B:.*]]: tensor<4x3x3x3xf32>):
// CHECK-NEXT:      %[[C:.*]] = ascend.graph.conv2d %[[A]], %[[B]] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT:      ascend.kernel.yield %[[C]] : tensor<1x4x6x6xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x6x6xf32>
func.func @cube(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = ascend.kernel.cube(%x, %w) {kernel_name = "conv_0"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  ^bb0(%a : tensor<1x3x8x8xf32>, %b : tensor<4x3x3x3xf32>):
    %c = ascend.graph.conv2d %a, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    ascend.kernel.yield %c : tensor<1x4x6x6xf32>
  }
  func.return %y : tensor<1x4x6x6xf32>
}

// CHECK-LABEL: func.func @vector
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[Y:.*]] = ascend.kernel.vector(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4xf32>):
// CHECK-NEXT:      %[[R:.*]] = ascend.graph.relu %[[A]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      ascend.kernel.yield %[[R]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<4xf32>
func.func @vector(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = ascend.kernel.vector(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.kernel.yield %r : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// A fused body with two results, and a kernel without inputs.
// CHECK-LABEL: func.func @fused
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[Y0:[^,]*]], %[[Y1:.*]] = ascend.kernel.vector(%[[X]]) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4xf32>):
// CHECK-NEXT:      %[[C:.*]] = ascend.graph.const splat<1.000000e+00 : f32> : tensor<4xf32>
// CHECK-NEXT:      %[[S:.*]] = ascend.graph.add %[[A]], %[[C]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      %[[R:.*]] = ascend.graph.reshape %[[S]] : (tensor<4xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:      ascend.kernel.yield %[[S]], %[[R]] : tensor<4xf32>, tensor<2x2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Z:.*]] = ascend.kernel.vector() : () -> tensor<4xf32> {
// CHECK-NEXT:      %[[D:.*]] = ascend.graph.const dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:      ascend.kernel.yield %[[D]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y0]], %[[Y1]], %[[Z]] : tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>
func.func @fused(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>) {
  %y:2 = ascend.kernel.vector(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
  ^bb0(%a : tensor<4xf32>):
    %c = ascend.graph.const splat<1.0 : f32> : tensor<4xf32>
    %s = ascend.graph.add %a, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %r = ascend.graph.reshape %s : (tensor<4xf32>) -> tensor<2x2xf32>
    ascend.kernel.yield %s, %r : tensor<4xf32>, tensor<2x2xf32>
  }
  %z = ascend.kernel.vector() : () -> tensor<4xf32> {
    %d = ascend.graph.const dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    ascend.kernel.yield %d : tensor<4xf32>
  }
  func.return %y#0, %y#1, %z : tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>
}

// Format conversions, views and concat views round trip; a tiled kernel keeps its schedule.

// CHECK-LABEL: func.func @formats
// CHECK-NEXT:    %[[T:.*]] = ascend.kernel.trans_data %{{.*}} : (tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>>
// CHECK-NEXT:    %[[R:.*]] = ascend.kernel.vector(%[[T]]) {block_dim = 1 : i64, tiling = #ascend.vector_tiling<tile = 256, db = 2, tiles = 1>}
// CHECK:         %[[C:.*]] = ascend.kernel.concat_view %[[R]], %[[R2:.*]] {axis = 1 : i64} : (tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>>, tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>>) -> tensor<1x32x1x1xf32, #ascend.format<NC1HWC0>>
// CHECK-NEXT:    %[[V:.*]] = ascend.kernel.view %[[C]] : (tensor<1x32x1x1xf32, #ascend.format<NC1HWC0>>) -> tensor<1x32xf32>
func.func @formats(%x: tensor<1x16x1x1xf32>) -> tensor<1x32xf32> {
  %t = ascend.kernel.trans_data %x : (tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>>
  %r = ascend.kernel.vector(%t) {block_dim = 1 : i64, tiling = #ascend.vector_tiling<tile = 256, db = 2, tiles = 1>} : (tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>> {
  ^bb0(%a : tensor<1x16x1x1xf32>):
    %0 = ascend.graph.relu %a : (tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32>
    ascend.kernel.yield %0 : tensor<1x16x1x1xf32>
  }
  %r2 = ascend.kernel.vector(%t) : (tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>> {
  ^bb0(%a : tensor<1x16x1x1xf32>):
    %0 = ascend.graph.neg %a : (tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32>
    ascend.kernel.yield %0 : tensor<1x16x1x1xf32>
  }
  %c = ascend.kernel.concat_view %r, %r2 {axis = 1 : i64} : (tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>>, tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>>) -> tensor<1x32x1x1xf32, #ascend.format<NC1HWC0>>
  %v = ascend.kernel.view %c : (tensor<1x32x1x1xf32, #ascend.format<NC1HWC0>>) -> tensor<1x32xf32>
  func.return %v : tensor<1x32xf32>
}
