// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// Reductions, arg-reductions, scans, top-k, the softmax family and the normalizations survive a
// round trip through the custom and the generic printer, with their inferred result types.

// CHECK-LABEL: func.func @reductions
// CHECK-NEXT: ascend.graph.reduce_sum %{{.*}} {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: ascend.graph.reduce_mean %{{.*}} {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
// CHECK-NEXT: ascend.graph.reduce_max %{{.*}} {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK-NEXT: ascend.graph.reduce_min %{{.*}} {axes = array<i64: 1>} : (tensor<4x5xi1>) -> tensor<4x1xi1>
// CHECK-NEXT: ascend.graph.reduce_prod %{{.*}} {axes = array<i64: 0>} : (tensor<4x5xi32>) -> tensor<1x5xi32>
// CHECK-NEXT: ascend.graph.reduce_l1 %{{.*}} {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: ascend.graph.reduce_l2 %{{.*}} {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: ascend.graph.reduce_log_sum %{{.*}} {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: ascend.graph.reduce_log_sum_exp %{{.*}} {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: ascend.graph.reduce_sum_square %{{.*}} {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
func.func @reductions(%x: tensor<2x3x4xf32>, %b: tensor<4x5xi1>, %i: tensor<4x5xi32>) {
  %0 = ascend.graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %1 = ascend.graph.reduce_mean %x {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %2 = ascend.graph.reduce_max %x {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  %3 = ascend.graph.reduce_min %b {axes = array<i64: 1>} : (tensor<4x5xi1>) -> tensor<4x1xi1>
  %4 = ascend.graph.reduce_prod %i {axes = array<i64: 0>} : (tensor<4x5xi32>) -> tensor<1x5xi32>
  %5 = ascend.graph.reduce_l1 %x {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %6 = ascend.graph.reduce_l2 %x {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %7 = ascend.graph.reduce_log_sum %x {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %8 = ascend.graph.reduce_log_sum_exp %x {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %9 = ascend.graph.reduce_sum_square %x {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  func.return
}

// An empty `axes` reduces nothing; dynamic dimensions pass through.
// CHECK-LABEL: func.func @reduction_edges
// CHECK-NEXT: ascend.graph.reduce_sum_square %{{.*}} {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.reduce_mean %{{.*}} {axes = array<i64: 1>, keepdims = false} : (tensor<?x?xf16>) -> tensor<?xf16>
func.func @reduction_edges(%x: tensor<2x3xf32>, %d: tensor<?x?xf16>) {
  %0 = ascend.graph.reduce_sum_square %x {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = ascend.graph.reduce_mean %d {axes = array<i64: 1>, keepdims = false} : (tensor<?x?xf16>) -> tensor<?xf16>
  func.return
}

// CHECK-LABEL: func.func @along_one_axis
// CHECK-NEXT: ascend.graph.arg_max %{{.*}} {axis = 1 : i64, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xi64>
// CHECK-NEXT: ascend.graph.arg_min %{{.*}} {axis = -2 : i64, select_last_index = true} : (tensor<2x3xf32>) -> tensor<1x3xi64>
// CHECK-NEXT: ascend.graph.cum_sum %{{.*}} {axis = 0 : i64, exclusive = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.cum_prod %{{.*}} {axis = -1 : i64, reverse = true} : (tensor<4x5xi32>) -> tensor<4x5xi32>
// CHECK-NEXT: ascend.graph.cum_max %{{.*}} {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.cum_min %{{.*}} {axis = 0 : i64, exclusive = true} : (tensor<4x5xi32>) -> tensor<4x5xi32>
// CHECK-NEXT: ascend.graph.log_cum_sum_exp %{{.*}} {axis = -1 : i64, reverse = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{.*}}, %{{.*}} = ascend.graph.top_k %{{.*}} {k = 2 : i64, axis = -1 : i64, largest = false} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
// CHECK-NEXT: %{{.*}}, %{{.*}} = ascend.graph.top_k %{{.*}} {k = 1 : i64, axis = 0 : i64} : (tensor<?x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xi64>)
func.func @along_one_axis(%x: tensor<2x3xf32>, %i: tensor<4x5xi32>, %d: tensor<?x3xf32>) {
  %0 = ascend.graph.arg_max %x {axis = 1 : i64, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xi64>
  %1 = ascend.graph.arg_min %x {axis = -2 : i64, select_last_index = true} : (tensor<2x3xf32>) -> tensor<1x3xi64>
  %2 = ascend.graph.cum_sum %x {axis = 0 : i64, exclusive = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = ascend.graph.cum_prod %i {axis = -1 : i64, reverse = true} : (tensor<4x5xi32>) -> tensor<4x5xi32>
  %cum_max = ascend.graph.cum_max %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %cum_min = ascend.graph.cum_min %i {axis = 0 : i64, exclusive = true} : (tensor<4x5xi32>) -> tensor<4x5xi32>
  %lcse = ascend.graph.log_cum_sum_exp %x {axis = -1 : i64, reverse = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4, %5 = ascend.graph.top_k %x {k = 2 : i64, axis = -1 : i64, largest = false} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  %6, %7 = ascend.graph.top_k %d {k = 1 : i64, axis = 0 : i64} : (tensor<?x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xi64>)
  func.return
}

// CHECK-LABEL: func.func @softmax_family
// CHECK-NEXT: ascend.graph.softmax %{{.*}} {axis = 0 : i64} : (tensor<2x3xf16>) -> tensor<2x3xf16>
// CHECK-NEXT: ascend.graph.log_softmax %{{.*}} : (tensor<2x3xf16>) -> tensor<2x3xf16>
// CHECK-NEXT: ascend.graph.hardmax %{{.*}} {axis = -1 : i64} : (tensor<2x3xf16>) -> tensor<2x3xf16>
func.func @softmax_family(%x: tensor<2x3xf16>) {
  %0 = ascend.graph.softmax %x {axis = 0 : i64} : (tensor<2x3xf16>) -> tensor<2x3xf16>
  %1 = ascend.graph.log_softmax %x : (tensor<2x3xf16>) -> tensor<2x3xf16>
  %2 = ascend.graph.hardmax %x {axis = -1 : i64} : (tensor<2x3xf16>) -> tensor<2x3xf16>
  func.return
}

// CHECK-LABEL: func.func @normalizations
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = ascend.graph.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x3x4xf16>, tensor<4xf16>, tensor<4xf16>) -> (tensor<2x3x4xf16>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = ascend.graph.layer_norm %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf16>, tensor<1x4xf16>) -> (tensor<2x3x4xf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
// CHECK-NEXT: ascend.graph.rms_norm %{{.*}}, %{{.*}} {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x3x4xf16>, tensor<4xf16>) -> tensor<2x3x4xf16>
// CHECK-NEXT: ascend.graph.group_norm %{{.*}}, %{{.*}}, %{{.*}} {num_groups = 2 : i64, epsilon = 1.000000e-02 : f32} : (tensor<3x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4x2x2xf32>
// CHECK-NEXT: ascend.graph.mean_variance_norm %{{.*}} {axes = array<i64: 0, 2, 3>} : (tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32>
// CHECK-NEXT: ascend.graph.lp_norm %{{.*}} {axis = 1 : i64, p = 1 : i64} : (tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32>
// CHECK-NEXT: ascend.graph.lrn %{{.*}} {size = 3 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32} : (tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32>
func.func @normalizations(%h: tensor<2x3x4xf16>, %s: tensor<4xf16>, %r: tensor<1x4xf16>, %x: tensor<3x4x2x2xf32>, %c: tensor<4xf32>) {
  %0, %1, %2 = ascend.graph.layer_norm %h, %s, %s {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x3x4xf16>, tensor<4xf16>, tensor<4xf16>) -> (tensor<2x3x4xf16>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  %3, %4, %5 = ascend.graph.layer_norm %h, %r {axis = 1 : i64} : (tensor<2x3x4xf16>, tensor<1x4xf16>) -> (tensor<2x3x4xf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  %6 = ascend.graph.rms_norm %h, %s {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x3x4xf16>, tensor<4xf16>) -> tensor<2x3x4xf16>
  %7 = ascend.graph.group_norm %x, %c, %c {num_groups = 2 : i64, epsilon = 1.000000e-02 : f32} : (tensor<3x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4x2x2xf32>
  %8 = ascend.graph.mean_variance_norm %x {axes = array<i64: 0, 2, 3>} : (tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32>
  %9 = ascend.graph.lp_norm %x {axis = 1 : i64, p = 1 : i64} : (tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32>
  %10 = ascend.graph.lrn %x {size = 3 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32} : (tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32>
  func.return
}
