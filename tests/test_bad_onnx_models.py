"""The bad-ONNX-model corpus: models that break ONNX's rules (its IR, its operator schemas, the
ranges of attribute and input values) get a `GeError` naming the node, the attribute or input
and the value; never a raw Python exception, an allocation past `max_tensor_bytes`, or a model
imported as if it were valid.

Each case is a call, the error class it must raise and a fragment of the message. The valid
neighbours of the refused forms are tested at the end, so the checks do not overreach.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge
import ge.backend
from ge.errors import GeError, InvalidModelError, VerificationError

n = helper.make_node
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
X = helper.make_tensor_value_info("x", F, [2, 3])
Y = helper.make_tensor_value_info("y", F, None)


def info(name: str, dtype: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def model(nodes, inputs=(X,), outputs=(Y,), initializers=(), opset=17, ir_version=None) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", list(inputs), list(outputs), initializer=list(initializers))
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if ir_version is not None:
        proto.ir_version = ir_version
    return proto


def parse(proto: onnx.ModelProto, **options) -> Callable[[], object]:
    return lambda: ge.GraphParser(**options).parse_onnx(proto)


def run(proto: onnx.ModelProto, *feeds) -> Callable[[], object]:
    return lambda: ge.backend.prepare(proto).run(list(feeds))


def reshape(shape, x=X, **attrs) -> onnx.ModelProto:
    return model([n("Reshape", ["x", "s"], ["y"], name="r", **attrs)], [x], initializers=[init("s", shape)])


def range_of(limit, dtype=np.int64) -> onnx.ModelProto:
    bounds = [init("a", np.array(0, dtype)), init("b", np.array(limit, dtype)), init("d", np.array(1, dtype))]
    return model([n("Range", ["a", "b", "d"], ["y"], name="rg")], [], initializers=bounds)


def with_attribute(attribute: onnx.AttributeProto) -> onnx.ModelProto:
    node = n("Softmax", ["x"], ["y"], name="s")
    node.attribute.append(attribute)
    return model([node])


def duplicated_attribute() -> onnx.ModelProto:
    node = n("Softmax", ["x"], ["y"], name="s", axis=0)
    node.attribute.append(helper.make_attribute("axis", 1))
    return model([node])


def no_default_opset() -> onnx.ModelProto:
    graph = helper.make_graph([n("Relu", ["x"], ["y"])], "g", [X], [Y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("com.example", 1)])


def value_info_says(dtype: int) -> onnx.ModelProto:
    proto = model([n("Relu", ["x"], ["a"], name="r1"), n("Relu", ["a"], ["y"], name="r2")])
    proto.graph.value_info.append(info("a", dtype, [2, 3]))
    return proto


THEN = helper.make_graph([n("Relu", ["x"], ["t"])], "then", [], [info("t", F, [2, 3])])
ELSE_INT = helper.make_graph([n("Cast", ["x"], ["e"], to=I64)], "else", [], [info("e", I64, [2, 3])])
THEN_TWO = helper.make_graph(
    [n("Relu", ["x"], ["t"]), n("Relu", ["x"], ["t2"])],
    "then",
    [],
    [info("t", F, [2, 3]), info("t2", F, [2, 3])],
)
C = info("c", B, [])
X0 = np.arange(6, dtype=np.float32).reshape(2, 3) - 3


def if_node(**branches) -> onnx.NodeProto:
    return n("If", ["c"], ["y"], name="iff", **branches)


def loop_changing_dtype() -> onnx.ModelProto:
    body = helper.make_graph(
        [n("Identity", ["c"], ["co"]), n("Cast", ["v"], ["vo"], to=I64)],
        "body",
        [info("i", I64, []), info("c", B, []), info("v", F, [1])],
        [info("co", B, []), info("vo", I64, [1])],
    )
    return model(
        [n("Loop", ["M", "", "x"], ["y"], name="lp", body=body)],
        [info("x", F, [1])],
        initializers=[init("M", np.array(3, np.int64))],
    )


def scan_without_count() -> onnx.ModelProto:
    body = helper.make_graph(
        [n("Add", ["s", "xi"], ["so"]), n("Identity", ["so"], ["yo"])],
        "body",
        [info("s", F, [3]), info("xi", F, [3])],
        [info("so", F, [3]), info("yo", F, [3])],
    )
    outputs = [info("sf", F, None), info("ys", F, None)]
    scan = n("Scan", ["s0", "x"], ["sf", "ys"], name="sc", body=body)
    return model([scan], outputs=outputs, initializers=[init("s0", np.zeros(3, np.float32))])


def pad(pads, mode) -> onnx.ModelProto:
    return model([n("Pad", ["x", "p"], ["y"], name="pd", mode=mode)], initializers=[init("p", pads)])


CASES: dict[str, tuple[Callable[[], object], type[GeError], str]] = {
    # Values a converter computes with: named, never a raw exception.
    "Range limit +inf": (parse(range_of(np.inf, np.float32)), InvalidModelError, "input #1 ('limit') is inf"),
    "Range limit NaN": (parse(range_of(np.nan, np.float32)), InvalidModelError, "input #1 ('limit') is nan"),
    "Range limit 2**62": (parse(range_of(2**62)), InvalidModelError, "Range at node 'rg': its result"),
    "Range of 8 GiB under a 1 MiB limit": (
        parse(range_of(2**30), max_tensor_bytes=1 << 20),
        InvalidModelError,
        "over max_tensor_bytes = 1,048,576",
    ),
    "DepthToSpace blocksize 0": (
        parse(
            model([n("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=0)], [info("x", F, [1, 4, 2, 2])])
        ),
        InvalidModelError,
        "node 'd2s': attribute 'blocksize' is 0",
    ),
    "Cast to 999": (
        parse(model([n("Cast", ["x"], ["y"], name="c", to=999)])),
        InvalidModelError,
        "node 'c': attribute 'to' = 999: 999 is not an ONNX element type",
    ),
    "attribute referring to a function attribute outside a function": (
        parse(
            with_attribute(onnx.AttributeProto(name="axis", type=onnx.AttributeProto.INT, ref_attr_name="ax"))
        ),
        InvalidModelError,
        "node 's': attribute 'axis' refers to 'ax'",
    ),
    "Reshape 0 beyond the input's rank": (
        parse(reshape(np.array([0, 0, 0], np.int64))),
        InvalidModelError,
        "node 'r': shape [0, 0, 0] has a 0 (copy the input's dimension) at position 2",
    ),
    "Reshape 0 beyond the rank, after huge dims": (
        parse(reshape(np.array([2**32, 2**32, 0], np.int64))),
        InvalidModelError,
        "at position 2, beyond the input's rank 2",
    ),
    # Negative and overflowing dimensions.
    "Reshape -2": (
        parse(reshape(np.array([-2, 3], np.int64))),
        InvalidModelError,
        "node 'r': input #1 ('shape') is [-2, 3]",
    ),
    "Reshape two negative dims": (
        parse(reshape(np.array([-3, -2], np.int64))),
        InvalidModelError,
        "is [-3, -2]",
    ),
    "Reshape two -1": (
        parse(reshape(np.array([-1, -1], np.int64))),
        InvalidModelError,
        "node 'r': shape [-1, -1]",
    ),
    "Reshape allowzero with 0 and -1": (
        parse(reshape(np.array([0, -1], np.int64), allowzero=1)),
        InvalidModelError,
        "node 'r': shape [0, -1] holds both 0 and -1 with allowzero=1",
    ),
    "Reshape whose -1 cannot hold the rest": (
        parse(reshape(np.array([2**62, 4, -1], np.int64))),
        VerificationError,
        "node 'r' (reshape): cannot reshape [2, 3] (6 elements)",
    ),
    "Reshape past int64 elements": (
        parse(reshape(np.array([2**62, 2**62], np.int64))),
        VerificationError,
        "node 'r' (reshape)",
    ),
    "Reshape by a shape that wrapped around int64": (
        parse(
            model(
                [
                    n("Shape", ["x"], ["s"]),
                    n("Mul", ["s", "big"], ["s2"]),
                    n("Reshape", ["x", "s2"], ["y"], name="r"),
                ],
                initializers=[init("big", np.array([2**62, 2**62], np.int64))],
            )
        ),
        InvalidModelError,
        "node 'r': input #1 ('shape') is [-9223372036854775808",
    ),
    "Graph.add_reshape [-2, 3]": (
        lambda: (g := ge.Graph()).add_reshape(g.add_input("x", [2, 3]), [-2, 3], "r"),
        VerificationError,
        "node 'r' (reshape): cannot reshape [2, 3] into [-2, 3]",
    ),
    "ConstantOfShape [-4]": (
        parse(
            model(
                [n("ConstantOfShape", ["s"], ["y"], name="cos")], [], initializers=[init("s", np.array([-4]))]
            )
        ),
        InvalidModelError,
        "node 'cos': input #0 ('input') is [-4]",
    ),
    # What ONNX's IR and schemas say a model is.
    "no default opset import": (
        parse(no_default_opset()),
        InvalidModelError,
        "which the model does not import",
    ),
    "ir_version 0": (
        parse(model([n("Relu", ["x"], ["y"])], ir_version=0)),
        InvalidModelError,
        "ir_version is 0",
    ),
    "ir_version 99": (
        parse(model([n("Relu", ["x"], ["y"])], ir_version=99)),
        InvalidModelError,
        "ir_version is 99",
    ),
    "output declared INT64 for a float result": (
        parse(model([n("Relu", ["x"], ["y"])], outputs=[info("y", I64, [2, 3])])),
        InvalidModelError,
        "graph output 'y' is declared tensor(int64), but the graph computes tensor(float)",
    ),
    "value_info contradicting a dtype": (
        parse(value_info_says(TensorProto.INT32)),
        InvalidModelError,
        "value 'a' is declared tensor(int32)",
    ),
    "negative dim_value in value_info": (
        parse(model([n("Relu", ["x"], ["y"])], outputs=[info("y", F, [-7, 3])])),
        InvalidModelError,
        "output 'y' with shape [-7, 3]",
    ),
    "attribute given twice": (
        parse(duplicated_attribute()),
        InvalidModelError,
        "node 's': attribute 'axis' is given twice",
    ),
    "INT attribute holding only f": (
        parse(with_attribute(onnx.AttributeProto(name="axis", type=onnx.AttributeProto.INT, f=1.0))),
        InvalidModelError,
        "attribute 'axis' is INT but holds 'f'",
    ),
    "Reshape by a float shape": (
        parse(reshape(np.array([3.0, 2.0], np.float32))),
        InvalidModelError,
        "node 'r': input #1 ('shape') is tensor(float); the operator takes tensor(int64)",
    ),
    "Reshape by a 2-D shape": (
        parse(reshape(np.array([[3, 2]], np.int64))),
        InvalidModelError,
        "node 'r': input #1 ('shape') must be 1-D, got shape [1, 2]",
    ),
    "Constant with value_float and value_int": (
        parse(model([n("Constant", [], ["y"], name="k", value_float=1.0, value_int=2)], [])),
        InvalidModelError,
        "node 'k': attributes ['value_float', 'value_int'] are given",
    ),
    "Pad reflect by the whole dimension": (
        parse(pad(np.array([0, 3, 0, 3], np.int64), "reflect")),
        VerificationError,
        "node 'pd' (pad): mode 'reflect' pads dimension 1 of [2, 3] by 3 and 3",
    ),
    "Mod fmod=0 on floats before opset 28": (
        parse(model([n("Mod", ["x", "x"], ["y"], name="md")])),
        InvalidModelError,
        "node 'md': attribute 'fmod' is 0 on float32 inputs",
    ),
    "CumSum with a float axis": (
        parse(
            model(
                [n("CumSum", ["x", "a"], ["y"], name="cs")],
                initializers=[init("a", np.array(1.0, np.float32))],
            )
        ),
        InvalidModelError,
        "node 'cs': input #1 ('axis') is tensor(float)",
    ),
    "If on a float condition": (
        run(
            model([if_node(then_branch=THEN, else_branch=THEN)], [X, info("c", F, [])]),
            np.ones((2, 3), np.float32),
            np.array(1.0, np.float32),
        ),
        InvalidModelError,
        "node 'iff': input #0 ('cond') is tensor(float)",
    ),
    "If branches of different dtypes": (
        run(
            model([if_node(then_branch=THEN, else_branch=ELSE_INT)], [X, C]),
            np.ones((2, 3), np.float32),
            np.array(True),
        ),
        InvalidModelError,
        "node 'iff': output #0 is FLOAT in then_branch ('t') but INT64 in else_branch ('e')",
    ),
    "If without else_branch, then taken": (
        run(model([if_node(then_branch=THEN)], [X, C]), np.ones((2, 3), np.float32), np.array(True)),
        InvalidModelError,
        "node 'iff': required attribute 'else_branch' is missing",
    ),
    "If branch with more outputs than the node": (
        parse(model([if_node(then_branch=THEN_TWO, else_branch=THEN)], [X, C])),
        InvalidModelError,
        "node 'iff': attribute 'then_branch' has 2 outputs, the node 1",
    ),
    "Loop body changing a carried dtype": (
        parse(loop_changing_dtype()),
        InvalidModelError,
        "loop-carried value #0 ('v') is tensor(float), but the body's output 'vo' makes it tensor(int64)",
    ),
    "Scan without num_scan_inputs": (
        parse(scan_without_count()),
        InvalidModelError,
        "node 'sc': required attribute 'num_scan_inputs' is missing",
    ),
    "If's taken branch declaring another dtype than it computes": (
        parse(
            model(
                [
                    n(
                        "If",
                        ["c"],
                        ["y"],
                        name="iff",
                        then_branch=helper.make_graph(
                            [n("Relu", ["x"], ["t"])],
                            "then",
                            [],
                            [helper.make_tensor_value_info("t", TensorProto.INT64, [2])],
                        ),
                        else_branch=helper.make_graph(
                            [n("Neg", ["x"], ["e"])], "else", [], [helper.make_empty_tensor_value_info("e")]
                        ),
                    )
                ],
                inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                initializers=[numpy_helper.from_array(np.array(True), "c")],
            )
        ),
        InvalidModelError,
        "subgraph 'then' at 'iff/then/': output 't' is declared tensor(int64), "
        "but the graph computes tensor(float)",
    ),
}


def einsum(equation: str, *shapes: list[int]) -> onnx.ModelProto:
    inputs = [info(f"x{i}", F, shape) for i, shape in enumerate(shapes)]
    names = [i.name for i in inputs]
    return model([n("Einsum", names, ["y"], name="es", equation=equation)], inputs)


def returning(name: str) -> onnx.GraphProto:
    """An If branch whose output is `name`, which it does not compute."""
    return helper.make_graph([n("Relu", ["x"], ["t"])], "back", [], [info(name, F, [2, 3])])


def loop_returning(name: str) -> onnx.ModelProto:
    body = helper.make_graph(
        [n("Identity", ["c"], ["co"])],
        "body",
        [info("i", I64, []), info("c", B, []), info("v", F, [2, 3])],
        [info("co", B, []), info(name, F, [2, 3])],
    )
    loop = n("Loop", ["M", "", "x"], ["y"], name="lp", body=body)
    return model([loop], initializers=[init("M", np.array(2, np.int64))])


def scan_returning(name: str) -> onnx.ModelProto:
    """A Scan whose body returns `name` as its scan output."""
    body = helper.make_graph(
        [n("Add", ["s", "xi"], ["so"])],
        "body",
        [info("s", F, [3]), info("xi", F, [3])],
        [info("so", F, [3]), info(name, F, [3])],
    )
    scan = n("Scan", ["s0", "x"], ["sf", "ys"], name="sc", body=body, num_scan_inputs=1)
    constants = [init("s0", np.zeros(3, np.float32)), init("bias", np.ones(3, np.float32))]
    return model([scan], outputs=[info("sf", F, None), info("ys", F, None)], initializers=constants)


def sparse_add(indices: onnx.TensorProto) -> onnx.ModelProto:
    """x + c over [2, 3], c a sparse initializer holding 1 and 2 at `indices`."""
    proto = model([n("Add", ["x", "c"], ["y"], name="add")])
    values = helper.make_tensor("c", F, [2], [1.0, 2.0])
    proto.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [2, 3]))
    return proto


CASES.update(
    {
        "an operator before the opset that defines it": (
            parse(model([n("Gelu", ["x"], ["y"], name="g")])),
            InvalidModelError,
            "Gelu at node 'g': the model imports ai.onnx opset 17, and Gelu exists from opset 20",
        ),
        "a sparse initializer's index outside its shape": (
            parse(sparse_add(helper.make_tensor("ci", I64, [2], [0, 9]))),
            InvalidModelError,
            "sparse initializer 'c': an index lies outside its 6 elements",
        ),
        "a sparse initializer's coordinates outside its shape": (
            parse(sparse_add(helper.make_tensor("ci", I64, [2, 2], [0, 0, 2, 1]))),
            InvalidModelError,
            "sparse initializer 'c': an index lies outside its shape [2, 3]",
        ),
        "auto_pad beside explicit pads": (
            parse(
                model(
                    [
                        n(
                            "MaxPool",
                            ["x"],
                            ["y"],
                            name="p",
                            kernel_shape=[2, 2],
                            auto_pad="SAME_UPPER",
                            pads=[1, 1, 1, 1],
                        )
                    ],
                    [info("x", F, [1, 1, 4, 4])],
                )
            ),
            InvalidModelError,
            "MaxPool at node 'p': auto_pad 'SAME_UPPER' and explicit pads cannot be used together",
        ),
        "an output padding as large as the stride": (
            parse(
                model(
                    [n("ConvTranspose", ["x", "w"], ["y"], name="t", strides=[2, 2], output_padding=[2, 0])],
                    [info("x", F, [1, 1, 4, 4])],
                    initializers=[init("w", np.ones((1, 1, 3, 3), np.float32))],
                )
            ),
            InvalidModelError,
            "ConvTranspose at node 't': output_padding [2, 0] must be less than the stride [2, 2]",
        ),
        "split into more parts than outputs": (
            parse(
                model(
                    [n("Split", ["x", "s"], ["a", "b"], name="sp", axis=1)],
                    initializers=[init("s", [1, 1, 1])],
                    outputs=[info("a", F, None), info("b", F, None)],
                )
            ),
            InvalidModelError,
            "Split at node 'sp': splits into 3 parts [1, 1, 1] but has 2 outputs",
        ),
        "split by num_outputs into more parts than outputs": (
            parse(
                model(
                    [n("Split", ["x"], ["a", "b"], name="sp", axis=1, num_outputs=3)],
                    opset=18,
                    outputs=[info("a", F, None), info("b", F, None)],
                )
            ),
            InvalidModelError,
            "Split at node 'sp': splits into 3 parts [1, 1, 1] but has 2 outputs",
        ),
        "Einsum '...' of 0 and 2 dimensions": (
            parse(einsum("...ij,...jk->...ik", [2, 3], [5, 6, 3, 4])),
            InvalidModelError,
            "Einsum at node 'es': attribute 'equation' = '...ij,...jk->...ik': '...' stands for 0 "
            "dimensions in input #0 (rank 2) but 2 in input #1 (rank 4)",
        ),
        "Einsum '...' of 1 and 2 dimensions, implicit output": (
            parse(einsum("...ij,...jk", [7, 2, 3], [5, 6, 3, 4])),
            InvalidModelError,
            "'...' stands for 1 dimensions in input #0 (rank 3) but 2 in input #1 (rank 4)",
        ),
        "Einsum '...' dimensions that do not broadcast": (
            parse(einsum("...ij,...jk->...ik", [5, 2, 2, 3], [5, 6, 3, 4])),
            VerificationError,
            "node 'es' (einsum): shapes [5, 2] and [5, 6] do not broadcast",
        ),
        "If branch returning a graph input": (
            run(model([if_node(then_branch=returning("x"), else_branch=THEN)], [X, C]), X0, np.array(True)),
            InvalidModelError,
            "If at node 'iff': attribute 'then_branch' (subgraph 'back'): output 'x' is a value of an "
            "enclosing graph",
        ),
        "If branch not taken returning an outer node's value": (
            run(
                model(
                    [n("Abs", ["x"], ["ax"]), if_node(then_branch=THEN, else_branch=returning("ax"))],
                    [X, C],
                ),
                X0,
                np.array(True),
            ),
            InvalidModelError,
            "attribute 'else_branch' (subgraph 'back'): output 'ax' is a value of an enclosing graph",
        ),
        "If branch not taken returning a name nothing defines": (
            parse(
                model(
                    [if_node(then_branch=THEN, else_branch=returning("nope"))],
                    initializers=[init("c", np.array(True))],
                )
            ),
            InvalidModelError,
            "If at node 'iff': attribute 'else_branch' (subgraph 'back'): output 'nope' is defined by no "
            "node, input or initializer",
        ),
        "If branch not taken reading a name nothing defines": (
            parse(
                model(
                    [
                        if_node(
                            then_branch=THEN,
                            else_branch=helper.make_graph(
                                [n("Neg", ["ghost"], ["e"], name="ng")], "else", [], [info("e", F, [2, 3])]
                            ),
                        )
                    ],
                    initializers=[init("c", np.array(True))],
                )
            ),
            InvalidModelError,
            "Neg at node 'ng' in subgraph 'else' reads 'ghost', which nothing defines before it",
        ),
        "Loop body returning an outer value": (
            parse(loop_returning("x")),
            InvalidModelError,
            "Loop at node 'lp': attribute 'body' (subgraph 'body'): output 'x' is a value of an enclosing",
        ),
        "Scan body returning an outer value": (
            parse(scan_returning("bias")),
            InvalidModelError,
            "Scan at node 'sc': attribute 'body' (subgraph 'body'): output 'bias' is a value of an enclosing",
        ),
        "an input without a shape": (
            parse(model([n("Relu", ["x"], ["y"], name="r")], [info("x", F, None)])),
            ge.errors.UnsupportedOperatorError,
            "graph input 'x' declares no shape (not even its rank); give it with input_shapes",
        ),
        "an operator revised later, before its first opset": (
            parse(model([n("Mish", ["x"], ["y"], name="m")], opset=17)),
            InvalidModelError,
            "Mish at node 'm': the model imports ai.onnx opset 17, and Mish exists from opset 18",
        ),
    }
)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_onnx_model_gets_a_clear_error(case: str) -> None:
    call, error, fragment = CASES[case]
    with pytest.raises(error) as raised:
        call()
    assert fragment in str(raised.value), str(raised.value)


# --------------------------------------------------------------------------------------------
# The valid neighbours of the refused forms
# --------------------------------------------------------------------------------------------


def test_an_input_without_a_shape_takes_the_one_input_shapes_gives() -> None:
    graph = ge.GraphParser().parse_onnx(
        model([n("Relu", ["x"], ["y"], name="r")], [info("x", F, None)]), input_shapes={"x": [2, 3]}
    )
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(graph))
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.testing.assert_array_equal(executor.run(x)[0], np.maximum(x, 0))


def test_auto_pad_beside_zero_pads_and_an_output_padding_below_the_stride_are_taken() -> None:
    pool = model(
        [n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], auto_pad="VALID", pads=[0, 0, 0, 0])],
        [info("x", F, [1, 1, 4, 4])],
    )
    assert ge.GraphParser().parse_onnx(pool)
    weights = [init("w", np.ones((1, 1, 3, 3), np.float32))]
    transposed = model(
        [n("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_padding=[1, 1])],
        [info("x", F, [1, 1, 4, 4])],
        initializers=weights,
    )
    graph = ge.GraphParser().parse_onnx(transposed)
    assert ge.GraphCompiler().compile(graph).outputs[0].shape == (1, 1, 10, 10)


@pytest.mark.parametrize("indices", [[0, 4], [[0, 0], [1, 1]]], ids=["linear", "coordinates"])
def test_a_sparse_initializer_is_its_dense_array(indices) -> None:
    index = np.array(indices, np.int64)
    proto = sparse_add(helper.make_tensor("ci", I64, list(index.shape), index.reshape(-1).tolist()))
    executor = ge.GraphExecutor()
    executor.load_graph(ge.GraphCompiler().compile(ge.GraphParser().parse_onnx(proto)))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(executor.run(x)[0], x + np.array([[1, 0, 0], [0, 2, 0]], np.float32))


def test_reshape_zero_and_minus_one_within_the_rank() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = ge.backend.prepare(reshape(np.array([0, -1], np.int64))).run([x])
    np.testing.assert_array_equal(y, x)
    empty = info("x", F, [0, 3])
    (z,) = ge.backend.prepare(reshape(np.array([0, 3, 1], np.int64), x=empty, allowzero=1)).run(
        [np.zeros((0, 3), np.float32)]
    )
    assert z.shape == (0, 3, 1)


def test_reflect_pads_up_to_one_less_than_the_dimension() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = ge.backend.prepare(pad(np.array([0, 2, 0, 2], np.int64), "reflect")).run([x])
    np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (2, 2)), mode="reflect"))


def test_declared_types_that_agree_are_taken() -> None:
    proto = value_info_says(F)
    proto.graph.output[0].CopyFrom(info("y", F, [2, 3]))
    assert ge.GraphParser().parse_onnx(proto) is not None


def test_an_attribute_without_its_type_reads_from_its_field() -> None:
    """Old exporters leave AttributeProto.type unset: the field that holds the value says it."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = ge.backend.prepare(with_attribute(onnx.AttributeProto(name="axis", i=0))).run([x])
    np.testing.assert_allclose(y, np.exp(x) / np.exp(x).sum(axis=0), rtol=1e-6)


