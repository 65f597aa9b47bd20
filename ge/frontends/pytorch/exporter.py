"""From a PyTorch model to a core ATen program: `torch.export.export`, then the decompositions of
torch's default table but for the ops `ge` keeps whole (KEPT_WHOLE), which map to one
`ascend.graph` op each and which the compiler fuses and tiles better than their pieces.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ge.errors import GeError, InvalidModelError

KEPT_WHOLE: tuple[str, ...] = (
    "aten.convolution.default",
    "aten.linear.default",
    "aten.addmm.default",
    "aten.mm.default",
    "aten.bmm.default",
    "aten.matmul.default",
    "aten.native_group_norm.default",
    "aten.native_layer_norm.default",
    "aten.layer_norm.default",
    "aten._softmax.default",
    "aten.softmax.int",
    "aten._log_softmax.default",
    "aten.log_softmax.int",
    "aten.scaled_dot_product_attention.default",
    "aten.max_pool2d.default",
    "aten.max_pool2d_with_indices.default",
    "aten.avg_pool2d.default",
    "aten.adaptive_avg_pool2d.default",
    "aten._adaptive_avg_pool2d.default",
    "aten._native_batch_norm_legit_no_training.default",
    "aten.gelu.default",
    "aten.silu.default",
    "aten.hardswish.default",
    "aten.hardsigmoid.default",
    "aten.mish.default",
    "aten.elu.default",
    "aten.softplus.default",
    "aten.leaky_relu.default",
    "aten.upsample_nearest2d.vec",
    "aten.upsample_nearest2d.default",
    "aten.upsample_bilinear2d.vec",
    "aten.upsample_bilinear2d.default",
    "aten.upsample_bicubic2d.vec",
    "aten.upsample_bicubic2d.default",
    "aten._upsample_nearest_exact2d.vec",
    "aten._upsample_nearest_exact2d.default",
    "aten.embedding.default",
    "aten.pad.default",
    "aten.all.default",
    "aten.all.dim",
    "aten.all.dims",
    "aten.one_hot.default",
    "aten.lstm.input",
)
"""ATen ops taken out of torch's default decomposition table: each has a converter to one
`ascend.graph` op (convolution, matmul/gemm, group_norm, layer_norm, softmax, attention, pools, batch_norm,
the activations, resize, gather, lstm, pad in any mode, all, one_hot) instead of the many small ops it would
decompose into (a circular pad: an empty tensor and slice scatters)."""


def export_program(
    model: Any, example_inputs: Sequence[Any] | Any | None = None, dynamic_shapes: Any = None
) -> Any:
    """`model` (an `nn.Module` or an `ExportedProgram`) as a program of core ATen ops and KEPT_WHOLE."""
    import torch

    if isinstance(model, torch.export.ExportedProgram):
        program = model
    elif isinstance(model, torch.nn.Module):
        if model.training:
            raise GeError(
                f"the {type(model).__name__} is in training mode (dropout and batch norm would "
                "update as they run); call model.eval() before parsing it"
            )
        if example_inputs is None:
            raise GeError(
                f"parsing a {type(model).__name__} needs example_inputs (a tuple of tensors its "
                "forward takes), from which torch.export traces it"
            )
        if isinstance(example_inputs, torch.Tensor):
            example_inputs = (example_inputs,)
        try:
            with quiet_torch():
                program = torch.export.export(model, tuple(example_inputs), dynamic_shapes=dynamic_shapes)
        except Exception as error:  # torch raises many kinds; the user needs its message
            raise InvalidModelError(
                f"torch.export could not trace the {type(model).__name__}: {_first_line(error)}"
            ) from None
    else:
        raise GeError(
            f"GraphParser.parse_pytorch takes a torch.nn.Module or a torch.export.ExportedProgram, "
            f"got {type(model).__name__}; load a .pt2 archive with "
            "ge.frontends.pytorch.load_model_file"
        )
    try:
        with quiet_torch():
            return program.run_decompositions(decomposition_table())
    except Exception as error:  # as torch.export above: a torch error of any kind, named
        raise InvalidModelError(
            f"torch could not decompose the exported program into core ATen ops "
            f"({type(error).__name__}): {_first_line(error)}"
        ) from None


def _first_line(error: Exception) -> str:
    """The first line of `error`'s message (torch's run on with tracebacks), or its type's name."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


@contextlib.contextmanager
def quiet_torch() -> Iterator[None]:
    """Silences torch's warnings and export logs for the call only (the FutureWarnings of its
    own pytree, a failed load's traceback): ge reports what went wrong in one line itself."""
    loggers = [logging.getLogger(name) for name in ("torch.export", "torch._export", "torch._dynamo")]
    levels = [logger.level for logger in loggers]
    try:
        for logger in loggers:
            logger.setLevel(logging.ERROR)
        with warnings.catch_warnings():
            # torch's warnings come from its modules and from copyreg or contextlib on its behalf.
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", UserWarning)
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def decomposition_table() -> dict[Any, Any]:
    """torch's default decomposition table without the ops of KEPT_WHOLE, with ge's own for the
    fused kernels of torch's inference fast path (`fastpath.DECOMPOSITIONS`)."""
    import torch

    from .fastpath import DECOMPOSITIONS

    table = torch.export.default_decompositions()
    for name in KEPT_WHOLE:
        op = aten_overload(name)
        if op is not None and op in table:
            del table[op]
    for name, decomposition in DECOMPOSITIONS.items():
        op = aten_overload(name)
        if op is not None:
            table[op] = decomposition
    return table


def aten_overload(name: str) -> Any:
    """The `torch.ops` overload `aten.<op>.<overload>` names, or None when this torch has none."""
    import torch

    _, op, overload = name.split(".")
    packet = getattr(torch.ops.aten, op, None)
    return getattr(packet, overload, None) if packet is not None else None


def load_program(path: str | Path) -> Any:
    """An ExportedProgram read from a `torch.export.save` archive (`.pt2`)."""
    import torch

    path = Path(path)
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "does not exist"
        raise InvalidModelError(f"PyTorch archive '{path}' {what}")
    if not zipfile.is_zipfile(path):
        raise InvalidModelError(
            f"'{path}' is not a torch.export archive (.pt2, written by torch.export.save)"
        )
    try:
        with quiet_torch():
            return torch.export.load(str(path))
    except Exception as error:  # a zip error, a pickle error, a version error...
        raise InvalidModelError(
            f"'{path}' is not a torch.export archive (.pt2, written by torch.export.save): "
            f"{_first_line(error)}"
        ) from None
