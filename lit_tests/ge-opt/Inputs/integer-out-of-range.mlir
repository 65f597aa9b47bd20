func.func @f() -> tensor<2xi32> {
  %a = ascend.graph.const dense<[1, 4294967296]> : tensor<2xi32>
  func.return %a : tensor<2xi32>
}
