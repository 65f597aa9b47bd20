"""`ge.dialects.verify`: the same verdicts as xDSL's `Operation.verify`, checking each distinct
`LocalVerifier` op once."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.universe import Universe
from xdsl.utils.exceptions import VerifyException

import ge
from ge.context import make_context
from ge.dialects import graph
from ge.dialects.common import TARGET_ATTR_NAME, TargetAttr, int_attr, ints_attr
from ge.dialects.stream import LaunchOp
from ge.dialects.verify import LocalVerifier, VerifiedSignatures, verify
from ge.errors import GeError
from ge.passes.manager import verify_module
from ge.passes.session import CompileSession
from ge.soc import load_profile

DIALECT_TESTS = Path(__file__).parent.parent / "lit_tests" / "Dialect"
CASES = [
    pytest.param(path, index, chunk, id=f"{path.parent.name}/{path.stem}#{index}")
    for path in sorted(DIALECT_TESTS.rglob("*.mlir"))
    if "--parsing-diagnostics" not in path.read_text()  # parse errors, which never reach a verifier
    for index, chunk in enumerate(path.read_text().split("// -----"))
]


def _context():
    """The context of `ge-opt`: ours, then every dialect xDSL has (the tests use `cf`)."""
    ctx = make_context()
    for name, factory in Universe.get_multiverse().all_dialects.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)
    return ctx


def _verdict(check, module) -> str | None:
    try:
        check(module)
    except VerifyException as error:
        return str(error)
    return None


@pytest.mark.parametrize(("path", "index", "chunk"), CASES)
def test_same_verdict_as_xdsl_on_every_dialect_test(path: Path, index: int, chunk: str) -> None:
    """Every case of the dialect lit tests, valid and invalid: the same error, or none."""
    module = Parser(_context(), chunk).parse_module()
    expected = _verdict(lambda m: m.verify(), module)
    assert _verdict(verify, module) == expected
    # A second run, with every signature of the first known, still finds what xDSL finds.
    verified = VerifiedSignatures()
    _verdict(lambda m: verify(m, verified), module)
    assert _verdict(lambda m: verify(m, verified), module) == expected


def _two_adds() -> tuple[ge.Graph, list]:
    g = ge.Graph("g")
    x = g.add_input("x", [2, 3], "float32")
    first = g.add_op(graph.AddOp, [x, x])
    second = g.add_op(graph.AddOp, [x, x])
    g.add_output(g.add_op(graph.AddOp, [first, second]))
    adds = [op for op in g.module.walk() if isinstance(op, graph.AddOp)]
    return g, adds


def test_an_op_changed_after_its_twin_was_verified_is_checked_again() -> None:
    g, adds = _two_adds()
    verified = VerifiedSignatures()
    verify(g.module, verified)
    assert isinstance(adds[1], LocalVerifier)
    wrong = g.add_constant(np.zeros(4, np.float32), "wrong")
    adds[1].operands = [adds[1].operands[0], wrong.value]  # a signature not seen before
    with pytest.raises(VerifyException, match="do not broadcast"):
        verify(g.module, verified)


def test_a_known_signature_in_a_wrong_place_is_still_refused() -> None:
    """An op whose signature was verified, moved where the block needs a terminator."""
    g, adds = _two_adds()
    verified = VerifiedSignatures()
    verify(g.module, verified)
    block = adds[0].parent
    adds[0].detach()
    block.add_op(adds[0])  # after the terminator: the block no longer ends with one
    refused = _verdict(lambda m: verify(m, verified), g.module)
    assert refused is not None and "must be the last operation" in refused
    assert refused == _verdict(lambda m: m.verify(), g.module)


def test_erased_operand_of_a_known_signature_is_refused() -> None:
    g, adds = _two_adds()
    verified = VerifiedSignatures()
    verify(g.module, verified)
    adds[0].detach()
    adds[0].erase(safe_erase=False)  # its user, of a known signature, now reads an erased value
    with pytest.raises(ValueError, match="Erased SSA value"):
        verify(g.module, verified)


def test_compiles_with_the_same_results() -> None:
    """A model whose ops repeat (so most checks hit the cache) compiles and runs as before."""
    g = ge.Graph("repeat")
    x = g.add_input("x", [4, 8], "float16")
    y = x
    for _ in range(20):
        y = g.add_op(graph.ReluOp, [g.add_op(graph.AddOp, [y, x])])
    g.add_output(y)
    data = np.linspace(-1, 1, 32, dtype=np.float16).reshape(4, 8)
    expected = data.astype(np.float32)
    for _ in range(20):
        expected = np.maximum(expected + data.astype(np.float32), 0).astype(np.float16).astype(np.float32)
    model = ge.GraphCompiler().compile(g)
    executor = ge.GraphExecutor()
    executor.load_graph(model)
    (out,) = executor.run({"x": data})
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.astype(np.float32), expected, rtol=1e-3)


KERNEL = """
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %k = ascend.kernel.vector(%a) {block_dim = 2 : i64}
      : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = ascend.graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    ascend.kernel.yield %r : tensor<4xf32>
  }
  %n = ascend.graph.neg %k : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}
