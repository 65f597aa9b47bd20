// RUN: ge-opt %s -p ge-assign-formats --split-input-file | filecheck %s

// A conv network on device formats: the graph input is converted once (NCHW -> NC1HWC0), conv
// weights are read as FRACTAL_Z and a gemm's constant weights as FRACTAL_NZ (both converted at
// compile time, no trans_data), relu and global pooling stay in NC1HWC0, and the flatten reads
// the pooled NC1HWC0 data as ND through a view (H = W = 1, C a multiple of 16).

// CHECK-LABEL: func.func @convnet
// CHECK-DAG:     %[[T:.*]] = ascend.kernel.trans_data %{{.*}} {kernel_name = "trans_data_0"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>
// CHECK-DAG:     %[[W:.*]] = ascend.kernel.trans_data %w : (tensor<32x3x3x3xf32>) -> tensor<32x3x3x3xf32, #ascend.format<FRACTAL_Z>>
// CHECK-DAG:     %[[FW:.*]] = ascend.kernel.trans_data %fw : (tensor<10x32xf32>) -> tensor<10x32xf32, #ascend.format<FRACTAL_NZ>>
// CHECK:         %[[C:.*]] = ascend.kernel.cube(%[[T]], %[[W]]) : (tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>, tensor<32x3x3x3xf32, #ascend.format<FRACTAL_Z>>) -> tensor<1x32x6x6xf32, #ascend.format<NC1HWC0>>
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<1x3x8x8xf32>, %{{.*}}: tensor<32x3x3x3xf32>):
// CHECK:         %[[R:.*]] = ascend.kernel.vector(%[[C]]) : (tensor<1x32x6x6xf32, #ascend.format<NC1HWC0>>) -> tensor<1x32x6x6xf32, #ascend.format<NC1HWC0>>
// CHECK:         %[[G:.*]] = ascend.kernel.vector(%[[R]]) : (tensor<1x32x6x6xf32, #ascend.format<NC1HWC0>>) -> tensor<1x32x1x1xf32, #ascend.format<NC1HWC0>>
// CHECK:         %[[F:.*]] = ascend.kernel.view %[[G]] : (tensor<1x32x1x1xf32, #ascend.format<NC1HWC0>>) -> tensor<1x32xf32>
// CHECK-NEXT:    %[[Y:.*]] = ascend.kernel.cube(%[[F]], %[[FW]]) : (tensor<1x32xf32>, tensor<10x32xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<1x10xf32>
// CHECK-NOT:     ascend.kernel.trans_data
// CHECK:         func.return %[[Y]]
func.func @convnet(%x: tensor<1x3x8x8xf32>) -> tensor<1x10xf32> {
  %w = ascend.graph.const splat<0.5 : f32> : tensor<32x3x3x3xf32>
  %fw = ascend.graph.const splat<0.5 : f32> : tensor<10x32xf32>
  %c = ascend.kernel.cube(%x, %w) : (tensor<1x3x8x8xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x6x6xf32> {
  ^bb0(%a: tensor<1x3x8x8xf32>, %b: tensor<32x3x3x3xf32>):
    %0 = ascend.graph.conv2d %a, %b : (tensor<1x3x8x8xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x6x6xf32>
    ascend.kernel.yield %0 : tensor<1x32x6x6xf32>
  }
  %r = ascend.kernel.vector(%c) : (tensor<1x32x6x6xf32>) -> tensor<1x32x6x6xf32> {
  ^bb0(%a: tensor<1x32x6x6xf32>):
    %0 = ascend.graph.relu %a : (tensor<1x32x6x6xf32>) -> tensor<1x32x6x6xf32>
    ascend.kernel.yield %0 : tensor<1x32x6x6xf32>
  }
  %g = ascend.kernel.vector(%r) : (tensor<1x32x6x6xf32>) -> tensor<1x32x1x1xf32> {
  ^bb0(%a: tensor<1x32x6x6xf32>):
    %0 = ascend.graph.global_avg_pool %a : (tensor<1x32x6x6xf32>) -> tensor<1x32x1x1xf32>
    ascend.kernel.yield %0 : tensor<1x32x1x1xf32>
  }
  %f = ascend.kernel.view %g : (tensor<1x32x1x1xf32>) -> tensor<1x32xf32>
  %y = ascend.kernel.cube(%f, %fw) : (tensor<1x32xf32>, tensor<10x32xf32>) -> tensor<1x10xf32> {
  ^bb0(%a: tensor<1x32xf32>, %b: tensor<10x32xf32>):
    %0 = ascend.graph.gemm %a, %b {trans_b = true} : (tensor<1x32xf32>, tensor<10x32xf32>) -> tensor<1x10xf32>
    ascend.kernel.yield %0 : tensor<1x10xf32>
  }
  func.return %y : tensor<1x10xf32>
}

// -----

// Left alone in NCHW: a softmax over the channels cannot work per C0 block, so the conv result is
// converted back once, and that one conversion also feeds the graph output.

// CHECK-LABEL: func.func @mixed
// CHECK:         %[[C:.*]] = ascend.kernel.cube({{.*}}) : (tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>, tensor<20x16x1x1xf32, #ascend.format<FRACTAL_Z>>) -> tensor<1x20x4x4xf32, #ascend.format<NC1HWC0>>
// CHECK:         %[[B:.*]] = ascend.kernel.trans_data %[[C]] {kernel_name = "trans_data_1"} : (tensor<1x20x4x4xf32, #ascend.format<NC1HWC0>>) -> tensor<1x20x4x4xf32>
// CHECK-NEXT:    %[[S:.*]] = ascend.kernel.vector(%[[B]])
// CHECK:         func.return %[[S]], %[[B]]
func.func @mixed(%x: tensor<1x16x4x4xf32>) -> (tensor<1x20x4x4xf32>, tensor<1x20x4x4xf32>) {
  %w = ascend.graph.const splat<0.5 : f32> : tensor<20x16x1x1xf32>
  %c = ascend.kernel.cube(%x, %w) : (tensor<1x16x4x4xf32>, tensor<20x16x1x1xf32>) -> tensor<1x20x4x4xf32> {
  ^bb0(%a: tensor<1x16x4x4xf32>, %b: tensor<20x16x1x1xf32>):
    %0 = ascend.graph.conv2d %a, %b : (tensor<1x16x4x4xf32>, tensor<20x16x1x1xf32>) -> tensor<1x20x4x4xf32>
    ascend.kernel.yield %0 : tensor<1x20x4x4xf32>
  }
  %s = ascend.kernel.vector(%c) : (tensor<1x20x4x4xf32>) -> tensor<1x20x4x4xf32> {
  ^bb0(%a: tensor<1x20x4x4xf32>):
    %0 = ascend.graph.softmax %a {axis = 1 : i64} : (tensor<1x20x4x4xf32>) -> tensor<1x20x4x4xf32>
    ascend.kernel.yield %0 : tensor<1x20x4x4xf32>
  }
  func.return %s, %c : tensor<1x20x4x4xf32>, tensor<1x20x4x4xf32>
}

// -----

// Inverse conversions cancel.

// CHECK-LABEL: func.func @pairs
// CHECK-NEXT:    func.return %{{.*}} : tensor<1x16x4x4xf32>
func.func @pairs(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %a = ascend.kernel.trans_data %x : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>
  %b = ascend.kernel.trans_data %a : (tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16x4x4xf32>
  func.return %b : tensor<1x16x4x4xf32>
}

// -----

// A chain of conversions collapses: each pair of successive conversions becomes one, and inverse
// ones cancel, down to nothing when the chain ends where it started.

// CHECK-LABEL: func.func @chain
// CHECK-NOT:     ascend.kernel.trans_data
// CHECK:         func.return %{{.*}} : tensor<1x16x4x4xf32>
func.func @chain(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %a = ascend.kernel.trans_data %x : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>
  %b = ascend.kernel.trans_data %a : (tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16x4x4xf32, #ascend.format<FRACTAL_NZ>>
  %c = ascend.kernel.trans_data %b : (tensor<1x16x4x4xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>
  %d = ascend.kernel.trans_data %c : (tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16x4x4xf32>
  func.return %d : tensor<1x16x4x4xf32>
}

// -----

// A channel shuffle between convs gathers NC1HWC0 data directly: no conversion around it.

// CHECK-LABEL: func.func @shuffle
// CHECK:         %[[C:.*]] = ascend.kernel.cube({{.*}})
// CHECK:         %[[S:.*]] = ascend.kernel.vector(%[[C]])
// CHECK:         ascend.kernel.cube(%[[S]], %{{.*}})
// CHECK-NOT:     ascend.kernel.trans_data %[[C]]
func.func @shuffle(%x: tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32> {
  %w = ascend.graph.const splat<0.5 : f32> : tensor<32x32x1x1xf32>
  %c = ascend.kernel.cube(%x, %w) : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32> {
  ^bb0(%a: tensor<1x32x4x4xf32>, %b: tensor<32x32x1x1xf32>):
    %0 = ascend.graph.conv2d %a, %b : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32>
    ascend.kernel.yield %0 : tensor<1x32x4x4xf32>
  }
  %s = ascend.kernel.vector(%c) : (tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32> {
  ^bb0(%a: tensor<1x32x4x4xf32>):
    %0 = ascend.graph.reshape %a : (tensor<1x32x4x4xf32>) -> tensor<1x2x16x4x4xf32>
    %1 = ascend.graph.transpose %0 {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x16x4x4xf32>) -> tensor<1x16x2x4x4xf32>
    %2 = ascend.graph.reshape %1 : (tensor<1x16x2x4x4xf32>) -> tensor<1x32x4x4xf32>
    ascend.kernel.yield %2 : tensor<1x32x4x4xf32>
  }
  %y = ascend.kernel.cube(%s, %w) : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32> {
  ^bb0(%a: tensor<1x32x4x4xf32>, %b: tensor<32x32x1x1xf32>):
    %0 = ascend.graph.conv2d %a, %b : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32>
    ascend.kernel.yield %0 : tensor<1x32x4x4xf32>
  }
  func.return %y : tensor<1x32x4x4xf32>
}

// -----

// A mean over H and W (a global pooling as torch exports it) works per channel: it stays in
// NC1HWC0, and its 1x1 result is read as ND through a view.

// CHECK-LABEL: func.func @spatial_mean
// CHECK:         %[[C:.*]] = ascend.kernel.cube({{.*}})
// CHECK:         %[[M:.*]] = ascend.kernel.vector(%[[C]])
// CHECK:         ascend.kernel.view %[[M]]
func.func @spatial_mean(%x: tensor<1x32x4x4xf32>) -> tensor<1x32xf32> {
  %w = ascend.graph.const splat<0.5 : f32> : tensor<32x32x1x1xf32>
  %c = ascend.kernel.cube(%x, %w) : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32> {
  ^bb0(%a: tensor<1x32x4x4xf32>, %b: tensor<32x32x1x1xf32>):
    %0 = ascend.graph.conv2d %a, %b : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32>
    ascend.kernel.yield %0 : tensor<1x32x4x4xf32>
  }
  %m = ascend.kernel.vector(%c) : (tensor<1x32x4x4xf32>) -> tensor<1x32x1x1xf32> {
  ^bb0(%a: tensor<1x32x4x4xf32>):
    %0 = ascend.graph.reduce_mean %a {axes = array<i64: 2, 3>} : (tensor<1x32x4x4xf32>) -> tensor<1x32x1x1xf32>
    ascend.kernel.yield %0 : tensor<1x32x1x1xf32>
  }
  %f = ascend.kernel.view %m : (tensor<1x32x1x1xf32>) -> tensor<1x32xf32>
  func.return %f : tensor<1x32xf32>
}

// -----

// A group norm of 4-D data normalizes planes of whole channels (each alone for an instance norm,
// four together here) and scales them per channel: it reads and writes NC1HWC0 after a conv. Only
// the graph's output is converted back.

// CHECK-LABEL: func.func @instance_norm
// CHECK:         %[[C:.*]] = ascend.kernel.cube({{.*}})
// CHECK-NOT:     ascend.kernel.trans_data %[[C]]
// CHECK:         %[[N:.*]] = ascend.kernel.vector(%[[C]], %{{.*}}, %{{.*}}) : (tensor<1x32x4x4xf32, #ascend.format<NC1HWC0>>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x4x4xf32, #ascend.format<NC1HWC0>>
// CHECK:         %[[C2:.*]] = ascend.kernel.cube(%[[N]], %{{.*}})
// CHECK-NOT:     ascend.kernel.trans_data %[[C2]]
// CHECK:         %[[G:.*]] = ascend.kernel.vector(%[[C2]], %{{.*}}, %{{.*}}) : (tensor<1x32x4x4xf32, #ascend.format<NC1HWC0>>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x4x4xf32, #ascend.format<NC1HWC0>>
// CHECK:         %[[T:.*]] = ascend.kernel.trans_data %[[G]] {{.*}}: (tensor<1x32x4x4xf32, #ascend.format<NC1HWC0>>) -> tensor<1x32x4x4xf32>
// CHECK:         return %[[T]]
func.func @instance_norm(%x: tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32> {
  %w = ascend.graph.const splat<0.5 : f32> : tensor<32x32x1x1xf32>
  %s = ascend.graph.const splat<1.5 : f32> : tensor<32xf32>
  %c = ascend.kernel.cube(%x, %w) : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32> {
  ^bb0(%a: tensor<1x32x4x4xf32>, %b: tensor<32x32x1x1xf32>):
    %0 = ascend.graph.conv2d %a, %b : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32>
    ascend.kernel.yield %0 : tensor<1x32x4x4xf32>
  }
  %n = ascend.kernel.vector(%c, %s, %s) : (tensor<1x32x4x4xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x4x4xf32> {
  ^bb0(%a: tensor<1x32x4x4xf32>, %p: tensor<32xf32>, %q: tensor<32xf32>):
    %0 = ascend.graph.group_norm %a, %p, %q {num_groups = 32 : i64} : (tensor<1x32x4x4xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x4x4xf32>
    ascend.kernel.yield %0 : tensor<1x32x4x4xf32>
  }
  %c2 = ascend.kernel.cube(%n, %w) : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32> {
  ^bb0(%a: tensor<1x32x4x4xf32>, %b: tensor<32x32x1x1xf32>):
    %0 = ascend.graph.conv2d %a, %b : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32>
    ascend.kernel.yield %0 : tensor<1x32x4x4xf32>
  }
  %g = ascend.kernel.vector(%c2, %s, %s) : (tensor<1x32x4x4xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x4x4xf32> {
  ^bb0(%a: tensor<1x32x4x4xf32>, %p: tensor<32xf32>, %q: tensor<32xf32>):
    %0 = ascend.graph.group_norm %a, %p, %q {num_groups = 8 : i64} : (tensor<1x32x4x4xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x4x4xf32>
    ascend.kernel.yield %0 : tensor<1x32x4x4xf32>
  }
  func.return %g : tensor<1x32x4x4xf32>
}

// -----

// A group norm of 3-D data has no H and W to lay out by blocks: it reads the conv's result as
// plain NCHW, through the view, after a conversion.

// CHECK-LABEL: func.func @group_norm_3d
// CHECK:         %[[C:.*]] = ascend.kernel.cube({{.*}})
// CHECK:         %[[T:.*]] = ascend.kernel.trans_data %[[C]] {{.*}}: (tensor<1x32x4x4xf32, #ascend.format<NC1HWC0>>) -> tensor<1x32x4x4xf32>
// CHECK:         %[[V:.*]] = ascend.kernel.view %[[T]]
// CHECK:         ascend.kernel.vector(%[[V]], %{{.*}}, %{{.*}}) : (tensor<1x32x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x16xf32>
func.func @group_norm_3d(%x: tensor<1x32x4x4xf32>) -> tensor<1x32x16xf32> {
  %w = ascend.graph.const splat<0.5 : f32> : tensor<32x32x1x1xf32>
  %s = ascend.graph.const splat<1.5 : f32> : tensor<32xf32>
  %c = ascend.kernel.cube(%x, %w) : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32> {
  ^bb0(%a: tensor<1x32x4x4xf32>, %b: tensor<32x32x1x1xf32>):
    %0 = ascend.graph.conv2d %a, %b : (tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x4xf32>
    ascend.kernel.yield %0 : tensor<1x32x4x4xf32>
  }
  %v = ascend.kernel.view %c : (tensor<1x32x4x4xf32>) -> tensor<1x32x16xf32>
  %g = ascend.kernel.vector(%v, %s, %s) : (tensor<1x32x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x16xf32> {
  ^bb0(%a: tensor<1x32x16xf32>, %p: tensor<32xf32>, %q: tensor<32xf32>):
    %0 = ascend.graph.group_norm %a, %p, %q {num_groups = 8 : i64} : (tensor<1x32x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x16xf32>
    ascend.kernel.yield %0 : tensor<1x32x16xf32>
  }
  func.return %g : tensor<1x32x16xf32>
}

// -----

// Chained matrix products (a transformer's feed-forward block): a product whose every reader takes
// it as its own product's left matrix writes FRACTAL_NZ when the cost model finds that faster
// (here: 32 rows, no padding; the readers' loads convert nothing), and its readers read the tiles
// as they are, with no trans_data. A product also read by a vector kernel, read as a right
// matrix, as both matrices of one product, or returned stays ND.

// CHECK-LABEL: func.func @chained_products
// CHECK:         %[[H:.*]] = ascend.kernel.cube(%x, %{{.*}}) : (tensor<32x64xf32>, tensor<64x128xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<32x128xf32, #ascend.format<FRACTAL_NZ>>
// CHECK-NOT:     trans_data
// CHECK:         %[[Y:.*]] = ascend.kernel.cube(%[[H]], %{{.*}}) : (tensor<32x128xf32, #ascend.format<FRACTAL_NZ>>, tensor<128x16xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<32x16xf32>
// CHECK-NOT:     trans_data
// CHECK:         ascend.kernel.cube(%[[H]], %{{.*}}) : (tensor<32x128xf32, #ascend.format<FRACTAL_NZ>>, tensor<128x16xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<32x16xf32>
// CHECK-NOT:     trans_data
// CHECK:         %[[S:.*]] = ascend.kernel.cube(%x, %{{.*}}) : (tensor<32x64xf32>, tensor<64x128xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<32x128xf32>
// CHECK-NOT:     trans_data
// CHECK:         ascend.kernel.vector(%[[S]]) : (tensor<32x128xf32>) -> tensor<32x128xf32>
// CHECK-NOT:     trans_data
// CHECK:         ascend.kernel.cube(%[[S]], %{{.*}}) : (tensor<32x128xf32>, tensor<128x16xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<32x16xf32>
// CHECK-NOT:     trans_data
// CHECK:         %[[P:.*]] = ascend.kernel.cube(%x, %{{.*}}) : (tensor<32x64xf32>, tensor<64x128xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<32x128xf32>
// CHECK-NOT:     trans_data
// CHECK:         ascend.kernel.cube(%x, %[[P]]) : (tensor<32x64xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
// CHECK-NOT:     trans_data
// CHECK:         %[[Q:.*]] = ascend.kernel.cube(%{{.*}}, %{{.*}}) : (tensor<32x32xf32>, tensor<32x32xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<32x32xf32>
// CHECK-NOT:     trans_data
// CHECK:         ascend.kernel.cube(%[[Q]], %[[Q]]) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
// CHECK-NOT:     trans_data
// CHECK:         func.return
func.func @chained_products(%x: tensor<32x64xf32>, %z: tensor<32x32xf32>) -> (tensor<32x16xf32>, tensor<32x16xf32>, tensor<32x128xf32>, tensor<32x16xf32>, tensor<64x128xf32>, tensor<32x32xf32>) {
  %w1 = ascend.graph.const splat<0.5 : f32> : tensor<64x128xf32>
  %w2 = ascend.graph.const splat<0.25 : f32> : tensor<128x16xf32>
  %w3 = ascend.graph.const splat<0.125 : f32> : tensor<32x32xf32>
  %h = ascend.kernel.cube(%x, %w1) : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32> {
  ^bb0(%a: tensor<32x64xf32>, %b: tensor<64x128xf32>):
    %0 = ascend.graph.matmul %a, %b : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
    ascend.kernel.yield %0 : tensor<32x128xf32>
  }
  %y = ascend.kernel.cube(%h, %w2) : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32> {
  ^bb0(%a: tensor<32x128xf32>, %b: tensor<128x16xf32>):
    %0 = ascend.graph.matmul %a, %b : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32>
    ascend.kernel.yield %0 : tensor<32x16xf32>
  }
  %y2 = ascend.kernel.cube(%h, %w2) : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32> {
  ^bb0(%a: tensor<32x128xf32>, %b: tensor<128x16xf32>):
    %0 = ascend.graph.matmul %a, %b : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32>
    ascend.kernel.yield %0 : tensor<32x16xf32>
  }
  %s = ascend.kernel.cube(%x, %w1) : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32> {
  ^bb0(%a: tensor<32x64xf32>, %b: tensor<64x128xf32>):
    %0 = ascend.graph.matmul %a, %b : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
    ascend.kernel.yield %0 : tensor<32x128xf32>
  }
  %r = ascend.kernel.vector(%s) : (tensor<32x128xf32>) -> tensor<32x128xf32> {
  ^bb0(%a: tensor<32x128xf32>):
    %0 = ascend.graph.relu %a : (tensor<32x128xf32>) -> tensor<32x128xf32>
    ascend.kernel.yield %0 : tensor<32x128xf32>
  }
  %t = ascend.kernel.cube(%s, %w2) : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32> {
  ^bb0(%a: tensor<32x128xf32>, %b: tensor<128x16xf32>):
    %0 = ascend.graph.matmul %a, %b : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32>
    ascend.kernel.yield %0 : tensor<32x16xf32>
  }
  %p = ascend.kernel.cube(%x, %w1) : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32> {
  ^bb0(%a: tensor<32x64xf32>, %b: tensor<64x128xf32>):
    %0 = ascend.graph.matmul %a, %b : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
    ascend.kernel.yield %0 : tensor<32x128xf32>
  }
  %q = ascend.kernel.cube(%x, %p) : (tensor<32x64xf32>, tensor<32x128xf32>) -> tensor<64x128xf32> {
  ^bb0(%a: tensor<32x64xf32>, %b: tensor<32x128xf32>):
    %0 = ascend.graph.gemm %a, %b {trans_a = true} : (tensor<32x64xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
    ascend.kernel.yield %0 : tensor<64x128xf32>
  }
  %u = ascend.kernel.cube(%z, %w3) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>):
    %0 = ascend.graph.matmul %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    ascend.kernel.yield %0 : tensor<32x32xf32>
  }
  %v = ascend.kernel.cube(%u, %u) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>):
    %0 = ascend.graph.matmul %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    ascend.kernel.yield %0 : tensor<32x32xf32>
  }
  func.return %y, %y2, %r, %t, %q, %v : tensor<32x16xf32>, tensor<32x16xf32>, tensor<32x128xf32>, tensor<32x16xf32>, tensor<64x128xf32>, tensor<32x32xf32>
}

// -----

// A feed-forward block of 20 rows (1024 -> 4096 -> 1024, fp16): the cost model finds the
// product's 12 padding rows dearer than the conversion its reader's load would save: ND.

// CHECK-LABEL: func.func @padded_chain
// CHECK:         %[[H:.*]] = ascend.kernel.cube(%x, %{{.*}}) : (tensor<20x1024xf16>, tensor<1024x4096xf16, #ascend.format<FRACTAL_NZ>>) -> tensor<20x4096xf16>
// CHECK:         ascend.kernel.cube(%[[H]], %{{.*}}) : (tensor<20x4096xf16>, tensor<4096x1024xf16, #ascend.format<FRACTAL_NZ>>) -> tensor<20x1024xf16>
func.func @padded_chain(%x: tensor<20x1024xf16>) -> tensor<20x1024xf16> {
  %w1 = ascend.graph.const splat<0.5 : f16> : tensor<1024x4096xf16>
  %w2 = ascend.graph.const splat<0.25 : f16> : tensor<4096x1024xf16>
  %h = ascend.kernel.cube(%x, %w1) : (tensor<20x1024xf16>, tensor<1024x4096xf16>) -> tensor<20x4096xf16> {
  ^bb0(%a: tensor<20x1024xf16>, %b: tensor<1024x4096xf16>):
    %0 = ascend.graph.matmul %a, %b : (tensor<20x1024xf16>, tensor<1024x4096xf16>) -> tensor<20x4096xf16>
    ascend.kernel.yield %0 : tensor<20x4096xf16>
  }
  %y = ascend.kernel.cube(%h, %w2) : (tensor<20x4096xf16>, tensor<4096x1024xf16>) -> tensor<20x1024xf16> {
  ^bb0(%a: tensor<20x4096xf16>, %b: tensor<4096x1024xf16>):
    %0 = ascend.graph.matmul %a, %b : (tensor<20x4096xf16>, tensor<4096x1024xf16>) -> tensor<20x1024xf16>
    ascend.kernel.yield %0 : tensor<20x1024xf16>
  }
  func.return %y : tensor<20x1024xf16>
}

// -----

// A reader that takes the product both as its left matrix and as its epilogue's residual reads
// it ND: the epilogue adds it element by element, so the product stays ND.

// CHECK-LABEL: func.func @residual_reader
// CHECK:         %[[U:.*]] = ascend.kernel.cube(%z, %{{.*}}) : (tensor<32x32xf32>, tensor<32x32xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<32x32xf32>
// CHECK-NOT:     trans_data
// CHECK:         ascend.kernel.cube(%[[U]], %{{.*}}, %[[U]]) : (tensor<32x32xf32>, tensor<32x32xf32, #ascend.format<FRACTAL_NZ>>, tensor<32x32xf32>) -> tensor<32x32xf32>
func.func @residual_reader(%z: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %w = ascend.graph.const splat<0.125 : f32> : tensor<32x32xf32>
  %u = ascend.kernel.cube(%z, %w) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>):
    %0 = ascend.graph.matmul %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    ascend.kernel.yield %0 : tensor<32x32xf32>
  }
  %v = ascend.kernel.cube(%u, %w, %u) : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>, %c: tensor<32x32xf32>):
    %0 = ascend.graph.fused_matmul %a, %b, %c {sources = ["matmul", "add"], extras = 1 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> {
    ^bb1(%p: tensor<32x32xf32>, %q: tensor<32x32xf32>):
      %1 = ascend.graph.add %q, %p : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
      ascend.graph.yield %1 : tensor<32x32xf32>
    }
    ascend.kernel.yield %0 : tensor<32x32xf32>
  }
  func.return %v : tensor<32x32xf32>
}
