// RUN: ge-opt %s --split-input-file -p 'ge-lower-graph-to-kernel{form-kernels=false},ge-lower-kernel-to-stream,ge-plan-memory' | filecheck %s
// RUN: ge-opt %s --split-input-file -p 'ge-lower-graph-to-kernel{form-kernels=false},ge-lower-kernel-to-stream,ge-plan-memory{strategy=size_binned}' | filecheck %s --check-prefix=BINNED
// RUN: ge-opt %s --split-input-file -p 'ge-lower-graph-to-kernel{form-kernels=false},ge-lower-kernel-to-stream,ge-plan-memory{inplace=false}' | filecheck %s --check-prefix=APART
// RUN: not ge-opt %s --split-input-file -p 'ge-lower-graph-to-kernel{form-kernels=false},ge-lower-kernel-to-stream,ge-plan-memory{strategy=first_fit}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// x -> a -> b -> c = b + a -> d -> y = d + x. The input x and the output y are the caller's
// memory (bound, no arena bytes). b may not take a's bytes: a is read again by c. c takes b's
// bytes and d takes c's (elementwise, same type, the input dies there). Both strategies reach
// the lower bound; best keeps greedy_by_size, the first on a tie. Without in-place, each launch's
// input and output are apart: one more slot.

// CHECK:       ascend.stream.model @main attributes {ascend.memory = {arena_bytes = 1024 : i64, lower_bound_bytes = 1024 : i64, no_reuse_bytes = 2048 : i64, strategy = "greedy_by_size", inplace = 2 : i64}, arena_size = 1024 : i64
// CHECK-NEXT:    %[[X:.*]] = ascend.stream.buffer offset 0 size 64 {input = 0 : i64}
// CHECK-NEXT:    %[[A:.*]] = ascend.stream.buffer offset 0 size 64
// CHECK-NEXT:    ascend.stream.launch @relu_0(%[[X]]) -> (%[[A]])
// CHECK-NEXT:    %[[B:.*]] = ascend.stream.buffer offset 512 size 64
// CHECK-NEXT:    ascend.stream.launch @relu_1(%[[A]]) -> (%[[B]])
// CHECK-NEXT:    %[[C:.*]] = ascend.stream.buffer offset 512 size 64
// CHECK-NEXT:    ascend.stream.launch @add_0(%[[B]], %[[A]]) -> (%[[C]])
// CHECK-NEXT:    %[[D:.*]] = ascend.stream.buffer offset 512 size 64
// CHECK-NEXT:    ascend.stream.launch @neg_0(%[[C]]) -> (%[[D]])
// CHECK-NEXT:    %[[Y:.*]] = ascend.stream.buffer offset 0 size 64 {output = 0 : i64}
// CHECK-NEXT:    ascend.stream.launch @add_1(%[[D]], %[[X]]) -> (%[[Y]])
// CHECK-NEXT:    ascend.stream.outputs %[[Y]]

// BINNED:      ascend.stream.model @main attributes {ascend.memory = {arena_bytes = 1024 : i64, lower_bound_bytes = 1024 : i64, no_reuse_bytes = 2048 : i64, strategy = "size_binned", inplace = 2 : i64}

// APART:       ascend.stream.model @main attributes {ascend.memory = {arena_bytes = 1536 : i64, lower_bound_bytes = 1536 : i64, no_reuse_bytes = 2048 : i64, strategy = "greedy_by_size", inplace = 0 : i64}
// APART:         %{{.*}} = ascend.stream.buffer offset 512 size 64
// APART-NEXT:    ascend.stream.launch @relu_1
// APART-NEXT:    %{{.*}} = ascend.stream.buffer offset 1024 size 64
// APART-NEXT:    ascend.stream.launch @add_0
// APART-NEXT:    %{{.*}} = ascend.stream.buffer offset 0 size 64
// APART-NEXT:    ascend.stream.launch @neg_0

// UNKNOWN: ge-plan-memory: unknown strategy 'first_fit' (known: best, greedy_by_size, size_binned)

func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = ascend.graph.relu %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = ascend.graph.relu %a : (tensor<16xf32>) -> tensor<16xf32>
  %c = ascend.graph.add %b, %a : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %d = ascend.graph.neg %c : (tensor<16xf32>) -> tensor<16xf32>
  %y = ascend.graph.add %d, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %y : tensor<16xf32>
}

// -----

// Nothing in place: the relu reads a graph input, the add's output is broadcast to another
// type than its input, a softmax is not elementwise, and the last relu writes a graph output.

// CHECK:       ascend.stream.model @main attributes {ascend.memory = {arena_bytes = 1024 : i64, lower_bound_bytes = 1024 : i64, no_reuse_bytes = 1536 : i64, strategy = "greedy_by_size", inplace = 0 : i64}
// CHECK-NEXT:    ascend.stream.buffer offset 0 size 64 {input = 0 : i64}
// CHECK-NEXT:    ascend.stream.buffer offset 0 size 256 {input = 1 : i64}
// CHECK-NEXT:    ascend.stream.buffer offset 0 size 64
// CHECK-NEXT:    ascend.stream.launch @relu_0
// CHECK-NEXT:    ascend.stream.buffer offset 512 size 256
// CHECK-NEXT:    ascend.stream.launch @add_0
// CHECK-NEXT:    ascend.stream.buffer offset 0 size 256
// CHECK-NEXT:    ascend.stream.launch @softmax_0
// CHECK-NEXT:    ascend.stream.buffer offset 0 size 256 {output = 0 : i64}
// CHECK-NEXT:    ascend.stream.launch @relu_1

func.func @main(%x: tensor<16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %a = ascend.graph.relu %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = ascend.graph.add %a, %z : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = ascend.graph.softmax %b {axis = 1 : i64} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = ascend.graph.relu %m : (tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
