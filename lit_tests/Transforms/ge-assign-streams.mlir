// RUN: ge-opt %s --split-input-file -p 'ge-lower-graph-to-kernel{form-kernels=false},ge-lower-kernel-to-stream,ge-assign-streams' | filecheck %s
// RUN: ge-opt %s --split-input-file -p 'ge-lower-graph-to-kernel{form-kernels=false},ge-lower-kernel-to-stream,ge-assign-streams{max-streams=1}' | filecheck %s --check-prefix=ONE
// RUN: ge-opt %s --split-input-file -p 'ge-lower-graph-to-kernel{form-kernels=false},ge-lower-kernel-to-stream,ge-plan-memory{inplace=false},ge-assign-streams' | filecheck %s --check-prefix=REUSED
// RUN: not ge-opt %s -p 'ge-lower-graph-to-kernel{form-kernels=false},ge-lower-kernel-to-stream,ge-assign-streams{max-streams=0}' 2>&1 | filecheck %s --check-prefix=ZERO

// ZERO: ge-assign-streams: max-streams must be at least 1, got 0

// A diamond: relu and neg both read x and are independent, so neg opens stream 1; the add reads
// both and continues one producer's stream (neg's: both finish together, ties go to the later
// launch), waiting for an event recorded after the relu on stream 0.

// CHECK-LABEL: ascend.stream.model @diamond attributes {ascend.streams = {streams = 2 : i64, events = 1 : i64}
// CHECK:         ascend.stream.launch @relu_0(%{{.*}}) -> (%[[A:.*]]) stream 0
// CHECK-NEXT:    ascend.stream.event_record event 0 stream 0
// CHECK-NEXT:    %[[B:.*]] = ascend.stream.buffer
// CHECK-NEXT:    ascend.stream.launch @neg_0(%{{.*}}) -> (%[[B]]) stream 1
// CHECK-NEXT:    %[[Y:.*]] = ascend.stream.buffer
// CHECK-NEXT:    ascend.stream.event_wait event 0 stream 1
// CHECK-NEXT:    ascend.stream.launch @add_0(%[[A]], %[[B]]) -> (%[[Y]]) stream 1
// CHECK-NEXT:    ascend.stream.outputs %[[Y]]

// With one stream everything stays on stream 0 and no event is needed.
// ONE-LABEL:   ascend.stream.model @diamond attributes {ascend.streams = {streams = 1 : i64, events = 0 : i64}
// ONE-NOT:     ascend.stream.event
// ONE-NOT:     stream 1
// ONE:         ascend.stream.outputs

func.func @diamond(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = ascend.graph.relu %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = ascend.graph.neg %x : (tensor<16xf32>) -> tensor<16xf32>
  %y = ascend.graph.add %a, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %y : tensor<16xf32>
}

// -----

// Implied events are left out: w1 waits for abs on stream 1, which comes after neg there, so w2,
// which reads neg's result, needs no event of its own.

// CHECK-LABEL: ascend.stream.model @covered attributes {ascend.streams = {streams = 2 : i64, events = 1 : i64}
// CHECK:         ascend.stream.launch @relu_2({{.*}}) stream 0
// CHECK:         ascend.stream.launch @neg_0({{.*}}) stream 1
// CHECK:         ascend.stream.launch @abs_0({{.*}}) stream 1
// CHECK-NEXT:    ascend.stream.event_record event 0 stream 1
// CHECK:         ascend.stream.event_wait event 0 stream 0
// CHECK-NEXT:    ascend.stream.launch @add_0({{.*}}) stream 0
// CHECK-NOT:     ascend.stream.event
// CHECK:         ascend.stream.launch @add_1({{.*}}) stream 0

func.func @covered(%x: tensor<16xf32>) -> tensor<16xf32> {
  %p1 = ascend.graph.relu %x : (tensor<16xf32>) -> tensor<16xf32>
  %p2 = ascend.graph.relu %p1 : (tensor<16xf32>) -> tensor<16xf32>
  %p3 = ascend.graph.relu %p2 : (tensor<16xf32>) -> tensor<16xf32>
  %q = ascend.graph.neg %x : (tensor<16xf32>) -> tensor<16xf32>
  %r = ascend.graph.abs %q : (tensor<16xf32>) -> tensor<16xf32>
  %w1 = ascend.graph.add %p3, %r : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %w2 = ascend.graph.add %w1, %q : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %w2 : tensor<16xf32>
}

// -----

// A chain has nothing to run in parallel: one stream, no events.

// CHECK-LABEL: ascend.stream.model @chain attributes {ascend.streams = {streams = 1 : i64, events = 0 : i64}
// CHECK-NOT:     ascend.stream.event
// CHECK:         ascend.stream.outputs

func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = ascend.graph.relu %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = ascend.graph.neg %a : (tensor<16xf32>) -> tensor<16xf32>
  func.return %b : tensor<16xf32>
}

// -----

// Run after memory planning: %c takes the bytes of %a (its last reader, neg, came before in task
// order) but lands on stream 1, so writing %c must wait for neg on stream 0: a write over reused
// bytes that another stream still reads is a dependency like any other.

// REUSED-LABEL: ascend.stream.model @reused attributes {ascend.memory = {{.*}}, ascend.streams = {streams = 2 : i64, events = 1 : i64}
// REUSED:         %[[A:.*]] = ascend.stream.buffer offset 0 size 64 : memref
// REUSED-NEXT:    ascend.stream.launch @relu_0(%{{.*}}) -> (%[[A]]) stream 0
// REUSED-NEXT:    %[[B:.*]] = ascend.stream.buffer
// REUSED-NEXT:    ascend.stream.launch @neg_0(%[[A]]) -> (%[[B]]) stream 0
// REUSED-NEXT:    ascend.stream.event_record event 0 stream 0
// REUSED-NEXT:    %[[C:.*]] = ascend.stream.buffer offset 0 size 64
// REUSED-NEXT:    ascend.stream.event_wait event 0 stream 1
// REUSED-NEXT:    ascend.stream.launch @abs_0(%{{.*}}) -> (%[[C]]) stream 1

func.func @reused(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = ascend.graph.relu %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = ascend.graph.neg %a : (tensor<16xf32>) -> tensor<16xf32>
  %c = ascend.graph.abs %x : (tensor<16xf32>) -> tensor<16xf32>
  %y = ascend.graph.add %b, %c : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %y : tensor<16xf32>
}
