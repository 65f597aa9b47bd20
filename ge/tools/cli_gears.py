"""atc's gear flags of `ge compile` (`--dynamic_batch_size "1,4,8"`, `--dynamic_image_size`,
`--dynamic_dims`, with `--input_shape` and `--input_format`) as the compile options of `ge.gears`,
and the one translation of a compile error's option names into the flags a user typed.

An ONNX model with gears is imported again at each gear, from a copy whose static dimensions that
`--input_shape` marks -1 are made dynamic (`with_dynamic_dims`): a model exported at batch 1 takes
`--input_shape "x:-1,3,224,224" --dynamic_batch_size "1,4,8"` as atc's does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import onnx

from ge.errors import GeError
from ge.frontends.onnx import load_model
from ge.frontends.onnx.selection import graph_inputs, with_dynamic_dims
from ge.gears import Shapes, gear_shapes
from ge.options import COMPILE_OPTIONS, GEAR_LISTS, GEAR_OPTIONS, check_options

FLAGS = {name: f"--{name}" for name in ("precision_mode", *COMPILE_OPTIONS, *GEAR_OPTIONS)}
FLAGS |= {"input_shapes": "--input_shape", "outputs": "--out_nodes"}
"""The `ge compile` flag of each keyword a compile error may name (`GraphCompiler.compile`'s
options, `GraphParser.parse_onnx`'s `input_shapes` and `outputs`)."""


@dataclass(frozen=True)
class OnnxGears:
    """An ONNX model to import at each gear, and the shapes of its first gear."""

    model: onnx.ModelProto
    """The model, with the static dimensions `--input_shape` marks -1 made dynamic."""
    first: Shapes


def gear_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The compile options of atc's gear flags (`--dynamic_batch_size "1,4,8"`, and so on), with
    `--input_shape` and `--input_format` as they apply to them; none without a gear flag."""
    given = [name for name in GEAR_LISTS if settings.get(name) is not None]  # "" is a bad list
    if not given:
        return {}
    options: dict[str, Any] = {}
    if settings["input_shape"]:
        options["input_shape"] = input_shapes(settings["input_shape"])
    if settings.get("input_format"):
        options["input_format"] = settings["input_format"]
    for name in given:
        text = settings[name]
        try:
            if name == "dynamic_batch_size":
                options[name] = [int(v) for v in text.split(",")]
            else:
                options[name] = [[int(v) for v in gear.split(",")] for gear in entries(text)]
        except ValueError:
            shape = "B,B,..." if name == "dynamic_batch_size" else "D,D;D,D;..."
            raise GeError(f'--{name} "{text}" is not {shape} (whole numbers)') from None
    return options


def onnx_gears(path: str, options: dict[str, Any]) -> OnnxGears | None:
    """With gears, the ONNX model to import at each of them and its first gear's shapes; None
    without gears. The shapes typed are checked against the model first, so a message shows them
    as typed. `options`' `input_shape` is then set to every input's shape (-1 for a dynamic
    dimension) with `--input_shape` applied: the graph is imported at the first gear (an importer
    may not take a dynamic shape everywhere) and the compiler reads the gears' -1s from the option."""
    if not any(name in options for name in GEAR_LISTS):
        return None
    model = with_dynamic_dims(load_model(path), options.get("input_shape", {}))
    declared = {
        info.name: [d.dim_value if d.HasField("dim_value") else -1 for d in info.type.tensor_type.shape.dim]
        for info in graph_inputs(model)
    }
    options["input_shape"] = declared | options.get("input_shape", {})
    shapes = gear_shapes(options["input_shape"], check_options(options))
    assert shapes is not None  # a gear option is given
    return OnnxGears(model, shapes[0])


def shape_text(shapes: Mapping[str, Sequence[int]]) -> str:
    """Shapes as `--input_shape` spells them."""
    return ";".join(f"{name}:{','.join(map(str, shape))}" for name, shape in shapes.items())


def entries(text: str) -> list[str]:
    """The `;`-separated entries of a flag's value."""
    return [entry.strip() for entry in text.split(";") if entry.strip()]


def input_shapes(text: str) -> dict[str, list[int]]:
    """`--input_shape`'s shapes by input name; an input named twice is refused."""
    shapes: dict[str, list[int]] = {}
    for entry in entries(text):
        name, shape = input_shape_entry(entry)
        if name in shapes:
            raise GeError(
                f"--input_shape names '{name}' twice ({shape_text({name: shapes[name]})} and {entry})"
            )
        shapes[name] = shape
    return shapes


def input_shape_entry(entry: str) -> tuple[str, list[int]]:
    """`name:1,3,224,224` (the name may hold colons: the last one splits)."""
    name, separator, dims = entry.rpartition(":")
    try:
        if not separator or not name:
            raise ValueError
        return name, [int(d) for d in dims.split(",")] if dims.strip() else []
    except ValueError:
        raise GeError(
            f"--input_shape entry '{entry}' is not NAME:D,D,... (whole numbers, -1 for dynamic)"
        ) from None


def spelled_as_flags(message: str) -> str:
    """A compile error's message with each option it names spelled as the flag: `compile option
    dynamic_batch_size="2"` as `--dynamic_batch_size "2"`, `input_format='ND'` as `--input_format
    ND`, `input_shapes` as `--input_shape`. A name without an underscore (`sink`, `techniques`,
    `outputs`, plain words too) is translated only after `compile option(s)`."""

    def flag(match: re.Match[str]) -> str:
        name, value = match["name"], match["value"]
        if value is None:
            return FLAGS[name]
        if re.fullmatch(r"(['\"])[\w.-]+\1", value):
            value = value[1:-1]  # a quoted word needs no quotes on a command line
        return f"{FLAGS[name]} {value}"

    names = sorted(FLAGS, key=len, reverse=True)
    value = r"(?:=(?P<value>\"[^\"]*\"|'[^']*'|[\w.-]+))?"
    message = re.sub(rf"\bcompile options? (?P<name>{'|'.join(names)})\b{value}", flag, message)
    # elsewhere only the names no English word spells (with an underscore), not yet a flag
    underscored = "|".join(name for name in names if "_" in name)
    return re.sub(rf"(?<![-\w'])(?P<name>{underscored})\b{value}", flag, message)
