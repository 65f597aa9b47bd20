// RUN: ge-opt --help | filecheck %s

// `--help` lists the ge passes with their descriptions, the pipelines, and `--weights`.

// CHECK:      --weights WEIGHTS
// CHECK:      ge passes:
// CHECK-NEXT:   ge-constant-fold {{ +}}compute every graph op whose operands are constants
// CHECK-NEXT:   ge-simplify {{ +}}remove no-op
// CHECK:        ge-lower-graph-to-kernel {{ +}}form kernels: cube ops with epilogues
// CHECK:        ge-lower-kernel-to-stream {{ +}}outline kernels and place every tensor
// CHECK:      ge pipelines:
// CHECK-NEXT:   ge-O0 {{ +}}optimization level 0: ge-lower-graph-to-kernel{form-kernels=false}, ge-tile-kernels, ge-lower-kernel-to-stream
// CHECK-NEXT:   ge-O1 {{ +}}optimization level 1: ge-constant-fold, ge-simplify, cse, dce,