def test_range_within_the_limit_is_computed() -> None:
    (y,) = ge.backend.prepare(range_of(5.0, np.float32)).run([])
    np.testing.assert_array_equal(y, np.arange(5, dtype=np.float32))


def test_if_branches_of_one_dtype_import_whichever_is_taken() -> None:
    other = helper.make_graph([n("Neg", ["x"], ["e"])], "else", [], [info("e", F, [2, 3])])
    rep = ge.backend.prepare(model([if_node(then_branch=THEN, else_branch=other)], [X, C]))
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 3
    np.testing.assert_array_equal(rep.run([x, np.array(True)])[0], np.maximum(x, 0))
    np.testing.assert_array_equal(rep.run([x, np.array(False)])[0], -x)


def test_subgraph_outputs_of_its_own_inputs_and_initializers_are_taken() -> None:
    # ONNX's checker and onnxruntime take these: the values are defined in the subgraph itself.
    body = helper.make_graph(
        [n("Identity", ["c"], ["co"])],
        "body",
        [info("i", I64, []), info("c", B, []), info("v", F, [2, 3])],
        [info("co", B, []), info("v", F, [2, 3])],
    )
    loop = n("Loop", ["M", "", "x"], ["y"], name="lp", body=body)
    proto = model([loop], initializers=[init("M", np.array(2, np.int64))])
    np.testing.assert_array_equal(ge.backend.prepare(proto).run([X0])[0], X0)
    ones = helper.make_graph(
        [], "then", [], [info("k", F, [2, 3])], initializer=[init("k", np.ones((2, 3), np.float32))]
    )
    proto = model([if_node(then_branch=ones, else_branch=THEN)], [X, C])
    np.testing.assert_array_equal(ge.backend.prepare(proto).run([X0, np.array(True)])[0], np.ones((2, 3)))


