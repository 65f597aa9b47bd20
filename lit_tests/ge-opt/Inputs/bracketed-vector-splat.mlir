func.func @f() {
  %0 = "ascend.graph.const"() <{value = dense<[[1.0]]> : vector<20000000x1xf32>}> : () -> tensor<3xf32>
  func.return
}
