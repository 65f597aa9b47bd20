// RUN: ge-opt %s -p ge-lower-kernel-to-stream --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'ge-lower-kernel-to-stream{alignment=64}' --split-input-file | filecheck %s --check-prefix=ALIGN64

// Kernels are outlined into symbols; the model's inputs and outputs are the caller's memory
// (bound, offset 0, no arena bytes), every other result gets an aligned arena slot of its own,
// and constants a slot in the weight blob where a kernel reads them (an unread one gets none).

// CHECK:       ascend.stream.kernel @conv1 {unit = #ascend.unit<cube>, kernel_name = "conv1", tiling = #ascend.cube_tiling<m = 16, n = 16, k = 32, db = 1, tiles = 3>}
// CHECK-SAME:    : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
// CHECK-NEXT:  ^bb0(%{{.*}}: tensor<1x3x8x8xf32>, %{{.*}}: tensor<4x3x3x3xf32>):
// CHECK-NEXT:    ascend.graph.conv2d
// CHECK-NEXT:    ascend.stream.return %{{.*}} : tensor<1x4x6x6xf32>
// CHECK:       ascend.stream.kernel @relu {unit = #ascend.unit<vector>
// CHECK:       ascend.stream.model @main attributes {arena_size = 1024 : i64, weight_size = 512 : i64, input_names = ["image"], output_names = ["probs"]} {
// CHECK-NEXT:    %[[X:.*]] = ascend.stream.buffer offset 0 size 768 {input = 0 : i64} : memref<1x3x8x8xf32>
// CHECK-NEXT:    %[[W:.*]] = ascend.stream.weight dense_resource<w> : tensor<4x3x3x3xf32> offset 0 size 432 : memref<4x3x3x3xf32>
// CHECK-NEXT:    %[[C:.*]] = ascend.stream.buffer offset 0 size 576 : memref<1x4x6x6xf32>
// CHECK-NEXT:    ascend.stream.launch @conv1(%[[X]], %[[W]]) -> (%[[C]]) stream 0
// CHECK-NEXT:    %[[R:.*]] = ascend.stream.buffer offset 0 size 576 {output = 0 : i64} : memref<1x4x6x6xf32>
// CHECK-NEXT:    ascend.stream.launch @relu(%[[C]]) -> (%[[R]]) stream 0
// CHECK-NEXT:    ascend.stream.outputs %[[R]] : memref<1x4x6x6xf32>
// CHECK-NEXT:  }
// CHECK-NOT:   func.func

// ALIGN64:     ascend.stream.model @main attributes {arena_size = 576 : i64, weight_size = 448 : i64
// ALIGN64:       ascend.stream.buffer offset 0 size 576 :
// ALIGN64:       ascend.stream.buffer offset 0 size 576 {output = 0 : i64}
func.func @main(%x: tensor<1x3x8x8xf32> {ascend.name = "image"}) -> (tensor<1x4x6x6xf32> {ascend.name = "probs"}) {
  %w = ascend.graph.const dense_resource<w> : tensor<4x3x3x3xf32>
  %b = ascend.graph.const splat<0.5 : f32> : tensor<4xf32>
  %c = ascend.kernel.cube(%x, %w) {kernel_name = "conv1", tiling = #ascend.cube_tiling<m = 16, n = 16, k = 32, db = 1, tiles = 3>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  ^bb0(%a: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>):
    %0 = ascend.graph.conv2d %a, %k : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    ascend.kernel.yield %0 : tensor<1x4x6x6xf32>
  }
  %r = ascend.kernel.vector(%c) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  ^bb0(%a: tensor<1x4x6x6xf32>):
    %0 = ascend.graph.relu %a : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    ascend.kernel.yield %0 : tensor<1x4x6x6xf32>
  }
  func.return %r : tensor<1x4x6x6xf32>
}

// -----

// Unnamed inputs and outputs get positional names; a returned input is returned as it is (copied
// out, not bound to the output); two kernels of one source name get distinct symbols.

// CHECK:       ascend.stream.kernel @k {
// CHECK:       ascend.stream.kernel @k_1 {
// CHECK:       ascend.stream.model @f attributes {{.*}}input_names = ["input_0", "input_1"], output_names = ["output_0", "output_1"]}
// CHECK-NEXT:    %[[A:.*]] = ascend.stream.buffer offset 0 size 8 {input = 0 : i64} : memref<2xf32>
// CHECK-NEXT:    %[[B:.*]] = ascend.stream.buffer offset 0 size 8 {input = 1 : i64} : memref<2xf32>
// CHECK:         ascend.stream.launch @k(
// CHECK:         %[[O:.*]] = ascend.stream.buffer offset 0 size 8 {output = 0 : i64} : memref<2xf32>
// CHECK:         ascend.stream.launch @k_1(
// CHECK:         ascend.stream.outputs %[[O]], %[[B]] : memref<2xf32>, memref<2xf32>
func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = ascend.kernel.vector(%a, %b) {kernel_name = "k"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):
    %s = ascend.graph.add %x, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    ascend.kernel.yield %s : tensor<2xf32>
  }
  %1 = ascend.kernel.vector(%0) {kernel_name = "k"} : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%x: tensor<2xf32>):
    %r = ascend.graph.relu %x : (tensor<2xf32>) -> tensor<2xf32>
    ascend.kernel.yield %r : tensor<2xf32>
  }
  func.return %1, %b : tensor<2xf32>, tensor<2xf32>
}

// -----

// Identical constants share one slot of the weight blob.

