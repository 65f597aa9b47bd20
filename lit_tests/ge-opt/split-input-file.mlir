// RUN: ge-opt %s --split-input-file | filecheck %s
// RUN: not ge-opt %s 2>&1 | filecheck %s --check-prefix=JOINED

// `--split-input-file` parses, verifies and prints each chunk as its own module, so the same
// symbol may appear in two chunks; without it the file is one module.

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @f() {
// CHECK-NEXT:     %{{.*}} = ascend.graph.const splat<1.000000e+00 : f32> : tensor<2xf32>
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:      {{//}} -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @f() {
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }

// JOINED: Redefinition of symbol "f"
func.func @f() {
  %0 = ascend.graph.const splat<1.0 : f32> : tensor<2xf32>
  func.return
}

// -----

func.func @f() {
  func.return
}
