// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks one rule of an elementwise `ascend.graph` verifier: the element kinds an op
// accepts, its result type, broadcasting, or a property's value.

// Math functions take floating-point operands.
// CHECK: {{^}}'ascend.graph.exp': the operand must be floating-point, got i32
func.func @exp_integer(%x: tensor<4xi32>) {
  %0 = ascend.graph.exp %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.atan2': operands must be floating-point, got i32
func.func @atan2_integer(%y: tensor<4xi32>, %x: tensor<4xi32>) {
  %0 = ascend.graph.atan2 %y, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.erfc': the operand must be floating-point, got i32
func.func @erfc_integer(%x: tensor<4xi32>) {
  %0 = ascend.graph.erfc %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.expm1': the operand must be floating-point, got i64
func.func @expm1_integer(%x: tensor<4xi64>) {
  %0 = ascend.graph.expm1 %x : (tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.log1p': the operand must be floating-point, got i64
func.func @log1p_integer(%x: tensor<4xi64>) {
  %0 = ascend.graph.log1p %x : (tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.log2': the operand must be floating-point, got i32
func.func @log2_integer(%x: tensor<4xi32>) {
  %0 = ascend.graph.log2 %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.log10': the operand must be floating-point, got i64
func.func @log10_integer(%x: tensor<4xi64>) {
  %0 = ascend.graph.log10 %x : (tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.sigmoid': result type tensor<4xf16> does not match the inferred type tensor<4xf32>
func.func @sigmoid_result(%x: tensor<4xf32>) {
  %0 = ascend.graph.sigmoid %x : (tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

// Negation needs a sign.
// CHECK: {{^}}'ascend.graph.neg': the operand must be floating-point or signed integer, got ui8
func.func @neg_unsigned(%x: tensor<4xui8>) {
  %0 = ascend.graph.neg %x : (tensor<4xui8>) -> tensor<4xui8>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.not': the operand must be i1, got f32
func.func @not_float(%x: tensor<4xf32>) {
  %0 = ascend.graph.not %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Logical connectives take i1; bitwise ones take integers.
// CHECK: {{^}}'ascend.graph.and': operands must be i1, got i32
func.func @and_integer(%x: tensor<4xi32>) {
  %0 = ascend.graph.and %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.bitwise_and': operands must be integer (not i1), got f32
func.func @bitwise_and_float(%x: tensor<4xf32>) {
  %0 = ascend.graph.bitwise_and %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.shift_left': operands must be integer (not i1), got f32
func.func @shift_float(%x: tensor<4xf32>) {
  %0 = ascend.graph.shift_left %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Arithmetic is not defined on i1.
// CHECK: {{^}}'ascend.graph.add': operands must be numeric (not i1), got i1
func.func @add_bool(%x: tensor<4xi1>) {
  %0 = ascend.graph.add %x, %x : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.max': shapes [2, 3] and [1, 4] do not broadcast
func.func @max_broadcast(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  %0 = ascend.graph.max %x, %y : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// Comparisons and predicates give i1.
// CHECK: {{^}}'ascend.graph.less': result type tensor<4xf32> does not match the inferred type tensor<4xi1>
func.func @less_result_type(%x: tensor<4xf32>) {
  %0 = ascend.graph.less %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.is_nan': result type tensor<4xf32> does not match the inferred type tensor<4xi1>
func.func @is_nan_result_type(%x: tensor<4xf32>) {
  %0 = ascend.graph.is_nan %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.equal': operands must share one element type, got f32 and i32
func.func @equal_mixed(%x: tensor<4xf32>, %y: tensor<4xi32>) {
  %0 = ascend.graph.equal %x, %y : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  func.return
}

// -----

// A yes/no property holds true or false, not an integer (the generic form reaches the verifier).
// CHECK: {{^}}'ascend.graph.mod': property 'fmod' must be true or false, got 2 : i64
func.func @mod_fmod(%x: tensor<4xi32>) {
  %0 = "ascend.graph.mod"(%x, %x) <{fmod = 2 : i64}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.gelu': 'approximate' must be "none" or "tanh", got "fast"
func.func @gelu_approximate(%x: tensor<4xf32>) {
  %0 = ascend.graph.gelu %x {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Activation parameters are float properties.
// CHECK: {{^}}1 : i64 should be of base attribute float
func.func @leaky_relu_alpha(%x: tensor<4xf32>) {
  %0 = ascend.graph.leaky_relu %x {alpha = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// The result of pow has the base's element type, whatever the exponent's.
// CHECK: {{^}}'ascend.graph.pow': result type tensor<4xf32> does not match the inferred type tensor<4xi32>
func.func @pow_result_type(%x: tensor<4xi32>, %e: tensor<4xf32>) {
  %0 = ascend.graph.pow %x, %e : (tensor<4xi32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.pow': the exponent must be numeric (not i1), got i1
func.func @pow_bool(%x: tensor<4xf32>, %e: tensor<4xi1>) {
  %0 = ascend.graph.pow %x, %e : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  func.return
}

// -----

// The slope broadcasts to the input, not the other way round.
// CHECK: {{^}}'ascend.graph.prelu': slope of shape [4, 1, 3] does not broadcast to the input's [2, 3]
func.func @prelu_slope(%x: tensor<2x3xf32>, %s: tensor<4x1x3xf32>) {
  %0 = ascend.graph.prelu %x, %s : (tensor<2x3xf32>, tensor<4x1x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.where': the condition must be i1, got f32
func.func @where_condition(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  %0 = ascend.graph.where %c, %x, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.where': the selected operands must share one element type, got f32 and f16
func.func @where_types(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf16>) {
  %0 = ascend.graph.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.where': shapes [3] and [4] do not broadcast
func.func @where_shapes(%c: tensor<3xi1>, %x: tensor<4xf32>) {
  %0 = ascend.graph.where %c, %x, %x : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.cast': cast keeps the shape: tensor<4xf32> cannot become tensor<2xf16>
func.func @cast_shape(%x: tensor<4xf32>) {
  %0 = ascend.graph.cast %x : (tensor<4xf32>) -> tensor<2xf16>
  func.return
}

// -----

// CHECK: {{^}}'ascend.graph.cast': cannot cast from or to index
func.func @cast_index(%x: tensor<4xf32>) {
  %0 = ascend.graph.cast %x : (tensor<4xf32>) -> tensor<4xindex>
  func.return
}
