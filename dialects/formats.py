"""Device data formats: names and shape arithmetic shared by verifiers, the compiler and the emulator.

A device format stores a logical tensor as the cube unit reads it (channel blocks of C0, 16 x 16
fractal tiles); padding is zero. The element-level index formulas are in `device_shape`'s docstring.

At the kernel level a format is part of a value's type, as MLIR's sparse_tensor puts its layout in
the tensor's encoding: the type keeps the logical shape and `#ascend.format<...>` names how the
bytes are laid out, `tensor<1x3x8x8xf32, #ascend.format<NC1HWC0>>`. A type without an encoding is
the framework's contiguous layout (NCHW for 4-D, ND otherwise: the same row-major bytes), so the
encoding is only ever a device format: `FormatAttr` refuses ND and NCHW wherever it is built or
parsed, and `with_format`, `memref_of` and `format_of` map a framework format to the plain type.
`encoding_error` checks that a type's format fits its rank; `view_error` when a view is the same bytes.
The convolution group count a FRACTAL_Z layout depends on stays with the convolution that reads the
weights (`ge.dialects.kernel.weight_groups`), not in the type.

At the stream level the same attribute is a memref's layout, and the memref keeps the logical shape
too: `memref<1x3x8x8xf32, #ascend.format<NC1HWC0>>` holds the bytes of a `tensor<1x3x8x8xf32,
#ascend.format<NC1HWC0>>`, whose stored shape `storage_shape` derives. `FormatAttr` implements xDSL's
`MemRefLayoutAttr` interface for that; the element offset it maps an index to depends on the
memref's shape (C1 = ceil(C / C0), the fractal counts), which a layout attribute of MLIR's interface
is not given, so `get_affine_map` refuses and names `device_shape` instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import overload

from xdsl.dialects.builtin import MemRefLayoutAttr, MemRefType, NoneAttr, TensorType
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.utils.str_enum import StrEnum

from .enum_attr import BracketedEnum

FRACTAL = 16
"""Rows of an L0A fractal and columns of an L0B fractal, whatever the element type."""


class Format(StrEnum):
    """The data formats a tensor may have on the device."""

    ND = "ND"
    NCHW = "NCHW"
    NC1HWC0 = "NC1HWC0"
    FRACTAL_Z = "FRACTAL_Z"
    FRACTAL_NZ = "FRACTAL_NZ"


FORMATS = tuple(fmt.value for fmt in Format)
"""Every format a tensor may have on the device, as strings."""

FRAMEWORK_FORMATS = (Format.ND.value, Format.NCHW.value)
"""The framework's contiguous layouts: what a type without an encoding holds."""


@irdl_attr_definition
class FormatAttr(BracketedEnum[Format], EnumAttribute[Format], MemRefLayoutAttr):
    """A device format as a tensor type's encoding or a memref's layout: `#ascend.format<FRACTAL_Z>`.

    Never a framework format: a type without encoding is that layout, so one layout has one type."""

    name = "ascend.format"

    def verify(self) -> None:
        if self.data.value in FRAMEWORK_FORMATS:
            raise VerifyException(_framework_format_error(self.data))

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Format:
        start = parser.pos
        fmt = super().parse_parameter(parser)
        if fmt.value in FRAMEWORK_FORMATS:  # refused where it is written, with its location
            parser.raise_error(_framework_format_error(fmt), start, parser.pos)
        return fmt

    def get_affine_map(self) -> AffineMap:
        """Refused: the offsets depend on the memref's shape, which a layout is not given."""
        raise DiagnosticException(
            f"{self.data.value} maps an index to an offset that depends on the memref's shape: "
            "use ge.dialects.formats.storage_shape for the stored shape"
        )


def format_of(value_or_type: SSAValue | Attribute) -> str:
    """The format a value (or a tensor type) is stored in: its `#ascend.format` encoding, or the
    framework format of its shape when it has none (NCHW for 4-D, ND otherwise)."""
    t = value_or_type.type if isinstance(value_or_type, SSAValue) else value_or_type
    if isinstance(t, MemRefType):
        layout = t.layout
        return layout.data.value if isinstance(layout, FormatAttr) else framework_format(t.get_shape())
    if not isinstance(t, TensorType):
        return "ND"
    if isinstance(t.encoding, FormatAttr):
        return t.encoding.data.value
    return framework_format(t.get_shape())


