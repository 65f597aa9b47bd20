// RUN: ge-opt %s -p ge-constant-fold --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'ge-constant-fold{max-elements=4}' --split-input-file | filecheck %s --check-prefix=CAP

// Ops on constants fold to constants: small results inline, uniform results as splats.

// CHECK-LABEL: func.func @arithmetic
// CHECK-NEXT:    %[[C:.*]] = ascend.graph.const dense<[2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<4xf32>
func.func @arithmetic() -> tensor<4xf32> {
  %a = ascend.graph.const splat<2.0 : f32> : tensor<4xf32>
  %b = ascend.graph.const dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %c = ascend.graph.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// -----

// A chain folds to one splat, however large: the splat is never materialized in the IR.

// CHECK-LABEL: func.func @splat_chain
// CHECK-NEXT:    %[[C:.*]] = ascend.graph.const splat<3.000000e+00 : f32> : tensor<64x3x7x7xf32>
// CHECK-NEXT:    func.return %[[C]]
// CAP-LABEL:   func.func @splat_chain
// CAP:           ascend.graph.add
func.func @splat_chain() -> tensor<64x3x7x7xf32> {
  %a = ascend.graph.const splat<1.0 : f32> : tensor<64x3x7x7xf32>
  %b = ascend.graph.const splat<2.0 : f32> : tensor<64x3x7x7xf32>
  %c = ascend.graph.add %a, %b : (tensor<64x3x7x7xf32>, tensor<64x3x7x7xf32>) -> tensor<64x3x7x7xf32>
  %d = ascend.graph.relu %c : (tensor<64x3x7x7xf32>) -> tensor<64x3x7x7xf32>
  func.return %d : tensor<64x3x7x7xf32>
}

// -----

// A larger non-uniform result goes to the weight store as a resource.

// CHECK-LABEL: func.func @to_resource
// CHECK-NEXT:    %[[C:.*]] = ascend.graph.const dense_resource<folded_transpose> : tensor<5x4xi32>
// CHECK-NEXT:    func.return %[[C]]
func.func @to_resource() -> tensor<5x4xi32> {
  %a = ascend.graph.const dense<[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14], [15, 16, 17, 18, 19]]> : tensor<4x5xi32>
  %t = ascend.graph.transpose %a {perm = array<i64: 1, 0>} : (tensor<4x5xi32>) -> tensor<5x4xi32>
  func.return %t : tensor<5x4xi32>
}

// -----

// Left alone: ops with a non-constant operand, and integer division by zero (it fails at run
// time, as written).

// CHECK-LABEL: func.func @leave_alone
// CHECK:         ascend.graph.add %x, %{{.*}}
// CHECK:         ascend.graph.div
func.func @leave_alone(%x: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {
  %a = ascend.graph.const dense<[1, 2]> : tensor<2xi32>
  %z = ascend.graph.const splat<0 : i32> : tensor<2xi32>
  %s = ascend.graph.add %x, %a : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %d = ascend.graph.div %a, %z : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  func.return %s, %d : tensor<2xi32>, tensor<2xi32>
}
