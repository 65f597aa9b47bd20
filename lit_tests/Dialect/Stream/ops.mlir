// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// An outlined kernel and a model with input binding, weights in their three forms, launches on
// two streams ordered by an event, and the output list round trip.

// CHECK:      builtin.module attributes {ascend.target = #ascend.target<"Ascend910B2", {c0 = 16 : i64, ub_bytes = 196608 : i64}>} {
// CHECK-NEXT:   ascend.stream.kernel @matmul_0 {unit = #ascend.unit<cube>, kernel_name = "mm", tiling = #ascend.cube_tiling<m = 16, n = 16, k = 16, db = 1, tiles = 1>} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT:   ^bb0(%[[A:.*]]: tensor<1x4xf32>, %[[B:.*]]: tensor<4x4xf32>):
// CHECK-NEXT:     %[[C:.*]] = ascend.graph.matmul %[[A]], %[[B]] : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:     ascend.stream.return %[[C]] : tensor<1x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   ascend.stream.kernel @add_0 {unit = #ascend.unit<vector>} : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT:   ^bb0(%[[A:.*]]: tensor<1x4xf32>, %[[B:.*]]: tensor<4xf32>):
// CHECK-NEXT:     %[[C:.*]] = ascend.graph.add %[[A]], %[[B]] : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:     ascend.stream.return %[[C]] : tensor<1x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 96 : i64, input_names = ["x"], output_names = ["y", "z"]} {
// CHECK-NEXT:     %[[X:.*]] = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<1x4xf32>
// CHECK-NEXT:     %[[T:.*]] = ascend.stream.buffer offset 16 size 16 : memref<1x4xf32>
// CHECK-NEXT:     %[[Y:.*]] = ascend.stream.buffer offset 32 size 16 : memref<1x4xf32>
// CHECK-NEXT:     %[[Z:.*]] = ascend.stream.buffer offset 48 size 16 : memref<1x4xf32>
// CHECK-NEXT:     %[[W:.*]] = ascend.stream.weight dense_resource<fc.weight> : tensor<4x4xf32> offset 0 size 64 : memref<4x4xf32>
// CHECK-NEXT:     %[[D:.*]] = ascend.stream.weight dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> offset 64 size 16 : memref<4xf32>
// CHECK-NEXT:     %[[S:.*]] = ascend.stream.weight 5.000000e-01 : f32 offset 80 size 16 : memref<4xf32>
// CHECK-NEXT:     ascend.stream.launch @matmul_0(%[[X]], %[[W]]) -> (%[[T]]) stream 0 : (memref<1x4xf32>, memref<4x4xf32>) -> (memref<1x4xf32>)
// CHECK-NEXT:     ascend.stream.event_record event 0 stream 0
// CHECK-NEXT:     ascend.stream.launch @add_0(%[[T]], %[[D]]) -> (%[[Y]]) stream 0 : (memref<1x4xf32>, memref<4xf32>) -> (memref<1x4xf32>)
// CHECK-NEXT:     ascend.stream.event_wait event 0 stream 1
// CHECK-NEXT:     ascend.stream.launch @add_0(%[[T]], %[[S]]) -> (%[[Z]]) stream 1 : (memref<1x4xf32>, memref<4xf32>) -> (memref<1x4xf32>)
// CHECK-NEXT:     ascend.stream.outputs %[[Y]], %[[Z]] : memref<1x4xf32>, memref<1x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
builtin.module attributes {ascend.target = #ascend.target<"Ascend910B2", {c0 = 16 : i64, ub_bytes = 196608 : i64}>} {
  ascend.stream.kernel @matmul_0 {unit = #ascend.unit<cube>, kernel_name = "mm", tiling = #ascend.cube_tiling<m = 16, n = 16, k = 16, db = 1, tiles = 1>} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32> {
  ^bb0(%a : tensor<1x4xf32>, %b : tensor<4x4xf32>):
    %c = ascend.graph.matmul %a, %b : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
    ascend.stream.return %c : tensor<1x4xf32>
  }
  ascend.stream.kernel @add_0 {unit = #ascend.unit<vector>} : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32> {
  ^bb0(%a : tensor<1x4xf32>, %b : tensor<4xf32>):
    %c = ascend.graph.add %a, %b : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
    ascend.stream.return %c : tensor<1x4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 96 : i64, input_names = ["x"], output_names = ["y", "z"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<1x4xf32>
    %t = ascend.stream.buffer offset 16 size 16 : memref<1x4xf32>
    %y = ascend.stream.buffer offset 32 size 16 : memref<1x4xf32>
    %z = ascend.stream.buffer offset 48 size 16 : memref<1x4xf32>
    %w = ascend.stream.weight dense_resource<fc.weight> : tensor<4x4xf32> offset 0 size 64 : memref<4x4xf32>
    %b = ascend.stream.weight dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> offset 64 size 16 : memref<4xf32>
    %s = ascend.stream.weight 5.000000e-01 : f32 offset 80 size 16 : memref<4xf32>
    ascend.stream.launch @matmul_0 (%x, %w) -> (%t) stream 0 : (memref<1x4xf32>, memref<4x4xf32>) -> (memref<1x4xf32>)
    ascend.stream.event_record event 0 stream 0
    ascend.stream.launch @add_0 (%t, %b) -> (%y) stream 0 : (memref<1x4xf32>, memref<4xf32>) -> (memref<1x4xf32>)
    ascend.stream.event_wait event 0 stream 1
    ascend.stream.launch @add_0 (%t, %s) -> (%z) stream 1 : (memref<1x4xf32>, memref<4xf32>) -> (memref<1x4xf32>)
    ascend.stream.outputs %y, %z : memref<1x4xf32>, memref<1x4xf32>
  }
}
