// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks one rule of a neural-network op's verifier; the driver prints the diagnostic.

// CHECK: {{^}}'ascend.graph.matmul_integer': lhs must hold 8-bit integers, got i32
func.func @matmul_integer_not_8_bit(%a: tensor<4x3xi32>, %b: tensor<3x2xi32>, %z: tensor<i32>) {
  %0 = ascend.graph.matmul_integer %a, %b, %z, %z : (tensor<4x3xi32>, tensor<3x2xi32>, tensor<i32>, tensor<i32>) -> tensor<4x2xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.matmul_integer': lhs zero point of shape [4] does not broadcast to [4, 3]
func.func @matmul_integer_zero_point_shape(%a: tensor<4x3xui8>, %b: tensor<3x2xui8>, %za: tensor<4xui8>, %zb: tensor<ui8>) {
  %0 = ascend.graph.matmul_integer %a, %b, %za, %zb : (tensor<4x3xui8>, tensor<3x2xui8>, tensor<4xui8>, tensor<ui8>) -> tensor<4x2xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.einsum': equation 'ij,jk->ik' has 2 inputs, got 1 operands
func.func @einsum_operand_count(%a: tensor<2x3xf32>) {
  %0 = ascend.graph.einsum %a {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.einsum': 'j' is 3 in one place and 4 in another
func.func @einsum_letter_sizes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  %0 = ascend.graph.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.einsum': output 'iz' of 'ij->iz' repeats or invents a letter
func.func @einsum_invented_letter(%a: tensor<2x3xf32>) {
  %0 = ascend.graph.einsum %a {equation = "ij->iz"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.einsum': 'ijk' does not fit an operand of rank 2
func.func @einsum_term_rank(%a: tensor<2x3xf32>) {
  %0 = ascend.graph.einsum %a {equation = "ijk->i"} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv3d': conv3d needs a 5-D input and weight, got ranks 4 and 4
func.func @conv3d_rank(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) {
  %0 = ascend.graph.conv3d %x, %w : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv3d': 3 output channels do not divide into 2 groups
func.func @conv3d_groups(%x: tensor<1x4x4x4x4xf32>, %w: tensor<3x2x3x3x3xf32>) {
  %0 = ascend.graph.conv3d %x, %w {groups = 2 : i64} : (tensor<1x4x4x4x4xf32>, tensor<3x2x3x3x3xf32>) -> tensor<1x3x2x2x2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv_transpose2d': input has 3 channels but the weight expects 2
func.func @conv_transpose_channels(%x: tensor<1x3x4x4xf32>, %w: tensor<2x2x3x3xf32>) {
  %0 = ascend.graph.conv_transpose2d %x, %w : (tensor<1x3x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv_transpose2d': 'output_padding' needs 2 non-negative values, got [1]
func.func @conv_transpose_output_padding(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) {
  %0 = ascend.graph.conv_transpose2d %x, %w {output_padding = array<i64: 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.conv_transpose2d': bias must have shape [6], got [2]
func.func @conv_transpose_bias(%x: tensor<1x2x4x4xf32>, %w: tensor<2x3x3x3xf32>, %b: tensor<2xf32>) {
  %0 = ascend.graph.conv_transpose2d %x, %w, %b {groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.max_pool3d': 'kernel_shape' needs 3 values, got 2
func.func @pool3d_kernel_rank(%x: tensor<1x2x4x4x4xf32>) {
  %0 = ascend.graph.max_pool3d %x {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x3x3x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.lp_pool': 'p' must be at least 1, got 0
func.func @lp_pool_p_zero(%x: tensor<1x2x4x4xf32>) {
  %0 = ascend.graph.lp_pool %x {kernel_shape = array<i64: 2, 2>, p = 0 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.global_lp_pool': 'p' must be at least 1, got -1
func.func @global_lp_pool_p_negative(%x: tensor<1x2x4x4xf32>) {
  %0 = ascend.graph.global_lp_pool %x {p = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.lp_pool': padding must be smaller than the window
func.func @lp_pool_pad_not_smaller(%x: tensor<1x2x4x4xf32>) {
  %0 = ascend.graph.lp_pool %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 2, 0, 0, 0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x5x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.max_pool_with_argmax': result type tensor<1x1x3x3xi32> does not match the inferred type tensor<1x1x3x3xi64>
func.func @argmax_indices_type(%x: tensor<1x1x4x4xf32>) {
  %0, %1 = ascend.graph.max_pool_with_argmax %x {kernel_shape = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x3x3xi32>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.global_max_pool': global_max_pool needs an input of rank >= 3, got 2
func.func @global_pool_rank(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.global_max_pool %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.resize': 'scales' and 'sizes' need 4 values, got 2 and 4
func.func @resize_scales_count(%x: tensor<1x3x4x4xf32>) {
  %0 = ascend.graph.resize %x {scales = array<f64: 2.0, 2.0>, sizes = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.resize': 'mode' must be one of nearest, linear, cubic; got 'bilinear'
func.func @resize_unknown_mode(%x: tensor<4xf32>) {
  %0 = ascend.graph.resize %x {mode = "bilinear", scales = array<f64: 2.0>, sizes = array<i64: 8>} : (tensor<4xf32>) -> tensor<8xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.resize': 'antialias' applies to the linear and cubic modes only
func.func @resize_nearest_antialias(%x: tensor<4xf32>) {
  %0 = ascend.graph.resize %x {antialias = true, scales = array<f64: 0.5>, sizes = array<i64: 2>} : (tensor<4xf32>) -> tensor<2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.resize': tf_crop_and_resize needs a 'roi' of 2 values, got 0
func.func @resize_crop_without_roi(%x: tensor<4xf32>) {
  %0 = ascend.graph.resize %x {coordinate_transformation_mode = "tf_crop_and_resize", scales = array<f64: 0.5>, sizes = array<i64: 2>} : (tensor<4xf32>) -> tensor<2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.resize': axis 0 is resized, so its output size must be given
func.func @resize_missing_size(%x: tensor<?xf32>) {
  %0 = ascend.graph.resize %x {scales = array<f64: 2.0>, sizes = array<i64: -1>} : (tensor<?xf32>) -> tensor<?xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.rnn': 'weight' must have shape [1, 4, 3], got [1, 4, 2]
func.func @rnn_weight_shape(%x: tensor<5x2x3xf32>, %w: tensor<1x4x2xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x8xf32>, %l: tensor<2xi32>, %h: tensor<1x2x4xf32>) {
  %0, %1 = ascend.graph.rnn %x, %w, %r, %b, %l, %h : (tensor<5x2x3xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<1x8xf32>, tensor<2xi32>, tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.rnn': 'weight' must have shape [2, 4, 3], got [1, 4, 3]
func.func @rnn_directions(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x8xf32>, %l: tensor<2xi32>, %h: tensor<1x2x4xf32>) {
  %0, %1 = ascend.graph.rnn %x, %w, %r, %b, %l, %h {direction = "bidirectional"} : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x8xf32>, tensor<2xi32>, tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.gru': 2 activations are needed, got 1
func.func @gru_activation_count(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x24xf32>, %l: tensor<2xi32>, %h: tensor<1x2x4xf32>) {
  %0, %1 = ascend.graph.gru %x, %w, %r, %b, %l, %h {activations = ["Sigmoid"]} : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x24xf32>, tensor<2xi32>, tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.gru': unknown activation Gelu; known: Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus
func.func @gru_unknown_activation(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x24xf32>, %l: tensor<2xi32>, %h: tensor<1x2x4xf32>) {
  %0, %1 = ascend.graph.gru %x, %w, %r, %b, %l, %h {activations = ["Sigmoid", "Gelu"]} : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x24xf32>, tensor<2xi32>, tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.lstm': 'sequence_lens' must hold i32, got i64
func.func @lstm_sequence_lens_type(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %b: tensor<1x32xf32>, %l: tensor<2xi64>, %h: tensor<1x2x4xf32>, %p: tensor<1x12xf32>) {
  %0, %1, %2 = ascend.graph.lstm %x, %w, %r, %b, %l, %h, %h, %p : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x32xf32>, tensor<2xi64>, tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x12xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.lstm': 'peepholes' must have shape [1, 12], got [1, 16]
func.func @lstm_peepholes(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %b: tensor<1x32xf32>, %l: tensor<2xi32>, %h: tensor<1x2x4xf32>, %p: tensor<1x16xf32>) {
  %0, %1, %2 = ascend.graph.lstm %x, %w, %r, %b, %l, %h, %h, %p : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x32xf32>, tensor<2xi32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x16xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  func.return
}
