// RUN: ge-opt %s -p 'ge-mixed-precision{mode=allow_mix_precision}' --split-input-file | filecheck %s --check-prefix=MIX
// RUN: ge-opt %s -p 'ge-mixed-precision{mode=allow_mix_precision_bf16}' --split-input-file | filecheck %s --check-prefix=BF16
// RUN: ge-opt %s -p 'ge-mixed-precision{mode=allow_fp32_to_fp16}' --split-input-file | filecheck %s --check-prefix=CUBE
// RUN: ge-opt %s -p 'ge-mixed-precision{mode=force_fp16}' --split-input-file | filecheck %s --check-prefix=FP16
// RUN: ge-opt %s -p 'ge-mixed-precision{mode=force_fp32}' --split-input-file | filecheck %s --check-prefix=FP32
// RUN: ge-opt %s -p 'ge-mixed-precision{mode=allow_mix_precision keep-op-types=matmul,relu keep-nodes=head}' --split-input-file | filecheck %s --check-prefix=KEEP
// RUN: ge-opt %s -p ge-mixed-precision --split-input-file | filecheck %s --check-prefix=ORIGIN

// White-listed matmul and relu run in fp16, the black-listed softmax stays fp32, and the gray
// transposes follow their input: fp16 after relu, fp32 on the graph input and after softmax.
// The weight is converted at compile time; casts appear only where fp16 meets fp32, and the
// graph's inputs and outputs keep their types.

// MIX-LABEL: func.func @classifier(%x: tensor<4x8xf32>) -> (tensor<2x4xf32>, tensor<8x4xf32>)
// MIX-NEXT:    %w = ascend.graph.const dense<1.500000e+00> : tensor<8x2xf16>
// MIX-NEXT:    %[[X16:.*]] = ascend.graph.cast %x : (tensor<4x8xf32>) -> tensor<4x8xf16>
// MIX-NEXT:    %y = ascend.graph.matmul %[[X16]], %w : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
// MIX-NEXT:    %r = ascend.graph.relu %y : (tensor<4x2xf16>) -> tensor<4x2xf16>
// MIX-NEXT:    %t = ascend.graph.transpose %r {perm = array<i64: 1, 0>} : (tensor<4x2xf16>) -> tensor<2x4xf16>
// MIX-NEXT:    %[[T32:.*]] = ascend.graph.cast %t : (tensor<2x4xf16>) -> tensor<2x4xf32>
// MIX-NEXT:    %s = ascend.graph.softmax %[[T32]] {axis = -1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// MIX-NEXT:    %xt = ascend.graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
// MIX-NEXT:    func.return %s, %xt : tensor<2x4xf32>, tensor<8x4xf32>

// The same rules with bfloat16.
// BF16-LABEL: func.func @classifier
// BF16:         ascend.graph.matmul {{.*}} -> tensor<4x2xbf16>
// BF16-NEXT:    ascend.graph.relu {{.*}} -> tensor<4x2xbf16>
// BF16:         ascend.graph.softmax {{.*}} -> tensor<2x4xf32>

// Only the cube op moves: one cast in, one cast back.
// CUBE-LABEL: func.func @classifier
// CUBE-NEXT:    %w = ascend.graph.const dense<1.500000e+00> : tensor<8x2xf16>
// CUBE-NEXT:    %[[X16:.*]] = ascend.graph.cast %x : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CUBE-NEXT:    %[[Y:.*]] = ascend.graph.matmul %[[X16]], %w : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
// CUBE-NEXT:    %[[Y32:.*]] = ascend.graph.cast %[[Y]] : (tensor<4x2xf16>) -> tensor<4x2xf32>
// CUBE-NEXT:    %r = ascend.graph.relu %[[Y32]] : (tensor<4x2xf32>) -> tensor<4x2xf32>

