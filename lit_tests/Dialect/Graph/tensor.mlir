// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// Every data-movement and indexing `ascend.graph` op survives a round trip through the custom
// and the generic printer: shape changes, slices and pads, gathers and scatters, patterns of
// positions, and the ops whose output size is a property (non_zero, unique).

// CHECK-LABEL: func.func @shapes
// CHECK-NEXT: ascend.graph.expand %{{.*}} {shape = array<i64: 2, 1, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: ascend.graph.tile %{{.*}} {repeats = array<i64: 2, 3>} : (tensor<3x1xf32>) -> tensor<6x3xf32>
// CHECK-NEXT: ascend.graph.shape %{{.*}} {start = 1 : i64} : (tensor<?x4xf32>) -> tensor<1xi64>
// CHECK-NEXT: ascend.graph.shape %{{.*}} {start = -5 : i64, end = 9 : i64} : (tensor<?x4xf32>) -> tensor<2xi64>
// CHECK-NEXT: ascend.graph.expand %{{.*}} {shape = array<i64: 5, 1>} : (tensor<?x4xf32>) -> tensor<5x4xf32>
func.func @shapes(%x: tensor<3x1xf32>, %d: tensor<?x4xf32>) {
  %0 = ascend.graph.expand %x {shape = array<i64: 2, 1, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %1 = ascend.graph.tile %x {repeats = array<i64: 2, 3>} : (tensor<3x1xf32>) -> tensor<6x3xf32>
  %2 = ascend.graph.shape %d {start = 1 : i64} : (tensor<?x4xf32>) -> tensor<1xi64>
  %3 = ascend.graph.shape %d {start = -5 : i64, end = 9 : i64} : (tensor<?x4xf32>) -> tensor<2xi64>
  %4 = ascend.graph.expand %d {shape = array<i64: 5, 1>} : (tensor<?x4xf32>) -> tensor<5x4xf32>
  func.return
}

// Slice bounds follow ONNX: clamped to the axis, INT64_MAX for "to the end", negative steps.
// CHECK-LABEL: func.func @slices
// CHECK-NEXT: ascend.graph.slice %{{.*}} {starts = array<i64: 1, 0>, ends = array<i64: 2, 3>, axes = array<i64: 0, 1>, steps = array<i64: 1, 2>} : (tensor<2x4xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: ascend.graph.slice %{{.*}} {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: 1>, steps = array<i64: -1>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: ascend.graph.slice %{{.*}} {starts = array<i64: 1>, ends = array<i64: 9223372036854775807>, axes = array<i64: -1>, steps = array<i64: 2>} : (tensor<?x4xf32>) -> tensor<?x2xf32>
// CHECK-NEXT: ascend.graph.slice %{{.*}} {starts = array<i64: 5>, ends = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<0x4xf32>
func.func @slices(%x: tensor<2x4xf32>, %d: tensor<?x4xf32>) {
  %0 = ascend.graph.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 2, 3>, axes = array<i64: 0, 1>, steps = array<i64: 1, 2>} : (tensor<2x4xf32>) -> tensor<1x2xf32>
  %1 = ascend.graph.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: 1>, steps = array<i64: -1>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = ascend.graph.slice %d {starts = array<i64: 1>, ends = array<i64: 9223372036854775807>, axes = array<i64: -1>, steps = array<i64: 2>} : (tensor<?x4xf32>) -> tensor<?x2xf32>
  %3 = ascend.graph.slice %x {starts = array<i64: 5>, ends = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<0x4xf32>
  func.return
}

// CHECK-LABEL: func.func @split_and_pad
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = ascend.graph.split %{{.*}} {axis = 1 : i64, sizes = array<i64: 1, 0, 3>} : (tensor<?x4xf32>) -> (tensor<?x1xf32>, tensor<?x0xf32>, tensor<?x3xf32>)
// CHECK-NEXT: ascend.graph.pad %{{.*}}, %{{.*}} {pads = array<i64: 0, 1, 0, 2>, mode = "constant"} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x7xf32>
// CHECK-NEXT: ascend.graph.pad %{{.*}} {pads = array<i64: 1, 1, 1, 1>, mode = "reflect"} : (tensor<2x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: ascend.graph.pad %{{.*}} {pads = array<i64: -1, 2, 0, -3>, mode = "edge"} : (tensor<2x4xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: ascend.graph.pad %{{.*}} {pads = array<i64: 0, 5, 0, 5>} : (tensor<?x4xf32>) -> tensor<?x14xf32>
func.func @split_and_pad(%x: tensor<2x4xf32>, %d: tensor<?x4xf32>, %v: tensor<f32>) {
  %0:3 = ascend.graph.split %d {axis = 1 : i64, sizes = array<i64: 1, 0, 3>} : (tensor<?x4xf32>) -> (tensor<?x1xf32>, tensor<?x0xf32>, tensor<?x3xf32>)
  %1 = ascend.graph.pad %x, %v {pads = array<i64: 0, 1, 0, 2>, mode = "constant"} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x7xf32>
  %2 = ascend.graph.pad %x {pads = array<i64: 1, 1, 1, 1>, mode = "reflect"} : (tensor<2x4xf32>) -> tensor<4x6xf32>
  %3 = ascend.graph.pad %x {pads = array<i64: -1, 2, 0, -3>, mode = "edge"} : (tensor<2x4xf32>) -> tensor<1x3xf32>
  %4 = ascend.graph.pad %d {pads = array<i64: 0, 5, 0, 5>} : (tensor<?x4xf32>) -> tensor<?x14xf32>
  func.return
}

// CHECK-LABEL: func.func @gathers
// CHECK-NEXT: ascend.graph.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK-NEXT: ascend.graph.gather %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<5x4xf32>, tensor<i32>) -> tensor<5xf32>
// CHECK-NEXT: ascend.graph.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.gather_nd %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
func.func @gathers(%x: tensor<5x4xf32>, %i: tensor<2x3xi64>, %s: tensor<i32>, %n: tensor<2x2x2xi32>, %b: tensor<2x1xi64>) {
  %0 = ascend.graph.gather %x, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = ascend.graph.gather %x, %s {axis = -1 : i64} : (tensor<5x4xf32>, tensor<i32>) -> tensor<5xf32>
  %2 = ascend.graph.gather_elements %x, %i {axis = 1 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  %3 = ascend.graph.gather_nd %n, %b {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
  func.return
}

// CHECK-LABEL: func.func @scatters
// CHECK-NEXT: ascend.graph.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
// CHECK-NEXT: ascend.graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
// CHECK-NEXT: ascend.graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} {reduction = "max"} : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
func.func @scatters(%x: tensor<1x5xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>, %d: tensor<8xf32>, %j: tensor<4x1xi64>, %v: tensor<4xf32>) {
  %0 = ascend.graph.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
  %1 = ascend.graph.scatter_nd %d, %j, %v : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
  %2 = ascend.graph.scatter_nd %d, %j, %v {reduction = "max"} : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
  func.return
}

// CHECK-LABEL: func.func @positions
// CHECK-NEXT: ascend.graph.one_hot %{{.*}}, %{{.*}} {depth = 4 : i64, axis = 0 : i64} : (tensor<3xi64>, tensor<2xf16>) -> tensor<4x3xf16>
// CHECK-NEXT: ascend.graph.trilu %{{.*}} {upper = false, k = -1 : i64} : (tensor<2x4x5xbf16>) -> tensor<2x4x5xbf16>
// CHECK-NEXT: ascend.graph.reverse_sequence %{{.*}}, %{{.*}} {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<4x3xi8>, tensor<3xi64>) -> tensor<4x3xi8>
func.func @positions(%i: tensor<3xi64>, %v: tensor<2xf16>, %t: tensor<2x4x5xbf16>, %x: tensor<4x3xi8>, %l: tensor<3xi64>) {
  %0 = ascend.graph.one_hot %i, %v {depth = 4 : i64, axis = 0 : i64} : (tensor<3xi64>, tensor<2xf16>) -> tensor<4x3xf16>
  %1 = ascend.graph.trilu %t {upper = false, k = -1 : i64} : (tensor<2x4x5xbf16>) -> tensor<2x4x5xbf16>
  %2 = ascend.graph.reverse_sequence %x, %l {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<4x3xi8>, tensor<3xi64>) -> tensor<4x3xi8>
  func.return
}

// CHECK-LABEL: func.func @value_shaped
// CHECK-NEXT: ascend.graph.non_zero %{{.*}} {count = 3 : i64} : (tensor<2x2xi1>) -> tensor<2x3xi64>
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = ascend.graph.unique %{{.*}} {count = 4 : i64, sorted = false} : (tensor<6xf32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<6xi64>, tensor<4xi64>)
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = ascend.graph.unique %{{.*}} {count = 2 : i64, axis = 0 : i64} : (tensor<3x2xi32>) -> (tensor<2x2xi32>, tensor<2xi64>, tensor<3xi64>, tensor<2xi64>)
func.func @value_shaped(%b: tensor<2x2xi1>, %x: tensor<6xf32>, %r: tensor<3x2xi32>) {
  %0 = ascend.graph.non_zero %b {count = 3 : i64} : (tensor<2x2xi1>) -> tensor<2x3xi64>
  %1:4 = ascend.graph.unique %x {count = 4 : i64, sorted = false} : (tensor<6xf32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<6xi64>, tensor<4xi64>)
  %2:4 = ascend.graph.unique %r {count = 2 : i64, axis = 0 : i64} : (tensor<3x2xi32>) -> (tensor<2x2xi32>, tensor<2xi64>, tensor<3xi64>, tensor<2xi64>)
  func.return
}
