// RUN: not ge-opt %s -p ge-no-such-pass 2>&1 | filecheck %s
// RUN: not ge-opt %s -p canonicalize,ge-no-such-pass 2>&1 | filecheck %s

// An unknown pass name fails before any IR is printed.

// CHECK: Unrecognized passes: ['ge-no-such-pass']
// CHECK-NOT: builtin.module
func.func @f() {
  func.return
}