// Everything runs in fp16, softmax too; only the graph's outputs are cast back.
// FP16-LABEL: func.func @classifier(%x: tensor<4x8xf32>) -> (tensor<2x4xf32>, tensor<8x4xf32>)
// FP16-NEXT:    %w = ascend.graph.const dense<1.500000e+00> : tensor<8x2xf16>
// FP16-NEXT:    %[[X16:.*]] = ascend.graph.cast %x : (tensor<4x8xf32>) -> tensor<4x8xf16>
// FP16:         %s = ascend.graph.softmax {{.*}} -> tensor<2x4xf16>
// FP16-NEXT:    %[[S32:.*]] = ascend.graph.cast %s : (tensor<2x4xf16>) -> tensor<2x4xf32>
// FP16-NEXT:    %xt = ascend.graph.transpose %[[X16]] {{.*}} -> tensor<8x4xf16>
// FP16-NEXT:    %[[XT32:.*]] = ascend.graph.cast %xt : (tensor<8x4xf16>) -> tensor<8x4xf32>
// FP16-NEXT:    func.return %[[S32]], %[[XT32]] : tensor<2x4xf32>, tensor<8x4xf32>

// Nothing is fp16 here: force_fp32 has nothing to do.
// FP32-LABEL: func.func @classifier
// FP32-NOT:     ascend.graph.cast

// The kept types and the kept node stay fp32, so the transpose on relu's output follows fp32 too.
// KEEP-LABEL: func.func @classifier
// KEEP-NOT:     f16

