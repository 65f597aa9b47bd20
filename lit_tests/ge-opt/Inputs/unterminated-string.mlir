func.func @f(%x: tensor<2x4xf32>, %v: tensor<f32>) {
  %0 = ascend.graph.pad %x, %v {pads = array<i64: 1, 1, 1, 1>, mode = "edge} : (tensor<2x4xf32>, tensor<f32>) -> tensor<4x6xf32>
  func.return
}
