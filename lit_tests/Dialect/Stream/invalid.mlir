// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks one rule of the `ascend.stream` verifiers; the driver prints the diagnostic.

// CHECK: {{^}}'ascend.stream.buffer': bytes [56, 72) exceed the 64-byte space
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 56 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.buffer': bytes [-16, 0) exceed the 64-byte space
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset -16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.weight': bytes [16, 48) exceed the 32-byte space
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    %w = ascend.stream.weight 1.000000e+00 : f32 offset 16 size 32 : memref<8xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.buffer': 8 bytes cannot hold memref<4xf32> (16 bytes)
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 8 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.weight': 16 bytes cannot hold memref<2x4xf32> (32 bytes)
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    %w = ascend.stream.weight dense_resource<fc.weight> : tensor<2x4xf32> offset 0 size 16 : memref<2x4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.launch': launches @conv_0, which is no kernel of the module
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @conv_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.launch': input buffer memref<2x2xf32> (ND) does not hold kernel input tensor<4xf32> (ND)
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<2x2xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<2x2xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.launch': output buffer memref<4xf16> (ND) does not hold kernel output tensor<4xf32> (ND)
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 8 : memref<4xf16>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf16>)
    ascend.stream.outputs %y : memref<4xf16>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.launch': 2 input buffers for 1 kernel inputs
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x, %x) -> (%y) stream 0 : (memref<4xf32>, memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.event_wait': event 1 is waited for before it is recorded
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.event_wait event 1 stream 1
    ascend.stream.event_record event 1 stream 0
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// Recording another event does not help.
// CHECK: {{^}}'ascend.stream.event_wait': event 0 is waited for before it is recorded
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.event_record event 1 stream 0
    ascend.stream.event_wait event 0 stream 1
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.buffer': input 0 is bound twice
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.model': input buffers [1] do not cover the model's inputs
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 1 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.model': a model ends with 'ascend.stream.outputs'
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
  }
}

// -----

// CHECK: {{^}}'ascend.stream.outputs': 'ascend.stream.outputs' must be the model's last op
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.outputs %y : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
  }
}

// -----

