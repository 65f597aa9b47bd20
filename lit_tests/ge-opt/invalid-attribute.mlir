// RUN: not ge-opt %s 2>&1 | filecheck %s

// CHECK: ge-opt: error: 'ascend.graph.softmax' defining %y, property 'axis' = "one": "one" should be of base attribute integer{{$}}
func.func @axis_as_string(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = "ascend.graph.softmax"(%x) <{axis = "one"}> : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
