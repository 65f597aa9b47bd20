"""`Composer`: what converters that decompose one ONNX operator into several graph ops share.

It appends ops named after the node (`<node>.<part>`, the node's own name for its result),
registers the constants it makes as values known at import time (so that later shape decisions
and folding see them), and says clearly when a decomposition needs a static shape it was not
given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.ir import Attribute

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, ints_attr
from ge.dtypes import element_type, numpy_dtype
from ge.graph import Tensor

from .importer import Importer, Node


class Composer:
    """Appends the graph ops of one node's decomposition."""

    def __init__(self, imp: Importer, node: Node):
        self.imp = imp
        self.node = node
        self.g = imp.g

    def name(self, part: str) -> str:
        """The name of the op making `part` of the node's result ("" for the result itself)."""
        return f"{self.node.name}.{part}" if part else self.node.name

    def op(
        self,
        op_class: type,
        inputs: Sequence[Tensor],
        part: str,
        props: Mapping[str, Attribute] | None = None,
    ) -> Tensor:
        """One graph op of the decomposition; `part` names it after the node ("" for the result)."""
        return self.g.add_op(op_class, list(inputs), props, self.name(part))

    def constant(self, array: np.ndarray, part: str) -> Tensor:
        """A constant known at import time."""
        array = np.asarray(array)
        tensor = self.g.add_constant(array, self.name(part))
        self.imp.known[tensor.value] = array
        return tensor

    def scalar(self, value: float, dtype: str, part: str) -> Tensor:
        """A 0-d constant of `dtype` (a constant rather than a splat, which bfloat16 lacks)."""
        return self.constant(np.array(value).astype(numpy_dtype(element_type(dtype))), part)

    def zeros(self, shape: Sequence[int], dtype: str, part: str) -> Tensor:
        """A tensor of zeros: a splat, which stays a scalar in the IR (bfloat16 has none)."""
        if dtype == "bfloat16":
            return self.constant(np.zeros(tuple(shape), numpy_dtype(element_type(dtype))), part)
        return self.g.add_splat(0, list(shape), dtype, self.name(part))

    def reshape(self, x: Tensor, shape: Sequence[int], part: str) -> Tensor:
        """`x` in `shape` (itself if it has that shape already); `x` must be static."""
        if tuple(shape) == tuple(x.shape):
            return x
        self.static(x)
        return self.g.add_reshape(x, list(shape), self.name(part))

    def transpose(self, x: Tensor, perm: Sequence[int], part: str) -> Tensor:
        """`x` with its axes in the order `perm` (itself for the identity)."""
        if list(perm) == list(range(len(perm))):
            return x
        return self.op(ops.TransposeOp, [x], part, {"perm": ints_attr(perm)})

    def cast(self, x: Tensor, dtype: str, part: str) -> Tensor:
        """`x` converted to `dtype` (itself if it has that dtype)."""
        return x if x.dtype == dtype else self.g.add_cast(x, dtype, self.name(part))

    def reduce(
        self, op_class: type, x: Tensor, axes: Sequence[int], part: str, keepdims: bool = False
    ) -> Tensor:
        """A reduction of `x` (reduce_sum, reduce_max, ...) over `axes`."""
        props = {
            "axes": ints_attr(sorted(a % max(len(x.shape), 1) for a in axes)),
            "keepdims": bool_attr(keepdims),
        }
        return self.op(op_class, [x], part, props)

    def slice(self, x: Tensor, axis: int, start: int, end: int, part: str, step: int = 1) -> Tensor:
        """Elements `start` to `end` (excluded), every `step`, of one axis of `x`."""
        props = {
            "starts": ints_attr([start]),
            "ends": ints_attr([end]),
            "axes": ints_attr([axis]),
            "steps": ints_attr([step]),
        }
        return self.op(ops.SliceOp, [x], part, props)

    def concat(self, inputs: Sequence[Tensor], axis: int, part: str) -> Tensor:
        """`inputs` joined along `axis` (the one input itself)."""
        return inputs[0] if len(inputs) == 1 else self.g.add_concat(list(inputs), axis, self.name(part))

    def static(self, *tensors: Tensor) -> None:
        """Raises the unsupported-form error if a tensor's shape is not static."""
        for tensor in tensors:
            if any(d < 0 for d in tensor.shape):
                raise self.node.fail(f"a decomposition over the dynamic shape {list(tensor.shape)}")

    def input(self, index: int, what: str) -> Tensor:
        """Input `index`, which the operator requires."""
        if not self.node.has_input(index):
            raise self.node.invalid(f"the input '{what}' is missing")
        return self.node.input(index)
