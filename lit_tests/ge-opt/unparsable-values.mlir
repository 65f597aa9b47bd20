// RUN: not ge-opt %S/Inputs/unterminated-string.mlir 2>&1 | filecheck %s --check-prefix=STRING
// RUN: not ge-opt %S/Inputs/integer-out-of-range.mlir 2>&1 | filecheck %s --check-prefix=INTEGER
// RUN: not ge-opt %S/Inputs/float-out-of-range.mlir 2>&1 | filecheck %s --check-prefix=FLOAT
// RUN: not ge-opt %S/Inputs/huge-splat.mlir 2>&1 | filecheck %s --check-prefix=SPLAT
// RUN: not ge-opt %S/Inputs/huge-splat.mlir --max-tensor-bytes 8 2>&1 | filecheck %s --check-prefix=SPLAT
// RUN: not ge-opt %S/Inputs/complex-splat.mlir 2>&1 | filecheck %s --check-prefix=COMPLEX
// RUN: not ge-opt %S/Inputs/bracketed-vector-splat.mlir --max-tensor-bytes 1000 2>&1 | filecheck %s --check-prefix=VECTOR

// Text the lexer or xDSL's attribute builders cannot take is one error line and exit 1: an
// unterminated string (it used to backtrack for hours), values out of their type's range (Python
// exceptions), and a splat whose tensor exceeds --max-tensor-bytes (measured before the parser
// would build its elements).

// STRING:       ge-opt: error: {{.*}}unterminated-string.mlir:2:71: End of file reached before closing string literal.
// STRING-NOT:   {{.}}
// INTEGER:      ge-opt: error: the input does not parse: Integer value 4294967296 is out of range for type i32
// INTEGER-NOT:  Traceback
// FLOAT:        ge-opt: error: the input does not parse: a float constant is out of its type's range
// FLOAT-NOT:    Traceback
// SPLAT:        ge-opt: error: line 2: the splat dense<1.0> would hold a tensor of 18,446,744,073,709,551,616 bytes (tensor<4611686018427387904xf32>), over max_tensor_bytes
// SPLAT-NOT:    Traceback
// COMPLEX:      ge-opt: error: the input does not parse: xDSL cannot build one of its attributes (AssertionError)
// COMPLEX-NOT:  Traceback
// VECTOR:       ge-opt: error: line 2: the splat dense<{{\[\[}}1.0]]> would hold a tensor of 80,000,000 bytes (vector<20000000x1xf32>), over max_tensor_bytes = 1,000