def with_format(t: TensorType, fmt: str) -> TensorType:
    """`t` stored in `fmt`: the plain type for a framework format, else `fmt` as its encoding."""
    encoding: Attribute = NoneAttr() if fmt in FRAMEWORK_FORMATS else FormatAttr(Format(fmt))
    return TensorType(t.element_type, t.get_shape(), encoding)


def encoding_error(t: Attribute) -> str | None:
    """What is wrong with the format of a tensor type (its encoding) or a memref type (its layout):
    an attribute that is no `#ascend.format`, or a device format the shape's rank cannot be stored
    in; None if nothing (a plain type included)."""
    if isinstance(t, TensorType):
        what, layout = "encoding", t.encoding
    elif isinstance(t, MemRefType):
        what, layout = "layout", t.layout
    else:
        return None
    if isinstance(layout, NoneAttr):
        return None
    if not isinstance(layout, FormatAttr):
        return f"{t} has {what} {layout}, not an #ascend.format"
    try:
        device_shape(t.get_shape(), layout.data.value, c0=16)
    except ValueError as error:
        return f"{t}: {error}"
    return None


def view_error(source: MemRefType | TensorType, result: MemRefType | TensorType) -> str | None:
    """Why a value of type `result` cannot be the bytes of one of type `source` seen anew (a
    reshape moves no data); None if it can.

    A view keeps the element type and the element count, and its result is plain (ND or NCHW):
    the bytes of a device format are padded and tiled, so reading them with another shape is a
    wrong answer, except NC1HWC0 with H = W = 1 and C a multiple of C0, whose bytes are the
    plain (N, C) ones.
    """
    if source.element_type != result.element_type:
        return "a view keeps the element type"
    shape = source.get_shape()
    if -1 in shape or -1 in result.get_shape():
        return "a view needs static shapes"
    if math.prod(shape) != math.prod(result.get_shape()):
        return f"a view of {source} cannot be {result}: the element counts differ"
    src, dst = format_of(source), format_of(result)
    if dst not in FRAMEWORK_FORMATS:
        return f"a view's result has a plain type (ND or NCHW), not {dst}"
    if src in FRAMEWORK_FORMATS:
        return None
    c0 = c0_of(bitwidth_of(source.element_type))
    if src != Format.NC1HWC0 or len(shape) != 4 or shape[2:] != (1, 1) or shape[1] % c0:
        return f"{src} data of {source} is not the same bytes as {dst}"
    return None


def memref_of(t: TensorType, fmt: str | None = None) -> MemRefType:
    """The buffer type of a value of type `t` kept in `fmt` (by default, the format of `t`): the
    logical shape, with the device format as its layout."""
    fmt = format_of(t) if fmt is None else fmt
    layout: MemRefLayoutAttr | NoneAttr = NoneAttr() if fmt in FRAMEWORK_FORMATS else FormatAttr(Format(fmt))
    return MemRefType(t.element_type, t.get_shape(), layout)


def storage_shape(t: MemRefType | TensorType, groups: int = 1) -> tuple[int, ...]:
    """The shape of the bytes a value of type `t` takes in its format (`groups`: of a FRACTAL_Z
    weight's convolution). Raises ValueError for a shape the format cannot store."""
    return device_shape(t.get_shape(), format_of(t), c0_of(bitwidth_of(t.element_type)), groups)


@overload
def plain_type(t: TensorType) -> TensorType: ...
@overload
def plain_type(t: Attribute) -> Attribute: ...


def plain_type(t: Attribute) -> Attribute:
    """`t` without its format: the logical type a kernel body computes on."""
    if isinstance(t, TensorType) and isinstance(t.encoding, FormatAttr):
        return TensorType(t.element_type, t.get_shape())
    return t


