// RUN: ge-opt %s -p canonicalize | filecheck %s

// Shape-only ops of a splat constant fold to a new splat of the result type, which the umbrella
// `ascend` dialect materializes as an `ascend.graph.const`; identities fold to their input.

// CHECK-LABEL: func.func @reshape_of_splat
// CHECK-NEXT:    %[[C:.*]] = ascend.graph.const splat<1.500000e+00 : f32> : tensor<2x3xf32>
// CHECK-NOT:     ascend.graph.reshape
// CHECK-NEXT:    func.return %[[C]] : tensor<2x3xf32>
func.func @reshape_of_splat() -> tensor<2x3xf32> {
  %c = ascend.graph.const splat<1.5 : f32> : tensor<6xf32>
  %0 = ascend.graph.reshape %c : (tensor<6xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @flatten_of_splat
// CHECK-NEXT:    %[[C:.*]] = ascend.graph.const splat<3 : i32> : tensor<2x12xi32>
// CHECK-NOT:     ascend.graph.flatten
// CHECK-NEXT:    func.return %[[C]] : tensor<2x12xi32>
func.func @flatten_of_splat() -> tensor<2x12xi32> {
  %c = ascend.graph.const splat<3 : i32> : tensor<2x3x4xi32>
  %0 = ascend.graph.flatten %c {axis = 1 : i64} : (tensor<2x3x4xi32>) -> tensor<2x12xi32>
  func.return %0 : tensor<2x12xi32>
}

// CHECK-LABEL: func.func @transpose_of_splat
// CHECK-NEXT:    %[[C:.*]] = ascend.graph.const splat<2.000000e+00 : f32> : tensor<3x2xf32>
// CHECK-NOT:     ascend.graph.transpose
// CHECK-NEXT:    func.return %[[C]] : tensor<3x2xf32>
func.func @transpose_of_splat() -> tensor<3x2xf32> {
  %c = ascend.graph.const splat<2.0 : f32> : tensor<2x3xf32>
  %0 = ascend.graph.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// A chain folds link by link down to one constant.
// CHECK-LABEL: func.func @chain_of_splat
// CHECK-NEXT:    %[[C:.*]] = ascend.graph.const splat<4.000000e+00 : f32> : tensor<6x1xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<6x1xf32>
func.func @chain_of_splat() -> tensor<6x1xf32> {
  %c = ascend.graph.const splat<4.0 : f32> : tensor<1x2x3xf32>
  %0 = ascend.graph.transpose %c {perm = array<i64: 0, 2, 1>} : (tensor<1x2x3xf32>) -> tensor<1x3x2xf32>
  %1 = ascend.graph.flatten %0 {axis = 0 : i64} : (tensor<1x3x2xf32>) -> tensor<1x6xf32>
  %2 = ascend.graph.reshape %1 : (tensor<1x6xf32>) -> tensor<6x1xf32>
  func.return %2 : tensor<6x1xf32>
}

// CHECK-LABEL: func.func @transpose_identity_perm
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    func.return %[[X]] : tensor<2x3xf32>
func.func @transpose_identity_perm(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = ascend.graph.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reshape_to_same_type
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    func.return %[[X]] : tensor<2x3xf32>
func.func @reshape_to_same_type(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = ascend.graph.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @flatten_to_same_type
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    func.return %[[X]] : tensor<2x3xf32>
func.func @flatten_to_same_type(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = ascend.graph.flatten %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// Cases that must be left alone.

// CHECK-LABEL: func.func @reshape_of_value
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[R:.*]] = ascend.graph.reshape %[[X]] : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<6xf32>
func.func @reshape_of_value(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = ascend.graph.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}

// CHECK-LABEL: func.func @transpose_of_value
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[T:.*]] = ascend.graph.transpose %[[X]] {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %[[T]] : tensor<3x2xf32>
func.func @transpose_of_value(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = ascend.graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// A square transpose keeps its type, yet it is no identity.
// CHECK-LABEL: func.func @transpose_square_of_value
// CHECK-SAME:    (%[[X:.*]]: tensor<3x3xf32>)
// CHECK-NEXT:    %[[T:.*]] = ascend.graph.transpose %[[X]] {perm = array<i64: 1, 0>} : (tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT:    func.return %[[T]] : tensor<3x3xf32>
func.func @transpose_square_of_value(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = ascend.graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return %0 : tensor<3x3xf32>
}
