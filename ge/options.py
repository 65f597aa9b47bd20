"""Compile options and the one set of rules that checks them: `GraphCompiler.compile` applies the
rules to what a caller passes, `ge.artifact` to what a `.ge` manifest records, so a model that
compiles is a model that loads, and a manifest cannot claim what no compile gives."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import TypedDict, cast

import numpy as np

from ge.passes.graph.mixed_precision import MODES
from ge.passes.pipelines import TECHNIQUES, check_techniques

from .arguments import integer, shown
from .errors import CompileError
from .limits import check_limit

OPTIMIZATION_LEVELS = (0, 1, 2, 3)

INSTRUMENTATION_OPTIONS = (
    "verify_each",
    "print_ir_after_all",
    "print_ir_before",
    "print_ir_after",
    "pass_timing",
    "check_each",
    "dump_ir",
)
"""Options that watch a compilation without changing what it produces (so a `.ge` file does not
record them): `verify_each` (default True) verifies the IR after every pass and names the pass
that broke it; `print_ir_after_all`, `print_ir_before` and `print_ir_after` (a pass name or a
list of them) print the IR to standard error, as mlir-opt's `--mlir-print-ir-*`; `pass_timing`
times every pass (`CompiledModel.pass_timings`); `check_each` (default False; True, or a dict of
some inputs by name) runs the graph after every pass on seeded inputs and raises a `CheckError`
naming the first pass that changes its outputs beyond the precision mode's tolerance
(`ge.checking`); `dump_ir` (a folder) writes the IR after every pass there, one numbered file per
pass (`03_ge-fuse-conv-bn.mlir`); without it, GE's environment variables `DUMP_GE_GRAPH` (any
non-empty value) and `DUMP_GRAPH_PATH` (the folder, default `./ge_dump`) do the same."""

COMPILE_OPTIONS = ("sink", "max_streams", "max_tensor_bytes", "techniques", *INSTRUMENTATION_OPTIONS)
"""Keyword options of `GraphCompiler.compile`: `sink` (default: on at O3) sinks the task list to the
device, so no host launch overhead is paid per kernel; `max_streams` (an integer of at least 1;
default 4 at O3, 1 below) bounds the streams independent kernels are spread over (above 1, the
lower levels spread theirs too); `max_tensor_bytes` (default 4 GiB) refuses a graph with a larger
tensor before anything is allocated; `techniques` (names of `ge.passes.pipelines.TECHNIQUES`, each
with its prerequisites) compiles with that set of techniques instead of the optimization level's,
the defaults of `sink` and `max_streams` included; and the INSTRUMENTATION_OPTIONS."""

GEAR_LISTS = ("dynamic_batch_size", "dynamic_image_size", "dynamic_dims")
"""atc's three kinds of gears, each a list of values for the -1 dimensions of `input_shape`
(`ge.gears`); a model takes at most one kind."""

GEAR_OPTIONS = ("input_shape", *GEAR_LISTS, "input_format")
"""Keyword options of `GraphCompiler.compile` that make one compiled model with a plan per gear,
as atc's flags of the same names: `input_shape` (a dict of shapes by input name, -1 for a
dimension the gears fill; it replaces the graph's shapes of the inputs it names),
`dynamic_batch_size` (batch sizes, for one -1 per input at axis 0), `dynamic_image_size` ((H, W)
pairs, for the -1 H and W of 4-D inputs), `dynamic_dims` (lists of values, one per -1 of all
inputs in input order; needs `input_format="ND"`), and `input_format` ("NCHW", the default,
"NHWC" or "ND"). A gear list has 2 to 100 distinct gears."""

GEAR_COUNT = (2, 100)
"""How many gears a gear list may hold, as atc allows."""
MAX_BATCH = 2048
"""The largest batch size of `dynamic_batch_size`, as atc allows."""
INPUT_FORMATS = ("NCHW", "NHWC", "ND")

PRECISION_MODES = tuple(MODES)
"""The precision modes, as GE names them; the mixed-precision pass defines what each one does."""


def check_optimization_level(level: object) -> int:
    level = integer(level, "optimization_level (0 to 3)", error=CompileError)
    if level not in OPTIMIZATION_LEVELS:
        raise CompileError(f"optimization_level must be 0, 1, 2 or 3, got {level}")
    return level


class CheckedOptions(TypedDict, total=False):
    """Compile options as `check_options` returns them: each of the type its rule checked."""

    precision_mode: str
    sink: bool
    max_streams: int
    max_tensor_bytes: int
    techniques: tuple[str, ...]
    verify_each: bool
    print_ir_after_all: bool
    print_ir_before: tuple[str, ...]
    print_ir_after: tuple[str, ...]
    pass_timing: bool
    check_each: bool | dict[str, np.ndarray]
    dump_ir: str | None
    input_shape: dict[str, list[int]]
    dynamic_batch_size: list[int]
    dynamic_image_size: list[list[int]]
    dynamic_dims: list[list[int]]
    input_format: str


def check_options(options: Mapping[str, object]) -> CheckedOptions:
    """`precision_mode` and the COMPILE_OPTIONS given, checked; the others are refused."""
    unknown = sorted(set(options) - {"precision_mode", *COMPILE_OPTIONS, *GEAR_OPTIONS})
    if unknown:
        known = ", ".join(("precision_mode", *COMPILE_OPTIONS, *GEAR_OPTIONS))
        raise CompileError(f"unknown compile options: {', '.join(map(str, unknown))} (known: {known})")
    checked = dict(options)
    mode = options.get("precision_mode", PRECISION_MODES[0])
    if not isinstance(mode, str) or mode not in PRECISION_MODES:
        raise CompileError(f"unknown precision_mode {shown(mode)} (known: {', '.join(PRECISION_MODES)})")
    for flag in ("sink", "verify_each", "print_ir_after_all", "pass_timing"):
        if flag in options and not isinstance(options[flag], bool):
            raise CompileError(f"compile option {flag} must be True or False, got {shown(options[flag])}")
    for names in ("print_ir_before", "print_ir_after"):
        if names in options:
            checked[names] = _pass_names(options[names], f"compile option {names}")
    if "max_streams" in options:
        where = "compile option max_streams"
        checked["max_streams"] = integer(options["max_streams"], where, 1, CompileError)
    if "max_tensor_bytes" in options:
        checked["max_tensor_bytes"] = check_limit(options["max_tensor_bytes"], CompileError)
    if "check_each" in options:
        checked["check_each"] = _check_each(options["check_each"])
    if "techniques" in options:
        checked["techniques"] = check_techniques_option(options["techniques"])
        if "sink" in checked and checked["sink"] != ("sinking" in checked["techniques"]):
            raise CompileError(
                f"compile options sink={checked['sink']} and techniques "
                f"{list(checked['techniques'])} disagree: sinking is one of the techniques; "
                "give one of the two"
            )
    if "dump_ir" in options and options["dump_ir"] is not None:
        dump = options["dump_ir"]
        if not isinstance(dump, str | PathLike) or not str(dump):
            raise CompileError(f"compile option dump_ir takes a folder (a path), got {shown(dump)}")
        checked["dump_ir"] = str(dump)
    checked.update(check_gear_options(options))
    return cast(CheckedOptions, checked)  # every rule above checked its option's type


def check_techniques_option(value: object) -> tuple[str, ...]:
    """The `techniques` option as a tuple in `TECHNIQUES` order (so a manifest records it the same
    way whatever order it was given in)."""
    where = "compile option techniques"
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        raise CompileError(f"{where} takes a list of technique names, got {shown(value)}")
    if not all(isinstance(name, str) for name in value):
        raise CompileError(f"{where} takes technique names (strings), got {shown(value)}")
    try:
        chosen = check_techniques(value)
    except ValueError as error:
        raise CompileError(f"{where}: {error}") from None
    return tuple(name for name in TECHNIQUES if name in chosen)


def check_gear_options(options: Mapping[str, object]) -> dict[str, object]:
    """The GEAR_OPTIONS among `options`, checked as atc checks its flags, as JSON-ready lists (a
    manifest records them). Whether the gears fit the graph's inputs is `ge.gears`' check."""
    checked: dict[str, object] = {}
    if "input_shape" in options:
        checked["input_shape"] = _input_shape(options["input_shape"])
    if "input_format" in options:
        layout = options["input_format"]
        if layout not in INPUT_FORMATS:
            raise CompileError(
                f"compile option input_format must be one of {', '.join(INPUT_FORMATS)}, got {shown(layout)}"
            )
        checked["input_format"] = layout
    given = [name for name in GEAR_LISTS if name in options]
    if len(given) > 1:
        raise CompileError(
            f"compile options {' and '.join(given)} are mutually exclusive (as atc's): give one kind of gears"
        )
    for name in given:
        gears = _gear_list(name, options[name])
        if len(gears) != len(set(gears)):
            repeated = next(g for g in gears if gears.count(g) > 1)
            raise CompileError(
                f"compile option {name}={shown_gears(options[name])} repeats the gear "
                f"{shown_gears([repeated])}; every gear must be distinct"
            )
        if not GEAR_COUNT[0] <= len(gears) <= GEAR_COUNT[1]:
            raise CompileError(
                f"compile option {name}={shown_gears(options[name])} has {len(gears)} "
                f"gear{'' if len(gears) == 1 else 's'}; atc "
                f"takes {GEAR_COUNT[0]} to {GEAR_COUNT[1]} (a single shape is given by input_shape alone)"
            )
        if name == "dynamic_dims" and checked.get("input_format") != "ND":
            layout = checked.get("input_format")
            fix = "add input_format='ND'" if layout is None else f"input_format='ND', not {layout!r}"
            raise CompileError(
                f"compile option dynamic_dims={shown_gears(options[name])} fills dimensions of ND "
                f"inputs, as atc's does: {fix}"
            )
        checked[name] = [list(g) if isinstance(g, tuple) else g for g in gears]
    return checked


def _input_shape(value: object) -> dict[str, list[int]]:
    where = "compile option input_shape"
    if not isinstance(value, Mapping) or not all(isinstance(name, str) for name in value):
        raise CompileError(f"{where} takes a dict of shapes by input name, got {shown(value)}")
    shapes = {}
    for name, shape in value.items():
        if isinstance(shape, str | bytes) or not isinstance(shape, Sequence):
            raise CompileError(f"{where}['{name}'] must be a list of dimensions, got {shown(shape)}")
        shapes[name] = [
            integer(d, f"{where}['{name}'] (sizes, -1 for a gear dimension)", -1, CompileError) for d in shape
        ]
    return shapes


def _gear_list(name: str, value: object) -> list[int | tuple[int, ...]]:
    """A gear list's entries: integers for `dynamic_batch_size`, tuples for the others."""
    where = f"compile option {name}"
    wanted = {
        "dynamic_batch_size": f"a list of batch sizes (1 to {MAX_BATCH})",
        "dynamic_image_size": "a list of (height, width) pairs",
        "dynamic_dims": "a list of gears, each a list of sizes",
    }[name]
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise CompileError(f"{where} takes {wanted}, got {shown(value)}")
    gears: list[int | tuple[int, ...]] = []
    for entry in value:
        if name == "dynamic_batch_size":
            batch = integer(entry, f"{where} (batch sizes)", 1, CompileError)
            if batch > MAX_BATCH:
                raise CompileError(
                    f"{where}={shown_gears(value)} has batch size {batch}; atc takes 1 to {MAX_BATCH}"
                )
            gears.append(batch)
            continue
        if isinstance(entry, str | bytes) or not isinstance(entry, Sequence) or not entry:
            raise CompileError(f"{where} takes {wanted}, got {shown(value)}")
        sizes = tuple(integer(d, f"{where} (sizes)", 1, CompileError) for d in entry)
        if name == "dynamic_image_size" and len(sizes) != 2:
            raise CompileError(
                f"{where}={shown_gears(value)} has a gear of {len(sizes)} values; each is (height, width)"
            )
        gears.append(sizes)
    return gears


