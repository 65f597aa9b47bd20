// RUN: ge-opt %s -p dce | filecheck %s

// Graph ops and constants are Pure: what no result depends on is removed.

// CHECK-LABEL: func.func @dead
// CHECK-NEXT:    %[[R:.*]] = ascend.graph.relu %x
// CHECK-NEXT:    func.return %[[R]]
func.func @dead(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = ascend.graph.const dense_resource<unused> : tensor<4xf32>
  %a = ascend.graph.add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = ascend.graph.softmax %a {axis = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %r = ascend.graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