@pytest.mark.parametrize(
    ("target", "expected"),
    [([0, -1], "tensor<?x12xf32>"), ([-1, 12], "tensor<?x12xf32>"), ([0, 2, -1], "tensor<?x2x6xf32>")],
)
def test_reshapes_of_a_dynamic_batch_keep_it_dynamic_and_print_back(target, expected) -> None:
    """Flattening behind a dynamic batch (`Reshape(x, [0, -1])`, as exported CNNs do) infers the
    static dimensions and keeps the batch `?`; the module prints as text that parses back."""
    from xdsl.parser import Parser

    from ge.context import make_context

    proto = model(
        [n("Reshape", ["x", "s"], ["y"])],
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])],
        initializers=[numpy_helper.from_array(np.array(target, np.int64), "s")],
    )
    text = str(ge.GraphParser().parse_onnx(proto).module)
    assert f"-> ({expected}" in text
    Parser(make_context(), text).parse_module().verify()


def test_a_negative_static_dimension_is_refused_by_the_ir() -> None:
    from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType, f32

    from ge.dialects.graph.base import shape_error

    assert shape_error(TensorType(f32, [2, -3])) == (
        "tensor<2x-3xf32> has a negative dimension: a dimension is >= 0, or dynamic ('?')"
    )
    assert shape_error(TensorType(f32, [-1, 3])) is not None  # -1 is a size, not xDSL's '?'
    assert shape_error(TensorType(f32, [DYNAMIC_INDEX, 3])) is None


def test_a_number_left_off_the_wire_reads_as_its_default() -> None:
    """proto3 writers omit 0, 0.0 and "": an INT attribute with no value is axis 0, as ONNX's
    checker and onnxruntime read it."""
    from oracle import run_onnxruntime

    node = n("Softmax", ["x"], ["y"])
    node.attribute.append(onnx.AttributeProto(name="axis", type=onnx.AttributeProto.INT))
    proto = model(
        [node],
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        outputs=[helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        opset=13,
    )
    onnx.checker.check_model(proto, full_check=True)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = ge.backend.prepare(proto).run([x])
    np.testing.assert_allclose(y, run_onnxruntime(proto, {"x": x})[0], rtol=1e-6)
