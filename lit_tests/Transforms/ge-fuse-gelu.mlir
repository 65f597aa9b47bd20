// RUN: ge-opt %s -p ge-fuse-gelu,dce --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'ge-fuse-gelu{keep-rounding=false},dce' --split-input-file | filecheck %s --check-prefix=MIXED

// torch's erf form: x / sqrt(2), erf, + 1, * x, * 0.5.

// CHECK-LABEL: func.func @erf_torch
// CHECK-NEXT:    %y = ascend.graph.gelu %x {sources = ["div", "erf", "add", "mul", "mul"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %y
func.func @erf_torch(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = ascend.graph.const dense<1.41421354> : tensor<f32>
  %one = ascend.graph.const dense<1.000000e+00> : tensor<f32>
  %half = ascend.graph.const dense<5.000000e-01> : tensor<f32>
  %d = ascend.graph.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = ascend.graph.erf %d : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = ascend.graph.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = ascend.graph.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = ascend.graph.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// The half first, x * 1/sqrt(2) inside erf, splat constants. In float16 the formula rounds
// every product and sum, which gelu would not: it is fused only when a precision mode allows.

// CHECK-LABEL: func.func @erf_half_first
// CHECK-NOT:     ascend.graph.gelu
// CHECK:         ascend.graph.erf
// CHECK-NOT:     ascend.graph.gelu
// CHECK:         func.return %y

// MIXED-LABEL: func.func @erf_half_first
// MIXED-NEXT:    %y = ascend.graph.gelu %x {sources = ["mul", "mul", "erf", "add", "mul"]} : (tensor<2x8xf16>) -> tensor<2x8xf16>
// MIXED-NEXT:    func.return %y
func.func @erf_half_first(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %r = ascend.graph.const splat<7.070310e-01 : f16> : tensor<2x8xf16>
  %one = ascend.graph.const splat<1.0 : f16> : tensor<1xf16>
  %half = ascend.graph.const splat<0.5 : f16> : tensor<1x1xf16>
  %h = ascend.graph.mul %half, %x : (tensor<1x1xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
  %d = ascend.graph.mul %x, %r : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
  %e = ascend.graph.erf %d : (tensor<2x8xf16>) -> tensor<2x8xf16>
  %a = ascend.graph.add %one, %e : (tensor<1xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = ascend.graph.mul %h, %a : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
  func.return %y : tensor<2x8xf16>
}

// -----

// The tanh approximation, with pow(x, 3) and with x * x * x.

// CHECK-LABEL: func.func @tanh_forms
// CHECK-NEXT:    %y = ascend.graph.gelu %x {sources = ["pow", "mul", "add", "mul", "tanh", "add", "mul", "mul"], approximate = "tanh"}
// CHECK-NEXT:    %z = ascend.graph.gelu %x {sources = ["mul", "mul", "mul", "add", "mul", "tanh", "add", "mul", "div"], approximate = "tanh"}
// CHECK-NEXT:    func.return %y, %z
func.func @tanh_forms(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %three = ascend.graph.const dense<3.0> : tensor<f32>
  %c = ascend.graph.const dense<0.044715> : tensor<f32>
  %k = ascend.graph.const dense<0.797884583> : tensor<f32>
  %one = ascend.graph.const dense<1.0> : tensor<f32>
  %half = ascend.graph.const dense<0.5> : tensor<f32>
  %two = ascend.graph.const dense<2.0> : tensor<f32>
  %p = ascend.graph.pow %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %t = ascend.graph.mul %c, %p : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %u = ascend.graph.add %x, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w = ascend.graph.mul %k, %u : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %th = ascend.graph.tanh %w : (tensor<4xf32>) -> tensor<4xf32>
  %a = ascend.graph.add %th, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %hx = ascend.graph.mul %half, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %y = ascend.graph.mul %hx, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x2 = ascend.graph.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x3 = ascend.graph.mul %x2, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t2 = ascend.graph.mul %x3, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %u2 = ascend.graph.add %t2, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w2 = ascend.graph.mul %u2, %k : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %th2 = ascend.graph.tanh %w2 : (tensor<4xf32>) -> tensor<4xf32>
  %a2 = ascend.graph.add %one, %th2 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %m2 = ascend.graph.mul %x, %a2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %z = ascend.graph.div %m2, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y, %z : tensor<4xf32>, tensor<4xf32>
}

// -----

// Left alone: a wrong divisor and a wrong factor (other functions than GELU).

// CHECK-LABEL: func.func @wrong_constants
// CHECK-NOT:     ascend.graph.gelu
// CHECK-COUNT-2: ascend.graph.erf
// CHECK-NOT:     ascend.graph.gelu
func.func @wrong_constants(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %sqrt2 = ascend.graph.const dense<1.41421354> : tensor<f32>
  %wrong = ascend.graph.const dense<1.5> : tensor<f32>
  %one = ascend.graph.const dense<1.0> : tensor<f32>
  %half = ascend.graph.const dense<0.5> : tensor<f32>
  %third = ascend.graph.const dense<0.333> : tensor<f32>
  %d1 = ascend.graph.div %x, %wrong : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e1 = ascend.graph.erf %d1 : (tensor<4xf32>) -> tensor<4xf32>
  %a1 = ascend.graph.add %e1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m1 = ascend.graph.mul %x, %a1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y1 = ascend.graph.mul %m1, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %d2 = ascend.graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e2 = ascend.graph.erf %d2 : (tensor<4xf32>) -> tensor<4xf32>
  %a2 = ascend.graph.add %e2, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m2 = ascend.graph.mul %x, %a2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y2 = ascend.graph.mul %m2, %third : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y1, %y2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Left alone: erf's result is also returned, so the chain must stay.

// CHECK-LABEL: func.func @used_elsewhere
// CHECK:         %e = ascend.graph.erf %d
// CHECK:         %y = ascend.graph.mul %m, %half
// CHECK-NEXT:    func.return %y, %e
func.func @used_elsewhere(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %sqrt2 = ascend.graph.const dense<1.41421354> : tensor<f32>
  %one = ascend.graph.const dense<1.0> : tensor<f32>
  %half = ascend.graph.const dense<0.5> : tensor<f32>
  %d = ascend.graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = ascend.graph.erf %d : (tensor<4xf32>) -> tensor<4xf32>
  %a = ascend.graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = ascend.graph.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = ascend.graph.mul %m, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y, %e : tensor<4xf32>, tensor<4xf32>
}

// -----

// Left alone: the half is a constant that broadcasts x to a larger shape.

// CHECK-LABEL: func.func @broadcasts
// CHECK-NOT:     ascend.graph.gelu
// CHECK:         %y = ascend.graph.mul %m, %wide : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
func.func @broadcasts(%x: tensor<4xf32>) -> tensor<2x4xf32> {
  %sqrt2 = ascend.graph.const dense<1.41421354> : tensor<f32>
  %one = ascend.graph.const dense<1.0> : tensor<f32>
  %wide = ascend.graph.const splat<0.5 : f32> : tensor<2x4xf32>
  %d = ascend.graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = ascend.graph.erf %d : (tensor<4xf32>) -> tensor<4xf32>
  %a = ascend.graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = ascend.graph.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = ascend.graph.mul %m, %wide : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
