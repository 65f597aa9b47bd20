// RUN: ge-opt %s -p ge-lower-graph-to-kernel,ge-lower-kernel-to-stream,ge-plan-memory | filecheck %s

// A chain x -> a -> b -> c -> y: a dies once b is written, so c reuses a's bytes; a kernel's
// inputs and outputs never share (a and b are live together at the second launch).

// CHECK:       ascend.stream.model @main attributes {ascend.memory = {arena_bytes = 1536 : i64, lower_bound_bytes = 1536 : i64, no_reuse_bytes = 2560 : i64}, arena_size = 1536 : i64
// CHECK-NEXT:    %[[X:.*]] = ascend.stream.buffer offset 0 size 64 {input = 0 : i64}
// CHECK-NEXT:    %[[A:.*]] = ascend.stream.buffer offset 512 size 64
// CHECK-NEXT:    ascend.stream.launch @relu_0(%[[X]]) -> (%[[A]])
// CHECK-NEXT:    %[[B:.*]] = ascend.stream.buffer offset 1024 size 64
// CHECK-NEXT:    ascend.stream.launch @relu_1(%[[A]]) -> (%[[B]])
// CHECK-NEXT:    %[[C:.*]] = ascend.stream.buffer offset 512 size 64
// CHECK-NEXT:    ascend.stream.launch @relu_2(%[[B]]) -> (%[[C]])
// CHECK-NEXT:    %[[Y:.*]] = ascend.stream.buffer offset 1024 size 64
// CHECK-NEXT:    ascend.stream.launch @add_0(%[[C]], %[[X]]) -> (%[[Y]])
// CHECK-NEXT:    ascend.stream.outputs %[[Y]]
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = ascend.graph.relu %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = ascend.graph.relu %a : (tensor<16xf32>) -> tensor<16xf32>
  %c = ascend.graph.relu %b : (tensor<16xf32>) -> tensor<16xf32>
  %y = ascend.graph.add %c, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %y : tensor<16xf32>
}