"""


def _kernel_module() -> tuple[object, Operation, Operation]:
    module = Parser(_context(), KERNEL).parse_module()
    kernel = next(op for op in module.walk() if op.name == "ascend.kernel.vector")
    relu = next(op for op in module.walk() if op.name == "ascend.graph.relu")
    return module, kernel, relu


def test_a_region_op_that_reads_from_outside_is_refused_though_its_key_was_verified() -> None:
    """The kernel is IsolatedFromAbove: its relu rewired to the function's argument breaks it,
    and where an operand comes from is part of the key."""
    module, kernel, relu = _kernel_module()
    verified = VerifiedSignatures()
    verify(module, verified)
    outer = next(op for op in module.walk() if op.name == "func.func").body.block.args[0]
    relu.operands = [outer]
    expected = _verdict(lambda m: m.verify(), module)
    assert expected is not None and "isolated" in expected.lower()
    assert _verdict(lambda m: verify(m, verified), module) == expected


def test_a_kernel_verified_for_one_target_is_checked_again_for_another() -> None:
    """block_dim 2 fits a target of 2 vector cores, not one of 1: the target is in the key."""
    module, kernel, _ = _kernel_module()
    figures = load_profile("npu").target_attr().as_dict()
    module.attributes[TARGET_ATTR_NAME] = TargetAttr("two", {**figures, "vector_cores": 2})
    verified = VerifiedSignatures()
    verify(module, verified)
    module.attributes[TARGET_ATTR_NAME] = TargetAttr("one", {**figures, "vector_cores": 1})
    with pytest.raises(VerifyException, match="block_dim 2 exceeds the 1 vector cores"):
        verify(module, verified)


def test_ops_that_differ_only_in_discardable_attributes_verify_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fused op's `sources` names what it replaced; no verifier reads it."""
    g, adds = _two_adds()
    for index, op in enumerate(adds):
        op.attributes["sources"] = StringAttr(f"node_{index}")
    checked: list[str] = []
    real = Operation.verify

    def counting(op: Operation, verify_nested_ops: bool = True) -> None:
        checked.append(op.name)
        real(op, verify_nested_ops)

    monkeypatch.setattr(Operation, "verify", counting)
    verify(g.module)
    assert checked.count("ascend.graph.add") == 1  # three adds of one key, each with its own sources


def test_a_yes_no_property_given_as_an_integer_is_refused_naming_the_op_and_the_property() -> None:
    g = ge.Graph()
    x = g.add_input("x", [2, 3])
    with pytest.raises(
        ge.GeError, match=r"'r' \(reduce_sum\): property 'keepdims' must be true or false, got 0 : i64"
    ):
        g.add_op(graph.ReduceSumOp, [x], {"axes": ints_attr([1]), "keepdims": int_attr(0)}, "r")


