// RUN: ge-opt %s -p ge-annotate-symbols --split-input-file | filecheck %s
// RUN: ge-opt %s -p ge-annotate-symbols,ge-annotate-symbols --split-input-file | filecheck %s

// Each result with a symbol gets its dimensions: a symbol stays itself through flatten, concat
// off its axis and relu; concat along it sums (2*batch); a static constant is left alone.

// CHECK-LABEL: func.func @flatten_concat
// CHECK:         ascend.graph.flatten %x {ascend.dims = ["batch", 192 : i64], axis = 1 : i64}
// CHECK-NEXT:    ascend.graph.concat %{{.*}}, %y {ascend.dims = ["batch", 196 : i64], axis = 1 : i64}
// CHECK-NEXT:    ascend.graph.relu %{{.*}} {ascend.dims = ["batch", 196 : i64]}
// CHECK-NEXT:    ascend.graph.const splat<1.000000e+00 : f32> : tensor<4xf32>
// CHECK-NEXT:    ascend.graph.concat %{{.*}}, %{{.*}} {ascend.dims = ["2*batch", 192 : i64], axis = 0 : i64}
func.func @flatten_concat(%x: tensor<?x3x8x8xf32> {ascend.name = "x", ascend.dims = ["batch", 3 : i64, 8 : i64, 8 : i64]},
                          %y: tensor<?x4xf32> {ascend.name = "y", ascend.dims = ["batch", 4 : i64]}) -> tensor<?x196xf32> {
  %f = ascend.graph.flatten %x {axis = 1 : i64} : (tensor<?x3x8x8xf32>) -> tensor<?x192xf32>
  %c = ascend.graph.concat %f, %y {axis = 1 : i64} : (tensor<?x192xf32>, tensor<?x4xf32>) -> tensor<?x196xf32>
  %r = ascend.graph.relu %c : (tensor<?x196xf32>) -> tensor<?x196xf32>
  %w = ascend.graph.const splat<1.0 : f32> : tensor<4xf32>
  %d = ascend.graph.concat %f, %f {axis = 0 : i64} : (tensor<?x192xf32>, tensor<?x192xf32>) -> tensor<?x192xf32>
  func.return %r : tensor<?x196xf32>
}

// -----

// Two symbols: a matmul of [batch, seq, 16] by its transpose is [batch, seq, seq]; an op with
// two results gets a list per result.

// CHECK-LABEL: func.func @two_symbols
// CHECK:         ascend.graph.transpose %h {ascend.dims = ["batch", 16 : i64, "seq"], perm = array<i64: 0, 2, 1>}
// CHECK-NEXT:    ascend.graph.matmul %h, %{{.*}} {ascend.dims = ["batch", "seq", "seq"]}
// CHECK-NEXT:    ascend.graph.top_k %{{.*}} {ascend.dims = {{\[}}["batch", "seq", 2 : i64], ["batch", "seq", 2 : i64]], k = 2 : i64, axis = -1 : i64}
func.func @two_symbols(%h: tensor<?x?x16xf32> {ascend.name = "h", ascend.dims = ["batch", "seq", 16 : i64]}) -> tensor<?x?x2xf32> {
  %t = ascend.graph.transpose %h {perm = array<i64: 0, 2, 1>} : (tensor<?x?x16xf32>) -> tensor<?x16x?xf32>
  %s = ascend.graph.matmul %h, %t : (tensor<?x?x16xf32>, tensor<?x16x?xf32>) -> tensor<?x?x?xf32>
  %v, %i = ascend.graph.top_k %s {k = 2 : i64, axis = -1 : i64} : (tensor<?x?x?xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  func.return %v : tensor<?x?x2xf32>
}

// -----

// A static graph gets no annotation.

// CHECK-LABEL: func.func @static
// CHECK-NOT:     ascend.dims
func.func @static(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = ascend.graph.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
