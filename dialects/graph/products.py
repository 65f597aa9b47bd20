"""The matrix products of each cube op family, as implementations of `MatrixProductInterface`.

- matmul / matmul_integer: numpy's batched product (1-D operands promoted); gemm: one product of
  its (transposed) operands;
- einsum of two operands that contracts a letter: batch = letters in both and the output (and
  `...`), K = letters in both but not the output, M and N the letters of one operand only; any
  other equation is no product (the vector unit computes it);
- convolution as an implicit GEMM: M = N * output pixels, K = Cin / groups at each kernel position,
  N = Cout / groups, one product per group; conv_transpose as a GEMM before its col2im scatter-add:
  M = N * input pixels, K = Cin / groups, N = Cout / groups * kernel positions;
- attention as its two products (Q K^T, then the probabilities by V); a recurrent layer as its
  input product (every step at once) and its recurrence product (step after step);
- a fused op as its base op over its base operands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, StringAttr
from xdsl.ir import Attribute, Operation

from ..common import is_flag
from .base import DYN, broadcast_shapes, check_window_props, product, prop_int, window_out
from .traits import MatrixProduct, MatrixProductInterface, ProductOperands


@dataclass(frozen=True)
class MatMulProduct(MatrixProductInterface):
    """numpy `matmul`: batch dimensions broadcast, a 1-D operand is a row or a column. `operands`
    is how the op's operands hold the matrices (matmul_integer subtracts zero points first)."""

    operands: ProductOperands = ProductOperands.MATRICES

    def products(self, operand_types, properties):
        a, b = operand_types[0].get_shape(), operand_types[1].get_shape()
        a = (1, *a) if len(a) == 1 else a
        b = (*b, 1) if len(b) == 1 else b
        batch = product(broadcast_shapes(a[:-2], b[:-2]))
        return (MatrixProduct(m=a[-2], n=b[-1], k=a[-1], batch=batch, operands=self.operands),)


class GemmProduct(MatrixProductInterface):
    """`alpha * A' B' + beta * C` with A' and B' transposed as `trans_a` and `trans_b` say."""

    def products(self, operand_types, properties):
        a, b = operand_types[0].get_shape(), operand_types[1].get_shape()
        a = a[::-1] if _transposed(properties, "trans_a") else a
        b = b[::-1] if _transposed(properties, "trans_b") else b
        return (MatrixProduct(m=a[0], n=b[1], k=a[1], operands=ProductOperands.MATRICES),)


class EinsumProduct(MatrixProductInterface):
    """A two-operand einsum that contracts a letter is a batched product; nothing else is."""

    def products(self, operand_types, properties):

        equation = properties.get("equation")
        if not isinstance(equation, StringAttr) or len(operand_types) != 2:
            return ()
        terms, output = parse_einsum(equation.data, 2)
        sizes, ellipsis = einsum_sizes(terms, [t.get_shape() for t in operand_types])
        a, b = (set(t.replace("...", "")) for t in terms)
        out = set(output.replace("...", ""))
        if not (a & b) - out:
            return ()  # elementwise products and sums: vector work

        def size(letters: set[str]) -> int:
            return product([sizes[c] for c in sorted(letters)])

        batch = product([size(a & b & out), ellipsis])
        return (MatrixProduct(m=size(a - b), n=size(b - a), k=size((a & b) - out), batch=batch),)


class ConvProduct(MatrixProductInterface):
    """A convolution as an implicit GEMM (see the module docstring)."""

    def products(self, operand_types, properties):
        x, w = operand_types[0].get_shape(), operand_types[1].get_shape()
        spatial = len(x) - 2
        groups = prop_int(properties, "groups", 1)
        window = check_window_props(properties, spatial, ("strides", "pads", "dilations"))
        pads = window["pads"]
        out = [
            window_out(
                x[2 + i],
                w[2 + i],
                window["strides"][i],
                (pads[i], pads[i + spatial]),
                window["dilations"][i],
                False,
            )
            for i in range(spatial)
        ]
        positions = product(w[2:])
        return (
            MatrixProduct(
                m=product([x[0], *out]),
                n=_divide(w[0], groups),
                k=product([w[1], positions]),
                batch=groups,
                positions=positions,
                operands=ProductOperands.IMAGE,
            ),
        )


class ConvTransposeProduct(MatrixProductInterface):
    """A transposed convolution as a GEMM before its col2im scatter-add."""

    def products(self, operand_types, properties):
        x, w = operand_types[0].get_shape(), operand_types[1].get_shape()
        groups = prop_int(properties, "groups", 1)
        return (
            MatrixProduct(
                m=product(x[:1] + x[2:]),
                n=product([w[1], *w[2:]]),
                k=_divide(w[0], groups),
                batch=groups,
            ),
        )


