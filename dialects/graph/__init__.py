"""The `ascend.graph` dialect: framework-level tensor ops, the level frontends build.

Ops live in a `func.func` graph container. Every op is `Pure`, verifies its operands and
properties, and infers its result type (`infer`), which the verifier compares with the result
type the IR states. Dimensions may be dynamic (`?`) at this level. Each op family has a module
of its own; this package gathers them into one dialect.
"""

from xdsl.ir import Dialect, Operation

from ..common import get_float, get_int, get_ints, int_attr, ints_attr
from . import const, elementwise, nn, reduction, tensor
from .base import GraphOp, MovesData, NeedsAiCpu, broadcast_shapes, float_attr
from .const import ConstOp
from .elementwise import AddOp, BinaryElementwiseOp, CastOp, DivOp, MulOp, ReluOp, SubOp, UnaryElementwiseOp
from .nn import (
    AvgPoolOp,
    BatchNormOp,
    Conv2DOp,
    GemmOp,
    GlobalAvgPoolOp,
    MatMulOp,
    MaxPoolOp,
    Pool2DOp,
)
from .reduction import SoftmaxOp
from .tensor import ConcatOp, FlattenOp, ReshapeOp, TransposeOp

GRAPH_OPS: tuple[type[Operation], ...] = (
    *const.OPS,
    *elementwise.OPS,
    *nn.OPS,
    *reduction.OPS,
    *tensor.OPS,
)

Graph = Dialect("ascend.graph", list(GRAPH_OPS), [])

__all__ = [
    "GRAPH_OPS",
    "AddOp",
    "AvgPoolOp",
    "BatchNormOp",
    "BinaryElementwiseOp",
    "CastOp",
    "ConcatOp",
    "ConstOp",
    "Conv2DOp",
    "DivOp",
    "FlattenOp",
    "GemmOp",
    "GlobalAvgPoolOp",
    "Graph",
    "GraphOp",
    "MatMulOp",
    "MaxPoolOp",
    "MovesData",
    "NeedsAiCpu",
    "MulOp",
    "Pool2DOp",
    "ReluOp",
    "ReshapeOp",
    "SoftmaxOp",
    "SubOp",
    "TransposeOp",
    "UnaryElementwiseOp",
    "broadcast_shapes",
    "float_attr",
    "get_float",
    "get_int",
    "get_ints",
    "int_attr",
    "ints_attr",
]
