// RUN: ge-opt %s -p ge-fuse-attention,dce --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'ge-fuse-attention{keep-rounding=false},dce' --split-input-file | filecheck %s --check-prefix=MIXED

// torch's form: K transposed, the product divided by sqrt(dim), an additive mask.

// CHECK-LABEL: func.func @float_mask
// CHECK-NEXT:    %y = ascend.graph.attention %q, %k, %v, %mask {sources = ["transpose", "matmul", "div", "add", "softmax", "matmul"], scale = 2.500000e-01 : f32}
// CHECK-SAME:      : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT:    func.return %y
func.func @float_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %mask: tensor<8x8xf32>) -> tensor<2x4x8x16xf32> {
  %c = ascend.graph.const dense<4.0> : tensor<f32>
  %kt = ascend.graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x8x16xf32>) -> tensor<2x4x16x8xf32>
  %s = ascend.graph.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %d = ascend.graph.div %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %m = ascend.graph.add %d, %mask : (tensor<2x4x8x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = ascend.graph.softmax %m {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y = ascend.graph.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  func.return %y : tensor<2x4x8x16xf32>
}

// -----

// A constant causal mask (0 on and below the diagonal, -1e9 above) becomes is_causal; the scale
// is multiplied into Q; K^T comes from a [batch, seq, heads, dim] tensor, so the key is that
// tensor transposed by the composed permutation.

// CHECK-LABEL: func.func @causal
// CHECK-NEXT:    %[[K:.*]] = ascend.graph.transpose %k {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT:    %y = ascend.graph.attention %q, %[[K]], %v {sources = ["mul", "transpose", "matmul", "add", "softmax", "matmul"], scale = 5.000000e-01 : f32, is_causal = true}
// CHECK-SAME:      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT:    func.return %y
func.func @causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x4x2x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %half = ascend.graph.const dense<0.5> : tensor<f32>
  %mask = ascend.graph.const dense<[[0.0, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9, -1.0e9], [0.0, 0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %qs = ascend.graph.mul %q, %half : (tensor<1x2x4x8xf32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  %kt = ascend.graph.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x8x4xf32>
  %s = ascend.graph.matmul %qs, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %m = ascend.graph.add %mask, %s : (tensor<4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = ascend.graph.softmax %m {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = ascend.graph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y : tensor<1x2x4x8xf32>
}

// -----

// Boolean masks: where(keep, scores, -inf) passes the mask, where(drop, lowest, scores) its
// negation; K^T arrives transposed (one key/value head for all query heads).

// CHECK-LABEL: func.func @boolean_masks
// CHECK-NEXT:    %[[K:.*]] = ascend.graph.transpose %kt {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x1x16x8xf32>) -> tensor<2x1x8x16xf32>
// CHECK-NEXT:    %y = ascend.graph.attention %q, %[[K]], %v, %keep {sources = ["matmul", "where", "softmax", "matmul"], scale = 1.000000e+00 : f32}
// CHECK-NEXT:    %[[K2:.*]] = ascend.graph.transpose %kt {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x1x16x8xf32>) -> tensor<2x1x8x16xf32>
// CHECK-NEXT:    %[[KEEP:.*]] = ascend.graph.not %drop : (tensor<8x8xi1>) -> tensor<8x8xi1>
// CHECK-NEXT:    %z = ascend.graph.attention %q, %[[K2]], %v, %[[KEEP]] {sources = ["matmul", "mul", "where", "softmax", "matmul"], scale = 1.250000e-01 : f32}
// CHECK-NEXT:    func.return %y, %z
func.func @boolean_masks(%q: tensor<2x4x8x16xf32>, %kt: tensor<2x1x16x8xf32>, %v: tensor<2x1x8x16xf32>, %keep: tensor<2x1x8x8xi1>, %drop: tensor<8x8xi1>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %inf = ascend.graph.const splat<0xff800000 : f32> : tensor<f32>
  %lowest = ascend.graph.const dense<-3.40282347E+38> : tensor<f32>
  %c = ascend.graph.const dense<0.125> : tensor<f32>
  %s = ascend.graph.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x1x16x8xf32>) -> tensor<2x4x8x8xf32>
  %m = ascend.graph.where %keep, %s, %inf : (tensor<2x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %p = ascend.graph.softmax %m {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y = ascend.graph.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x1x8x16xf32>) -> tensor<2x4x8x16xf32>
  %s2 = ascend.graph.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x1x16x8xf32>) -> tensor<2x4x8x8xf32>
  %ss2 = ascend.graph.mul %s2, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %m2 = ascend.graph.where %drop, %lowest, %ss2 : (tensor<8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p2 = ascend.graph.softmax %m2 {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %z = ascend.graph.matmul %p2, %v : (tensor<2x4x8x8xf32>, tensor<2x1x8x16xf32>) -> tensor<2x4x8x16xf32>
  func.return %y, %z : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}

// -----

// Left alone: a softmax over another axis, scores used elsewhere, a fill that does not block.

// CHECK-LABEL: func.func @near_misses
// CHECK-NOT:     ascend.graph.attention
// CHECK-COUNT-3: ascend.graph.softmax
// CHECK-NOT:     ascend.graph.attention
func.func @near_misses(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %keep: tensor<4x4xi1>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) {
  %zero = ascend.graph.const dense<0.0> : tensor<f32>
  %s1 = ascend.graph.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p1 = ascend.graph.softmax %s1 {axis = 2 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y1 = ascend.graph.matmul %p1, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %s2 = ascend.graph.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p2 = ascend.graph.softmax %s2 {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y2 = ascend.graph.matmul %p2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %s3 = ascend.graph.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %m3 = ascend.graph.where %keep, %s3, %zero : (tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p3 = ascend.graph.softmax %m3 {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y3 = ascend.graph.matmul %p3, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y1, %y2, %s2, %y3 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// In float16 the scores, their scaled and softmaxed values are each rounded, which attention
// would not do: fused only when a precision mode allows.

// CHECK-LABEL: func.func @half
// CHECK-NOT:     ascend.graph.attention
// CHECK:         func.return %y

// MIXED-LABEL: func.func @half
// MIXED-NEXT:    %y = ascend.graph.attention %q, %k, %v {sources = ["transpose", "matmul", "div", "softmax", "matmul"], scale = 2.500000e-01 : f32}
// MIXED-NEXT:    func.return %y
func.func @half(%q: tensor<1x2x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16> {
  %c = ascend.graph.const dense<4.0> : tensor<f16>
  %kt = ascend.graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x16xf16>) -> tensor<1x2x16x8xf16>
  %s = ascend.graph.matmul %q, %kt : (tensor<1x2x8x16xf16>, tensor<1x2x16x8xf16>) -> tensor<1x2x8x8xf16>
  %d = ascend.graph.div %s, %c : (tensor<1x2x8x8xf16>, tensor<f16>) -> tensor<1x2x8x8xf16>
  %p = ascend.graph.softmax %d {axis = -1 : i64} : (tensor<1x2x8x8xf16>) -> tensor<1x2x8x8xf16>
  %y = ascend.graph.matmul %p, %v : (tensor<1x2x8x8xf16>, tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16>
  func.return %y : tensor<1x2x8x16xf16>
}
