// RUN: ge-opt %s -p ge-lower-graph-to-kernel --split-input-file | filecheck %s

// A cube op absorbs its elementwise epilogue (a residual add, an activation) into one cube kernel.

// CHECK-LABEL: func.func @conv_epilogue
// CHECK:         %[[K:.*]] = ascend.kernel.cube(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}}kernel_name = "conv2d_add_relu_0"
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      ascend.graph.conv2d
// CHECK-NEXT:      ascend.graph.add
// CHECK-NEXT:      ascend.graph.relu
// CHECK-NEXT:      ascend.kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[K]]
func.func @conv_epilogue(%x: tensor<1x16x8x8xf32>, %r: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %w = ascend.graph.const splat<0.5 : f32> : tensor<16x16x1x1xf32>
  %c = ascend.graph.conv2d %x, %w : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32> loc("conv")
  %a = ascend.graph.add %c, %r : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("add")
  %y = ascend.graph.relu %a : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("relu")
  func.return %y : tensor<1x16x8x8xf32>
}

// -----

// A tree of elementwise ops (each result used once) is one vector kernel, broadcasts included.

// CHECK-LABEL: func.func @tree
// CHECK:         %[[K:.*]] = ascend.kernel.vector(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}}kernel_name = "exp_neg_mul_add_0"
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      ascend.graph.exp
// CHECK-NEXT:      ascend.graph.neg
// CHECK-NEXT:      ascend.graph.mul
// CHECK-NEXT:      ascend.graph.add
// CHECK-NEXT:      ascend.kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[K]]
func.func @tree(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = ascend.graph.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = ascend.graph.neg %y : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = ascend.graph.mul %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = ascend.graph.add %c, %z : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}

// -----

// Left alone: a value two kernels read stays a kernel result of its own (no recomputation).

// CHECK-LABEL: func.func @shared
// CHECK:         %[[A:.*]] = ascend.kernel.vector(%{{.*}}) {{.*}}kernel_name = "exp_0"
// CHECK:         ascend.kernel.vector(%[[A]]) {{.*}}kernel_name = "relu_0"
// CHECK:         ascend.kernel.vector(%[[A]]) {{.*}}kernel_name = "neg_0"
func.func @shared(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = ascend.graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = ascend.graph.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b, %c : tensor<4xf32>, tensor<4xf32>
}

// -----

// A reduction absorbs elementwise producers and consumers, one reduction per kernel.

