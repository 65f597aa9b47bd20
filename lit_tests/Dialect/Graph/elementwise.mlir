// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// Every elementwise `ascend.graph` op survives a round trip through the custom and the generic
// printer: unary math and activations, predicates, arithmetic with broadcasting, bitwise and
// logical ops, comparisons, selection and casts.

// CHECK-LABEL: func.func @atan2
// CHECK-NEXT: ascend.graph.atan2 %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @atan2(%y: tensor<2x3xf32>, %x: tensor<3xf32>) {
  %0 = ascend.graph.atan2 %y, %x : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return
}

// CHECK-LABEL: func.func @float_unary
// CHECK-NEXT: ascend.graph.exp %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.expm1 %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.log %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.log1p %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.log2 %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.log10 %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.sqrt %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.reciprocal %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.floor %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.ceil %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.round %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.erf %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.erfc %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.sin %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.cos %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.tan %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.asin %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.acos %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.atan %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.sinh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.cosh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.asinh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.acosh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.atanh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.sigmoid %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.tanh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.softplus %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.softsign %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.mish %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.hard_swish %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.gelu %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.leaky_relu %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.elu %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.selu %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.celu %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.thresholded_relu %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.hard_sigmoid %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.swish %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.shrink %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.abs %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.neg %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.sign %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.relu %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @float_unary(%x: tensor<2x3xf32>) {
  %0 = ascend.graph.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %expm1 = ascend.graph.expm1 %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = ascend.graph.log %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %log1p = ascend.graph.log1p %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %log2 = ascend.graph.log2 %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %log10 = ascend.graph.log10 %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = ascend.graph.sqrt %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = ascend.graph.reciprocal %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = ascend.graph.floor %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = ascend.graph.ceil %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = ascend.graph.round %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = ascend.graph.erf %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %erfc = ascend.graph.erfc %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = ascend.graph.sin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = ascend.graph.cos %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = ascend.graph.tan %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = ascend.graph.asin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %12 = ascend.graph.acos %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %13 = ascend.graph.atan %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %14 = ascend.graph.sinh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %15 = ascend.graph.cosh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %16 = ascend.graph.asinh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %17 = ascend.graph.acosh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %18 = ascend.graph.atanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %19 = ascend.graph.sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %20 = ascend.graph.tanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %21 = ascend.graph.softplus %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %22 = ascend.graph.softsign %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %23 = ascend.graph.mish %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %24 = ascend.graph.hard_swish %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %25 = ascend.graph.gelu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %26 = ascend.graph.leaky_relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %27 = ascend.graph.elu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %28 = ascend.graph.selu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %29 = ascend.graph.celu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %30 = ascend.graph.thresholded_relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %31 = ascend.graph.hard_sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %32 = ascend.graph.swish %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %33 = ascend.graph.shrink %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %34 = ascend.graph.abs %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %35 = ascend.graph.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %36 = ascend.graph.sign %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %37 = ascend.graph.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// Activation properties are printed as given; absent ones take the op's default.
