// RUN: ge-opt %s -p ge-fuse-conv-bn,ge-constant-fold,dce --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'ge-fuse-conv-bn{keep-rounding=false},dce' --split-input-file | filecheck %s --check-prefix=MIXED

// Batch norm folds into the conv's weights and bias: s = scale / sqrt(var + eps) = [1, 0.5],
// w' = w * s per output channel, b' = (0 - mean) * s + beta.

// CHECK-LABEL: func.func @batch_norm
// CHECK-NEXT:    %[[W:.*]] = ascend.graph.const dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}1.500000e+00]], {{\[\[}}2.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = ascend.graph.const dense<[5.000000e-01, -1.125000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %{{.*}} = ascend.graph.conv2d %x, %[[W]], %[[B]] {sources = ["conv1", "bn1"]}
// CHECK-NOT:     ascend.graph.batch_norm
func.func @batch_norm(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = ascend.graph.const dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %s = ascend.graph.const dense<[2.0, 0.5]> : tensor<2xf32>
  %b = ascend.graph.const dense<[1.0, -1.0]> : tensor<2xf32>
  %m = ascend.graph.const dense<[0.5, 0.25]> : tensor<2xf32>
  %v = ascend.graph.const dense<[4.0, 1.0]> : tensor<2xf32>
  %c = ascend.graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> loc("conv1")
  %y = ascend.graph.batch_norm %c, %s, %b, %m, %v {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("bn1")
  func.return %y : tensor<1x2x4x4xf32>
}

// -----

// A per-channel scale then shift (as batch norm exported as Mul/Add) folds too.

// CHECK-LABEL: func.func @scale_shift
// CHECK-NEXT:    %[[W:.*]] = ascend.graph.const dense<{{\[\[\[\[}}3.000000e+00]]], {{\[\[\[}}-1.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = ascend.graph.const dense<[7.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    ascend.graph.conv2d %x, %[[W]], %[[B]]
// CHECK-NEXT:    func.return
func.func @scale_shift(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = ascend.graph.const dense<[[[[1.0]]], [[[-1.0]]]]> : tensor<2x1x1x1xf32>
  %b = ascend.graph.const dense<[2.0, 0.0]> : tensor<2xf32>
  %k = ascend.graph.const dense<[[[3.0]], [[1.0]]]> : tensor<2x1x1xf32>
  %d = ascend.graph.const dense<[[[1.0]], [[1.0]]]> : tensor<2x1x1xf32>
  %c = ascend.graph.conv2d %x, %w, %b : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %m = ascend.graph.mul %c, %k : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %a = ascend.graph.add %d, %m : (tensor<2x1x1xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %a : tensor<1x2x3x3xf32>
}

// -----

// Left alone: a conv with another user, a batch norm after a non-conv, a scale that varies
// over space, and a residual add (not a constant).

// CHECK-LABEL: func.func @leave_alone
// CHECK:         ascend.graph.batch_norm %c
// CHECK:         ascend.graph.batch_norm %r
// CHECK:         ascend.graph.mul %c2, %k
// CHECK:         ascend.graph.add %c3, %x
func.func @leave_alone(%x: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = ascend.graph.const splat<1.0 : f32> : tensor<2x2x1x1xf32>
  %p = ascend.graph.const splat<1.0 : f32> : tensor<2xf32>
  %k = ascend.graph.const dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>
  %c = ascend.graph.conv2d %x, %w : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %bn = ascend.graph.batch_norm %c, %p, %p, %p, %p : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %r = ascend.graph.relu %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %bn2 = ascend.graph.batch_norm %r, %p, %p, %p, %p : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %c2 = ascend.graph.conv2d %r, %w : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m = ascend.graph.mul %c2, %k : (tensor<1x2x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c3 = ascend.graph.conv2d %bn2, %w : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %a = ascend.graph.add %c3, %x : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %c, %bn, %bn2, %m, %a : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// In bfloat16 the graph rounds the conv's result and then the batch norm's; the folded conv
// would round once: folded only when a precision mode allows.

// CHECK-LABEL: func.func @bfloat16
// CHECK:         ascend.graph.conv2d %x, %w
// CHECK-NEXT:    ascend.graph.batch_norm

// MIXED-LABEL: func.func @bfloat16
// MIXED-NOT:     ascend.graph.batch_norm
// MIXED:         ascend.graph.conv2d %x, %{{.*}}, %{{.*}} {sources = ["conv1", "bn1"]}
func.func @bfloat16(%x: tensor<1x2x4x4xbf16>) -> tensor<1x2x4x4xbf16> {
  %w = ascend.graph.const dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xbf16>
  %s = ascend.graph.const dense<[2.0, 0.5]> : tensor<2xbf16>
  %b = ascend.graph.const dense<[1.0, -1.0]> : tensor<2xbf16>
  %m = ascend.graph.const dense<[0.5, 0.25]> : tensor<2xbf16>
  %v = ascend.graph.const dense<[4.0, 1.0]> : tensor<2xbf16>
  %c = ascend.graph.conv2d %x, %w : (tensor<1x2x4x4xbf16>, tensor<2x2x1x1xbf16>) -> tensor<1x2x4x4xbf16> loc("conv1")
  %y = ascend.graph.batch_norm %c, %s, %b, %m, %v {epsilon = 0.0 : f32} : (tensor<1x2x4x4xbf16>, tensor<2xbf16>, tensor<2xbf16>, tensor<2xbf16>, tensor<2xbf16>) -> tensor<1x2x4x4xbf16> loc("bn1")
  func.return %y : tensor<1x2x4x4xbf16>
}