// CHECK: {{^}}'ascend.stream.outputs': 2 outputs for 1 output names
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y, %x : memref<4xf32>, memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.graph.const': a model holds buffers, views, weights, launches, events and outputs only
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    %c = ascend.graph.const splat<1.0 : f32> : tensor<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.buffer' expects parent op 'ascend.stream.model'
func.func @f() {
  %b = ascend.stream.buffer offset 0 size 16 : memref<4xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.stream.kernel': body arguments do not match the kernel's input types
builtin.module {
  ascend.stream.kernel @k {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>, %b : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.kernel': body must end with 'ascend.stream.return'
builtin.module {
  ascend.stream.kernel @k {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    cf.br ^bb0(%a : tensor<4xf32>)
  }
}

// -----

// CHECK: {{^}}'ascend.stream.kernel': returned types do not match the kernel's result types
builtin.module {
  ascend.stream.kernel @k {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<2x2xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.kernel': body arguments do not match the kernel's input types (without formats)
builtin.module {
  ascend.stream.kernel @k {unit = #ascend.unit<vector>} : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a : tensor<4x4xf32, #ascend.format<FRACTAL_NZ>>):
    ascend.stream.return %a : tensor<4x4xf32, #ascend.format<FRACTAL_NZ>>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.return' expects parent op 'ascend.stream.kernel'
func.func @f(%x: tensor<4xf32>) {
  ascend.stream.return %x : tensor<4xf32>
}

// -----

// CHECK: {{^}}'ascend.stream.weight': a value of type tensor<8xf32> cannot fill memref<4xf32>
builtin.module {
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 64 : i64, input_names = [], output_names = ["w"]} {
    %w = ascend.stream.weight dense<1.0> : tensor<8xf32> offset 0 size 32 : memref<4xf32>
    ascend.stream.outputs %w : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.weight': a value of type tensor<4xi32> cannot fill memref<4xf32>
builtin.module {
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 64 : i64, input_names = [], output_names = ["w"]} {
    %w = ascend.stream.weight 7 : i32 offset 0 size 16 : memref<4xf32>
    ascend.stream.outputs %w : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.buffer': a placed buffer needs a static shape, got memref<?xf32>
builtin.module {
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 0 : i64, input_names = ["x"], output_names = ["x"]} {
    %x = ascend.stream.buffer offset 0 size 0 {input = 0 : i64} : memref<?xf32>
    ascend.stream.outputs %x : memref<?xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.kernel': input #0: tensor<4xf32, #ascend.unit<vector>> has encoding #ascend.unit<vector>, not an #ascend.format
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32, #ascend.unit<vector>>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.kernel': a kernel body holds graph ops only, found 'arith.constant'
builtin.module {
  ascend.stream.kernel @k {unit = #ascend.unit<vector>} : () -> () {
    %c = arith.constant 1 : i32
    ascend.stream.return : 
  }
}

// -----

// CHECK: {{^}}'ascend.stream.launch': a launch cannot write into a weight
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 64 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %w = ascend.stream.weight dense<1.0> : tensor<4xf32> offset 0 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%w) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %w : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.buffer': a buffer bound to the caller's memory has offset 0
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 0 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 16 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.buffer': a buffer bound to output 0 must hold that output
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 0 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %t = ascend.stream.buffer offset 0 size 16 {output = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 32 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// A negative output index is no output (it read the outputs from the end).
// CHECK: {{^}}'ascend.stream.buffer': a buffer bound to output -1 must hold that output
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 0 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 {output = -1 : i64} : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// A launch's buffer must be in the format of the kernel's operand, not only hold as many bytes.
// CHECK: {{^}}'ascend.stream.launch' at loc("conv_in"): input buffer memref<1x16x2x2xf32> (NCHW) does not hold kernel input tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>> (NC1HWC0)
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16x2x2xf32, #ascend.format<NC1HWC0>> {
  ^bb0(%a : tensor<1x16x2x2xf32>):
    %r = ascend.graph.relu %a : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
    ascend.stream.return %r : tensor<1x16x2x2xf32>
  }
  ascend.stream.model @main attributes {arena_size = 512 : i64, weight_size = 0 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 256 {input = 0 : i64} : memref<1x16x2x2xf32>
    %y = ascend.stream.buffer offset 0 size 256 : memref<1x16x2x2xf32, #ascend.format<NC1HWC0>>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<1x16x2x2xf32>) -> (memref<1x16x2x2xf32, #ascend.format<NC1HWC0>>) loc("conv_in")
    ascend.stream.outputs %y : memref<1x16x2x2xf32, #ascend.format<NC1HWC0>>
  }
}

// -----

// A kernel symbol's formats must fit the ranks of its types, as a kernel op's do.
// CHECK: {{^}}'ascend.stream.kernel': input #0: tensor<4xf32, #ascend.format<NC1HWC0>>: NC1HWC0 stores (N, C, H, W); got a tensor of shape (4,) (rank 1)
builtin.module {
  ascend.stream.kernel @k {unit = #ascend.unit<vector>} : (tensor<4xf32, #ascend.format<NC1HWC0>>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    ascend.stream.return %a : tensor<4xf32>
  }
}

// -----

// A launch's buffer has the rank of the kernel's operand, not just its element count.
// CHECK: {{^}}'ascend.stream.launch': input buffer memref<1x4xf32> (ND) does not hold kernel input tensor<4xf32> (ND)
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 4096 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<1x4xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<1x4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// NC1HWC0 bytes with H = W = 2 are padded and tiled: reading them as a plain 1x128 is a wrong answer,
// although the byte counts agree (1 x 2 x 2 x 2 x 16 = 128 elements).
// CHECK: {{^}}'ascend.stream.view': NC1HWC0 data of memref<1x32x2x2xf32, #ascend.format<NC1HWC0>> is not the same bytes as ND
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 4096 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %b = ascend.stream.buffer offset 512 size 512 : memref<1x32x2x2xf32, #ascend.format<NC1HWC0>>
    %v = ascend.stream.view %b : memref<1x32x2x2xf32, #ascend.format<NC1HWC0>> -> memref<1x128xf32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// A view keeps the element type: f32 bytes are not i32 values.
// CHECK: {{^}}'ascend.stream.view': a view keeps the element type
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 4096 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %v = ascend.stream.view %x : memref<4xf32> -> memref<2x2xi32>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// A view of a memref whose layout its rank cannot hold is refused with the op named, not a crash.
// CHECK: {{^}}'ascend.stream.view': result: memref<8xf32, #ascend.format<FRACTAL_NZ>>: FRACTAL_NZ stores a matrix (..., M, N); got a tensor of shape (8,) (rank 1)
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 4096 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %b = ascend.stream.buffer offset 512 size 32 : memref<2x4xf32>
    %v = ascend.stream.view %b : memref<2x4xf32> -> memref<8xf32, #ascend.format<FRACTAL_NZ>>
    %y = ascend.stream.buffer offset 16 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// A buffer read before any launch writes it (here the model's output: its launch is missing).
// CHECK: {{^}}'ascend.stream.launch': reads %mid before any launch writes it
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %mid = ascend.stream.buffer offset 0 size 16 : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 {output = 0 : i64} : memref<4xf32>
    ascend.stream.launch @relu_0 (%mid) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.outputs': reads %y before any launch writes it
builtin.module {
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 {output = 0 : i64} : memref<4xf32>
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// A launch may not write a model input: a run reads the caller's array in place.
// CHECK: {{^}}'ascend.stream.launch': writes %x, model input 0: the caller's array, which a run reads in place and never changes
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 {output = 0 : i64} : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%x) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.launch @relu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// Two arena buffers live at once may not share a byte: %b, moved one byte down, overlaps %a,
// which the add still reads after %b is written.
// CHECK: {{^}}'ascend.stream.buffer': arena bytes [15, 16) are in two buffers live at once: %a at [0, 16), live from @relu_0 (launch 0, stream 0) to @add_0 (launch 2, stream 0), and %b at [15, 31), live from @relu_0 (launch 1, stream 0) to @add_0 (launch 2, stream 0); plan them apart (ge-plan-memory)
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.kernel @add_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>, %b : tensor<4xf32>):
    %r = ascend.graph.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 0 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %a = ascend.stream.buffer offset 0 size 16 : memref<4xf32>
    %b = ascend.stream.buffer offset 15 size 16 : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 {output = 0 : i64} : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%a) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.launch @relu_0 (%x) -> (%b) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.launch @add_0 (%a, %b) -> (%y) stream 0 : (memref<4xf32>, memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// A buffer the model returns is live to the end: no later buffer may take its bytes.
// CHECK: {{^}}'ascend.stream.buffer': arena bytes [0, 16) are in two buffers live at once: %a at [0, 16), live from @relu_0 (launch 0, stream 0) to the model's end (returned), and %b at [0, 16), live from @relu_0 (launch 1, stream 0) to @relu_0 (launch 1, stream 0); plan them apart (ge-plan-memory)
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 0 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %a = ascend.stream.buffer offset 0 size 16 : memref<4xf32>
    %b = ascend.stream.buffer offset 0 size 16 : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%a) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.launch @relu_0 (%x) -> (%b) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %a : memref<4xf32>
  }
}

// -----

// Bytes pass from one buffer to another only when an event orders every access of the first
// before the writes of the second: here the streams run side by side.
// CHECK: {{^}}'ascend.stream.buffer': arena bytes [0, 16) pass from %a to %b, but no event orders @relu_0 (launch 1, stream 0), which accesses %a, before @relu_0 (launch 2, stream 1), which writes %b; an event_record after the first and an event_wait before the second would (or plan the buffers apart)
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 0 : i64, input_names = ["x"], output_names = ["y", "z"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %a = ascend.stream.buffer offset 0 size 16 : memref<4xf32>
    %b = ascend.stream.buffer offset 0 size 16 : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 {output = 0 : i64} : memref<4xf32>
    %z = ascend.stream.buffer offset 0 size 16 {output = 1 : i64} : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%a) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.launch @relu_0 (%a) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.launch @relu_0 (%x) -> (%b) stream 1 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.launch @relu_0 (%b) -> (%z) stream 1 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y, %z : memref<4xf32>, memref<4xf32>
  }
}

// -----

// A read on one stream of what a launch on another wrote needs an event between them.
// CHECK: {{^}}'ascend.stream.launch': reads %a on stream 0, written by @relu_0 (launch 0, stream 1), and no event orders the write before the read; an event_record after the writer and an event_wait before the reader would
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 0 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %a = ascend.stream.buffer offset 0 size 16 : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 {output = 0 : i64} : memref<4xf32>
    ascend.stream.launch @relu_0 (%x) -> (%a) stream 1 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.event_record event 0 stream 0
    ascend.stream.event_wait event 0 stream 0
    ascend.stream.launch @relu_0 (%a) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// Distinct weights may not share bytes of the blob.
// CHECK: {{^}}'ascend.stream.weight': weight %v at [8, 24) overlaps weight %w at [0, 16) in the weight blob; distinct weights lie apart, equal ones at one offset and size
builtin.module {
  ascend.stream.kernel @add_0 {unit = #ascend.unit<vector>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>, %b : tensor<4xf32>):
    %r = ascend.graph.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %w = ascend.stream.weight dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> offset 0 size 16 : memref<4xf32>
    %v = ascend.stream.weight dense<[5.0, 6.0, 7.0, 8.0]> : tensor<4xf32> offset 8 size 16 : memref<4xf32>
    %a = ascend.stream.buffer offset 0 size 16 : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 {output = 0 : i64} : memref<4xf32>
    ascend.stream.launch @add_0 (%x, %w) -> (%a) stream 0 : (memref<4xf32>, memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.launch @add_0 (%a, %v) -> (%y) stream 0 : (memref<4xf32>, memref<4xf32>) -> (memref<4xf32>)
    ascend.stream.outputs %y : memref<4xf32>
  }
}

// -----

// A cube kernel runs its K loop in the steps of its tiling; one without (here renamed away) is refused.
// CHECK: {{^}}'ascend.stream.kernel': cube kernel @matmul_0 computes 'ascend.graph.matmul' with no tiling; a cube kernel carries the #ascend.cube_tiling that ge-tile-kernels chose for it
builtin.module {
  ascend.stream.kernel @matmul_0 {unit = #ascend.unit<cube>, tilling = #ascend.cube_tiling<m = 16, n = 16, k = 16, db = 1, tiles = 1>} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32> {
  ^bb0(%a : tensor<1x4xf32>, %b : tensor<4x4xf32>):
    %c = ascend.graph.matmul %a, %b : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
    ascend.stream.return %c : tensor<1x4xf32>
  }
}

// -----

// CHECK: {{^}}'ascend.stream.kernel': cube kernel @matmul_0 computes 'ascend.graph.matmul' with the tiling #ascend.vector_tiling<tile = 4, db = 1, tiles = 1>; a cube kernel carries the #ascend.cube_tiling that ge-tile-kernels chose for it
builtin.module {
  ascend.stream.kernel @matmul_0 {unit = #ascend.unit<cube>, tiling = #ascend.vector_tiling<tile = 4, db = 1, tiles = 1>} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32> {
  ^bb0(%a : tensor<1x4xf32>, %b : tensor<4x4xf32>):
    %c = ascend.graph.matmul %a, %b : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
    ascend.stream.return %c : tensor<1x4xf32>
  }
}
