// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks one rule of an `ascend.graph` verifier; the driver prints the diagnostic.

// CHECK: {{^}}'ascend.graph.add': shapes [2, 3] and [1, 4] do not broadcast
func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = ascend.graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.add': result type tensor<2x4xf32> does not match the inferred type tensor<2x3xf32>
func.func @add_wrong_result_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = ascend.graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.mul': operands must share one element type, got f32 and f16
func.func @mul_element_type_mismatch(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  %0 = ascend.graph.mul %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.relu': result type tensor<4xf16> does not match the inferred type tensor<4xf32>
func.func @relu_result_element_type(%a: tensor<4xf32>) {
  %0 = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.matmul': contracting dimensions differ: 16 and 8
func.func @matmul_contracting_mismatch(%a: tensor<4x16xf32>, %b: tensor<8x32xf32>) {
  %0 = ascend.graph.matmul %a, %b : (tensor<4x16xf32>, tensor<8x32xf32>) -> tensor<4x32xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.matmul': shapes [2] and [3] do not broadcast
func.func @matmul_batch_mismatch(%a: tensor<2x8x16xf32>, %b: tensor<3x16x4xf32>) {
  %0 = ascend.graph.matmul %a, %b : (tensor<2x8x16xf32>, tensor<3x16x4xf32>) -> tensor<2x8x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.gemm': gemm operands must be matrices, got ranks 3 and 2
func.func @gemm_not_matrix(%a: tensor<1x2x4xf32>, %b: tensor<4x8xf32>) {
  %0 = ascend.graph.gemm %a, %b : (tensor<1x2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// trans_b = 1 makes B 512x10, which does not contract with A's 512 columns.
// CHECK: {{^}}'ascend.graph.gemm': contracting dimensions differ: 512 and 10
func.func @gemm_trans_contracting(%a: tensor<1x512xf32>, %b: tensor<512x10xf32>) {
  %0 = ascend.graph.gemm %a, %b {trans_b = true} : (tensor<1x512xf32>, tensor<512x10xf32>) -> tensor<1x10xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.gemm': bias of shape [2, 10] does not broadcast to [1, 10]
func.func @gemm_bias_too_big(%a: tensor<1x4xf32>, %b: tensor<4x10xf32>, %c: tensor<2x10xf32>) {
  %0 = ascend.graph.gemm %a, %b, %c : (tensor<1x4xf32>, tensor<4x10xf32>, tensor<2x10xf32>) -> tensor<1x10xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv2d': the kernel's spatial sizes must be positive, got [0, 3]
func.func @conv_empty_kernel(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x0x3xf32>) {
  %0 = ascend.graph.conv2d %x, %w : (tensor<1x8x16x16xf32>, tensor<8x8x0x3xf32>) -> tensor<1x8x17x14xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv2d': input has 8 channels but the weight expects 2 x 2 groups
func.func @conv_channels_vs_groups(%x: tensor<1x8x16x16xf32>, %w: tensor<8x2x3x3xf32>) {
  %0 = ascend.graph.conv2d %x, %w {groups = 2 : i64} : (tensor<1x8x16x16xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x14x14xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv2d': 6 output channels do not divide into 4 groups
func.func @conv_out_channels_vs_groups(%x: tensor<1x8x16x16xf32>, %w: tensor<6x2x3x3xf32>) {
  %0 = ascend.graph.conv2d %x, %w {groups = 4 : i64} : (tensor<1x8x16x16xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x14x14xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv2d': bias must have shape [4], got [3]
func.func @conv_bias_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  %0 = ascend.graph.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv2d': a window of 3 does not fit an input of 2 with pads (0, 0)
func.func @conv_window_does_not_fit(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = ascend.graph.conv2d %x, %w : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  func.return
}

// -----

// A dilation of 3 spreads a 3x3 kernel over 7 pixels.
// CHECK: {{^}}'ascend.graph.conv2d': a window of 7 does not fit an input of 6 with pads (0, 0)
func.func @conv_dilated_window_does_not_fit(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = ascend.graph.conv2d %x, %w {dilations = array<i64: 3, 3>} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv2d': 'strides' needs 2 values, got 3
func.func @conv_strides_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = ascend.graph.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}property 'kernel_shape' expected in operation 'ascend.graph.max_pool'
func.func @pool_without_kernel_shape(%x: tensor<1x4x8x8xf32>) {
  %0 = ascend.graph.max_pool %x {strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.avg_pool': padding must be smaller than the window
func.func @pool_pads_not_smaller_than_kernel(%x: tensor<1x4x8x8xf32>) {
  %0 = ascend.graph.avg_pool %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 2, 0, 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x7x9xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.max_pool': a window of 5 does not fit an input of 4 with pads (0, 0)
func.func @pool_window_does_not_fit(%x: tensor<1x4x4x4xf32>) {
  %0 = ascend.graph.max_pool %x {kernel_shape = array<i64: 5, 5>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x1x1xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.max_pool': result type tensor<1x4x4x4xf32> does not match the inferred type tensor<1x4x3x3xf32>
func.func @pool_floor_mode_result(%x: tensor<1x4x7x7xf32>) {
  %0 = ascend.graph.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.batch_norm': 'mean' must have shape [64], got [32]
func.func @batch_norm_param_shape(%x: tensor<1x64x8x8xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<32xf32>, %v: tensor<64xf32>) {
  %0 = ascend.graph.batch_norm %x, %s, %b, %m, %v : (tensor<1x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<32xf32>, tensor<64xf32>) -> tensor<1x64x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.reshape': cannot reshape 6 elements [2, 3] into 8 [2, 4]
func.func @reshape_element_count(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.reshape %x : (tensor<2x3xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.reshape': cannot reshape f32 into i32
func.func @reshape_element_type(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.reshape %x : (tensor<2x3xf32>) -> tensor<6xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.flatten': axis 5 is out of range for rank 4
func.func @flatten_axis_out_of_range(%x: tensor<1x2x3x4xf32>) {
  %0 = ascend.graph.flatten %x {axis = 5 : i64} : (tensor<1x2x3x4xf32>) -> tensor<24x1xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.transpose': perm [0, 0] is not a permutation of 2 dimensions
func.func @transpose_repeated_perm(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.transpose': perm [1, 0] is not a permutation of 3 dimensions
func.func @transpose_perm_rank(%x: tensor<2x3x4xf32>) {
  %0 = ascend.graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.concat': input shape [1, 32, 4, 8] does not match [1, 16, 8, 8] off axis 1
func.func @concat_mismatched_dims(%a: tensor<1x16x8x8xf32>, %b: tensor<1x32x4x8xf32>) {
  %0 = ascend.graph.concat %a, %b {axis = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<1x32x4x8xf32>) -> tensor<1x48x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.concat': input shape [2, 3, 1] does not match [2, 3] off axis 0
func.func @concat_mismatched_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  %0 = ascend.graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.softmax': axis 2 is out of range for rank 2
func.func @softmax_axis_out_of_range(%x: tensor<1x10xf32>) {
  %0 = ascend.graph.softmax %x {axis = 2 : i64} : (tensor<1x10xf32>) -> tensor<1x10xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.softmax': axis -3 is out of range for rank 2
func.func @softmax_negative_axis_out_of_range(%x: tensor<1x10xf32>) {
  %0 = ascend.graph.softmax %x {axis = -3 : i64} : (tensor<1x10xf32>) -> tensor<1x10xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.const': splat of i32 cannot fill a tensor of f32
func.func @splat_element_type() {
  %0 = ascend.graph.const splat<1 : i32> : tensor<4xf32>
  func.return
}

// -----

// The custom syntax takes the type from the value, so only the generic form can disagree.
// CHECK: {{^}}'ascend.graph.const': value of type tensor<2xf32> does not match result tensor<3xf32>
func.func @const_type_mismatch() {
  %0 = "ascend.graph.const"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv2d' at loc("conv1"): input has 4 channels but the weight expects 3 x 1 groups
func.func @named_location(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = ascend.graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> loc("conv1")
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.concat': axis 0 is out of range for rank 0
func.func @concat_of_scalars(%s: tensor<f32>) -> tensor<2xf32> {
  %0 = ascend.graph.concat %s, %s {axis = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

// CHECK: {{^}}'ascend.graph.flatten': axis -3 is out of range for rank 2
func.func @flatten_axis_as_written(%x: tensor<2x3xf32>) -> tensor<1x6xf32> {
  %0 = ascend.graph.flatten %x {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<1x6xf32>
  func.return %0 : tensor<1x6xf32>
}

// -----

// CHECK: {{^}}'ascend.graph.batch_norm': 'epsilon' must be non-negative, got -1.0
func.func @negative_epsilon(%x: tensor<1x2x3x3xf32>, %p: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = ascend.graph.batch_norm %x, %p, %p, %p, %p {epsilon = -1.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %0 : tensor<1x2x3x3xf32>
}

// -----

// CHECK: {{^}}'ascend.graph.const': a constant needs a static shape, got tensor<?x3xf32>
func.func @dynamic_splat() -> tensor<?x3xf32> {
  %0 = ascend.graph.const splat<1.0 : f32> : tensor<?x3xf32>
  func.return %0 : tensor<?x3xf32>
}

// -----

// The graph level is framework-level: a device format on a graph op's type is a lowering bug.
// CHECK: {{^}}'ascend.graph.relu': operand #0 is tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>: a graph op computes on framework-level types; a device format lives on kernel operands only
func.func @relu_of_a_device_format(%x: tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>) {
  %0 = ascend.graph.relu %x : (tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16x2x2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.relu': result #0 is tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>: a graph op computes on framework-level types; a device format lives on kernel operands only
func.func @relu_into_a_device_format(%x: tensor<1x16x2x2xf32>) {
  %0 = ascend.graph.relu %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.const': result is tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>: a graph op computes on framework-level types; a device format lives on kernel operands only
func.func @constant_in_a_device_format() {
  %0 = ascend.graph.const splat<1.0 : f32> : tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.relu': result #0: ascend.dims = ["batch"] must list 2 dimensions, one per dimension of tensor<?x4xf32>
func.func @symbols_of_another_rank(%x: tensor<?x4xf32> {ascend.dims = ["batch", 4 : i64]}) {
  %0 = ascend.graph.relu %x {ascend.dims = ["batch"]} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.flatten': result #0: ascend.dims = ["batch", 12] does not fit tensor<?x8xf32>: index 1 is 12: the type's dimension is 8
func.func @symbols_contradicting_a_static_dimension(%x: tensor<?x2x4xf32> {ascend.dims = ["batch", 2 : i64, 4 : i64]}) {
  %0 = ascend.graph.flatten %x {axis = 1 : i64, ascend.dims = ["batch", 12 : i64]} : (tensor<?x2x4xf32>) -> tensor<?x8xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.fused_matmul': property 'extras' = 3 leaves 0 operands for 'ascend.graph.matmul', which takes 2
func.func @fused_extras_take_base_operands(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) {
  %y = ascend.graph.fused_matmul %x, %w, %b {extras = 3 : i64} : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> {
  ^bb0(%acc: tensor<2x4xf32>, %bias: tensor<4xf32>):
    %0 = ascend.graph.add %acc, %bias : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    ascend.graph.yield %0 : tensor<2x4xf32>
  }
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.fused_matmul': property 'extras' = 5 must be between 0 and its 3 operands
func.func @fused_extras_beyond_operands(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) {
  %y = ascend.graph.fused_matmul %x, %w, %b {extras = 5 : i64} : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> {
  ^bb0(%acc: tensor<2x4xf32>, %bias: tensor<4xf32>):
    %0 = ascend.graph.add %acc, %bias : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    ascend.graph.yield %0 : tensor<2x4xf32>
  }
  func.return
}
