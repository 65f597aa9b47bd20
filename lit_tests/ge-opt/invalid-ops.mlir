// RUN: not ge-opt %s --split-input-file 2>&1 | filecheck %s

// An invalid op is one line naming the op (and the property whose constraint it breaks), never a
// value that is silently converted: an integer list given as floats is refused, not truncated.

// CHECK: ge-opt: error: 'ascend.graph.transpose' defining %y, property 'perm' = array<f32: 1.000000e+00, 0.000000e+00>: f32 should be of base attribute integer_type
func.func @perm_as_floats(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %y = "ascend.graph.transpose"(%x) <{perm = array<f32: 1.0, 0.0>}> : (tensor<2x4xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
