// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// The neural-network ops added for ONNX conformance survive a round trip through the custom and
// the generic printer, with their inferred result types.

// Integer matrix products with their zero points, and einsum: explicit and implicit outputs,
// diagonals, `...` over a dynamic dimension, and a full contraction to a scalar.
// CHECK-LABEL: func.func @matrix_products
// CHECK-NEXT: ascend.graph.matmul_integer %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x4x3xui8>, tensor<3x5xui8>, tensor<4x1xui8>, tensor<ui8>) -> tensor<2x4x5xi32>
// CHECK-NEXT: ascend.graph.einsum %{{.*}}, %{{.*}} {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT: ascend.graph.einsum %{{.*}} {equation = "ii->i"} : (tensor<6x6xf32>) -> tensor<6xf32>
// CHECK-NEXT: ascend.graph.einsum %{{.*}} {equation = "ijk"} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: ascend.graph.einsum %{{.*}} {equation = "...ii->..."} : (tensor<?x3x3xi32>) -> tensor<?xi32>
// CHECK-NEXT: ascend.graph.einsum %{{.*}}, %{{.*}} {equation = "bij,bij"} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<f32>
func.func @matrix_products(%a: tensor<2x4x3xui8>, %b: tensor<3x5xui8>, %za: tensor<4x1xui8>, %zb: tensor<ui8>, %x: tensor<2x3x4xf32>, %y: tensor<2x4x5xf32>, %d: tensor<6x6xf32>, %e: tensor<?x3x3xi32>) {
  %0 = ascend.graph.matmul_integer %a, %b, %za, %zb : (tensor<2x4x3xui8>, tensor<3x5xui8>, tensor<4x1xui8>, tensor<ui8>) -> tensor<2x4x5xi32>
  %1 = ascend.graph.einsum %x, %y {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %2 = ascend.graph.einsum %d {equation = "ii->i"} : (tensor<6x6xf32>) -> tensor<6xf32>
  %3 = ascend.graph.einsum %x {equation = "ijk"} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %4 = ascend.graph.einsum %e {equation = "...ii->..."} : (tensor<?x3x3xi32>) -> tensor<?xi32>
  %5 = ascend.graph.einsum %x, %x {equation = "bij,bij"} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<f32>
  func.return
}

// 3-D convolutions and transposed convolutions: output padding, groups, dilations, a dynamic batch.
// CHECK-LABEL: func.func @convolutions
// CHECK-NEXT: ascend.graph.conv3d %{{.*}}, %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<1x2x4x4x4xf32>, tensor<3x2x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4x4xf32>
// CHECK-NEXT: ascend.graph.conv3d %{{.*}}, %{{.*}} {strides = array<i64: 2, 1, 1>, dilations = array<i64: 1, 1, 2>, pads = array<i64: 0, 0, 2, 0, 0, 0>} : (tensor<1x2x4x4x4xf32>, tensor<3x2x3x3x3xf32>) -> tensor<1x3x1x2x2xf32>
// CHECK-NEXT: ascend.graph.conv_transpose2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>, output_padding = array<i64: 1, 0>, groups = 2 : i64} : (tensor<1x4x3x3xf16>, tensor<4x3x3x3xf16>) -> tensor<1x6x6x7xf16>
// CHECK-NEXT: ascend.graph.conv_transpose3d %{{.*}}, %{{.*}} {groups = 2 : i64, dilations = array<i64: 2, 1, 1>} : (tensor<?x2x3x4x5xf32>, tensor<2x1x3x3x3xf32>) -> tensor<?x2x7x6x7xf32>
func.func @convolutions(%x: tensor<1x2x4x4x4xf32>, %w: tensor<3x2x3x3x3xf32>, %b: tensor<3xf32>, %t: tensor<1x4x3x3xf16>, %tw: tensor<4x3x3x3xf16>, %v: tensor<?x2x3x4x5xf32>, %vw: tensor<2x1x3x3x3xf32>) {
  %0 = ascend.graph.conv3d %x, %w, %b {pads = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<1x2x4x4x4xf32>, tensor<3x2x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4x4xf32>
  %1 = ascend.graph.conv3d %x, %w {strides = array<i64: 2, 1, 1>, dilations = array<i64: 1, 1, 2>, pads = array<i64: 0, 0, 2, 0, 0, 0>} : (tensor<1x2x4x4x4xf32>, tensor<3x2x3x3x3xf32>) -> tensor<1x3x1x2x2xf32>
  %2 = ascend.graph.conv_transpose2d %t, %tw {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>, output_padding = array<i64: 1, 0>, groups = 2 : i64} : (tensor<1x4x3x3xf16>, tensor<4x3x3x3xf16>) -> tensor<1x6x6x7xf16>
  %3 = ascend.graph.conv_transpose3d %v, %vw {groups = 2 : i64, dilations = array<i64: 2, 1, 1>} : (tensor<?x2x3x4x5xf32>, tensor<2x1x3x3x3xf32>) -> tensor<?x2x7x6x7xf32>
  func.return
}

// Lp, dilated ceil-mode average and 3-D pools, a max pool with its argmax, global max and Lp pools.
// CHECK-LABEL: func.func @pools
// CHECK-NEXT: ascend.graph.lp_pool %{{.*}} {kernel_shape = array<i64: 2, 3>, p = 3 : i64, pads = array<i64: 1, 0, 0, 1>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x7x6xf32>
// CHECK-NEXT: ascend.graph.avg_pool %{{.*}} {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>, ceil_mode = true, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: ascend.graph.max_pool3d %{{.*}} {kernel_shape = array<i64: 2, 2, 3>, strides = array<i64: 1, 2, 2>} : (tensor<1x2x5x6x7xf16>) -> tensor<1x2x4x3x3xf16>
// CHECK-NEXT: ascend.graph.avg_pool3d %{{.*}} {kernel_shape = array<i64: 3, 3, 3>, pads = array<i64: 1, 1, 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x2x5x6x7xf16>) -> tensor<1x2x5x6x7xf16>
// CHECK-NEXT: ascend.graph.lp_pool3d %{{.*}} {kernel_shape = array<i64: 2, 2, 2>} : (tensor<1x2x5x6x7xf16>) -> tensor<1x2x4x5x6xf16>
// CHECK-NEXT: ascend.graph.max_pool_with_argmax %{{.*}} {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xui8>) -> (tensor<1x2x3x3xui8>, tensor<1x2x3x3xi64>)
// CHECK-NEXT: ascend.graph.global_max_pool %{{.*}} : (tensor<1x2x5x6x7xf16>) -> tensor<1x2x1x1x1xf16>
// CHECK-NEXT: ascend.graph.global_lp_pool %{{.*}} {p = 1 : i64} : (tensor<1x2x7x7xf32>) -> tensor<1x2x1x1xf32>
func.func @pools(%x: tensor<1x2x7x7xf32>, %v: tensor<1x2x5x6x7xf16>, %u: tensor<1x2x7x7xui8>) {
  %0 = ascend.graph.lp_pool %x {kernel_shape = array<i64: 2, 3>, p = 3 : i64, pads = array<i64: 1, 0, 0, 1>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x7x6xf32>
  %1 = ascend.graph.avg_pool %x {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>, ceil_mode = true, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
  %2 = ascend.graph.max_pool3d %v {kernel_shape = array<i64: 2, 2, 3>, strides = array<i64: 1, 2, 2>} : (tensor<1x2x5x6x7xf16>) -> tensor<1x2x4x3x3xf16>
  %3 = ascend.graph.avg_pool3d %v {kernel_shape = array<i64: 3, 3, 3>, pads = array<i64: 1, 1, 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x2x5x6x7xf16>) -> tensor<1x2x5x6x7xf16>
  %4 = ascend.graph.lp_pool3d %v {kernel_shape = array<i64: 2, 2, 2>} : (tensor<1x2x5x6x7xf16>) -> tensor<1x2x4x5x6xf16>
  %5, %6 = ascend.graph.max_pool_with_argmax %u {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xui8>) -> (tensor<1x2x3x3xui8>, tensor<1x2x3x3xi64>)
  %7 = ascend.graph.global_max_pool %v : (tensor<1x2x5x6x7xf16>) -> tensor<1x2x1x1x1xf16>
  %8 = ascend.graph.global_lp_pool %x {p = 1 : i64} : (tensor<1x2x7x7xf32>) -> tensor<1x2x1x1xf32>
  func.return
}

// Resize: filters, antialiasing, an axis kept as it is (-1), and a crop box with its fill value.
// CHECK-LABEL: func.func @resize
// CHECK-NEXT: ascend.graph.resize %{{.*}} {mode = "linear", coordinate_transformation_mode = "half_pixel", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, sizes = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT: ascend.graph.resize %{{.*}} {mode = "cubic", cubic_coeff_a = -5.000000e-01 : f32, exclude_outside = true, antialias = true, scales = array<f64: 1.000000e+00, 1.000000e+00, 6.000000e-01, 5.000000e-01>, sizes = array<i64: 1, 3, 2, 2>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT: ascend.graph.resize %{{.*}} {nearest_mode = "ceil", coordinate_transformation_mode = "asymmetric", scales = array<f64: 1.000000e+00, 1.000000e+00, 1.500000e+00>, sizes = array<i64: -1, 3, 6>} : (tensor<?x3x4xui8>) -> tensor<?x3x6xui8>
// CHECK-NEXT: ascend.graph.resize %{{.*}} {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 1.000000e+01 : f32, roi = array<f64: 0.000000e+00, 0.000000e+00, 2.000000e-01, 2.000000e-01, 1.000000e+00, 1.000000e+00, 8.000000e-01, 1.100000e+00>, scales = array<f64: 1.000000e+00, 1.000000e+00, 7.500000e-01, 7.500000e-01>, sizes = array<i64: 1, 3, 3, 3>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x3xf32>
func.func @resize(%x: tensor<1x3x4x4xf32>, %d: tensor<?x3x4xui8>) {
  %0 = ascend.graph.resize %x {mode = "linear", coordinate_transformation_mode = "half_pixel", scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  %1 = ascend.graph.resize %x {mode = "cubic", cubic_coeff_a = -5.000000e-01 : f32, exclude_outside = true, antialias = true, scales = array<f64: 1.0, 1.0, 0.6, 0.5>, sizes = array<i64: 1, 3, 2, 2>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  %2 = ascend.graph.resize %d {nearest_mode = "ceil", coordinate_transformation_mode = "asymmetric", scales = array<f64: 1.0, 1.0, 1.5>, sizes = array<i64: -1, 3, 6>} : (tensor<?x3x4xui8>) -> tensor<?x3x6xui8>
  %3 = ascend.graph.resize %x {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 1.000000e+01 : f32, roi = array<f64: 0.0, 0.0, 0.2, 0.2, 1.0, 1.0, 0.8, 1.1>, scales = array<f64: 1.0, 1.0, 0.75, 0.75>, sizes = array<i64: 1, 3, 3, 3>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x3xf32>
  func.return
}

// Recurrent layers: bidirectional with per-activation alpha and beta, GRU and LSTM options.
// CHECK-LABEL: func.func @recurrent
// CHECK-NEXT: ascend.graph.rnn %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {direction = "bidirectional", activations = ["LeakyRelu", "Tanh"], activation_alpha = array<f32: 1.000000e-01, 0.000000e+00>, activation_beta = array<f32: 0.000000e+00, 0.000000e+00>, clip = 2.000000e+00 : f32} : (tensor<5x2x3xf32>, tensor<2x4x3xf32>, tensor<2x4x4xf32>, tensor<2x8xf32>, tensor<2xi32>, tensor<2x2x4xf32>) -> (tensor<5x2x2x4xf32>, tensor<2x2x4xf32>)
// CHECK-NEXT: ascend.graph.gru %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {direction = "reverse", linear_before_reset = true} : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x24xf32>, tensor<2xi32>, tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
// CHECK-NEXT: ascend.graph.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {input_forget = true} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x32xf32>, tensor<2xi32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x12xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
func.func @recurrent(%x: tensor<5x2x3xf32>, %lens: tensor<2xi32>, %w: tensor<2x4x3xf32>, %r: tensor<2x4x4xf32>, %b: tensor<2x8xf32>, %h: tensor<2x2x4xf32>, %gw: tensor<1x12x3xf32>, %gr: tensor<1x12x4xf32>, %gb: tensor<1x24xf32>, %gh: tensor<1x2x4xf32>, %lw: tensor<1x16x3xf32>, %lr: tensor<1x16x4xf32>, %lb: tensor<1x32xf32>, %p: tensor<1x12xf32>) {
  %0, %1 = ascend.graph.rnn %x, %w, %r, %b, %lens, %h {direction = "bidirectional", activations = ["LeakyRelu", "Tanh"], activation_alpha = array<f32: 0.1, 0.0>, activation_beta = array<f32: 0.0, 0.0>, clip = 2.000000e+00 : f32} : (tensor<5x2x3xf32>, tensor<2x4x3xf32>, tensor<2x4x4xf32>, tensor<2x8xf32>, tensor<2xi32>, tensor<2x2x4xf32>) -> (tensor<5x2x2x4xf32>, tensor<2x2x4xf32>)
  %2, %3 = ascend.graph.gru %x, %gw, %gr, %gb, %lens, %gh {direction = "reverse", linear_before_reset = true} : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x24xf32>, tensor<2xi32>, tensor<1x2x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  %4, %5, %6 = ascend.graph.lstm %x, %lw, %lr, %lb, %lens, %gh, %gh, %p {input_forget = true} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x32xf32>, tensor<2xi32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x12xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  func.return
}
