// RUN: ge-opt --help | filecheck %s

// `--help` lists the ge passes with their descriptions, and the `--weights` option.

// CHECK:      --weights WEIGHTS
// CHECK:      ge passes:
// CHECK-NEXT:   ge-lower-graph-to-kernel {{ +}}wrap each ascend.graph op in an ascend.kernel
// CHECK-NEXT:   ge-lower-kernel-to-stream {{ +}}outline kernels and place every tensor
