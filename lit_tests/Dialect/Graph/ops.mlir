// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// Every `ascend.graph` op survives a round trip through the custom and the generic printer.

// CHECK: builtin.module attributes {ascend.target = #ascend.target<"Ascend910B2", {c0 = 16 : i64, ub_bytes = 196608 : i64}>}
builtin.module attributes {ascend.target = #ascend.target<"Ascend910B2", {c0 = 16 : i64, ub_bytes = 196608 : i64}>} {

  // CHECK-LABEL: func.func @constants
  // CHECK-NEXT: %{{.*}} = ascend.graph.const dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %{{.*}} = ascend.graph.const dense_resource<conv1.weight> : tensor<4x3x3x3xf32>
  // CHECK-NEXT: %{{.*}} = ascend.graph.const splat<2.000000e-02 : f32> : tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = ascend.graph.const splat<7 : i32> : tensor<2x2xi32>
  func.func @constants() -> (tensor<2xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<2x2xi32>) {
    %d = ascend.graph.const dense<[1.0, 2.0]> : tensor<2xf32>
    %r = ascend.graph.const dense_resource<conv1.weight> : tensor<4x3x3x3xf32>
    %s = ascend.graph.const splat<2.000000e-02 : f32> : tensor<4xf32>
    %i = ascend.graph.const splat<7 : i32> : tensor<2x2xi32>
    func.return %d, %r, %s, %i : tensor<2xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<2x2xi32>
  }

  // CHECK-LABEL: func.func @elementwise
  // CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3xf32>, %[[C:.*]]: tensor<1xf32>)
  // CHECK-NEXT: %[[ADD:.*]] = ascend.graph.add %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[SUB:.*]] = ascend.graph.sub %[[B]], %[[ADD]] : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[MUL:.*]] = ascend.graph.mul %[[SUB]], %[[C]] : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[DIV:.*]] = ascend.graph.div %[[MUL]], %[[A]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[RELU:.*]] = ascend.graph.relu %[[DIV]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: func.return %[[RELU]] : tensor<2x3xf32>
  func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<1xf32>) -> tensor<2x3xf32> {
    %0 = ascend.graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %1 = ascend.graph.sub %b, %0 : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %2 = ascend.graph.mul %1, %c : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
    %3 = ascend.graph.div %2, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %4 = ascend.graph.relu %3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
    func.return %4 : tensor<2x3xf32>
  }

  // CHECK-LABEL: func.func @dynamic
  // CHECK-NEXT: ascend.graph.add %{{.*}}, %{{.*}} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  // CHECK-NEXT: ascend.graph.relu %{{.*}} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.func @dynamic(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
    %0 = ascend.graph.add %a, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
    %1 = ascend.graph.relu %0 : (tensor<?x3xf32>) -> tensor<?x3xf32>
    func.return %1 : tensor<?x3xf32>
  }

  // A `?` channel count matches any bias or batch_norm parameter length.
  // CHECK-LABEL: func.func @dynamic_channels
  // CHECK-NEXT: ascend.graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<?xf32>) -> tensor<?x4x6x6xf32>
  // CHECK-NEXT: ascend.graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x?x8x8xf32>, tensor<4xf32>, tensor<?xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x?x8x8xf32>
  func.func @dynamic_channels(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<?xf32>,
                              %y: tensor<1x?x8x8xf32>, %p: tensor<4xf32>) {
    %0 = ascend.graph.conv2d %x, %w, %b : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<?xf32>) -> tensor<?x4x6x6xf32>
    %1 = ascend.graph.batch_norm %y, %p, %b, %p, %p : (tensor<1x?x8x8xf32>, tensor<4xf32>, tensor<?xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x?x8x8xf32>
    func.return
  }

  // CHECK-LABEL: func.func @matmul
  // CHECK-NEXT: ascend.graph.matmul %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  // CHECK-NEXT: ascend.graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8x16xf32>, tensor<16x32xf32>) -> tensor<4x8x32xf32>
  // CHECK-NEXT: ascend.graph.matmul %{{.*}}, %{{.*}} : (tensor<2x1x8x16xf32>, tensor<3x16x32xf32>) -> tensor<2x3x8x32xf32>
  // CHECK-NEXT: ascend.graph.matmul %{{.*}}, %{{.*}} : (tensor<16xf32>, tensor<16x32xf32>) -> tensor<32xf32>
  // CHECK-NEXT: ascend.graph.matmul %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8xf32>
  // CHECK-NEXT: ascend.graph.matmul %{{.*}}, %{{.*}} : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
  func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %ba: tensor<4x8x16xf32>,
                    %bb: tensor<2x1x8x16xf32>, %bc: tensor<3x16x32xf32>, %v: tensor<16xf32>) {
    %0 = ascend.graph.matmul %a, %b : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = ascend.graph.matmul %ba, %b : (tensor<4x8x16xf32>, tensor<16x32xf32>) -> tensor<4x8x32xf32>
    %2 = ascend.graph.matmul %bb, %bc : (tensor<2x1x8x16xf32>, tensor<3x16x32xf32>) -> tensor<2x3x8x32xf32>
    %3 = ascend.graph.matmul %v, %b : (tensor<16xf32>, tensor<16x32xf32>) -> tensor<32xf32>
    %4 = ascend.graph.matmul %a, %v : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8xf32>
    %5 = ascend.graph.matmul %v, %v : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
    func.return
  }

  // CHECK-LABEL: func.func @gemm
  // CHECK-SAME: (%[[A:.*]]: tensor<1x512xf32>, %[[B:.*]]: tensor<10x512xf32>, %[[C:.*]]: tensor<10xf32>, %[[AT:.*]]: tensor<512x1xf32>)
  // CHECK-NEXT: ascend.graph.gemm %[[A]], %[[B]], %[[C]] {trans_b = true} : (tensor<1x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: ascend.graph.gemm %[[AT]], %[[B]] {trans_a = true, trans_b = true, alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32} : (tensor<512x1xf32>, tensor<10x512xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: ascend.graph.gemm %[[A]], %[[AT]] : (tensor<1x512xf32>, tensor<512x1xf32>) -> tensor<1x1xf32>
  func.func @gemm(%a: tensor<1x512xf32>, %b: tensor<10x512xf32>, %c: tensor<10xf32>, %at: tensor<512x1xf32>) {
    %0 = ascend.graph.gemm %a, %b, %c {trans_b = true} : (tensor<1x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    %1 = ascend.graph.gemm %at, %b {trans_a = true, trans_b = true, alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32} : (tensor<512x1xf32>, tensor<10x512xf32>) -> tensor<1x10xf32>
    %2 = ascend.graph.gemm %a, %at : (tensor<1x512xf32>, tensor<512x1xf32>) -> tensor<1x1xf32>
    func.return
  }

  // CHECK-LABEL: func.func @conv2d
  // CHECK-SAME: (%[[X:.*]]: tensor<1x3x224x224xf32>, %[[W:.*]]: tensor<64x3x7x7xf32>, %[[B:.*]]: tensor<64xf32>, %[[GX:.*]]: tensor<1x8x16x16xf32>, %[[GW:.*]]: tensor<8x2x3x3xf32>)
  // CHECK-NEXT: ascend.graph.conv2d %[[X]], %[[W]], %[[B]] {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  // CHECK-NEXT: ascend.graph.conv2d %[[GX]], %[[GW]] {groups = 4 : i64, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 2>} : (tensor<1x8x16x16xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x14x14xf32>
  // CHECK-NEXT: ascend.graph.conv2d %[[X]], %[[W]] : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x218x218xf32>
  func.func @conv2d(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>,
                    %gx: tensor<1x8x16x16xf32>, %gw: tensor<8x2x3x3xf32>) {
    %0 = ascend.graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    %1 = ascend.graph.conv2d %gx, %gw {groups = 4 : i64, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 2>} : (tensor<1x8x16x16xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x14x14xf32>
    %2 = ascend.graph.conv2d %x, %w : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x218x218xf32>
    func.return
  }

  // CHECK-LABEL: func.func @batch_norm
  // CHECK-NEXT: ascend.graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  func.func @batch_norm(%x: tensor<1x64x56x56xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) -> tensor<1x64x56x56xf32> {
    %0 = ascend.graph.batch_norm %x, %s, %b, %m, %v {epsilon = 1.000000e-05 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
    func.return %0 : tensor<1x64x56x56xf32>
  }

  // CHECK-LABEL: func.func @pooling
  // CHECK-NEXT: ascend.graph.max_pool %{{.*}} {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  // CHECK-NEXT: ascend.graph.max_pool %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: ascend.graph.max_pool %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x7x7xf32>) -> tensor<1x4x3x3xf32>
  // CHECK-NEXT: ascend.graph.avg_pool %{{.*}} {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32>
  // CHECK-NEXT: ascend.graph.global_avg_pool %{{.*}} : (tensor<1x64x112x112xf32>) -> tensor<1x64x1x1xf32>
  func.func @pooling(%x: tensor<1x64x112x112xf32>, %y: tensor<1x4x7x7xf32>, %z: tensor<1x8x8x8xf32>) {
    %0 = ascend.graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    %1 = ascend.graph.max_pool %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
    %2 = ascend.graph.max_pool %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x7x7xf32>) -> tensor<1x4x3x3xf32>
    %3 = ascend.graph.avg_pool %z {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32>
    %4 = ascend.graph.global_avg_pool %x : (tensor<1x64x112x112xf32>) -> tensor<1x64x1x1xf32>
    func.return
  }

  // CHECK-LABEL: func.func @softmax
  // CHECK-NEXT: ascend.graph.softmax %{{.*}} {axis = -1 : i64} : (tensor<1x10xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: ascend.graph.softmax %{{.*}} : (tensor<1x10xf32>) -> tensor<1x10xf32>
  func.func @softmax(%x: tensor<1x10xf32>) {
    %0 = ascend.graph.softmax %x {axis = -1 : i64} : (tensor<1x10xf32>) -> tensor<1x10xf32>
    %1 = ascend.graph.softmax %x : (tensor<1x10xf32>) -> tensor<1x10xf32>
    func.return
  }

  // CHECK-LABEL: func.func @data_movement
  // CHECK-NEXT: ascend.graph.reshape %{{.*}} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
  // CHECK-NEXT: ascend.graph.flatten %{{.*}} {axis = 1 : i64} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
  // CHECK-NEXT: ascend.graph.flatten %{{.*}} {axis = 0 : i64} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
  // CHECK-NEXT: ascend.graph.transpose %{{.*}} {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // CHECK-NEXT: ascend.graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x512x1x1xf32>) -> tensor<1x1x1x512xf32>
  // CHECK-NEXT: ascend.graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x48x8x8xf32>
  // CHECK-NEXT: ascend.graph.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x9xf32>
  func.func @data_movement(%x: tensor<1x512x1x1xf32>, %m: tensor<2x3xf32>, %a: tensor<1x16x8x8xf32>, %b: tensor<1x32x8x8xf32>) {
    %0 = ascend.graph.reshape %x : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
    %1 = ascend.graph.flatten %x {axis = 1 : i64} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
    %2 = ascend.graph.flatten %x {axis = 0 : i64} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
    %3 = ascend.graph.transpose %m {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %4 = ascend.graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x512x1x1xf32>) -> tensor<1x1x1x512xf32>
    %5 = ascend.graph.concat %a, %b {axis = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x48x8x8xf32>
    %6 = ascend.graph.concat %m, %m, %m {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x9xf32>
    func.return
  }
}