// CHECK-LABEL: func.func @activation_properties
// CHECK-NEXT: ascend.graph.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32} : (tensor<4xf16>) -> tensor<4xf16>
// CHECK-NEXT: ascend.graph.elu %{{.*}} {alpha = 2.000000e+00 : f32} : (tensor<4xbf16>) -> tensor<4xbf16>
// CHECK-NEXT: ascend.graph.selu %{{.*}} {alpha = 1.500000e+00 : f32, gamma = 2.000000e+00 : f32} : (tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT: ascend.graph.celu %{{.*}} {alpha = 5.000000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: ascend.graph.thresholded_relu %{{.*}} {alpha = 2.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: ascend.graph.hard_sigmoid %{{.*}} {alpha = 5.000000e-01 : f32, beta = 2.500000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: ascend.graph.swish %{{.*}} {alpha = 1.500000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: ascend.graph.shrink %{{.*}} {bias = 1.000000e+00 : f32, lambd = 1.500000e+00 : f32} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: ascend.graph.gelu %{{.*}} {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: ascend.graph.gelu %{{.*}} {approximate = "none"} : (tensor<?xf32>) -> tensor<?xf32>
func.func @activation_properties(%h: tensor<4xf16>, %b: tensor<4xbf16>, %d: tensor<4xf64>, %x: tensor<4xf32>,
                                 %i: tensor<4xi32>, %y: tensor<?xf32>) {
  %0 = ascend.graph.leaky_relu %h {alpha = 1.000000e-01 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  %1 = ascend.graph.elu %b {alpha = 2.000000e+00 : f32} : (tensor<4xbf16>) -> tensor<4xbf16>
  %2 = ascend.graph.selu %d {alpha = 1.500000e+00 : f32, gamma = 2.000000e+00 : f32} : (tensor<4xf64>) -> tensor<4xf64>
  %3 = ascend.graph.celu %x {alpha = 5.000000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = ascend.graph.thresholded_relu %x {alpha = 2.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %5 = ascend.graph.hard_sigmoid %x {alpha = 5.000000e-01 : f32, beta = 2.500000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %6 = ascend.graph.swish %x {alpha = 1.500000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %7 = ascend.graph.shrink %i {bias = 1.000000e+00 : f32, lambd = 1.500000e+00 : f32} : (tensor<4xi32>) -> tensor<4xi32>
  %8 = ascend.graph.gelu %x {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
  %9 = ascend.graph.gelu %y {approximate = "none"} : (tensor<?xf32>) -> tensor<?xf32>
  func.return
}

// Predicates give i1; integer and boolean negations keep their type.
// CHECK-LABEL: func.func @predicates_and_negations
// CHECK-NEXT: ascend.graph.is_nan %{{.*}} : (tensor<2x3xf16>) -> tensor<2x3xi1>
// CHECK-NEXT: ascend.graph.is_inf %{{.*}} : (tensor<2x3xf16>) -> tensor<2x3xi1>
// CHECK-NEXT: ascend.graph.is_inf %{{.*}} {detect_negative = false} : (tensor<2x3xf16>) -> tensor<2x3xi1>
// CHECK-NEXT: ascend.graph.not %{{.*}} : (tensor<5xi1>) -> tensor<5xi1>
// CHECK-NEXT: ascend.graph.bitwise_not %{{.*}} : (tensor<5xui16>) -> tensor<5xui16>
// CHECK-NEXT: ascend.graph.abs %{{.*}} : (tensor<5xi8>) -> tensor<5xi8>
// CHECK-NEXT: ascend.graph.neg %{{.*}} : (tensor<5xi8>) -> tensor<5xi8>
// CHECK-NEXT: ascend.graph.sign %{{.*}} : (tensor<5xui16>) -> tensor<5xui16>
// CHECK-NEXT: ascend.graph.relu %{{.*}} : (tensor<5xi8>) -> tensor<5xi8>
func.func @predicates_and_negations(%h: tensor<2x3xf16>, %b: tensor<5xi1>, %u: tensor<5xui16>, %i: tensor<5xi8>) {
  %0 = ascend.graph.is_nan %h : (tensor<2x3xf16>) -> tensor<2x3xi1>
  %1 = ascend.graph.is_inf %h : (tensor<2x3xf16>) -> tensor<2x3xi1>
  %2 = ascend.graph.is_inf %h {detect_negative = false, detect_positive = true} : (tensor<2x3xf16>) -> tensor<2x3xi1>
  %3 = ascend.graph.not %b : (tensor<5xi1>) -> tensor<5xi1>
  %4 = ascend.graph.bitwise_not %u : (tensor<5xui16>) -> tensor<5xui16>
  %5 = ascend.graph.abs %i : (tensor<5xi8>) -> tensor<5xi8>
  %6 = ascend.graph.neg %i : (tensor<5xi8>) -> tensor<5xi8>
  %7 = ascend.graph.sign %u : (tensor<5xui16>) -> tensor<5xui16>
  %8 = ascend.graph.relu %i : (tensor<5xi8>) -> tensor<5xi8>
  func.return
}

// Binary ops broadcast as numpy does, dynamic dimensions included.
// CHECK-LABEL: func.func @arithmetic
// CHECK-NEXT: ascend.graph.mod %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: ascend.graph.mod %{{.*}}, %{{.*}} {fmod = true} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: ascend.graph.max %{{.*}}, %{{.*}} : (tensor<?x3xf32>, tensor<1xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: ascend.graph.min %{{.*}}, %{{.*}} : (tensor<?x3xf32>, tensor<2x1x3xf32>) -> tensor<2x?x3xf32>
// CHECK-NEXT: ascend.graph.pow %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<3xf32>) -> tensor<2x3xi32>
// CHECK-NEXT: ascend.graph.pow %{{.*}}, %{{.*}} : (tensor<?x3xf32>, tensor<i64>) -> tensor<?x3xf32>
// CHECK-NEXT: ascend.graph.prelu %{{.*}}, %{{.*}} : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT: ascend.graph.div %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
func.func @arithmetic(%i: tensor<2x3xi32>, %j: tensor<3xi32>, %x: tensor<?x3xf32>, %s: tensor<1xf32>,
                      %t: tensor<2x1x3xf32>, %e: tensor<3xf32>, %k: tensor<i64>, %n: tensor<1x3x4x4xf32>,
                      %slope: tensor<3x1x1xf32>) {
  %0 = ascend.graph.mod %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %1 = ascend.graph.mod %i, %j {fmod = true} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %2 = ascend.graph.max %x, %s : (tensor<?x3xf32>, tensor<1xf32>) -> tensor<?x3xf32>
  %3 = ascend.graph.min %x, %t : (tensor<?x3xf32>, tensor<2x1x3xf32>) -> tensor<2x?x3xf32>
  %4 = ascend.graph.pow %i, %e : (tensor<2x3xi32>, tensor<3xf32>) -> tensor<2x3xi32>
  %5 = ascend.graph.pow %x, %k : (tensor<?x3xf32>, tensor<i64>) -> tensor<?x3xf32>
  %6 = ascend.graph.prelu %n, %slope : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %7 = ascend.graph.div %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  func.return
}

// CHECK-LABEL: func.func @bitwise_and_logic
// CHECK-NEXT: ascend.graph.bitwise_and %{{.*}}, %{{.*}} : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>
// CHECK-NEXT: ascend.graph.bitwise_or %{{.*}}, %{{.*}} : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>
// CHECK-NEXT: ascend.graph.bitwise_xor %{{.*}}, %{{.*}} : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>
// CHECK-NEXT: ascend.graph.shift_left %{{.*}}, %{{.*}} : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>
// CHECK-NEXT: ascend.graph.shift_right %{{.*}}, %{{.*}} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT: ascend.graph.and %{{.*}}, %{{.*}} : (tensor<3x4xi1>, tensor<4xi1>) -> tensor<3x4xi1>
// CHECK-NEXT: ascend.graph.or %{{.*}}, %{{.*}} : (tensor<3x4xi1>, tensor<4xi1>) -> tensor<3x4xi1>
// CHECK-NEXT: ascend.graph.xor %{{.*}}, %{{.*}} : (tensor<3x4xi1>, tensor<4xi1>) -> tensor<3x4xi1>
func.func @bitwise_and_logic(%u: tensor<4xui8>, %v: tensor<1xui8>, %l: tensor<3xi64>, %a: tensor<3x4xi1>,
                             %b: tensor<4xi1>) {
  %0 = ascend.graph.bitwise_and %u, %v : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>
  %1 = ascend.graph.bitwise_or %u, %v : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>
  %2 = ascend.graph.bitwise_xor %u, %v : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>
  %3 = ascend.graph.shift_left %u, %v : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>
  %4 = ascend.graph.shift_right %l, %l : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %5 = ascend.graph.and %a, %b : (tensor<3x4xi1>, tensor<4xi1>) -> tensor<3x4xi1>
  %6 = ascend.graph.or %a, %b : (tensor<3x4xi1>, tensor<4xi1>) -> tensor<3x4xi1>
  %7 = ascend.graph.xor %a, %b : (tensor<3x4xi1>, tensor<4xi1>) -> tensor<3x4xi1>
  func.return
}

// Comparisons give i1 of the broadcast shape; `equal` also compares i1.
// CHECK-LABEL: func.func @comparisons
// CHECK-NEXT: ascend.graph.equal %{{.*}}, %{{.*}} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi1>
// CHECK-NEXT: ascend.graph.equal %{{.*}}, %{{.*}} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK-NEXT: ascend.graph.less %{{.*}}, %{{.*}} : (tensor<3x4xf16>, tensor<1xf16>) -> tensor<3x4xi1>
// CHECK-NEXT: ascend.graph.less_equal %{{.*}}, %{{.*}} : (tensor<3x4xf16>, tensor<1xf16>) -> tensor<3x4xi1>
// CHECK-NEXT: ascend.graph.greater %{{.*}}, %{{.*}} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi1>
// CHECK-NEXT: ascend.graph.greater_equal %{{.*}}, %{{.*}} : (tensor<?x4xui64>, tensor<?x4xui64>) -> tensor<?x4xi1>
func.func @comparisons(%i: tensor<3x4xi32>, %j: tensor<4xi32>, %b: tensor<4xi1>, %h: tensor<3x4xf16>,
                       %s: tensor<1xf16>, %u: tensor<?x4xui64>) {
  %0 = ascend.graph.equal %i, %j : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi1>
  %1 = ascend.graph.equal %b, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %2 = ascend.graph.less %h, %s : (tensor<3x4xf16>, tensor<1xf16>) -> tensor<3x4xi1>
  %3 = ascend.graph.less_equal %h, %s : (tensor<3x4xf16>, tensor<1xf16>) -> tensor<3x4xi1>
  %4 = ascend.graph.greater %i, %j : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi1>
  %5 = ascend.graph.greater_equal %u, %u : (tensor<?x4xui64>, tensor<?x4xui64>) -> tensor<?x4xi1>
  func.return
}

// `where` broadcasts its three operands together; `cast` keeps the shape and changes the type.
// CHECK-LABEL: func.func @selection_and_casts
// CHECK-NEXT: ascend.graph.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1xi1>, tensor<3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: ascend.graph.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1xi1>, tensor<2x1xi1>, tensor<2x1xi1>) -> tensor<2x1xi1>
// CHECK-NEXT: ascend.graph.cast %{{.*}} : (tensor<3xf32>) -> tensor<3xbf16>
// CHECK-NEXT: ascend.graph.cast %{{.*}} : (tensor<2x1xi1>) -> tensor<2x1xui8>
func.func @selection_and_casts(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %y: tensor<1x3xf32>) {
  %0 = ascend.graph.where %c, %x, %y : (tensor<2x1xi1>, tensor<3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %1 = ascend.graph.where %c, %c, %c : (tensor<2x1xi1>, tensor<2x1xi1>, tensor<2x1xi1>) -> tensor<2x1xi1>
  %2 = ascend.graph.cast %x : (tensor<3xf32>) -> tensor<3xbf16>
  %3 = ascend.graph.cast %c : (tensor<2x1xi1>) -> tensor<2x1xui8>
  func.return
}
