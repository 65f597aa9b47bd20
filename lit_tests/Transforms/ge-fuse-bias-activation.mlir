// RUN: ge-opt %s -p ge-fuse-bias-activation --split-input-file | filecheck %s

// ResNet's tail: conv, residual add, relu, in that order, in one fused op.

// CHECK-LABEL: func.func @residual
// CHECK-NEXT:    %[[Y:.*]] = ascend.graph.fused_conv2d %x, %w, %b, %skip {sources = ["conv1", "add1", "relu1"], pads = array<i64: 1, 1, 1, 1>, extras = 1 : i64}
// CHECK-SAME:      : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:    ^bb0(%[[ACC:.*]]: tensor<1x2x4x4xf32>, %[[S:.*]]: tensor<1x2x4x4xf32>):
// CHECK-NEXT:      %[[A:.*]] = ascend.graph.add %[[S]], %[[ACC]]
// CHECK-NEXT:      %[[R:.*]] = ascend.graph.relu %[[A]]
// CHECK-NEXT:      ascend.graph.yield %[[R]] : tensor<1x2x4x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
func.func @residual(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %b: tensor<2xf32>, %skip: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %c = ascend.graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("conv1")
  %a = ascend.graph.add %skip, %c : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("add1")
  %r = ascend.graph.relu %a : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("relu1")
  func.return %r : tensor<1x2x4x4xf32>
}

// -----

// A matmul takes its bias add and a GELU; a gemm takes relu6 written as max and min of constants.

// CHECK-LABEL: func.func @matmul_gemm
// CHECK:         ascend.graph.fused_matmul %x, %w, %bias {sources = ["matmul", "add", "gelu"], extras = 1 : i64}
// CHECK:           ascend.graph.add %{{.*}}, %{{.*}} : (tensor<2x8x4xf32>, tensor<4xf32>)
// CHECK-NEXT:      ascend.graph.gelu
// CHECK-NEXT:      ascend.graph.yield
// CHECK:         ascend.graph.fused_gemm %g, %gw, %zero, %six {sources = ["gemm", "max", "min"], trans_b = true, extras = 2 : i64}
// CHECK:           ascend.graph.max
// CHECK-NEXT:      ascend.graph.min
// CHECK-NEXT:      ascend.graph.yield
func.func @matmul_gemm(%x: tensor<2x8x16xf32>, %w: tensor<16x4xf32>, %bias: tensor<4xf32>, %g: tensor<3x5xf32>, %gw: tensor<6x5xf32>) -> (tensor<2x8x4xf32>, tensor<3x6xf32>) {
  %m = ascend.graph.matmul %x, %w : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
  %a = ascend.graph.add %m, %bias : (tensor<2x8x4xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  %e = ascend.graph.gelu %a : (tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %zero = ascend.graph.const splat<0.0 : f32> : tensor<3x6xf32>
  %six = ascend.graph.const splat<6.0 : f32> : tensor<3x6xf32>
  %y = ascend.graph.gemm %g, %gw {trans_b = true} : (tensor<3x5xf32>, tensor<6x5xf32>) -> tensor<3x6xf32>
  %lo = ascend.graph.max %y, %zero : (tensor<3x6xf32>, tensor<3x6xf32>) -> tensor<3x6xf32>
  %hi = ascend.graph.min %lo, %six : (tensor<3x6xf32>, tensor<3x6xf32>) -> tensor<3x6xf32>
  func.return %e, %hi : tensor<2x8x4xf32>, tensor<3x6xf32>
}

// -----

// Left alone: a result with two users, an add that broadcasts the result to a larger shape, a
// max with a non-constant, and a consumer that is not elementwise.

// CHECK-LABEL: func.func @leave_alone
// CHECK-NOT:     fused
// CHECK:         func.return
func.func @leave_alone(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %big: tensor<3x2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %a = ascend.graph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %r = ascend.graph.relu %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = ascend.graph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %s = ascend.graph.add %b, %big : (tensor<2x4xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %c = ascend.graph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %mx = ascend.graph.max %c, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %d = ascend.graph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %sm = ascend.graph.softmax %d : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %a, %r, %s, %mx, %sm : tensor<2x4xf32>, tensor<2x4xf32>, tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