// CHECK-LABEL: func.func @reductions
// CHECK:         %[[S:.*]] = ascend.kernel.vector(%{{.*}}, %{{.*}}) {{.*}}kernel_name = "mul_softmax_0"
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      ascend.graph.mul
// CHECK-NEXT:      ascend.graph.softmax
// CHECK-NEXT:      ascend.kernel.yield
// CHECK:         %[[U:.*]] = ascend.kernel.vector(%[[S]]) {{.*}}kernel_name = "softmax_relu_0"
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      ascend.graph.softmax
// CHECK-NEXT:      ascend.graph.relu
// CHECK-NEXT:      ascend.kernel.yield
// CHECK:         func.return %[[U]]
func.func @reductions(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c = ascend.graph.const splat<2.0 : f32> : tensor<2x8xf32>
  %a = ascend.graph.mul %x, %c : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = ascend.graph.softmax %a {axis = -1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %t = ascend.graph.softmax %s {axis = -1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %u = ascend.graph.relu %t : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %u : tensor<2x8xf32>
}

// -----

// Flatten is a view; a concat of kernel results used only by it is a concat view (producers
// write into its slices); a concat that reads graph inputs copies them in a kernel.

// CHECK-LABEL: func.func @views
// CHECK:         %[[A:.*]] = ascend.kernel.vector(%{{.*}}) {{.*}}kernel_name = "relu_0"
// CHECK:         %[[B:.*]] = ascend.kernel.vector(%{{.*}}) {{.*}}kernel_name = "exp_0"
// CHECK:         %[[C:.*]] = ascend.kernel.concat_view %[[A]], %[[B]] {axis = 1 : i64}
// CHECK-NEXT:    %[[F:.*]] = ascend.kernel.view %[[C]] : (tensor<1x32x4x4xf32>) -> tensor<1x512xf32>
// CHECK-NEXT:    %[[D:.*]] = ascend.kernel.vector(%{{.*}}, %{{.*}}) {{.*}}kernel_name = "concat_0"
// CHECK:           ascend.graph.concat
// CHECK:         func.return %[[F]], %[[D]]
func.func @views(%x: tensor<1x16x4x4xf32>, %y: tensor<1x16x4x4xf32>) -> (tensor<1x512xf32>, tensor<1x32x4x4xf32>) {
  %a = ascend.graph.relu %x : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %b = ascend.graph.exp %y : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %c = ascend.graph.concat %a, %b {axis = 1 : i64} : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x32x4x4xf32>
  %f = ascend.graph.flatten %c {axis = 1 : i64} : (tensor<1x32x4x4xf32>) -> tensor<1x512xf32>
  %d = ascend.graph.concat %x, %y {axis = 1 : i64} : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x32x4x4xf32>
  func.return %f, %d : tensor<1x512xf32>, tensor<1x32x4x4xf32>
}

// -----

// Left alone: float64 work goes to the AI CPU and is never fused with AI Core work.

// CHECK-LABEL: func.func @aicpu
// CHECK:         %[[A:.*]] = ascend.kernel.aicpu(%{{.*}}) {{.*}}kernel_name = "exp_0"
// CHECK:         %[[B:.*]] = ascend.kernel.aicpu(%[[A]]) {{.*}}kernel_name = "neg_0"
func.func @aicpu(%x: tensor<4xf64>) -> tensor<4xf64> {
  %a = ascend.graph.exp %x : (tensor<4xf64>) -> tensor<4xf64>
  %b = ascend.graph.neg %a : (tensor<4xf64>) -> tensor<4xf64>
  func.return %b : tensor<4xf64>
}

// -----

// A transpose with the reshapes around it (a channel shuffle) is one data-movement kernel.

// CHECK-LABEL: func.func @shuffle
// CHECK:         %[[K:.*]] = ascend.kernel.vector(%{{.*}}) {{.*}}kernel_name = "reshape_transpose_0"
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      ascend.graph.reshape
// CHECK-NEXT:      ascend.graph.transpose
// CHECK-NEXT:      ascend.graph.reshape
// CHECK-NEXT:      ascend.kernel.yield
// CHECK:         func.return %[[K]]
func.func @shuffle(%x: tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32> {
  %r = ascend.graph.reshape %x : (tensor<1x32x4x4xf32>) -> tensor<1x2x16x4x4xf32>
  %t = ascend.graph.transpose %r {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x16x4x4xf32>) -> tensor<1x16x2x4x4xf32>
  %y = ascend.graph.reshape %t : (tensor<1x16x2x4x4xf32>) -> tensor<1x32x4x4xf32>
  func.return %y : tensor<1x32x4x4xf32>
}

// -----

// A reshape between two transposes joins the first one's kernel only.

// CHECK-LABEL: func.func @two_transposes
// CHECK:         %[[A:.*]] = ascend.kernel.vector(%{{.*}}) {{.*}}kernel_name = "reshape_transpose_0"
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      ascend.graph.reshape
// CHECK-NEXT:      ascend.graph.transpose
// CHECK-NEXT:      ascend.graph.reshape
// CHECK-NEXT:      ascend.kernel.yield
// CHECK:         %[[B:.*]] = ascend.kernel.vector(%[[A]]) {{.*}}kernel_name = "transpose_reshape_0"
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      ascend.graph.transpose
// CHECK-NEXT:      ascend.graph.reshape
// CHECK-NEXT:      ascend.kernel.yield
// CHECK:         func.return %[[B]]
func.func @two_transposes(%x: tensor<2x12xf32>) -> tensor<24xf32> {
  %r = ascend.graph.reshape %x : (tensor<2x12xf32>) -> tensor<2x3x4xf32>
  %t = ascend.graph.transpose %r {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %m = ascend.graph.reshape %t : (tensor<2x4x3xf32>) -> tensor<8x3xf32>
  %u = ascend.graph.transpose %m {perm = array<i64: 1, 0>} : (tensor<8x3xf32>) -> tensor<3x8xf32>
  %y = ascend.graph.reshape %u : (tensor<3x8xf32>) -> tensor<24xf32>
  func.return %y : tensor<24xf32>
}
