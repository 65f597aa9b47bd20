// RUN: ge-opt %s -p ge-O1 --print-ir-after-all 2>&1 | filecheck %s --check-prefix=ALL
// RUN: ge-opt %s -p ge-O1 --print-ir-before=ge-simplify --print-ir-after=dce 2>&1 | filecheck %s --check-prefix=SOME
// RUN: ge-opt %s -p ge-O1 --time-passes 2>&1 | filecheck %s --check-prefix=TIME
// RUN: not ge-opt %s -p ge-O1 --print-ir-after=ge-fuse-gelu 2>&1 | filecheck %s --check-prefix=UNKNOWN

// An O-level runs as its passes: each is printed and timed on its own.

// ALL: IR Dump After ge-constant-fold
// ALL: ascend.graph.const
// ALL: IR Dump After ge-simplify
// ALL-NOT: ascend.graph.mul
// ALL: IR Dump After cse
// ALL: IR Dump After dce
// ALL: IR Dump After ge-lower-kernel-to-stream
// ALL: ascend.stream.model

// SOME-NOT: IR Dump After
// SOME: IR Dump Before ge-simplify
// SOME: ascend.graph.mul
// SOME: IR Dump After dce
// SOME-NOT: IR Dump

// TIME: Pass execution timing report
// TIME: Wall Time
// TIME: ge-constant-fold
// TIME: ge-simplify
// TIME: ge-tile-kernels
// TIME: verifier
// TIME: (100.0%)  Total

// UNKNOWN: ge-opt: error: --print-ir-after names passes the pipeline does not run: ge-fuse-gelu
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %z = ascend.graph.const splat<1.0 : f32> : tensor<2x3xf32>
  %0 = ascend.graph.mul %a, %z : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = ascend.graph.relu %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}
