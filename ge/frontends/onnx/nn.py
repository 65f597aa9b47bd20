"""Converters of neural-network operators: matrix products, convolutions, pooling, batch norm.

1-D convolutions and pools become their 2-D ops over a unit height (a reshape on each side);
2-D and 3-D ones map to the ops of their rank.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr

from ge.dialects import graph as ops
from ge.dialects.common import bool_attr, int_attr, ints_attr
from ge.dtypes import numpy_dtype
from ge.graph import Tensor

from ..common import same_pads
from .importer import Converter, Importer, Node

# --------------------------------------------------------------------------------------------
# Matrix products
# --------------------------------------------------------------------------------------------


def _matmul(imp: Importer, node: Node) -> list[Tensor]:
    return [imp.g.add_op(ops.MatMulOp, node.input_tensors(2), None, node.name)]


def _matmul_integer(imp: Importer, node: Node) -> list[Tensor]:
    """Zero points: scalars, or 1-D (one per row of A, one per column of B)."""
    a, b = node.input(0), node.input(1)
    zeros = []
    for index, matrix in ((2, a), (3, b)):
        if not node.has_input(index):
            zeros.append(imp.g.add_splat(0, [], matrix.dtype, f"{node.name}.zero_point"))
            continue
        zero = node.input(index)
        several = len(zero.shape) > 0 and zero.shape[0] != 1
        if len(zero.shape) > 1 or (several and len(matrix.shape) < 2):
            raise node.fail(f"a zero point of shape {list(zero.shape)} is not supported")
        if index == 2 and several:
            # One zero point per row of `a`: a column that broadcasts along the rows.
            zero = imp.g.add_reshape(zero, [*zero.shape, 1], f"{node.name}.row_zero_points")
        zeros.append(zero)
    return [imp.g.add_op(ops.MatMulIntegerOp, [a, b, *zeros], None, node.name)]


def _gemm(imp: Importer, node: Node) -> list[Tensor]:
    # Before opset 11 C is required: the schema check refuses a Gemm without it.
    props = {
        "alpha": ops.float_attr(node.attr("alpha", 1.0)),
        "beta": ops.float_attr(node.attr("beta", 1.0)),
        "trans_a": bool_attr(node.flag("transA", False)),
        "trans_b": bool_attr(node.flag("transB", False)),
    }
    operands = node.present_inputs(3)
    return [imp.g.add_op(ops.GemmOp, operands, props, node.name)]


def _einsum(imp: Importer, node: Node) -> list[Tensor]:
    equation = node.attr("equation")
    if not equation:
        raise node.invalid("Einsum needs an 'equation'")
    operands = node.present_inputs()
    _check_ellipses(node, equation, operands)
    props = {"equation": _string(equation)}
    return [imp.g.add_op(ops.EinsumOp, operands, props, node.name)]


def _check_ellipses(node: Node, equation: str, operands: Sequence[Tensor]) -> None:
    """ONNX's Einsum has every '...' stand for the same number of dimensions (onnxruntime refuses
    others too); numpy, whose rules the op follows, would broadcast an ellipsis of fewer."""
    terms = equation.replace(" ", "").partition("->")[0].split(",")
    spans = [
        (index, len(operand.shape) - len(term.replace("...", "")), len(operand.shape))
        for index, (term, operand) in enumerate(zip(terms, operands, strict=False))
        if "..." in term
    ]
    for index, count, rank in spans[1:]:
        first, first_count, first_rank = spans[0]
        if count != first_count and min(count, first_count) >= 0:
            raise node.invalid(
                f"attribute 'equation' = '{equation}': '...' stands for {first_count} dimensions in "
                f"input #{first} (rank {first_rank}) but {count} in input #{index} (rank {rank}); "
                "every '...' must stand for the same number of dimensions"
            )


# --------------------------------------------------------------------------------------------
# Convolutions
# --------------------------------------------------------------------------------------------


CONVOLUTIONS = {
    "Conv": (ops.Conv2DOp, ops.Conv3DOp),
    "ConvTranspose": (ops.ConvTranspose2DOp, ops.ConvTranspose3DOp),
}
"""The 2-D and 3-D op of each ONNX convolution (`_by_rank` picks one by the input's rank)."""


def _conv(imp: Importer, node: Node) -> list[Tensor]:
    """1-D, 2-D and 3-D; SAME auto_pad needs static spatial dimensions."""
    x, w = node.input(0), node.input(1)
    kernel = _kernel(node, w)
    s = _spatial(node, x, kernel, dilated=True)
    props = {"groups": int_attr(int(node.attr("group", 1))), **s}
    operands = node.present_inputs(3)
    return [_by_rank(imp, node, CONVOLUTIONS["Conv"], operands, props, weight=True)]


def _conv_transpose(imp: Importer, node: Node) -> list[Tensor]:
    """1-D, 2-D and 3-D; output_shape and SAME auto_pad need static spatial dimensions. An
    output_shape larger than the input reaches gets cells holding only the bias. output_padding
    must be below the stride or the dilation, as ONNX says (onnxruntime computes only one below
    the stride); its cells past the last one a kernel reaches hold the bias.
    """
    x, w = node.input(0), node.input(1)
    kernel = _kernel(node, w)
    n = len(kernel)
    strides = node.ints("strides", n, 1)
    dilations = node.ints("dilations", n, 1)
    extra = list(node.ints("output_padding", n, 0))
    if any(e >= max(s, d) for e, s, d in zip(extra, strides, dilations, strict=True)):
        raise node.invalid(
            f"output_padding {extra} must be less than the stride {list(strides)} or the dilation "
            f"{list(dilations)} along each axis (a larger one adds cells no window reaches)"
        )
    auto_pad = _auto_pad(node)
    output_shape = node.attr("output_shape")
    sizes = x.shape[2:]
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if any(d < 0 for d in sizes):
            raise node.fail("output_shape or auto_pad needs static spatial dimensions")
        target = (
            [int(d) for d in output_shape][-n:]
            if output_shape is not None
            else [size * stride for size, stride in zip(sizes, strides, strict=True)]
        )
        begin, end = [], []
        for i in range(n):
            total = strides[i] * (sizes[i] - 1) + extra[i] + dilations[i] * (kernel[i] - 1) + 1 - target[i]
            if total < 0:
                # A larger output than the input reaches: the cells past it hold only the bias.
                extra[i] -= total
                total = 0
            first = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            begin.append(first)
            end.append(total - first)
        pads = (*begin, *end)
    elif auto_pad in ("NOTSET", "VALID"):
        pads = (0,) * 2 * n if auto_pad == "VALID" else node.ints("pads", 2 * n, 0)
    else:
        raise node.invalid(f"unknown auto_pad '{auto_pad}'")
    if all(d >= 0 for d in (*x.shape[:1], *w.shape[1:2], *sizes)):
        # The products are scattered over every cell the windows reach before pads crop them.
        reached = [
            s * (size - 1) + e + d * (k - 1) + 1
            for s, size, e, d, k in zip(strides, sizes, extra, dilations, kernel, strict=True)
        ]
        channels = w.shape[1] * int(node.attr("group", 1))
        node.allocate(
            [x.shape[0], channels, *reached], numpy_dtype(x.element_type), "the cells its windows reach"
        )
    props = {
        "strides": ints_attr(strides),
        "pads": ints_attr(pads),
        "dilations": ints_attr(dilations),
        "output_padding": ints_attr(extra),
        "groups": int_attr(int(node.attr("group", 1))),
    }
    operands = node.present_inputs(3)
    return [_by_rank(imp, node, CONVOLUTIONS["ConvTranspose"], operands, props, weight=True)]


# --------------------------------------------------------------------------------------------
# Normalization and pooling
# --------------------------------------------------------------------------------------------


def _batch_norm(imp: Importer, node: Node) -> list[Tensor]:
    """Inference only: training_mode=1 and the running mean and variance outputs are refused."""
    if node.attr("training_mode", 0):
        raise node.fail("training_mode=1 is not supported")
    if any(o for o in node.proto.output[1:]):
        raise node.fail("running mean/var outputs (training) are not supported")
    x = node.input(0)
    # From opset 15, the parameters may have a dtype of their own.
    params = [t if t.dtype == x.dtype else imp.g.add_cast(t, x.dtype) for t in node.input_tensors(5)[1:]]
    props = {"epsilon": ops.float_attr(node.attr("epsilon", 1e-5))}
    return [imp.g.add_op(ops.BatchNormOp, [x, *params], props, node.name)]


POOLS = {
    "MaxPool": (ops.MaxPoolOp, ops.MaxPool3DOp),
    "AveragePool": (ops.AvgPoolOp, ops.AvgPool3DOp),
    "LpPool": (ops.LpPoolOp, ops.LpPool3DOp),
}


def _max_pool(imp: Importer, node: Node) -> list[Tensor]:
    """1-D, 2-D and 3-D windows; the Indices output is supported for 1-D and 2-D pools, in row-major
    or (storage_order=1) column-major order. A window holding a NaN gives NaN, and Indices its
    first NaN (onnxruntime's answer depends on where the NaN sits; see docs/architecture.md).
    """
    return _pool(imp, node)


def _average_pool(imp: Importer, node: Node) -> list[Tensor]:
    """1-D, 2-D and 3-D windows."""
    return _pool(imp, node)


def _lp_pool(imp: Importer, node: Node) -> list[Tensor]:
    """1-D, 2-D and 3-D windows."""
    return _pool(imp, node)


def _pool(imp: Importer, node: Node) -> list[Tensor]:
    x = node.input(0)
    kernel = tuple(node.attr("kernel_shape", ()))
    if not kernel:
        raise node.invalid("a pool needs 'kernel_shape'")
    if len(x.shape) != len(kernel) + 2:
        raise node.invalid(f"kernel_shape {list(kernel)} does not fit an input of rank {len(x.shape)}")
    props = {
        "kernel_shape": ints_attr(kernel),
        "ceil_mode": bool_attr(node.strict_flag("ceil_mode", False)),
        **_spatial(node, x, kernel, dilated=False),
    }
    if node.op_type == "AveragePool":
        props["count_include_pad"] = bool_attr(node.flag("count_include_pad", False))
    if node.op_type == "MaxPool":
        node.strict_flag("storage_order", False)  # onnxruntime refuses another value
    if node.op_type == "LpPool":
        props["p"] = int_attr(int(node.attr("p", 2)))
    if len(node.proto.output) > 1 and node.proto.output[1]:
        return _max_pool_with_indices(imp, node, props)
    return [_by_rank(imp, node, POOLS[node.op_type], [x], props)]


def _max_pool_with_indices(imp: Importer, node: Node, props: dict) -> list[Tensor]:
    x = node.input(0)
    if len(x.shape) not in (3, 4):
        raise node.fail("the 'Indices' output is supported for 1-D and 2-D pools only")
    if len(x.shape) == 4:
        values, indices = imp.g.add_op_results(ops.MaxPoolWithArgmaxOp, [x], props, node.name)
        if node.attr("storage_order", 0):
            indices = _column_major(imp, node, indices, x.shape[2], x.shape[3])
        return [values, indices]
    # A unit height leaves every flat index of the input as it was (in either storage order).
    flat = imp.g.add_reshape(x, _unit_height(node, x.shape), f"{node.name}.as_2d")
    values, indices = imp.g.add_op_results(ops.MaxPoolWithArgmaxOp, [flat], _props_2d(props), node.name)
    return [_drop_height(imp, node, values, "values"), _drop_height(imp, node, indices, "indices")]


def _column_major(imp: Importer, node: Node, indices: Tensor, height: int, width: int) -> Tensor:
    """Row-major flat indices `i` of (N, C, H, W) as column-major ones: the plane's offset
    `i - r`, then `(r mod W) * H + r div W`, where `r = i mod (H * W)` is the index in the plane."""
    if height < 0 or width < 0:
        raise node.fail("storage_order=1 needs static spatial dimensions")

    def scalar(value: int, what: str) -> Tensor:
        return imp.g.add_splat(value, [], "int64", f"{node.name}.{what}")

    def binary(op_class: type, a: Tensor, b: Tensor, what: str) -> Tensor:
        return imp.g.add_op(op_class, [a, b], None, f"{node.name}.{what}")

    in_plane = binary(ops.ModOp, indices, scalar(height * width, "plane_size"), "in_plane")
    plane = binary(ops.SubOp, indices, in_plane, "plane")
    width_tensor = scalar(width, "width")
    column = binary(ops.ModOp, in_plane, width_tensor, "column")
    row = binary(ops.DivOp, in_plane, width_tensor, "row")
    columns_before = binary(ops.MulOp, column, scalar(height, "height"), "columns_before")
    return binary(ops.AddOp, binary(ops.AddOp, plane, columns_before, "column_start"), row, "indices")


def _global_pool(op_class: type) -> Converter:
    def convert(imp: Importer, node: Node) -> list[Tensor]:
        props = {"p": int_attr(int(node.attr("p", 2)))} if op_class is ops.GlobalLpPoolOp else None
        return [imp.g.add_op(op_class, [node.input(0)], props, node.name)]

    return convert


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _kernel(node: Node, w: Tensor) -> tuple[int, ...]:
    kernel = tuple(int(k) for k in node.attr("kernel_shape", w.shape[2:]))
    if len(kernel) != len(w.shape) - 2 or any(
        k != d and d >= 0 for k, d in zip(kernel, w.shape[2:], strict=True)
    ):
        raise node.invalid(f"kernel_shape {list(kernel)} disagrees with the weight {list(w.shape)}")
    return kernel


def _auto_pad(node: Node) -> str:
    """The node's auto_pad; nonzero explicit pads beside one other than NOTSET are refused (ONNX:
    they cannot be used together), rather than one of them taken silently."""
    auto_pad = str(node.attr("auto_pad", "NOTSET"))
    if auto_pad != "NOTSET" and any(node.attr("pads", ())):  # zeros say nothing either way
        raise node.invalid(f"auto_pad '{auto_pad}' and explicit pads cannot be used together")
    return auto_pad


def _spatial(node: Node, x: Tensor, kernel: Sequence[int], dilated: bool) -> dict:
    """strides, dilations and explicit pads (all leading, then all trailing), auto_pad resolved.

    SAME pads aim at `ceil(size / stride)` windows; convolutions dilate the kernel for it, pools
    (as ONNX Runtime and the ONNX reference) do not.
    """
    n = len(kernel)
    strides = node.ints("strides", n, 1)
    dilations = node.ints("dilations", n, 1)
    auto_pad = _auto_pad(node)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        sizes = x.shape[2 : 2 + n]
        if any(size < 0 for size in sizes):
            raise node.fail("auto_pad needs static spatial dimensions")
        begin, end = same_pads(
            sizes, kernel, strides, dilations if dilated else None, odd_cell_first=auto_pad == "SAME_LOWER"
        )
        pads = (*begin, *end)
    elif auto_pad == "VALID":
        pads = (0,) * 2 * n
    elif auto_pad == "NOTSET":
        pads = node.ints("pads", 2 * n, 0)
    else:
        raise node.invalid(f"unknown auto_pad '{auto_pad}'")
    return {"strides": ints_attr(strides), "pads": ints_attr(pads), "dilations": ints_attr(dilations)}


def _by_rank(
    imp: Importer,
    node: Node,
    classes: tuple[type, type],
    operands: list[Tensor],
    props: dict,
    weight: bool = False,
) -> Tensor:
    """The 2-D or 3-D op for the input's rank; a 1-D window runs as 2-D over a unit height."""
    x = operands[0]
    rank = len(x.shape)
    if rank in (4, 5):
        return imp.g.add_op(classes[rank - 4], operands, props, node.name)
    if rank != 3:
        raise node.fail(f"{rank - 2}-D windows are not supported")
    flat = [imp.g.add_reshape(x, _unit_height(node, x.shape), f"{node.name}.as_2d")]
    if weight:
        w = operands[1]
        flat.append(imp.g.add_reshape(w, _unit_height(node, w.shape), f"{node.name}.weight_2d"))
        flat += operands[2:]
    y = imp.g.add_op(classes[0], flat, _props_2d(props), f"{node.name}.2d")
    return _drop_height(imp, node, y, "")


def _unit_height(node: Node, shape: Sequence[int]) -> list[int]:
    if sum(d < 0 for d in shape) > 1:
        raise node.fail(f"a 1-D window over shape {list(shape)} needs at most one dynamic dimension")
    return [shape[0], shape[1], 1, *shape[2:]]


def _drop_height(imp: Importer, node: Node, y: Tensor, what: str) -> Tensor:
    shape = [*y.shape[:2], *y.shape[3:]]
    return imp.g.add_reshape(y, shape, f"{node.name}.{what}" if what else node.name)


def _props_2d(props: dict) -> dict:
    """The properties of a 1-D window op, for the same op over a unit height."""
    unit = {"kernel_shape": 1, "strides": 1, "dilations": 1, "output_padding": 0}
    result = dict(props)
    for name, value in unit.items():
        if name in props:
            result[name] = ints_attr((value, *props[name].get_values()))
    if "pads" in props:
        begin, end = props["pads"].get_values()
        result["pads"] = ints_attr((0, begin, 0, end))
    return result


def _string(value: object) -> StringAttr:
    return StringAttr(value.decode() if isinstance(value, bytes) else str(value))


CONVERTERS: dict[str, Converter] = {
    "MatMul": _matmul,
    "MatMulInteger": _matmul_integer,
    "Gemm": _gemm,
    "Einsum": _einsum,
    "Conv": _conv,
    "ConvTranspose": _conv_transpose,
    "BatchNormalization": _batch_norm,
    "MaxPool": _max_pool,
    "AveragePool": _average_pool,
    "LpPool": _lp_pool,
    "GlobalAveragePool": _global_pool(ops.GlobalAvgPoolOp),
    "GlobalMaxPool": _global_pool(ops.GlobalMaxPoolOp),
    "GlobalLpPool": _global_pool(ops.GlobalLpPoolOp),
}
