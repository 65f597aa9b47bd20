// RUN: not ge-opt %s 2>&1 | filecheck %s
// RUN: ge-opt %s --parsing-diagnostics | filecheck %s --check-prefix=DIAG

// A parse error is one line naming the file, line and column, and fails; `--parsing-diagnostics`
// expects it.

// CHECK:      ge-opt: error: {{.*}}parse-error.mlir:[[# @LINE + 5]]:44: Expected ':'{{$}}
// CHECK-NOT:  {{.}}

// DIAG:       parse-error.mlir:[[# @LINE + 2]]:44
func.func @f() {
  %0 = ascend.graph.const splat<1.0 : f32> tensor<2xf32>
  func.return
}
