func.func @f() -> tensor<f32> {
  %a = ascend.graph.const dense<1.0e40> : tensor<f32>
  func.return %a : tensor<f32>
}
