"""Compile options and the one set of rules that checks them: `GraphCompiler.compile` applies the
rules to what a caller passes, `ge.artifact` to what a `.ge` manifest records, so a model that
compiles is a model that loads, and a manifest cannot claim what no compile gives."""

from __future__ import annotations

from collections.abc import Mapping

from .arguments import integer, shown
from .errors import CompileError
from .limits import check_limit

OPTIMIZATION_LEVELS = (0, 1, 2, 3)

COMPILE_OPTIONS = ("sink", "max_streams", "max_tensor_bytes")
"""Keyword options of `GraphCompiler.compile`: `sink` (default: on at O3) sinks the task list to the
device, so no host launch overhead is paid per kernel; `max_streams` (an integer of at least 1;
default 4 at O3, 1 below) bounds the streams independent kernels are spread over (above 1, the
lower levels spread theirs too); `max_tensor_bytes` (default 4 GiB) refuses a graph with a larger
tensor before anything is allocated."""

PRECISION_MODES = (
    "must_keep_origin_dtype",
    "force_fp16",
    "force_fp32",
    "allow_fp32_to_fp16",
    "allow_mix_precision",
    "allow_mix_precision_bf16",
)


def check_optimization_level(level: object) -> int:
    level = integer(level, "optimization_level (0 to 3)", error=CompileError)
    if level not in OPTIMIZATION_LEVELS:
        raise CompileError(f"optimization_level must be 0, 1, 2 or 3, got {level}")
    return level


def check_options(options: Mapping[str, object]) -> dict[str, object]:
    """`precision_mode` and the COMPILE_OPTIONS given, checked; the others are refused."""
    unknown = sorted(set(options) - {"precision_mode", *COMPILE_OPTIONS})
    if unknown:
        known = ", ".join(("precision_mode", *COMPILE_OPTIONS))
        raise CompileError(f"unknown compile options: {', '.join(map(str, unknown))} (known: {known})")
    checked = dict(options)
    mode = options.get("precision_mode", PRECISION_MODES[0])
    if not isinstance(mode, str) or mode not in PRECISION_MODES:
        raise CompileError(f"unknown precision_mode {shown(mode)} (known: {', '.join(PRECISION_MODES)})")
    if "sink" in options and not isinstance(options["sink"], bool):
        raise CompileError(f"compile option sink must be True or False, got {shown(options['sink'])}")
    if "max_streams" in options:
        where = "compile option max_streams"
        checked["max_streams"] = integer(options["max_streams"], where, 1, CompileError)
    if "max_tensor_bytes" in options:
        checked["max_tensor_bytes"] = check_limit(options["max_tensor_bytes"], CompileError)
    return checked
