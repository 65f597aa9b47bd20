// RUN: ge-opt %s -p cse | filecheck %s

// Graph ops are Pure, so xDSL's CSE merges identical ones (same operands, same properties).

// CHECK-LABEL: func.func @merge
// CHECK-NEXT:    %[[R:.*]] = ascend.graph.relu %x
// CHECK-NEXT:    %[[C:.*]] = ascend.graph.conv2d %[[R]], %w {strides = array<i64: 2, 2>}
// CHECK-NEXT:    %[[S:.*]] = ascend.graph.add %[[C]], %[[C]]
// CHECK-NEXT:    func.return %[[S]]
func.func @merge(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %r1 = ascend.graph.relu %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %r2 = ascend.graph.relu %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %c1 = ascend.graph.conv2d %r1, %w {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  %c2 = ascend.graph.conv2d %r2, %w {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  %s = ascend.graph.add %c1, %c2 : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return %s : tensor<1x4x3x3xf32>
}

// Left alone: the same op with different properties, or on different operands.

// CHECK-LABEL: func.func @keep
// CHECK-NEXT:    ascend.graph.softmax %x {axis = 0 : i64}
// CHECK-NEXT:    ascend.graph.softmax %x {axis = 1 : i64}
// CHECK-NEXT:    ascend.graph.relu %x
// CHECK-NEXT:    ascend.graph.relu %y
func.func @keep(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %a = ascend.graph.softmax %x {axis = 0 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = ascend.graph.softmax %x {axis = 1 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %c = ascend.graph.relu %x : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %d = ascend.graph.relu %y : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %a, %b, %c, %d : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