def test_a_yes_no_property_is_a_python_bool_or_its_default_from_the_op_definition() -> None:
    g = ge.Graph()
    x = g.add_input("x", [2, 3])
    dropped = g.add_op(graph.ReduceSumOp, [x], {"axes": ints_attr([1]), "keepdims": False})
    kept = g.add_op(graph.ReduceSumOp, [x], {"axes": ints_attr([1])})
    assert (dropped.shape, kept.shape) == ((2,), (2, 1))
    assert "keepdims = false" in str(g) and str(g).count("keepdims") == 1


UNKNOWN_KERNEL = """
builtin.module {
  ascend.stream.kernel @relu_0 {unit = #ascend.unit<vector>}
      : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a : tensor<4xf32>):
    %r = ascend.graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    ascend.stream.return %r : tensor<4xf32>
  }
  ascend.stream.model @main attributes {arena_size = 0 : i64, weight_size = 0 : i64,
      input_names = ["x"], output_names = ["y"]} {
    %x = ascend.stream.buffer offset 0 size 16 {input = 0 : i64} : memref<4xf32>
    %y = ascend.stream.buffer offset 0 size 16 {output = 0 : i64} : memref<4xf32>
    ascend.stream.launch @gelu_0 (%x) -> (%y) stream 0 : (memref<4xf32>) -> (memref<4xf32>) loc("act")
    ascend.stream.outputs %y : memref<4xf32>
  }
}
"""


def test_a_launch_of_an_unknown_kernel_is_an_error_naming_the_launch_and_the_symbol() -> None:
    module = Parser(make_context(), UNKNOWN_KERNEL).parse_module()
    with pytest.raises(GeError) as caught:
        verify_module(module, "the model", CompileSession())
    message = str(caught.value)
    assert "'ascend.stream.launch' at loc(\"act\")" in message
    assert "@gelu_0" in message


def test_a_launch_finds_its_kernel_in_the_module_symbol_table() -> None:
    module = Parser(make_context(), UNKNOWN_KERNEL.replace("@gelu_0 (", "@relu_0 (")).parse_module()
    verify_module(module, "the model", CompileSession())
    launch = next(op for op in module.walk() if isinstance(op, LaunchOp))
    kernel = launch.callee()
    assert kernel is not None and kernel.sym_name.data == "relu_0"


@pytest.mark.parametrize(
    ("dims", "message"),
    [
        ('["batch", 5 : i64]', 'ascend.dims = ["batch", 5] does not fit tensor<?x4xf32>: index 1 is 5: '
         "the type's dimension is 4"),
        ('["batch", 4.0]', 'ascend.dims = ["batch", 4.0] does not fit tensor<?x4xf32>: index 1 is 4.0: '
         "a dimension is a symbol name or an integer"),
        ('[2, 4 : i64]', "ascend.dims = [2, 4] does not fit tensor<?x4xf32>: index 0 is 2: "
         "the type's dimension is '?', which a symbol names"),
        ('["batch"]', 'ascend.dims = ["batch"] must list 2 dimensions, one per dimension of tensor<?x4xf32>'),
    ],
)  # fmt: skip
def test_argument_dims_that_contradict_the_type_are_refused_naming_argument_index_and_value(
    dims: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ge.tools import ge_opt

    text = (
        f'func.func @main(%x: tensor<?x4xf32> {{ascend.name = "x", ascend.dims = {dims}}}) '
        "-> tensor<?x4xf32> {\n"
        "  func.return %x : tensor<?x4xf32>\n}\n"
    )
    source = tmp_path / "dims.mlir"
    source.write_text(text)
    with pytest.raises(SystemExit) as exited:
        ge_opt.main([str(source)])
    assert exited.value.code == 1
    assert capsys.readouterr().err == f"ge-opt: error: the input is invalid: argument #0 ('x'): {message}\n"
    module = Parser(_context(), text).parse_module()
    with pytest.raises(ge.VerificationError, match=r"argument #0 \('x'\): " + re.escape(message)):
        verify_module(module, "the input", CompileSession())
