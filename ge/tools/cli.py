"""`ge`: the atc-style command, on click. Each subcommand is one function registered with
`@subcommand` (ge/tools/cli_base.py), which gives it `--log`, one-line errors and exit codes
(0 ok, 1 bad input, 2 usage):

```
ge compile --model m.onnx --framework 5 --output m --soc_version Ascend910B2   # -> m.ge
ge run m.ge --input x.npy --output y.npz
ge inspect m.ge
ge profile m.ge --input x.npy --trace trace.json --plot timeline.png
ge report m.onnx
ge bisect m.onnx --input x=x.npy
```
`compile` lives in cli_compile.py, `run` and `inspect` in cli_model.py, `profile` and `report` in
cli_profile.py.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import NoReturn

import click

from ge.options import PRECISION_MODES
from ge.parser import GraphParser
from ge.passes.registration import load_pass_plugin as load_plugin
from ge.soc import DEFAULT_SOC, known_socs

from . import cli_compile, cli_model, cli_profile  # noqa: F401  (they register their subcommands)
from .bisect import bisect
from .cli_base import cli, input_files, read_inputs, step, subcommand
from .cli_compile import flags


@subcommand("bisect")
@click.argument("model")
@click.option(
    "-O", "--optimization_level", "--optimization-level", "optimization_level",
    type=click.IntRange(0, 3), default=3, help="the pipeline bisected",
)  # fmt: skip
@flags("precision_mode", type=click.Choice(PRECISION_MODES), default=PRECISION_MODES[0], help="tolerances")
@flags("soc_version", type=click.Choice(known_socs()), default=DEFAULT_SOC, help="the SoC to compile for")
@input_files
@flags("fusion_switch_file", metavar="FILE", help="fusion passes to turn off, as compile's")
@flags("load_pass_plugin", multiple=True, metavar="MODULE", help="a module that registers passes")
def bisect_command(
    model: str,
    optimization_level: int,
    precision_mode: str,
    soc_version: str,
    inputs: tuple[str, ...],
    fusion_switch_file: str | None,
    load_pass_plugin: tuple[str, ...],
) -> None:
    """The first pass, and the rewrite within it, that changes an ONNX model's outputs on seeded
    inputs (floats uniform in [-1, 1], others zero) or those given with --input."""
    for plugin in dict.fromkeys(load_pass_plugin):
        load_plugin(plugin)
    graph = GraphParser().parse_onnx(model)
    with step("bisecting"):
        found = bisect(
            graph,
            optimization_level,
            precision_mode,
            read_inputs(inputs, graph.inputs),
            target=soc_version,
            fusion_switch_file=fusion_switch_file,
        )
    click.echo(found.report())


def main(args: Sequence[str] | None = None) -> NoReturn:
    """The `ge` command; `args` default to the process's. A usage error is one line, exit 2."""
    try:
        code = cli.main(args=args, prog_name="ge", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as error:
        click.echo(error.format_message(), err=True)  # `ge` alone: the help
        sys.exit(2)
    except click.UsageError as error:
        command = error.ctx.command_path if error.ctx is not None else "ge"
        message = error.format_message()
        click.echo(f"{command}: error: {message} ({command} --help lists the options)", err=True)
        sys.exit(2)
    except click.Abort:
        click.echo("ge: aborted", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def bisect_main(args: Sequence[str] | None = None) -> NoReturn:
    """`ge-bisect ARGS` is `ge bisect ARGS`."""
    main(["bisect", *(sys.argv[1:] if args is None else args)])


if __name__ == "__main__":
    main()
