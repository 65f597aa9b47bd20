// RUN: ge-opt %s -p ge-O0 | filecheck %s --check-prefix=O0
// RUN: ge-opt %s -p ge-O1 | filecheck %s --check-prefix=O1
// RUN: ge-opt %s -p ge-O2 | filecheck %s --check-prefix=O2
// RUN: ge-opt %s -p ge-O3 | filecheck %s --check-prefix=O3

// O0 lowers only: the constant product is a kernel. O1 folds it, merges the two relus and drops
// the dead one before lowering.

// O2 has nothing to fuse here (no cube op), so it launches what O1 does. O3 forms one vector
// kernel of the add and the relu, so the sum never leaves the core: it reads the caller's input
// and writes the caller's output, no arena bytes at all; with one launch there is nothing to run
// in parallel: one stream, no events.

// O2-COUNT-2: ascend.stream.launch
// O2-NOT:     ascend.memory
// O3:         ascend.stream.model @main attributes {ascend.streams = {streams = 1 : i64, events = 0 : i64}, ascend.memory = {arena_bytes = 0 : i64, lower_bound_bytes = 0 : i64, no_reuse_bytes = 0 : i64
// O3:         ascend.stream.launch @add_relu_0
// O3-NOT:     ascend.stream.launch

// O0-COUNT-4: ascend.stream.launch
// O0-NOT:     ascend.stream.launch

// O1:         ascend.stream.model @main
// O1-NEXT:      %[[X:.*]] = ascend.stream.buffer offset 0 size 16 {input = 0 : i64}
// O1-NEXT:      %[[W:.*]] = ascend.stream.weight dense<[2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00]>
// O1-NEXT:      %[[S:.*]] = ascend.stream.buffer
// O1-NEXT:      ascend.stream.launch @add_0(%[[X]], %[[W]]) -> (%[[S]])
// O1-NEXT:      %[[R:.*]] = ascend.stream.buffer
// O1-NEXT:      ascend.stream.launch @relu_0(%[[S]]) -> (%[[R]])
// O1-NEXT:      ascend.stream.outputs %[[R]], %[[R]]
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = ascend.graph.const splat<2.0 : f32> : tensor<4xf32>
  %b = ascend.graph.const dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %c = ascend.graph.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = ascend.graph.add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r1 = ascend.graph.relu %s : (tensor<4xf32>) -> tensor<4xf32>
  %r2 = ascend.graph.relu %s : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r1, %r2 : tensor<4xf32>, tensor<4xf32>
}
