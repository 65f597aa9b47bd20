// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks one rule of the `ascend.kernel` verifiers; the driver prints the diagnostic.

// A kernel body computes on plain logical types: its argument is the operand's type without format.
// CHECK: {{^}}'ascend.kernel.vector': body argument #0 is tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>, input is tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>
func.func @formatted_body(%x: tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>) {
  %y = ascend.kernel.vector(%x) : (tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16x4x4xf32> {
  ^bb0(%a : tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>):
    ascend.kernel.yield %a : tensor<1x16x4x4xf32, #ascend.format<NC1HWC0>>
  }
  func.return
}

// -----

// A view reads contiguous bytes: an operand typed FRACTAL_NZ is not what it expects.
// CHECK: {{^}}'ascend.kernel.view': FRACTAL_NZ data of tensor<16x32xf32, #ascend.format<FRACTAL_NZ>> is not the same bytes as ND
func.func @operand_type_disagrees(%x: tensor<16x32xf32, #ascend.format<FRACTAL_NZ>>) {
  %y = ascend.kernel.view %x : (tensor<16x32xf32, #ascend.format<FRACTAL_NZ>>) -> tensor<512xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.vector': operand #0: tensor<4xf32, #ascend.format<NC1HWC0>>: NC1HWC0 stores (N, C, H, W); got a tensor of shape (4,) (rank 1)
func.func @format_rank(%x: tensor<4xf32, #ascend.format<NC1HWC0>>) {
  %y = ascend.kernel.vector(%x) : (tensor<4xf32, #ascend.format<NC1HWC0>>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    ascend.kernel.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

// A body that ends without a terminator is caught by xDSL's block verifier.
// CHECK: {{^}}Operation ascend.graph.relu terminates block in single-block region but is not a terminator
func.func @missing_yield(%x: tensor<4xf32>) {
  %y = ascend.kernel.vector(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  }
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.vector': body must end with 'ascend.kernel.yield'
func.func @wrong_terminator(%x: tensor<4xf32>) {
  %y = ascend.kernel.vector(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    cf.br ^bb0(%a : tensor<4xf32>)
  }
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.vector': the body yields (tensor<2x2xf32>), the kernel's results are (tensor<4xf32>) without their formats
func.func @yield_type_mismatch(%x: tensor<4xf32>) {
  %y = ascend.kernel.vector(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.reshape %a : (tensor<4xf32>) -> tensor<2x2xf32>
    ascend.kernel.yield %r : tensor<2x2xf32>
  }
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.cube': the body yields (tensor<4xf32>, tensor<4xf32>), the kernel's results are (tensor<4xf32>) without their formats
func.func @yield_count_mismatch(%x: tensor<4xf32>) {
  %y = ascend.kernel.cube(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    ascend.kernel.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.vector': body argument #0 is tensor<2x2xf32>, input is tensor<4xf32>
func.func @body_argument_type(%x: tensor<4xf32>) {
  %y = ascend.kernel.vector(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<2x2xf32>):
    %r = ascend.graph.reshape %a : (tensor<2x2xf32>) -> tensor<4xf32>
    ascend.kernel.yield %r : tensor<4xf32>
  }
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.vector': body takes 2 arguments for 1 inputs
func.func @body_argument_count(%x: tensor<4xf32>) {
  %y = ascend.kernel.vector(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>, %b : tensor<4xf32>):
    ascend.kernel.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.vector': a kernel body holds graph ops only, found 'arith.constant'
func.func @non_graph_op_in_body(%x: tensor<4xf32>) {
  %y = ascend.kernel.vector(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %c = arith.constant dense<1.0> : tensor<4xf32>
    ascend.kernel.yield %c : tensor<4xf32>
  }
  func.return
}

// -----

// The body is isolated from above: it reads inputs through its block arguments only.
// CHECK: {{^}}Operation using value defined out of its IsolatedFromAbove parent
func.func @body_uses_outer_value(%x: tensor<4xf32>) {
  %y = ascend.kernel.cube(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    ascend.kernel.yield %r : tensor<4xf32>
  }
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.yield' expects parent op to be one of 'ascend.kernel.cube', 'ascend.kernel.vector'
func.func @yield_outside_kernel(%x: tensor<4xf32>) {
  ascend.kernel.yield %x : tensor<4xf32>
}

// -----

// Ops in the body are verified too.
// CHECK: {{^}}'ascend.graph.relu': result type tensor<4xf16> does not match the inferred type tensor<4xf32>
func.func @invalid_op_in_body(%x: tensor<4xf32>) {
  %y = ascend.kernel.vector(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf16>
    ascend.kernel.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

// Tiles must fit the target's on-chip buffers.
// CHECK: {{^}}'ascend.kernel.vector': tiles {'tile': 4096, 'db': 2, 'tiles': 1} need 65536 bytes of UB, the target has 4096
builtin.module attributes {ascend.target = #ascend.target<"Tiny", {cube_cores = 2 : i64, vector_cores = 2 : i64, ub_bytes = 4096 : i64, l0a_bytes = 1024 : i64, l0b_bytes = 1024 : i64, l0c_bytes = 1024 : i64}>} {
  func.func @too_big(%x: tensor<4096xf32>) {
    %y = ascend.kernel.vector(%x) {block_dim = 1 : i64, tiling = #ascend.vector_tiling<tile = 4096, db = 2, tiles = 1>} : (tensor<4096xf32>) -> tensor<4096xf32> {
    ^bb0(%a : tensor<4096xf32>):
      ascend.kernel.yield %a : tensor<4096xf32>
    }
    func.return
  }
}

// -----

// A kernel never claims more cores than the target has.
// CHECK: {{^}}'ascend.kernel.cube': block_dim 3 exceeds the 2 cube cores of the target
builtin.module attributes {ascend.target = #ascend.target<"Tiny", {cube_cores = 2 : i64, vector_cores = 2 : i64, ub_bytes = 4096 : i64, l0a_bytes = 1024 : i64, l0b_bytes = 1024 : i64, l0c_bytes = 1024 : i64}>} {
  func.func @too_many_cores(%x: tensor<4xf32>) {
    %y = ascend.kernel.cube(%x) {block_dim = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a : tensor<4xf32>):
      ascend.kernel.yield %a : tensor<4xf32>
    }
    func.return
  }
}

// -----

// CHECK: {{^}}'ascend.kernel.trans_data': converts tensor<1x2x3x3xf32> to tensor<1x2x9x1xf32, #ascend.format<NC1HWC0>>: a format conversion keeps the tensor's logical type
func.func @trans_data_that_reshapes(%x: tensor<1x2x3x3xf32>) {
  %y = ascend.kernel.trans_data %x : (tensor<1x2x3x3xf32>) -> tensor<1x2x9x1xf32, #ascend.format<NC1HWC0>>
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.trans_data': converts NCHW to NCHW: a conversion changes the format
func.func @identity_conversion(%x: tensor<1x2x3x3xf32>) {
  %y = ascend.kernel.trans_data %x : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.trans_data': converts NC1HWC0 to NC1HWC0: a conversion changes the format
func.func @identity_device_conversion(%x: tensor<1x2x3x3xf32, #ascend.format<NC1HWC0>>) {
  %y = ascend.kernel.trans_data %x : (tensor<1x2x3x3xf32, #ascend.format<NC1HWC0>>) -> tensor<1x2x3x3xf32, #ascend.format<NC1HWC0>>
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.trans_data': result #0: tensor<2x3xf32, #ascend.format<FRACTAL_Z>>: FRACTAL_Z stores conv weights (Cout, Cin_per_group, kh, kw); got a tensor of shape (2, 3) (rank 2)
func.func @conversion_to_a_format_the_rank_cannot_hold(%x: tensor<2x3xf32>) {
  %y = ascend.kernel.trans_data %x : (tensor<2x3xf32>) -> tensor<2x3xf32, #ascend.format<FRACTAL_Z>>
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.view': NC1HWC0 data of tensor<1x20x1x1xf32, #ascend.format<NC1HWC0>> is not the same bytes as ND
func.func @unaligned_format_view(%x: tensor<1x20x1x1xf32, #ascend.format<NC1HWC0>>) {
  %y = ascend.kernel.view %x : (tensor<1x20x1x1xf32, #ascend.format<NC1HWC0>>) -> tensor<1x20xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.concat_view': the inputs' 4 slices do not fill the result's 5
func.func @concat_view_short(%a: tensor<1x2x3x3xf32>, %b: tensor<1x2x3x3xf32>) {
  %y = ascend.kernel.concat_view %a, %b {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x5x3x3xf32>
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.concat_view': NC1HWC0 slices need axis 1 and channel counts that are multiples of 16
func.func @concat_view_unaligned(%a: tensor<1x8x3x3xf32, #ascend.format<NC1HWC0>>, %b: tensor<1x8x3x3xf32, #ascend.format<NC1HWC0>>) {
  %y = ascend.kernel.concat_view %a, %b {axis = 1 : i64} : (tensor<1x8x3x3xf32, #ascend.format<NC1HWC0>>, tensor<1x8x3x3xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16x3x3xf32, #ascend.format<NC1HWC0>>
  func.return
}

// -----

// CHECK: {{^}}'ascend.kernel.concat_view': input tensor<1x16x3x3xf32> is in NCHW, the result in NC1HWC0
func.func @concat_view_mixed_formats(%a: tensor<1x16x3x3xf32>, %b: tensor<1x16x3x3xf32, #ascend.format<NC1HWC0>>) {
  %y = ascend.kernel.concat_view %a, %b {axis = 1 : i64} : (tensor<1x16x3x3xf32>, tensor<1x16x3x3xf32, #ascend.format<NC1HWC0>>) -> tensor<1x32x3x3xf32, #ascend.format<NC1HWC0>>
  func.return
}

// -----

// A concat view's producers write into its slices: a view (or an argument) writes nothing.
// CHECK: {{^}}'ascend.kernel.concat_view': input #0 is no kernel's result: a concat view's inputs are written into its slices by the kernels that produce them
func.func @concat_view_of_a_view(%x: tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>>, %b: tensor<1x16xf32>) {
  %v = ascend.kernel.view %x : (tensor<1x16x1x1xf32, #ascend.format<NC1HWC0>>) -> tensor<1x16xf32>
  %y = ascend.kernel.concat_view %v, %b {axis = 1 : i64} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
  func.return
}