class AttentionProduct(MatrixProductInterface):
    """Q K^T over every (batch, head), then the probabilities by V."""

    def products(self, operand_types, properties):
        batch, heads, q_seq, dim = operand_types[0].get_shape()
        v = operand_types[2].get_shape()
        pairs = product([batch, heads])
        return (
            MatrixProduct(m=q_seq, n=v[2], k=dim, batch=pairs, lhs=0, rhs=1),
            MatrixProduct(m=q_seq, n=v[3], k=v[2], batch=pairs, lhs=None, rhs=2),
        )


class RecurrentProduct(MatrixProductInterface):
    """X W^T for every step at once, then H R^T step after step, per direction."""

    def products(self, operand_types, properties):
        seq, batch, size = operand_types[0].get_shape()
        directions, gate_rows, hidden = operand_types[2].get_shape()
        return (
            MatrixProduct(m=product([seq, batch]), n=gate_rows, k=size, batch=directions, lhs=0, rhs=1),
            MatrixProduct(m=batch, n=gate_rows, k=hidden, batch=directions, lhs=None, rhs=2, steps=seq),
        )


@dataclass(frozen=True)
class FusedProduct(MatrixProductInterface):
    """A fused op computes its base op's products over its base operands (its extras feed the
    epilogue)."""

    base: type[Operation]

    def products(self, operand_types, properties):
        extras = properties.get("extras")
        count = len(operand_types) - (extras.value.data if isinstance(extras, IntegerAttr) else 0)
        base_properties = {k: v for k, v in properties.items() if k != "extras"}
        trait = self.base.get_trait(MatrixProductInterface)
        assert trait is not None, f"{self.base.name} is the base of a fused op, so a matrix product"
        return trait.products(operand_types[:count], base_properties)


def _divide(dim: int, groups: int) -> int:
    return DYN if dim == DYN else dim // groups


def einsum_sizes(terms: Sequence[str], shapes: Sequence[tuple[int, ...]]) -> tuple[dict[str, int], int]:
    """Each letter's size (the larger where one operand broadcasts), and the element count of the
    broadcast `...` dimensions."""
    sizes: dict[str, int] = {}
    ellipsis: tuple[int, ...] = ()
    for term, shape in zip(terms, shapes, strict=True):
        letters = term.replace("...", "")
        before = term.index("...") if "..." in term else len(term)
        spread = len(shape) - len(letters)
        dims = list(shape[:before]) + list(shape[before + spread :])
        ellipsis = broadcast_shapes(ellipsis, shape[before : before + spread])
        for letter, dim in zip(letters, dims, strict=True):
            known = sizes.get(letter, 1)
            sizes[letter] = DYN if DYN in (known, dim) else max(known, dim)
    return sizes, product(ellipsis)


__all__ = [
    "AttentionProduct",
    "ConvProduct",
    "ConvTransposeProduct",
    "EinsumProduct",
    "FusedProduct",
    "GemmProduct",
    "MatMulProduct",
    "RecurrentProduct",
]


def _transposed(properties: Mapping[str, Attribute], name: str) -> bool:
    """A gemm's `trans_a` / `trans_b` flag; both default to false in gemm and fused_gemm."""
    attr = properties.get(name)
    return is_flag(attr) and bool(attr.value.data)


def parse_einsum(equation: str, operands: int) -> tuple[list[str], str]:
    """The input terms and the output term (derived when implicit) of an einsum equation."""
    equation = equation.replace(" ", "")
    lhs, arrow, output = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != operands:
        raise ValueError(f"equation '{equation}' has {len(inputs)} inputs, got {operands} operands")
    for term in [*inputs, output]:
        letters = term.replace("...", "", 1)
        if not all(c.isalpha() and c.isascii() for c in letters):
            raise ValueError(f"'{term}' in '{equation}' is not a term of letters and one '...'")
    if not arrow:
        counts = {c: lhs.count(c) for c in lhs if c.isalpha()}
        output = ("..." if "..." in lhs else "") + "".join(sorted(c for c, n in counts.items() if n == 1))
    letters = output.replace("...", "")
    if len(set(letters)) != len(letters) or any(c not in lhs for c in letters):
        raise ValueError(f"output '{output}' of '{equation}' repeats or invents a letter")
    if "..." in output and "..." not in lhs:
        raise ValueError(f"output '{output}' of '{equation}' has '...' but no input does")
    return inputs, output
