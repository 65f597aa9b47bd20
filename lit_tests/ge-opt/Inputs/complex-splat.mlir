func.func @f() {
  %0 = "ascend.graph.const"() <{value = dense<1.0> : tensor<3xcomplex<f32>>}> : () -> tensor<3xf32>
  func.return
}