// CHECK-LABEL: ascend.stream.model @dedupe attributes {arena_size = {{.*}}, weight_size = 1024 : i64
// CHECK-NEXT:    %[[X:.*]] = ascend.stream.buffer offset 0 size 8 {input = 0 : i64}
// CHECK-NEXT:    %[[A:.*]] = ascend.stream.weight dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32> offset 0 size 8
// CHECK-NEXT:    %[[S:.*]] = ascend.stream.weight 3.000000e+00 : f32 offset 512 size 8
// CHECK-NEXT:    %[[Y:.*]] = ascend.stream.buffer
// CHECK-NEXT:    ascend.stream.launch @k(%[[A]], %[[A]], %[[S]], %[[S]]) -> (%[[Y]])
func.func @dedupe(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = ascend.graph.const dense<[1.0, 2.0]> : tensor<2xf32>
  %b = ascend.graph.const dense<[1.0, 2.0]> : tensor<2xf32>
  %s = ascend.graph.const splat<3.0 : f32> : tensor<2xf32>
  %t = ascend.graph.const splat<3.0 : f32> : tensor<2xf32>
  %0 = ascend.kernel.vector(%a, %b, %s, %t) {kernel_name = "k"} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%p: tensor<2xf32>, %q: tensor<2xf32>, %r: tensor<2xf32>, %u: tensor<2xf32>):
    %1 = ascend.graph.add %p, %q : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %2 = ascend.graph.add %r, %u : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %3 = ascend.graph.add %1, %2 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    ascend.kernel.yield %3 : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}

// -----

// A kernel never takes the name of the model (which is the function's): the relu kernel of @relu
// becomes @relu_1.

// CHECK-LABEL: ascend.stream.kernel @relu_1
// CHECK:       ascend.stream.model @relu
// CHECK:       ascend.stream.launch @relu_1
func.func @relu(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.kernel.vector(%a) {kernel_name = "relu"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = ascend.graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    ascend.kernel.yield %r : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}

// -----

// Device formats stay in the types: a kernel symbol has the kernel op's types (formats as
// encodings), and each buffer is a memref of the logical shape with the format as its layout. Its
// size is the stored one: 1x3x8x8 in NC1HWC0 is 1x1x8x8x16 floats (4096 bytes), the 4x3x3x3
// weights in FRACTAL_Z are 9x1x16x16 floats (9216 bytes), 1x4x6x6 in NC1HWC0 is 1x1x6x6x16 (2304).

// CHECK:       ascend.stream.kernel @to_5hd {unit = #ascend.unit<vector>, kind = #ascend.kind<trans_data>, kernel_name = "to_5hd"}
// CHECK-SAME:    : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>> {
// CHECK:       ascend.stream.kernel @conv {unit = #ascend.unit<cube>, kernel_name = "conv", tiling = #ascend.cube_tiling<m = 16, n = 16, k = 32, db = 1, tiles = 3>}
// CHECK-SAME:    : (tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>, tensor<4x3x3x3xf32, #ascend.format<FRACTAL_Z>>) -> tensor<1x4x6x6xf32, #ascend.format<NC1HWC0>> {
// CHECK-NEXT:  ^bb0(%{{.*}}: tensor<1x3x8x8xf32>, %{{.*}}: tensor<4x3x3x3xf32>):
// CHECK:       ascend.stream.model @main attributes {arena_size = 6656 : i64, weight_size = 9216 : i64
// CHECK-NEXT:    %[[X:.*]] = ascend.stream.buffer offset 0 size 768 {input = 0 : i64} : memref<1x3x8x8xf32>
// CHECK-NEXT:    %[[T:.*]] = ascend.stream.buffer offset 0 size 4096 : memref<1x3x8x8xf32, #ascend.format<NC1HWC0>>
// CHECK-NEXT:    ascend.stream.launch @to_5hd(%[[X]]) -> (%[[T]]) stream 0
// CHECK-NEXT:    %[[W:.*]] = ascend.stream.weight dense_resource<w> : tensor<4x3x3x3xf32> offset 0 size 9216 : memref<4x3x3x3xf32, #ascend.format<FRACTAL_Z>>
// CHECK-NEXT:    %[[C:.*]] = ascend.stream.buffer offset 4096 size 2304 : memref<1x4x6x6xf32, #ascend.format<NC1HWC0>>
// CHECK-NEXT:    ascend.stream.launch @conv(%[[T]], %[[W]]) -> (%[[C]]) stream 0
// CHECK-NEXT:    %[[R:.*]] = ascend.stream.buffer offset 0 size 576 {output = 0 : i64} : memref<1x4x6x6xf32>
// CHECK-NEXT:    ascend.stream.launch @to_nchw(%[[C]]) -> (%[[R]]) stream 0
func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w = ascend.graph.const dense_resource<w> : tensor<4x3x3x3xf32>
  %t = ascend.kernel.trans_data %x {kernel_name = "to_5hd"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>
  %v = ascend.kernel.trans_data %w : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32, #ascend.format<FRACTAL_Z>>
  %c = ascend.kernel.cube(%t, %v) {kernel_name = "conv", tiling = #ascend.cube_tiling<m = 16, n = 16, k = 32, db = 1, tiles = 3>} : (tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>, tensor<4x3x3x3xf32, #ascend.format<FRACTAL_Z>>) -> tensor<1x4x6x6xf32, #ascend.format<NC1HWC0>> {
  ^bb0(%a: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>):
    %0 = ascend.graph.conv2d %a, %k : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    ascend.kernel.yield %0 : tensor<1x4x6x6xf32>
  }
  %r = ascend.kernel.trans_data %c {kernel_name = "to_nchw"} : (tensor<1x4x6x6xf32, #ascend.format<NC1HWC0>>) -> tensor<1x4x6x6xf32>
  func.return %r : tensor<1x4x6x6xf32>
}
