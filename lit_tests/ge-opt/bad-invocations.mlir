// RUN: not ge-opt %s -p 'ge-lower-graph-to-kernel{' 2>&1 | filecheck %s --check-prefix=PIPELINE
// RUN: not ge-opt %s.missing.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not ge-opt %S/Inputs/not-mlir.txt 2>&1 | filecheck %s --check-prefix=SUFFIX
// RUN: not ge-opt %S/Inputs/not-utf8.mlir 2>&1 | filecheck %s --check-prefix=UTF8
// RUN: not ge-opt %s --weights %S/Inputs/one-array.npy 2>&1 | filecheck %s --check-prefix=NPY
// RUN: not ge-opt %s --weights %S/Inputs/truncated.npz 2>&1 | filecheck %s --check-prefix=TRUNCATED
// RUN: not ge-opt %s --weights %S/Inputs/other-key.npz 2>&1 | filecheck %s --check-prefix=KEY
// RUN: not ge-opt %s -o %t.missing/out.mlir 2>&1 | filecheck %s --check-prefix=OUTPUT
// RUN: not ge-opt %s --bogus 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not ge-opt %s -p 'ge-assign-streams{max-streams=abc}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not ge-opt %s -p 'ge-plan-memory{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION-NAME
// RUN: not ge-opt %s -p 'ge-O0,ge-plan-memory{alignment=3}' 2>&1 | filecheck %s --check-prefix=ALIGN
// RUN: not ge-opt %s --max-tensor-bytes 16 2>&1 | filecheck %s --check-prefix=LIMIT
// RUN: not ge-opt %S/Inputs/target-without-ub.mlir -p ge-tile-kernels 2>&1 | filecheck %s --check-prefix=FIGURE

// Each bad invocation is one line on stderr and a nonzero exit, never a traceback.

// PIPELINE:      ge-opt: error: Error parsing pass pipeline specification: {{.*}} Expected argument name here
// PIPELINE-NOT:  Traceback
// MISSING:       ge-opt: error: input file '{{.*}}.missing.mlir' does not exist
// SUFFIX:        ge-opt: error: '{{.*}}not-mlir.txt' is not an .mlir file
// UTF8:          ge-opt: error: '{{.*}}not-utf8.mlir' is not UTF-8 text (byte 19): not MLIR
// NPY:           ge-opt: error: weights file '{{.*}}one-array.npy' holds one array: weights are an .npz archive
// TRUNCATED:     ge-opt: error: cannot read weights file '{{.*}}truncated.npz': File is not a zip file
// KEY:           ge-opt: error: 'ascend.graph.const' reads dense_resource<w>, which {{.*}}other-key.npz does not hold
// OUTPUT:        ge-opt: error: cannot open '{{.*}}.missing/out.mlir': No such file or directory
// FLAG:          ge-opt: error: unrecognized arguments: --bogus (ge-opt --help lists the options)
// FLAG-NOT:      usage:
// OPTION:        ge-opt: error: pass 'ge-assign-streams': Incompatible types: given ('abc',), expected <class 'int'>
// OPTION-NAME:   ge-opt: error: pass 'ge-plan-memory': Provided arguments ["bogus"] not found
// ALIGN:         ge-opt: error: ge-plan-memory: alignment must be a power of two, got 3
// FIGURE:        ge-opt: error: ge-tile-kernels: target Ascend910B2 has no figure 'ub_bytes'
// FIGURE-NOT:    KeyError
// LIMIT:         ge-opt: error: input 'x' of 'func.func' would hold a tensor of 32 bytes (tensor<2x4xf32>), over max_tensor_bytes = 16
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = ascend.graph.const dense_resource<w> : tensor<2x4xf32>
  %y = ascend.graph.add %x, %w : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
