// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks one rule of a data-movement or indexing `ascend.graph` verifier.

// CHECK: {{^}}'ascend.graph.expand': shapes [3, 2] and [1, 4] do not broadcast
func.func @expand_not_broadcastable(%x: tensor<3x2xf32>) {
  %0 = ascend.graph.expand %x {shape = array<i64: 1, 4>} : (tensor<3x2xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.tile': 'repeats' needs 2 non-negative values, got [2]
func.func @tile_repeats_per_axis(%x: tensor<3x2xf32>) {
  %0 = ascend.graph.tile %x {repeats = array<i64: 2>} : (tensor<3x2xf32>) -> tensor<6x2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.slice': 'steps' must not be 0
func.func @slice_zero_step(%x: tensor<4xf32>) {
  %0 = ascend.graph.slice %x {starts = array<i64: 0>, ends = array<i64: 4>, steps = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.slice': 'axes' [1, 1] repeats an axis
func.func @slice_repeated_axis(%x: tensor<2x4xf32>) {
  %0 = ascend.graph.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 1, 2>, axes = array<i64: 1, -1>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

// Backwards from the last element to the first, by 2: elements 3 and 1.
// CHECK: {{^}}'ascend.graph.slice': result type tensor<3xf32> does not match the inferred type tensor<2xf32>
func.func @slice_result_shape(%x: tensor<4xf32>) {
  %0 = ascend.graph.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, steps = array<i64: -2>} : (tensor<4xf32>) -> tensor<3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.split': sizes [1, 2] do not add up to dimension 1 of [2, 4]
func.func @split_sizes(%x: tensor<2x4xf32>) {
  %0:2 = ascend.graph.split %x {axis = 1 : i64, sizes = array<i64: 1, 2>} : (tensor<2x4xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>)
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.pad': 'pads' needs 4 values for rank 2, got 2
func.func @pad_count(%x: tensor<2x4xf32>) {
  %0 = ascend.graph.pad %x {pads = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.pad': unknown mode 'mirror' (known: constant, reflect, edge, wrap)
func.func @pad_mode(%x: tensor<2x4xf32>) {
  %0 = ascend.graph.pad %x {pads = array<i64: 1, 1, 1, 1>, mode = "mirror"} : (tensor<2x4xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.pad': a padding value needs mode 'constant', not 'edge'
func.func @pad_value_with_edge(%x: tensor<2x4xf32>, %v: tensor<f32>) {
  %0 = ascend.graph.pad %x, %v {pads = array<i64: 1, 1, 1, 1>, mode = "edge"} : (tensor<2x4xf32>, tensor<f32>) -> tensor<4x6xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.pad': input and padding value must share one element type, got f32 and i32
func.func @pad_value_type(%x: tensor<2x4xf32>, %v: tensor<i32>) {
  %0 = ascend.graph.pad %x, %v {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x4xf32>, tensor<i32>) -> tensor<4x6xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.pad': pads [-2, 0, -1, 0] crop more than dimension 0 of [2, 4]
func.func @pad_crops_too_much(%x: tensor<2x4xf32>) {
  %0 = ascend.graph.pad %x {pads = array<i64: -2, 0, -1, 0>} : (tensor<2x4xf32>) -> tensor<0x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.shape': result type tensor<3xi64> does not match the inferred type tensor<2xi64>
func.func @shape_rank(%x: tensor<2x4xf32>) {
  %0 = ascend.graph.shape %x : (tensor<2x4xf32>) -> tensor<3xi64>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.gather': indices must be integers, got f32
func.func @gather_float_indices(%x: tensor<5x4xf32>, %i: tensor<2xf32>) {
  %0 = ascend.graph.gather %x, %i : (tensor<5x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.gather': axis 2 is out of range for rank 2
func.func @gather_axis(%x: tensor<5x4xf32>, %i: tensor<2xi64>) {
  %0 = ascend.graph.gather %x, %i {axis = 2 : i64} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.gather_elements': indices of rank 1 cannot index data of rank 2
func.func @gather_elements_rank(%x: tensor<5x4xf32>, %i: tensor<2xi64>) {
  %0 = ascend.graph.gather_elements %x, %i : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.gather_nd': batch dimensions of data [2, 2, 2] and indices [3, 1] differ
func.func @gather_nd_batch(%x: tensor<2x2x2xi32>, %i: tensor<3x1xi64>) {
  %0 = ascend.graph.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<3x1xi64>) -> tensor<3x2xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.scatter_elements': unknown reduction 'sum' (known: none, add, mul, max, min)
func.func @scatter_reduction(%x: tensor<1x5xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>) {
  %0 = ascend.graph.scatter_elements %x, %i, %u {reduction = "sum"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.scatter_elements': indices [1, 2] and updates [1, 3] must have one shape of rank 2
func.func @scatter_elements_updates(%x: tensor<1x5xf32>, %i: tensor<1x2xi64>, %u: tensor<1x3xf32>) {
  %0 = ascend.graph.scatter_elements %x, %i, %u : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x3xf32>) -> tensor<1x5xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.scatter_nd': updates must have shape [4, 3], got [4]
func.func @scatter_nd_updates(%x: tensor<8x3xf32>, %i: tensor<4x1xi64>, %u: tensor<4xf32>) {
  %0 = ascend.graph.scatter_nd %x, %i, %u : (tensor<8x3xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.scatter_nd': updates of f16 cannot go into data of f32
func.func @scatter_nd_element_type(%x: tensor<8xf32>, %i: tensor<4x1xi64>, %u: tensor<4xf16>) {
  %0 = ascend.graph.scatter_nd %x, %i, %u : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf16>) -> tensor<8xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.one_hot': values must be [off, on], got tensor<3xf32>
func.func @one_hot_values(%i: tensor<3xi64>, %v: tensor<3xf32>) {
  %0 = ascend.graph.one_hot %i, %v {depth = 4 : i64} : (tensor<3xi64>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.one_hot': 'depth' must be positive, got 0
func.func @one_hot_depth(%i: tensor<3xi64>, %v: tensor<2xf32>) {
  %0 = ascend.graph.one_hot %i, %v {depth = 0 : i64} : (tensor<3xi64>, tensor<2xf32>) -> tensor<3x0xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.trilu': trilu needs a rank of at least 2, got tensor<4xf32>
func.func @trilu_rank(%x: tensor<4xf32>) {
  %0 = ascend.graph.trilu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.reverse_sequence': 'batch_axis' and 'time_axis' must differ
func.func @reverse_sequence_axes(%x: tensor<4x3xf32>, %l: tensor<4xi64>) {
  %0 = ascend.graph.reverse_sequence %x, %l {batch_axis = 0 : i64, time_axis = 0 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.reverse_sequence': sequence_lens must have shape [3], got tensor<4xi64>
func.func @reverse_sequence_lengths(%x: tensor<4x3xf32>, %l: tensor<4xi64>) {
  %0 = ascend.graph.reverse_sequence %x, %l : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  func.return
}

// -----

// The number of non-zero elements is the property the op was specialized on.
// CHECK: {{^}}'ascend.graph.non_zero': result type tensor<2x4xi64> does not match the inferred type tensor<2x3xi64>
func.func @non_zero_count(%x: tensor<2x2xi1>) {
  %0 = ascend.graph.non_zero %x {count = 3 : i64} : (tensor<2x2xi1>) -> tensor<2x4xi64>
  func.return
}

// -----

// The inverse indices have one entry per input element.
// CHECK: {{^}}'ascend.graph.unique': result type tensor<4xi64> does not match the inferred type tensor<6xi64>
func.func @unique_results(%x: tensor<6xf32>) {
  %0:4 = ascend.graph.unique %x {count = 4 : i64} : (tensor<6xf32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>)
  func.return
}
