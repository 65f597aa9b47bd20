// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// A yes/no property is `true` or `false`; at its default (written once, in the op definition)
// the printer leaves it out and the parser fills it back in.

// CHECK-LABEL: func.func @flags
// CHECK-NEXT: ascend.graph.reduce_sum %{{.*}} {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: ascend.graph.reduce_sum %{{.*}} {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK-NEXT: ascend.graph.gemm %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: ascend.graph.gemm %{{.*}}, %{{.*}} {trans_a = true} : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
func.func @flags(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %t: tensor<3x2xf32>) {
  %0 = ascend.graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %1 = ascend.graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %2 = ascend.graph.gemm %x, %w {trans_a = false} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %3 = ascend.graph.gemm %t, %w {trans_a = true} : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return
}
