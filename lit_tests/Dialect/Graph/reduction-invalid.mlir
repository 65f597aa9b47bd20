// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks one rule of a reduction, softmax or normalization verifier.

// CHECK: {{^}}'ascend.graph.reduce_sum': 'axes' [-1] must lie in [0, 2) (normalized)
func.func @reduce_negative_axis(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.reduce_sum %x {axes = array<i64: -1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.reduce_mean': 'axes' [1, 0] must be sorted and unique
func.func @reduce_unsorted_axes(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.reduce_mean %x {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.reduce_max': 'axes' [1, 1] must be sorted and unique
func.func @reduce_repeated_axis(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.reduce_max %x {axes = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.reduce_sum': result type tensor<2x1xf32> does not match the inferred type tensor<2xf32>
func.func @reduce_keepdims_mismatch(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.reduce_sum': i1 (bool) input is only reducible by max and min
func.func @reduce_sum_of_bool(%x: tensor<2x3xi1>) {
  %0 = ascend.graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<2x3xi1>) -> tensor<2x1xi1>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.arg_max': result type tensor<2xi32> does not match the inferred type tensor<2xi64>
func.func @arg_max_result_type(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.arg_max %x {axis = 1 : i64, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.arg_min': axis 2 is out of range for rank 2
func.func @arg_min_axis(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.arg_min %x {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.arg_max': axis 1 is empty: it has no extreme
func.func @arg_max_of_nothing(%x: tensor<2x0xf32>) {
  %0 = ascend.graph.arg_max %x {axis = 1 : i64} : (tensor<2x0xf32>) -> tensor<2x1xi64>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.cum_sum': axis -3 is out of range for rank 2
func.func @cum_sum_axis(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.cum_sum %x {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.log_cum_sum_exp': the operand must be floating-point, got i32
func.func @log_cum_sum_exp_integer(%x: tensor<2x3xi32>) {
  %0 = ascend.graph.log_cum_sum_exp %x {axis = 0 : i64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.top_k': k = 4 exceeds the 3 elements of axis 1
func.func @top_k_too_many(%x: tensor<2x3xf32>) {
  %0, %1 = ascend.graph.top_k %x {k = 4 : i64} : (tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.top_k': result type tensor<2x2xi32> does not match the inferred type tensor<2x2xi64>
func.func @top_k_index_type(%x: tensor<2x3xf32>) {
  %0, %1 = ascend.graph.top_k %x {k = 2 : i64} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.log_softmax': input must have a float element type, got i32
func.func @log_softmax_of_integers(%x: tensor<2x3xi32>) {
  %0 = ascend.graph.log_softmax %x : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.hardmax': axis 2 is out of range for rank 2
func.func @hardmax_axis(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.hardmax %x {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.layer_norm': 'scale' of shape [3] does not broadcast to [2, 3, 4]
func.func @layer_norm_scale_shape(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>) {
  %0, %1, %2 = ascend.graph.layer_norm %x, %s : (tensor<2x3x4xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.layer_norm': result type tensor<2x3x1xf16> does not match the inferred type tensor<2x3x1xf32>
func.func @layer_norm_statistics_type(%x: tensor<2x3x4xf16>, %s: tensor<4xf16>) {
  %0, %1, %2 = ascend.graph.layer_norm %x, %s : (tensor<2x3x4xf16>, tensor<4xf16>) -> (tensor<2x3x4xf16>, tensor<2x3x1xf16>, tensor<2x3x1xf16>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.rms_norm': operands must share one element type, got f32 and f16
func.func @rms_norm_mixed_types(%x: tensor<2x4xf32>, %s: tensor<4xf16>) {
  %0 = ascend.graph.rms_norm %x, %s : (tensor<2x4xf32>, tensor<4xf16>) -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.rms_norm': 'epsilon' must be non-negative, got -1.0
func.func @rms_norm_negative_epsilon(%x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  %0 = ascend.graph.rms_norm %x, %s {epsilon = -1.0 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.group_norm': 6 channels do not divide into 4 groups
func.func @group_norm_groups(%x: tensor<2x6x3xf32>, %p: tensor<6xf32>) {
  %0 = ascend.graph.group_norm %x, %p, %p {num_groups = 4 : i64} : (tensor<2x6x3xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.group_norm': 'scale' must have shape [6], got [3]
func.func @group_norm_per_group_scale(%x: tensor<2x6x3xf32>, %g: tensor<3xf32>, %p: tensor<6xf32>) {
  %0 = ascend.graph.group_norm %x, %g, %p {num_groups = 3 : i64} : (tensor<2x6x3xf32>, tensor<3xf32>, tensor<6xf32>) -> tensor<2x6x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.mean_variance_norm': 'axes' [0, 4] must lie in [0, 4) (normalized)
func.func @mean_variance_norm_axes(%x: tensor<1x2x3x4xf32>) {
  %0 = ascend.graph.mean_variance_norm %x {axes = array<i64: 0, 4>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.lp_norm': 'p' must be 1 or 2, got 3
func.func @lp_norm_p(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.lp_norm %x {p = 3 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.lrn': 'size' must be positive, got 0
func.func @lrn_size(%x: tensor<1x4x2x2xf32>) {
  %0 = ascend.graph.lrn %x {size = 0 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.lrn': lrn needs an input of rank >= 3 (N, C, D1, ...), got rank 2
func.func @lrn_rank(%x: tensor<4x2xf32>) {
  %0 = ascend.graph.lrn %x {size = 3 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return
}
