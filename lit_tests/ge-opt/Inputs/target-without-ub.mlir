builtin.module attributes {ascend.target = #ascend.target<"Ascend910B2", {cube_cores = 24 : i64, vector_cores = 48 : i64, l0a_bytes = 65536 : i64, l0b_bytes = 65536 : i64, l0c_bytes = 131072 : i64}>} {
  func.func @main(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %r = ascend.kernel.vector(%x) : (tensor<4x64xf32>) -> tensor<4x64xf32> {
    ^bb0(%a: tensor<4x64xf32>):
      %0 = ascend.graph.relu %a : (tensor<4x64xf32>) -> tensor<4x64xf32>
      ascend.kernel.yield %0 : tensor<4x64xf32>
    }
    func.return %r : tensor<4x64xf32>
  }
}