def framework_format(shape: tuple[int, ...]) -> str:
    """The format a framework gives a tensor of `shape`: NCHW for 4-D, ND otherwise (the same bytes)."""
    return "NCHW" if len(shape) == 4 else "ND"


def c0_of(bitwidth: int) -> int:
    """The channel block C0 for an element type of `bitwidth` bits: 32 for 8-bit types and the
    narrower ones stored a byte each (float4, int4, int2), else 16.

    A fractal row is 32 bytes: 16 fp16/bf16 or 32 int8 elements; fp32 keeps C0 = 16, as GE does
    (and so does i1, as before).
    """
    return 32 if 1 < bitwidth <= 8 else 16


def bitwidth_of(element: Attribute) -> int:
    """Bits of one element of type `element`: a builtin integer or float type, or one of ours that
    states its width (strings). Raises ValueError for a type without a fixed width."""
    width = getattr(element, "bitwidth", None)
    if not isinstance(width, int):
        raise ValueError(f"{element} has no fixed bit width")
    return width


def device_shape(shape: tuple[int, ...], fmt: str, c0: int, groups: int = 1) -> tuple[int, ...]:
    """The shape of a logical tensor of `shape` once stored in `fmt`.

    - ND, NCHW: unchanged.
    - NC1HWC0: (N, C, H, W) -> (N, ceil(C/c0), H, W, c0); [n, c1, h, w, c0'] = X[n, c1*c0 + c0', h, w].
    - FRACTAL_Z: conv weights (Cout, Cin_per_group, kh, kw) in `groups` groups, Cg = Cout // groups,
      C1 = ceil(Cin_per_group / c0), N1 = ceil(Cg / 16) -> (groups * C1 * kh * kw, N1, 16, c0); row
      r = ((grp * C1 + c1) * kh + i) * kw + j holds at [r, n1, n0, k0]
      W[grp*Cg + n1*16 + n0, c1*c0 + k0, i, j].
    - FRACTAL_NZ: (..., M, N) -> (..., ceil(N/16), ceil(M/16), 16, 16); [..., n1, m1, m0, n0] =
      A[..., m1*16 + m0, n1*16 + n0].

    `groups` only matters for FRACTAL_Z. Raises ValueError for an unknown format or a shape of the wrong rank.
    """
    shape = tuple(int(d) for d in shape)
    if fmt not in FORMATS:
        raise ValueError(f"unknown device format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if c0 <= 0:
        raise ValueError(f"C0 must be positive, got {c0}")
    if groups <= 0:
        raise ValueError(f"groups must be positive, got {groups}")
    if fmt in ("ND", "NCHW"):
        return shape
    if fmt == "NC1HWC0":
        _check_rank(shape, fmt, "(N, C, H, W)", lambda r: r == 4)
        n, c, h, w = shape
        return (n, _ceil_div(c, c0), h, w, c0)
    if fmt == "FRACTAL_Z":
        _check_rank(shape, fmt, "conv weights (Cout, Cin_per_group, kh, kw)", lambda r: r == 4)
        cout, cin, kh, kw = shape
        if cout % groups:
            raise ValueError(f"FRACTAL_Z: {cout} output channels do not split into {groups} groups")
        return (groups * _ceil_div(cin, c0) * kh * kw, _ceil_div(cout // groups, FRACTAL), FRACTAL, c0)
    _check_rank(shape, fmt, "a matrix (..., M, N)", lambda r: r >= 2)
    *batch, m, n = shape
    return (*batch, _ceil_div(n, FRACTAL), _ceil_div(m, FRACTAL), FRACTAL, FRACTAL)


def _framework_format_error(fmt: Format) -> str:
    name = fmt.value
    return f"#ascend.format<{name}>: {name} is the layout of a type without encoding; write the plain type"


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _check_rank(shape: tuple[int, ...], fmt: str, expected: str, ok: Callable[[int], bool]) -> None:
    if not ok(len(shape)):
        raise ValueError(f"{fmt} stores {expected}; got a tensor of shape {shape} (rank {len(shape)})")
