// RUN: ge-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// A plain type is the framework layout (ND, or NCHW for 4-D): `#ascend.format` names device
// formats only, so a framework format as an encoding or a layout is refused where it is written,
// whichever op holds the value (invalid.mlir checks what the ops' verifiers refuse).

// CHECK: format-invalid.mlir:[[# @LINE + 2]]:63
// CHECK: #ascend.format<ND>: ND is the layout of a type without encoding; write the plain type
func.func @framework_encoding(%x: tensor<4xf32, #ascend.format<ND>>) {
  func.return
}

// -----

// CHECK: format-invalid.mlir:[[# @LINE + 3]]:122
// CHECK: #ascend.format<NCHW>: NCHW is the layout of a type without encoding; write the plain type
func.func @framework_conversion(%x: tensor<1x2x3x3xf32, #ascend.format<NC1HWC0>>) {
  %y = ascend.kernel.trans_data %x : (tensor<1x2x3x3xf32, #ascend.format<NC1HWC0>>) -> tensor<1x2x3x3xf32, #ascend.format<NCHW>>
  func.return
}

// -----

// CHECK: format-invalid.mlir:[[# @LINE + 3]]:94
// CHECK: #ascend.format<ND>: ND is the layout of a type without encoding; write the plain type
ascend.stream.model @main attributes {arena_size = 64 : i64, weight_size = 32 : i64, input_names = ["x"], output_names = ["x"]} {
  %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32, #ascend.format<ND>>
  ascend.stream.outputs %x : memref<4xf32>
}