def shown_gears(value: object) -> str:
    """A gear list as atc spells it: `1,4,8` or `224,224;448,448`."""
    if isinstance(value, list | tuple) and all(isinstance(v, list | tuple) for v in value):
        return '"' + ";".join(",".join(map(str, v)) for v in value) + '"'
    if isinstance(value, list | tuple):
        return '"' + ",".join(map(str, value)) + '"'
    return shown(value)


def _check_each(value: object) -> bool | dict[str, np.ndarray]:
    """`check_each`: True, False, or some inputs by name (as arrays; the others are seeded)."""
    if isinstance(value, bool):
        return value
    if not isinstance(value, Mapping) or not all(isinstance(name, str) for name in value):
        raise CompileError(
            "compile option check_each takes True, False or a dict of input arrays by name, "
            f"got {shown(value)}"
        )
    arrays = {}
    for name, array in value.items():
        if not isinstance(array, np.ndarray | np.generic):
            raise CompileError(f"check_each input '{name}' must be a numpy array, got {shown(array)}")
        arrays[name] = np.asarray(array)
    return arrays


def _pass_names(value: object, where: str) -> tuple[str, ...]:
    """A pass name or a list of them, as a tuple."""
    names = (value,) if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) and n for n in names):
        raise CompileError(f"{where} takes a pass name or a list of them (non-empty), got {shown(value)}")
    return tuple(names)
