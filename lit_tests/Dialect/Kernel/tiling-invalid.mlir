// RUN: ge-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// A tiling checks its own sizes where it is written; whether they fit a target's buffers is the
// kernel's check (invalid.mlir).

// CHECK: tiling-invalid.mlir:[[# @LINE + 3]]:60
// CHECK: ascend.cube_tiling: cube tile sizes k must be multiples of 16 (one fractal), got {'m': 16, 'n': 16, 'k': 24, 'db': 1, 'tiles': 1}
func.func @partial_fractal(%x: tensor<4xf32>) {
  %y = ascend.kernel.cube(%x) {tiling = #ascend.cube_tiling<m = 16, n = 16, k = 24, db = 1, tiles = 1>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    ascend.kernel.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

// CHECK: ascend.vector_tiling: db (double buffering) must be 1 or 2, got 3
"test.op"() {tiling = #ascend.vector_tiling<tile = 256, db = 3, tiles = 1>} : () -> ()

// -----

// CHECK: ascend.vector_tiling: tile sizes must be positive, got {'tile': 0, 'db': 1, 'tiles': 1}
"test.op"() {tiling = #ascend.vector_tiling<tile = 0, db = 1, tiles = 1>} : () -> ()

// -----

// Sizes come in one order, each named.
// CHECK: Expected 'n' (#ascend.cube_tiling lists m, n, k, db, tiles in this order)
"test.op"() {tiling = #ascend.cube_tiling<m = 16, k = 16, n = 16, db = 1, tiles = 1>} : () -> ()

// -----

// CHECK: Expected `cube`, `vector`, or `aicpu`.
"test.op"() {unit = #ascend.unit<scalar>} : () -> ()
