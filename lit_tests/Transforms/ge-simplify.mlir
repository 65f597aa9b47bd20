// RUN: ge-opt %s -p ge-simplify,dce --split-input-file | filecheck %s

// CHECK-LABEL: func.func @no_ops
// CHECK-NEXT:    func.return %x, %x, %x, %x : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
func.func @no_ops(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = ascend.graph.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = ascend.graph.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = ascend.graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = ascend.graph.flatten %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @chains
// CHECK-NEXT:    %[[R:.*]] = ascend.graph.reshape %x : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    %[[T:.*]] = ascend.graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %[[R]], %x, %[[T]]
func.func @chains(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
  %a = ascend.graph.reshape %x : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %b = ascend.graph.flatten %a {axis = 1 : i64} : (tensor<24xf32>) -> tensor<24x1xf32>
  %c = ascend.graph.reshape %b : (tensor<24x1xf32>) -> tensor<4x6xf32>
  %t1 = ascend.graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %t2 = ascend.graph.transpose %t1 {perm = array<i64: 1, 0, 2>} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
  %t3 = ascend.graph.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %t4 = ascend.graph.transpose %t3 {perm = array<i64: 1, 0, 2>} : (tensor<2x4x3xf32>) -> tensor<4x2x3xf32>
  func.return %c, %t2, %t4 : tensor<4x6xf32>, tensor<2x3x4xf32>, tensor<4x2x3xf32>
}

// -----

// A widening cast followed by a cast back is nothing; a narrowing one must stay.

// CHECK-LABEL: func.func @casts
// CHECK-NEXT:    %[[N1:.*]] = ascend.graph.cast %x : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    %[[N2:.*]] = ascend.graph.cast %[[N1]] : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:    %[[I:.*]] = ascend.graph.cast %i : (tensor<4xi8>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %x, %[[N2]], %[[I]]
func.func @casts(%x: tensor<4xf32>, %i: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %w = ascend.graph.cast %x : (tensor<4xf32>) -> tensor<4xf64>
  %back = ascend.graph.cast %w : (tensor<4xf64>) -> tensor<4xf32>
  %n = ascend.graph.cast %x : (tensor<4xf32>) -> tensor<4xf16>
  %n2 = ascend.graph.cast %n : (tensor<4xf16>) -> tensor<4xf32>
  %i32 = ascend.graph.cast %i : (tensor<4xi8>) -> tensor<4xi32>
  %f = ascend.graph.cast %i32 : (tensor<4xi32>) -> tensor<4xf32>
  func.return %back, %n2, %f : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Neutral constants vanish, unless they broadcast x or are the wrong signed zero.

// CHECK-LABEL: func.func @neutral
// CHECK-NEXT:    %[[Z:.*]] = ascend.graph.const splat<0.000000e+00 : f32> : tensor<4xf32>
// CHECK-NEXT:    %[[ONE:.*]] = ascend.graph.const splat<1.000000e+00 : f32> : tensor<2x4xf32>
// CHECK-NEXT:    %[[A:.*]] = ascend.graph.add %x, %[[Z]]
// CHECK-NEXT:    %[[B:.*]] = ascend.graph.mul %x, %[[ONE]]
// CHECK-NEXT:    func.return %x, %x, %x, %i, %[[A]], %[[B]]
func.func @neutral(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<2x4xf32>) {
  %one = ascend.graph.const splat<1.0 : f32> : tensor<4xf32>
  %nz = ascend.graph.const splat<-0.0 : f32> : tensor<4xf32>
  %z = ascend.graph.const splat<0.0 : f32> : tensor<4xf32>
  %iz = ascend.graph.const splat<0 : i32> : tensor<4xi32>
  %big = ascend.graph.const splat<1.0 : f32> : tensor<2x4xf32>
  %0 = ascend.graph.mul %one, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = ascend.graph.add %x, %nz : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = ascend.graph.sub %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = ascend.graph.add %iz, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %4 = ascend.graph.add %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = ascend.graph.mul %x, %big : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<2x4xf32>
}

// -----

// A no-op expand and double negations vanish; a real expand and a single negation stay.

// CHECK-LABEL: func.func @expand_and_negation
// CHECK-NEXT:    %[[N:.*]] = ascend.graph.neg %x
// CHECK-NEXT:    %[[E:.*]] = ascend.graph.expand %x {shape = array<i64: 2, 1, 4>}
// CHECK-NEXT:    func.return %x, %x, %b, %[[E]], %[[N]]
func.func @expand_and_negation(%x: tensor<3x4xf32>, %b: tensor<4xi1>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<4xi1>, tensor<2x3x4xf32>, tensor<3x4xf32>) {
  %0 = ascend.graph.expand %x {shape = array<i64: 3, 1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = ascend.graph.neg %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %2 = ascend.graph.neg %1 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %3 = ascend.graph.not %b : (tensor<4xi1>) -> tensor<4xi1>
  %4 = ascend.graph.not %3 : (tensor<4xi1>) -> tensor<4xi1>
  %5 = ascend.graph.expand %x {shape = array<i64: 2, 1, 4>} : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0, %2, %4, %5, %1 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<4xi1>, tensor<2x3x4xf32>, tensor<3x4xf32>
}
