"""What every frontend builds the same way: its errors, how a converter's own errors are named,
SAME padding, integer floor division, and the resize properties of TensorFlow's resizes (which
MindSpore's copy).

Each frontend lists every unsupported operator of a model in one `UnsupportedOperatorError`, names
a node in the error for an unsupported form of a supported operator, and resolves SAME padding to
explicit pads; the wording and the arithmetic live here once so the frontends cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from xdsl.dialects.builtin import DenseArrayBase, StringAttr, f64

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, ints_attr
from ge.errors import GeError, InvalidModelError, UnsupportedOperatorError
from ge.graph import Graph, Tensor

AttributeT = TypeVar("AttributeT")
"""The type of an attribute accessor's default, and so of the value it returns."""


def unsupported_operators_error(
    framework: str,
    entries: list[dict],
    *,
    operators: str = "ops",
    kind: Callable[[dict], str] | None = None,
    describe: Callable[[dict], str] | None = None,
) -> UnsupportedOperatorError:
    """One error naming every node of `entries` (dicts with at least `op_type` and `node`):

        3 node(s) use TensorFlow ops ge does not support (Foo, Bar):
          Foo at node 'a'
          ...

    `framework` and `operators` name what the nodes use ("TensorFlow" "ops", "MindSpore"
    "primitives"; an empty framework leaves just `operators`); `kind` gives the name listed once
    per kind (the op type by default) and `describe` the text before " at node" on each line.
    """
    kind = kind or _op_type
    describe = describe or _op_type
    kinds = sorted({kind(e) for e in entries})
    noun = f"{framework} {operators}" if framework else operators
    lines = [f"  {describe(e)} at node '{e['node']}'" for e in entries]
    return UnsupportedOperatorError(
        f"{len(entries)} node(s) use {noun} ge does not support ({', '.join(kinds)}):\n" + "\n".join(lines),
        entries,
        category="operator",
    )


def unsupported_form_error(
    op_type: str, domain: str, node: str, what: str, label: str | None = None, **details: object
) -> UnsupportedOperatorError:
    """An unsupported form of a supported operator at `node`: "<label> at node '<node>': <what>"
    (the label is the op type unless given); `details` join the error's entry."""
    return UnsupportedOperatorError(
        f"{label or op_type} at node '{node}': {what}",
        [{"op_type": op_type, "domain": domain, **details, "node": node, "missing": what}],
    )


def invalid_node_error(op_type: str, node: str, what: str) -> InvalidModelError:
    """A node the model gets wrong (a missing input, an attribute out of range)."""
    return InvalidModelError(f"{op_type} at node '{node}': {what}")


CONVERTER_ERRORS = (ValueError, TypeError, KeyError, IndexError, ArithmeticError)
"""What a converter raises, not on purpose, when it meets values it does not expect."""


@contextmanager
def converting(where: str) -> Iterator[None]:
    """Runs a converter of the node `where` names (`Conv2D at node 'c'`): an error of
    CONVERTER_ERRORS becomes an `InvalidModelError` naming the node, rather than the converter's
    line; a `GeError` passes as it is."""
    try:
        yield
    except GeError:
        raise
    except CONVERTER_ERRORS as error:
        raise InvalidModelError(f"{where}: cannot import it: {type(error).__name__}: {error}") from None


def same_pads(
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int] | None = None,
    *,
    odd_cell_first: bool = False,
) -> tuple[list[int], list[int]]:
    """The leading and trailing pads of each spatial axis for SAME padding: the output has
    ceil(size / stride) cells. The odd padding cell goes at the end (TensorFlow's SAME, MindSpore's
    `same`, ONNX's SAME_UPPER) or, with `odd_cell_first`, at the start (ONNX's SAME_LOWER).

    The sizes must be static (callers refuse a dynamic one with their node's error).
    """
    dilations = dilations if dilations is not None else [1] * len(kernel)
    begin, end = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
        total = max(0, (math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size)
        first = total - total // 2 if odd_cell_first else total // 2
        begin.append(first)
        end.append(total - first)
    return begin, end


def add_floor_division(g: Graph, x: Tensor, y: Tensor, name: str) -> Tensor:
    """`(x - mod(x, y)) / y` with the divisor-signed remainder, named `name` (its steps
    `name.remainder` and `name.whole`): the floor division of integers, exact where the graph's
    integer div truncates toward zero (`-7 // 2 = (-7 - 1) / 2 = -4`). On floats it is the
    quotient Python and ATen round for their floor division."""
    remainder = g.add_op(ops.ModOp, [x, y], {"fmod": bool_attr(False)}, f"{name}.remainder")
    whole = g.add_op(ops.SubOp, [x, remainder], None, f"{name}.whole")
    return g.add_op(ops.DivOp, [whole, y], None, name)


def tensorflow_resize_props(
    mode: str, nchw: Sequence[int], size: Sequence[int], align_corners: bool, half_pixel_centers: bool
) -> dict:
    """The `ascend.graph.resize` properties of TensorFlow's ResizeBilinear, ResizeNearestNeighbor
    and ResizeBicubic (and MindSpore's, which are TensorFlow's) from an NCHW shape to `size`
    (height, width): align_corners and half_pixel_centers map to the coordinate modes of the same
    meaning; bicubic weights are Keys' (a = -0.5, samples outside the input left out and the rest
    renormalized) with half-pixel centers and a = -0.75 (edge samples repeated) without. Both
    frameworks tabulate the cubic weights at 1/1024 steps, so their results differ from these by
    up to about 1e-3 of the input's range."""
    n, c, h, w = nchw
    height, width = size
    cubic_a = -0.75
    if align_corners:
        coordinates, nearest = "align_corners", "round_prefer_ceil"
    elif half_pixel_centers:
        coordinates = "tf_half_pixel_for_nn" if mode == "nearest" else "half_pixel"
        nearest, cubic_a = "floor", -0.5
    else:
        coordinates, nearest = "asymmetric", "floor"
    return {
        "scales": DenseArrayBase.from_list(f64, [1.0, 1.0, height / h, width / w]),
        "sizes": ints_attr([n, c, height, width]),
        "mode": StringAttr(mode),
        "coordinate_transformation_mode": StringAttr(coordinates),
        "nearest_mode": StringAttr(nearest),
        "cubic_coeff_a": ops.float_attr(cubic_a),
        "exclude_outside": bool_attr(cubic_a == -0.5),
        "extrapolation_value": ops.float_attr(0.0),
        "antialias": bool_attr(False),
    }


def _op_type(entry: dict) -> str:
    return entry["op_type"]
