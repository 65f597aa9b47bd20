// RUN: ge-opt %s -p "ge-lower-graph-to-kernel{form-kernels=false}" --split-input-file | filecheck %s

// Cube ops (conv2d, matmul, gemm) become cube kernels; constants stay outside kernels.

// CHECK-LABEL: func.func @conv
// CHECK:         %[[W:.*]] = ascend.graph.const dense_resource<w> : tensor<4x3x3x3xf32>
// CHECK-NEXT:    %[[K:.*]] = ascend.kernel.cube(%{{.*}}, %[[W]]) {kernel_name = "conv1"}
// CHECK-SAME:      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<1x3x8x8xf32>, %[[B:.*]]: tensor<4x3x3x3xf32>):
// CHECK-NEXT:      %[[C:.*]] = ascend.graph.conv2d %[[A]], %[[B]] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT:      ascend.kernel.yield %[[C]] : tensor<1x4x6x6xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[K]] : tensor<1x4x6x6xf32>
func.func @conv(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w = ascend.graph.const dense_resource<w> : tensor<4x3x3x3xf32>
  %y = ascend.graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> loc("conv1")
  func.return %y : tensor<1x4x6x6xf32>
}

// -----

// Every other op becomes a vector kernel of its own, in program order; kernels without a source
// name are named after the op and a counter. Non-4-D tensors are ND.

// CHECK-LABEL: func.func @mlp
// CHECK:         %[[G:.*]] = ascend.kernel.cube(%{{.*}}, %{{.*}}) {kernel_name = "gemm_0"}
// CHECK:           ascend.graph.gemm
// CHECK:         %[[R:.*]] = ascend.kernel.vector(%[[G]]) {kernel_name = "relu_0"}
// CHECK:           ascend.graph.relu
// CHECK:         %[[M:.*]] = ascend.kernel.cube(%[[R]], %{{.*}}) {{.*}}kernel_name = "matmul_0"
// CHECK:           ascend.graph.matmul
// CHECK:         %[[S:.*]] = ascend.kernel.vector(%[[M]]) {{.*}}kernel_name = "softmax_0"
// CHECK:           ascend.graph.softmax
// CHECK:         %[[S2:.*]] = ascend.kernel.vector(%[[S]]) {{.*}}kernel_name = "softmax_1"
// CHECK:         func.return %[[S2]]
func.func @mlp(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w1 = ascend.graph.const splat<1.0 : f32> : tensor<4x5xf32>
  %w2 = ascend.graph.const splat<1.0 : f32> : tensor<5x3xf32>
  %h = ascend.graph.gemm %x, %w1 : (tensor<2x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  %r = ascend.graph.relu %h : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %m = ascend.graph.matmul %r, %w2 : (tensor<2x5xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  %s = ascend.graph.softmax %m : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = ascend.graph.softmax %s : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %t : tensor<2x3xf32>
}

// -----

// Left alone: constants, and graph ops already inside a kernel (no kernel in a kernel).

// CHECK-LABEL: func.func @already_lowered
// CHECK-NEXT:    %[[C:.*]] = ascend.graph.const dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[K:.*]] = ascend.kernel.vector(%[[C]])
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<2xf32>):
// CHECK-NEXT:      %[[R:.*]] = ascend.graph.relu %[[A]]
// CHECK-NEXT:      ascend.kernel.yield %[[R]]
// CHECK-NEXT:    }
// CHECK-NOT:     ascend.kernel
// CHECK:         func.return %[[K]]
func.func @already_lowered() -> tensor<2xf32> {
  %c = ascend.graph.const dense<[1.0, 2.0]> : tensor<2xf32>
  %k = ascend.kernel.vector(%c) : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    %r = ascend.graph.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    ascend.kernel.yield %r : tensor<2xf32>
  }
  func.return %k : tensor<2xf32>
}

// -----

// float64 and int64 arithmetic runs on the AI CPU; moving their bytes does not need it.

// CHECK-LABEL: func.func @aicpu
// An operand read twice is one kernel input.
// CHECK:         ascend.kernel.aicpu(%{{[^,]*}}) {{.*}}kernel_name = "add_0"
// CHECK:         ascend.kernel.aicpu(%{{[^,]*}}) {{.*}}kernel_name = "mul_0"
// CHECK:         ascend.kernel.vector(%{{.*}}) {{.*}}kernel_name = "reshape_0"
// CHECK:         ascend.kernel.vector(%{{[^,]*}}) {{.*}}kernel_name = "add_1"
func.func @aicpu(%a: tensor<4xf64>, %i: tensor<4xi64>, %f: tensor<4xf32>) -> (tensor<4xf64>, tensor<4xi64>, tensor<2x2xi64>, tensor<4xf32>) {
  %0 = ascend.graph.add %a, %a : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %1 = ascend.graph.mul %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = ascend.graph.reshape %i : (tensor<4xi64>) -> tensor<2x2xi64>
  %3 = ascend.graph.add %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %2, %3 : tensor<4xf64>, tensor<4xi64>, tensor<2x2xi64>, tensor<4xf32>
}
