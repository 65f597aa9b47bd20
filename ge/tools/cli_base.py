"""What every subcommand of the `ge` command shares: the click group, the `subcommand` decorator
(which adds `--log` and turns an error into one line and exit code 1), the `ge` logger, spinners
on long steps, and the readers of input arrays.

A subcommand is one function:
```
@subcommand("inspect")
@click.argument("model")
def inspect_command(model: str) -> None:
    ...
```
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
import traceback
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import numpy as np
from numpy.lib.npyio import NpzFile
from rich.console import Console

from ge.compiler import TensorSpec
from ge.errors import GeError, RuntimeInputError

LOG_LEVELS = ("debug", "info", "warning", "error")
SPINNER_AFTER_SECONDS = 1.0
logger = logging.getLogger("ge")
"""The logger of the `ge` command: steps at info ("parsed 53 ops"), details at debug."""

Command = TypeVar("Command", bound=Callable[..., Any])


@click.group(context_settings={"show_default": True, "help_option_names": ["-h", "--help"]})
def cli() -> None:
    """ge: compile models for Ascend-style NPUs as atc does; run, profile, inspect and bisect
    them; report what each optimization technique gives."""


def subcommand(name: str) -> Callable[[Command], click.Command]:
    """Registers the function as `ge <name>`, with `--log` and one-line errors (see the module doc)."""

    def register(function: Command) -> click.Command:
        @functools.wraps(function)
        def run(*args: Any, log: str, **kwargs: Any) -> Any:
            set_log_level(log)
            try:
                return function(*args, **kwargs)
            except (GeError, OSError) as error:
                fail(name, error, show_traceback=log == "debug")

        run = click.option(
            "--log",
            type=click.Choice(LOG_LEVELS, case_sensitive=False),
            default="warning",
            help="what the ge logger prints to standard error (debug also shows tracebacks)",
        )(run)
        return cli.command(name)(run)

    return register


def fail(command: str, error: BaseException, show_traceback: bool = False) -> NoReturn:
    """Prints `ge <command>: error: <message>` on one line (after the traceback, if asked) and exits 1."""
    if show_traceback:
        traceback.print_exception(error, file=sys.stderr)
    click.echo(f"ge {command}: error: {one_line(error)}", err=True)
    sys.exit(1)


def one_line(error: BaseException) -> str:
    """The error's message on one line; an OSError says what it could not open."""
    if isinstance(error, OSError) and not isinstance(error, GeError):
        where = f"cannot open '{error.filename}': " if error.filename else ""
        return f"{where}{error.strerror or error}"
    return " ".join(str(error).split())


