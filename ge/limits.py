"""Resource limits: the largest tensor `ge` will hold, checked on the IR before anything is
allocated, so an absurd shape is a clear error rather than a MemoryError or a machine swapping.

`max_tensor_bytes` (default 4 GiB) is a compile option and a `GraphParser` argument; every value
of the module with a static shape is measured against it. MLIR text is measured before it is
parsed as well (`check_splat_bytes`): a parser expands a splat `dense<v>` into all its elements.
"""

from __future__ import annotations

import math
import re

from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute

from ge.arguments import integer
from ge.dialects.common import describe
from ge.dtypes import numpy_dtype
from ge.errors import GeError

DEFAULT_MAX_TENSOR_BYTES = 4 << 30


def check_max_tensor_bytes(module: ModuleOp, limit: object, error: type[GeError]) -> None:
    """Raises `error` naming the first value (op or graph input) whose tensor exceeds `limit` bytes."""
    limit = check_limit(limit, error)
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                for index, arg in enumerate(block.args):
                    if (size := tensor_bytes(arg.type)) is not None and size > limit:
                        name = f"'{arg.name_hint}'" if arg.name_hint else f"#{index}"
                        check_bytes(size, str(arg.type), limit, error, f"input {name} of {describe(op)}")
        for result in op.results:
            if (size := tensor_bytes(result.type)) is not None and size > limit:
                check_bytes(size, str(result.type), limit, error, describe(op))


def check_limit(limit: object, error: type[GeError]) -> int:
    """`limit` when it is a valid max_tensor_bytes: a positive integer (a numpy one too)."""
    return integer(limit, "max_tensor_bytes (a number of bytes)", 1, error)


def tensor_bytes(t: Attribute) -> int | None:
    """Bytes of a tensor type with a static shape (None: not a tensor, or a dynamic shape)."""
    if not isinstance(t, TensorType) or not t.has_static_shape():
        return None
    return math.prod(t.get_shape()) * numpy_dtype(t.element_type).itemsize


def check_bytes(size: int, what: str, limit: int, error: type[GeError], where: str) -> None:
    """Raises `error` naming `where` if a tensor of `size` bytes (`what`: its type or shape)
    would exceed `limit`."""
    if size > limit:
        raise error(
            f"{where} would hold a tensor of {size:,} bytes ({what}), over max_tensor_bytes "
            f"= {limit:,}; raise the limit if the machine has the memory"
        )


_SPLAT = re.compile(
    r"dense<\s*(\[*\s*(?:\([^()<>]*\)|[^\s\[\]<>,()]+)\s*\]*)\s*>\s*:\s*"  # one value, maybe bracketed
    r"(tensor|vector|memref)<((?:\d+x)+)(complex<)?([a-z][a-z0-9]*)"
)
"""A splat: `dense<v>` (or `dense<[[v]]>`, which xDSL expands too) of a shaped type."""


def check_splat_bytes(text: str, limit: object, error: type[GeError]) -> None:
    """Raises `error` naming the line of the first splat constant in MLIR `text` (`dense<1.0> :
    tensor<...>`) whose tensor exceeds `limit` bytes. xDSL's parser builds the list of a splat's
    elements before any op exists to check, so `tensor<4611686018427387904xf32>` would be a
    MemoryError and a large one would swap."""
    limit = check_limit(limit, error)
    for match in _SPLAT.finditer(text):
        kind, dims, complex_, element = match.group(2, 3, 4, 5)
        bits = re.search(r"\d+", element)
        itemsize = max(int(bits.group()) // 8 if bits else 8, 1) * (2 if complex_ else 1)
        size = math.prod(int(d) for d in dims.split("x")[:-1]) * itemsize
        if size > limit:
            line = text.count("\n", 0, match.start()) + 1
            where = f"line {line}: the splat dense<{match.group(1)}>"
            shown = f"{kind}<{dims}{complex_ or ''}{element}{'>' if complex_ else ''}>"
            check_bytes(size, shown, limit, error, where)
