// RUN: ge-opt %s -p ge-fuse-layer-norm,dce --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'ge-fuse-layer-norm{keep-rounding=false},dce' --split-input-file | filecheck %s --check-prefix=MIXED

// torch's layer norm: pow(d, 2), d / sqrt(var + eps), then gamma and beta.

// CHECK-LABEL: func.func @torch
// CHECK-NEXT:    %y, %{{.*}}, %{{.*}} = ascend.graph.layer_norm %x, %gamma, %beta {sources = ["reduce_mean", "sub", "pow", "reduce_mean", "add", "sqrt", "div", "mul", "add"], axis = 2 : i64, epsilon = 1.000000e-05 : f32}
// CHECK-SAME:      : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
// CHECK-NEXT:    func.return %y
func.func @torch(%x: tensor<2x8x32xf32>, %gamma: tensor<32xf32>, %beta: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %eps = ascend.graph.const dense<1.0e-05> : tensor<f32>
  %two = ascend.graph.const dense<2.0> : tensor<f32>
  %mean = ascend.graph.reduce_mean %x {axes = array<i64: 2>} : (tensor<2x8x32xf32>) -> tensor<2x8x1xf32>
  %d = ascend.graph.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %sq = ascend.graph.pow %d, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = ascend.graph.reduce_mean %sq {axes = array<i64: 2>} : (tensor<2x8x32xf32>) -> tensor<2x8x1xf32>
  %ve = ascend.graph.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %s = ascend.graph.sqrt %ve : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %n = ascend.graph.div %d, %s : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %g = ascend.graph.mul %n, %gamma : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %y = ascend.graph.add %beta, %g : (tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  func.return %y : tensor<2x8x32xf32>
}

// -----

// TF's: d * d, d * reciprocal(sqrt(var + eps)), over the last two axes, without gamma and beta
// (a scale of ones stands in).

// CHECK-LABEL: func.func @tf_two_axes
// CHECK-NEXT:    %[[ONES:.*]] = ascend.graph.const splat<1.000000e+00 : f32> : tensor<4x8xf32>
// CHECK-NEXT:    %n, %{{.*}}, %{{.*}} = ascend.graph.layer_norm %x, %[[ONES]] {sources = ["reduce_mean", "sub", "mul", "reduce_mean", "add", "sqrt", "reciprocal", "mul"], axis = 1 : i64, epsilon = 1.000000e-12 : f32}
// CHECK-NEXT:    func.return %n
func.func @tf_two_axes(%x: tensor<3x4x8xf32>) -> tensor<3x4x8xf32> {
  %eps = ascend.graph.const dense<1.0e-12> : tensor<f32>
  %mean = ascend.graph.reduce_mean %x {axes = array<i64: 1, 2>} : (tensor<3x4x8xf32>) -> tensor<3x1x1xf32>
  %d = ascend.graph.sub %x, %mean : (tensor<3x4x8xf32>, tensor<3x1x1xf32>) -> tensor<3x4x8xf32>
  %sq = ascend.graph.mul %d, %d : (tensor<3x4x8xf32>, tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  %var = ascend.graph.reduce_mean %sq {axes = array<i64: 1, 2>} : (tensor<3x4x8xf32>) -> tensor<3x1x1xf32>
  %ve = ascend.graph.add %eps, %var : (tensor<f32>, tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %s = ascend.graph.sqrt %ve : (tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %r = ascend.graph.reciprocal %s : (tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %n = ascend.graph.mul %r, %d : (tensor<3x1x1xf32>, tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  func.return %n : tensor<3x4x8xf32>
}

// -----

// RMSNorm as Llama exports it, and with a division, in float16: the formula rounds every
// intermediate, which rms_norm would not, so it is fused only when a precision mode allows.

// CHECK-LABEL: func.func @rms
// CHECK-NOT:     ascend.graph.rms_norm
// CHECK:         func.return %y, %z

// MIXED-LABEL: func.func @rms
// MIXED-NEXT:    %y = ascend.graph.rms_norm %x, %gamma {sources = ["pow", "reduce_mean", "add", "sqrt", "reciprocal", "mul", "mul"], axis = 1 : i64, epsilon = 1.01327896e-06 : f32} : (tensor<8x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
// MIXED-NEXT:    %z = ascend.graph.rms_norm %x, %gamma {sources = ["mul", "reduce_mean", "add", "sqrt", "div", "mul"], axis = 1 : i64, epsilon = 1.01327896e-06 : f32} : (tensor<8x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
// MIXED-NEXT:    func.return %y, %z
func.func @rms(%x: tensor<8x32xf16>, %gamma: tensor<32xf16>) -> (tensor<8x32xf16>, tensor<8x32xf16>) {
  %eps = ascend.graph.const dense<1.0e-06> : tensor<f16>
  %two = ascend.graph.const dense<2.0> : tensor<f16>
  %sq = ascend.graph.pow %x, %two : (tensor<8x32xf16>, tensor<f16>) -> tensor<8x32xf16>
  %ms = ascend.graph.reduce_mean %sq {axes = array<i64: 1>} : (tensor<8x32xf16>) -> tensor<8x1xf16>
  %ve = ascend.graph.add %ms, %eps : (tensor<8x1xf16>, tensor<f16>) -> tensor<8x1xf16>
  %s = ascend.graph.sqrt %ve : (tensor<8x1xf16>) -> tensor<8x1xf16>
  %r = ascend.graph.reciprocal %s : (tensor<8x1xf16>) -> tensor<8x1xf16>
  %n = ascend.graph.mul %x, %r : (tensor<8x32xf16>, tensor<8x1xf16>) -> tensor<8x32xf16>
  %y = ascend.graph.mul %gamma, %n : (tensor<32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %sq2 = ascend.graph.mul %x, %x : (tensor<8x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %ms2 = ascend.graph.reduce_mean %sq2 {axes = array<i64: 1>} : (tensor<8x32xf16>) -> tensor<8x1xf16>
  %ve2 = ascend.graph.add %ms2, %eps : (tensor<8x1xf16>, tensor<f16>) -> tensor<8x1xf16>
  %s2 = ascend.graph.sqrt %ve2 : (tensor<8x1xf16>) -> tensor<8x1xf16>
  %n2 = ascend.graph.div %x, %s2 : (tensor<8x32xf16>, tensor<8x1xf16>) -> tensor<8x32xf16>
  %z = ascend.graph.mul %n2, %gamma : (tensor<8x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
  func.return %y, %z : tensor<8x32xf16>, tensor<8x32xf16>
}

// -----

// Left alone: statistics over a leading axis, and a mean that is also returned.

// CHECK-LABEL: func.func @leading_axis
// CHECK-NOT:     ascend.graph.layer_norm
// CHECK:         ascend.graph.div
func.func @leading_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %eps = ascend.graph.const dense<1.0e-05> : tensor<f32>
  %mean = ascend.graph.reduce_mean %x {axes = array<i64: 0>} : (tensor<2x8xf32>) -> tensor<1x8xf32>
  %d = ascend.graph.sub %x, %mean : (tensor<2x8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  %sq = ascend.graph.mul %d, %d : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %var = ascend.graph.reduce_mean %sq {axes = array<i64: 0>} : (tensor<2x8xf32>) -> tensor<1x8xf32>
  %ve = ascend.graph.add %var, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %s = ascend.graph.sqrt %ve : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %n = ascend.graph.div %d, %s : (tensor<2x8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  func.return %n : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @mean_returned
// CHECK-NOT:     ascend.graph.layer_norm
// CHECK:         func.return %n, %mean
func.func @mean_returned(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>) {
  %eps = ascend.graph.const dense<1.0e-05> : tensor<f32>
  %mean = ascend.graph.reduce_mean %x {axes = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %d = ascend.graph.sub %x, %mean : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %sq = ascend.graph.mul %d, %d : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %var = ascend.graph.reduce_mean %sq {axes = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %ve = ascend.graph.add %var, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %s = ascend.graph.sqrt %ve : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = ascend.graph.div %d, %s : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  func.return %n, %mean : tensor<2x8xf32>, tensor<2x1xf32>
}

// -----

// The square of another value than the numerator is not a norm.

// CHECK-LABEL: func.func @other_square
// CHECK-NOT:     ascend.graph.rms_norm
// CHECK:         ascend.graph.div %x, %s
func.func @other_square(%x: tensor<2x8xf32>, %w: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %eps = ascend.graph.const dense<1.0e-05> : tensor<f32>
  %sq = ascend.graph.mul %w, %w : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %var = ascend.graph.reduce_mean %sq {axes = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %ve = ascend.graph.add %var, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %s = ascend.graph.sqrt %ve : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = ascend.graph.div %x, %s : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  func.return %n : tensor<2x8xf32>
}
