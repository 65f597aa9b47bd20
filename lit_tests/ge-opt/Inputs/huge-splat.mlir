func.func @f() {
  %0 = "ascend.graph.const"() <{value = dense<1.0> : tensor<4611686018427387904xf32>}> : () -> tensor<3xf32>
  func.return
}