def set_log_level(level: str) -> None:
    """Sends the `ge` logger's records at `level` and above to standard error."""
    if not any(isinstance(h, _EchoHandler) for h in logger.handlers):
        handler = _EchoHandler()
        handler.setFormatter(logging.Formatter("ge: %(levelname)s: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(level.upper())


@contextmanager
def step(text: str, after_seconds: float = SPINNER_AFTER_SECONDS) -> Iterator[None]:
    """A spinner saying `text` while the block runs, when standard error is a terminal and the
    block has run for `after_seconds` (a quick step shows nothing)."""
    console = Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    status = console.status(text)
    timer = threading.Timer(after_seconds, status.start)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        status.stop()


input_files = click.option(
    "--input",
    "inputs",
    multiple=True,
    metavar="FILE.npy|FILE.npz|NAME=FILE.npy",
    help="input arrays (repeatable): an .npz binds its arrays by name, a .npy the next input in order",
)
"""The `--input` option of the subcommands that run a model; `read_inputs` reads what it gives."""


def read_inputs(specs: tuple[str, ...], names: list[str]) -> dict[str, np.ndarray]:
    """Input arrays by name from `--input` values: `name=file.npy`, a `.npz` file (its arrays by
    name), or a `.npy` file, which takes the first of `names` not given otherwise."""
    named: dict[str, np.ndarray] = {}
    unnamed: list[tuple[str, np.ndarray]] = []
    for spec in specs:
        name, separator, path = spec.partition("=")
        if separator and name and not Path(spec).exists():
            if path.endswith(".npz"):
                raise GeError(
                    f"--input {spec}: NAME= takes one array, a .npy file; an .npz file binds its "
                    f"arrays by their names: --input {path}"
                )
            given = {name: _load_array(path, name)}
        elif spec.endswith(".npz"):
            given = _load_archive(spec)
        else:
            unnamed.append((spec, _load_array(spec)))
            continue
        if twice := sorted(set(given) & set(named)):
            raise RuntimeInputError(f"--input gives '{twice[0]}' twice (the last is {spec})")
        named.update(given)
    free = [n for n in names if n not in named]
    if len(unnamed) > len(free):
        raise RuntimeInputError(
            f"{len(unnamed)} unnamed input file(s) but only {len(free)} input(s) left to bind "
            f"(the model takes {', '.join(names)}); name them as NAME=FILE.npy"
        )
    named.update({name: array for name, (_, array) in zip(free, unnamed, strict=False)})
    return named


class _EchoHandler(logging.Handler):
    """Writes to the standard error of the moment (click's, under a test runner)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(self.format(record), err=True)


def check_writable(path: str | None) -> None:
    """Refuses, before any work, an output file whose folder does not exist or which is a folder."""
    if path is None:
        return
    folder = Path(path).resolve().parent
    if not folder.is_dir():
        raise GeError(f"cannot write '{path}': the folder '{folder}' does not exist")
    if Path(path).is_dir():
        raise GeError(f"cannot write '{path}': it is a folder")


def require_inputs(arrays: dict[str, np.ndarray], specs: Sequence[TensorSpec]) -> None:
    """Refuses a run that leaves model inputs without a value, saying what the model takes."""
    missing = [spec.name for spec in specs if spec.name not in arrays]
    if missing:
        takes = ", ".join(f"{s.name} {s.dtype}{list(s.shape)}" for s in specs)
        raise RuntimeInputError(
            f"no value for {', '.join(missing)}: the model takes {takes}; give them with --input "
            "FILE.npy (in order), --input NAME=FILE.npy or --input FILE.npz (by name)"
        )


def _check_file(path: str, which: str) -> None:
    if Path(path).is_dir():
        raise GeError(f"input file '{path}'{which} is a folder")
    if not Path(path).is_file():
        raise GeError(f"input file '{path}'{which} does not exist")


def _load_array(path: str, name: str | None = None) -> np.ndarray:
    which = f" for '{name}'" if name else ""
    _check_file(path, which)
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        array = None
    if not isinstance(array, np.ndarray):
        raise GeError(
            f"cannot read input{which} from '{path}': it is not a .npy file (numpy.save writes one)"
        )
    return array


def _load_archive(path: str) -> dict[str, np.ndarray]:
    """The arrays of an .npz file by name; a file that is no zip archive, or a member that is no
    .npy array (an object array, other bytes), is refused naming it."""
    _check_file(path, "")
    not_npz = GeError(f"cannot read inputs from '{path}': it is not an .npz file (numpy.savez writes one)")
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        raise not_npz from None
    if not isinstance(archive, NpzFile):
        raise not_npz
    arrays: dict[str, np.ndarray] = {}
    with archive:
        for name in archive.files:
            try:
                array = archive[name]
            except ValueError as error:  # an object array, which only pickle would load
                raise GeError(f"cannot read input '{name}' from '{path}': {error}") from None
            except (OSError, EOFError, zipfile.BadZipFile) as error:
                raise GeError(f"cannot read input '{name}' from '{path}': {error}") from None
            if not isinstance(array, np.ndarray):
                raise GeError(f"cannot read input '{name}' from '{path}': its member is not a .npy array")
            arrays[name] = array
    return arrays