// must_keep_origin_dtype, the default, changes nothing.
// ORIGIN-LABEL: func.func @classifier
// ORIGIN-NOT:     ascend.graph.cast
func.func @classifier(%x: tensor<4x8xf32>) -> (tensor<2x4xf32>, tensor<8x4xf32>) {
  %w = ascend.graph.const dense<1.5> : tensor<8x2xf32>
  %y = ascend.graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %r = ascend.graph.relu %y : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %t = ascend.graph.transpose %r {perm = array<i64: 1, 0>} : (tensor<4x2xf32>) -> tensor<2x4xf32> loc("head")
  %s = ascend.graph.softmax %t {axis = -1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %xt = ascend.graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return %s, %xt : tensor<2x4xf32>, tensor<8x4xf32>
}

// -----

// Back-to-back matmuls: the casts between them cancel, and a value needed in fp16 by two
// consumers is cast once. A constant used in both types exists in both.

// KEEP-LABEL: func.func @chain
// ORIGIN-LABEL: func.func @chain
// CUBE-LABEL: func.func @chain
// CUBE-DAG:     %[[W16:.*]] = ascend.graph.const dense<2.500000e-01> : tensor<8x8xf16>
// CUBE-DAG:     %w = ascend.graph.const dense<2.500000e-01> : tensor<8x8xf32>
// CUBE:         %[[X16:.*]] = ascend.graph.cast %x : (tensor<8x8xf32>) -> tensor<8x8xf16>
// CUBE-NEXT:    %[[A:.*]] = ascend.graph.matmul %[[X16]], %[[W16]] : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
// CUBE-NEXT:    %[[B:.*]] = ascend.graph.matmul %[[A]], %[[X16]] : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
// CUBE-NEXT:    %[[B32:.*]] = ascend.graph.cast %[[B]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CUBE-NEXT:    %c = ascend.graph.add %[[B32]], %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CUBE-NEXT:    func.return %c : tensor<8x8xf32>
func.func @chain(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %w = ascend.graph.const dense<0.25> : tensor<8x8xf32>
  %a = ascend.graph.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = ascend.graph.matmul %a, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = ascend.graph.add %b, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %c : tensor<8x8xf32>
}

// -----

// An fp16 graph under force_fp32: every op computes in fp32, the casts between ops cancel, and
// the input and output stay fp16. Splat constants are converted in place.

// FP32-LABEL: func.func @half(%x: tensor<16xf16>) -> tensor<16xf16>
// FP32-NEXT:    %one = ascend.graph.const splat<1.000000e+00 : f32> : tensor<16xf32>
// FP32-NEXT:    %[[X32:.*]] = ascend.graph.cast %x : (tensor<16xf16>) -> tensor<16xf32>
// FP32-NEXT:    %e = ascend.graph.exp %[[X32]] : (tensor<16xf32>) -> tensor<16xf32>
// FP32-NEXT:    %s = ascend.graph.add %e, %one : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
// FP32-NEXT:    %l = ascend.graph.log %s : (tensor<16xf32>) -> tensor<16xf32>
// FP32-NEXT:    %[[L16:.*]] = ascend.graph.cast %l : (tensor<16xf32>) -> tensor<16xf16>
// FP32-NEXT:    func.return %[[L16]] : tensor<16xf16>

// Modes that narrow fp32 leave an fp16 graph alone.
// MIX-LABEL: func.func @half
// MIX-NOT:     ascend.graph.cast
// FP16-LABEL: func.func @half
// FP16-NOT:     ascend.graph.cast
func.func @half(%x: tensor<16xf16>) -> tensor<16xf16> {
  %one = ascend.graph.const splat<1.0 : f16> : tensor<16xf16>
  %e = ascend.graph.exp %x : (tensor<16xf16>) -> tensor<16xf16>
  %s = ascend.graph.add %e, %one : (tensor<16xf16>, tensor<16xf16>) -> tensor<16xf16>
  %l = ascend.graph.log %s : (tensor<16xf16>) -> tensor<16xf16>
  func.return %l : tensor<16xf16>
}

// -----

// Integer ops are never touched, whatever the mode.

// FP16-LABEL: func.func @integers
// FP16-NEXT:    ascend.graph.matmul %a, %b : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi32>
// FP16-NEXT:    ascend.graph.add
// FP16-NOT:     ascend.graph.cast
// MIX-LABEL: func.func @integers
// MIX-NOT:     ascend.graph.cast
func.func @integers(%a: tensor<4x4xi32>, %b: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %c = ascend.graph.matmul %a, %b : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi32>
  %d = ascend.graph.add %c, %a : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi32>
  func.return %d : tensor<4x4xi32>
}

// -----

// A cast the graph already had is absorbed: the fp16 input feeds the fp16 matmul directly.
// layer_norm in fp16 (force_fp16) keeps its fp32 statistics, so they need no cast.

// CUBE-LABEL: func.func @given_cast
// MIX-LABEL: func.func @given_cast
// CUBE-NEXT:    %w = ascend.graph.const dense<5.000000e-01> : tensor<8x4xf16>
// CUBE:         %m = ascend.graph.matmul %x, %w : (tensor<2x8xf16>, tensor<8x4xf16>) -> tensor<2x4xf16>

// FP16-LABEL: func.func @given_cast
// FP16:         %y, %mean, %inv = ascend.graph.layer_norm {{.*}} : (tensor<2x4xf16>, tensor<4xf16>) -> (tensor<2x4xf16>, tensor<2x1xf32>, tensor<2x1xf32>)
// FP16-NEXT:    %[[Y32:.*]] = ascend.graph.cast %y : (tensor<2x4xf16>) -> tensor<2x4xf32>
// FP16-NEXT:    func.return %[[Y32]], %mean : tensor<2x4xf32>, tensor<2x1xf32>
func.func @given_cast(%x: tensor<2x8xf16>) -> (tensor<2x4xf32>, tensor<2x1xf32>) {
  %x32 = ascend.graph.cast %x : (tensor<2x8xf16>) -> tensor<2x8xf32>
  %w = ascend.graph.const dense<0.5> : tensor<8x4xf32>
  %scale = ascend.graph.const dense<1.0> : tensor<4xf32>
  %m = ascend.graph.matmul %x32, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %y, %mean, %inv = ascend.graph.layer_norm %m, %scale {axis = -1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  func.return %y, %mean : tensor<2x4xf32>, tensor<2x1xf32>
}

// -----

// A fused op moves with its epilogue; an op for the AI CPU keeps its type under force_fp16.

// MIX-LABEL: func.func @fused
// MIX:         ascend.graph.fused_matmul {{.*}} : (tensor<2x4xf16>, tensor<4x4xf16>, tensor<4xf16>) -> tensor<2x4xf16> {
// MIX-NEXT:    ^bb0(%{{.*}}: tensor<2x4xf16>, %{{.*}}: tensor<4xf16>):
// MIX-NEXT:      ascend.graph.add {{.*}} -> tensor<2x4xf16>
// MIX-NEXT:      ascend.graph.relu {{.*}} -> tensor<2x4xf16>
// MIX-NEXT:      ascend.graph.yield {{.*}} : tensor<2x4xf16>

// A keep-list names a fused op by the ops it was fused from.
// KEEP-LABEL: func.func @fused
// KEEP-NOT:     f16

// FP16-LABEL: func.func @fused
// FP16:         ascend.graph.non_zero %x {count = 3 : i64} : (tensor<2x4xf32>) -> tensor<2x3xi64>
func.func @fused(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xi64>) {
  %w = ascend.graph.const dense<0.5> : tensor<4x4xf32>
  %b = ascend.graph.const dense<0.1> : tensor<4xf32>
  %y = ascend.graph.fused_matmul %x, %w, %b {extras = 1 : i64} : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> {
  ^bb0(%acc: tensor<2x4xf32>, %bias: tensor<4xf32>):
    %0 = ascend.graph.add %acc, %bias : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %1 = ascend.graph.relu %0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
    ascend.graph.yield %1 : tensor<2x4xf32>
  }
  %i = ascend.graph.non_zero %x {count = 3 : i64} : (tensor<2x4xf32>) -> tensor<2x3xi64>
  func.return %y, %i : tensor<2x4xf32>, tensor<2x3xi64>
}

// -----

// A black-listed softmax between white matmuls keeps fp32, with a cast on each side, and the
// gray transpose after it follows it in fp32: the cast back to fp16 comes after the transpose.

// MIX-LABEL: func.func @black_between_white(%x: tensor<4x4xf32>) -> tensor<4x4xf32>
// MIX-NEXT:    %w = ascend.graph.const dense<5.000000e-01> : tensor<4x4xf16>
// MIX-NEXT:    %[[X16:.*]] = ascend.graph.cast %x : (tensor<4x4xf32>) -> tensor<4x4xf16>
// MIX-NEXT:    %a = ascend.graph.matmul %[[X16]], %w : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
// MIX-NEXT:    %[[A32:.*]] = ascend.graph.cast %a : (tensor<4x4xf16>) -> tensor<4x4xf32>
// MIX-NEXT:    %s = ascend.graph.softmax %[[A32]] {axis = -1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// MIX-NEXT:    %t = ascend.graph.transpose %s {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// MIX-NEXT:    %[[T16:.*]] = ascend.graph.cast %t : (tensor<4x4xf32>) -> tensor<4x4xf16>
// MIX-NEXT:    %b = ascend.graph.matmul %[[T16]], %w : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
// MIX-NEXT:    %[[B32:.*]] = ascend.graph.cast %b : (tensor<4x4xf16>) -> tensor<4x4xf32>
// MIX-NEXT:    func.return %[[B32]] : tensor<4x4xf32>
func.func @black_between_white(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = ascend.graph.const dense<0.5> : tensor<4x4xf32>
  %a = ascend.graph.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = ascend.graph.softmax %a {axis = -1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = ascend.graph.transpose %s {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = ascend.graph.matmul %t, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %b : tensor<4x4xf32>
}

// -----

// Nothing to move: gray ops after black ones (and on a graph input) stay fp32 with them.

// MIX-LABEL: func.func @black_and_gray
// MIX-NEXT:    %e = ascend.graph.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
// MIX-NEXT:    %t = ascend.graph.transpose %e {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// MIX-NEXT:    %d = ascend.graph.div %t, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// MIX-NEXT:    %l = ascend.graph.log %d : (tensor<4x4xf32>) -> tensor<4x4xf32>
// MIX-NEXT:    func.return %l : tensor<4x4xf32>
func.func @black_and_gray(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = ascend.graph.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = ascend.graph.transpose %e {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = ascend.graph.div %t, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %l = ascend.graph.log %d : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %l : tensor<4x4xf32>
}
