"""`ge-opt`: xDSL's opt driver with the `ascend` dialects and `ge` passes registered.

```
ge-opt model.mlir -p 'ge-lower-graph-to-kernel,ge-tile-kernels,ge-lower-kernel-to-stream' --weights model.npz
```
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import IO, NoReturn

from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation
from xdsl.irdl.constraints import VerificationContext
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from ge.context import make_context
from ge.errors import CompileError, GeError
from ge.limits import DEFAULT_MAX_TENSOR_BYTES, check_max_tensor_bytes, check_splat_bytes
from ge.passes import PASSES
from ge.passes.manager import PassManager, level_pass
from ge.passes.pipelines import PIPELINES
from ge.passes.registration import load_pass_plugin
from ge.passes.session import CompileSession
from ge.weights import WeightStore


class GeOptMain(xDSLOptMain):
    """The opt driver; its context is `make_context()`, so our dialects are loaded eagerly."""

    def register_all_dialects(self) -> None:
        self.ctx = make_context()
        loaded = set(self.ctx.registered_dialect_names)
        for name, factory in Universe.get_multiverse().all_dialects.items():
            if name not in loaded:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, (factory, _) in PASSES.items():
            self.register_pass(name, factory)
        for level in PIPELINES:
            self.register_pass(f"ge-O{level}", lambda level=level: level_pass(level))

    def setup_pipeline(self) -> None:
        """The pass manager over the passes of `-p`, an O-level expanded into its passes, with
        the instrumentation the flags ask for."""
        args = self.args
        for plugin in dict.fromkeys(args.load_pass_plugin):  # each once
            load_pass_plugin(plugin)
        for name, (factory, _) in PASSES.items():  # with what the plugins registered
            self.available_passes[name] = factory
        try:
            passes = PassPipeline.parse_spec(self.available_passes, args.passes).passes
        except ValueError as error:  # an option of the wrong type or name
            raise GeError(_bad_pass(args.passes, self.available_passes, error)) from None
        self.session = CompileSession()
        instruments = [_print_between_passes] if args.print_between_passes else []
        try:
            self.manager = PassManager(
                passes,
                verify_each=not args.disable_verify,
                print_ir_before=args.print_ir_before,
                print_ir_after=args.print_ir_after,
                print_ir_after_all=args.print_ir_after_all,
                timing=args.time_passes,
                instruments=instruments,
            )
        except CompileError as error:  # named as the flag, not as compile's option
            flags = {"print_ir_before": "--print-ir-before", "print_ir_after": "--print-ir-after"}
            message = str(error)
            for option, flag in flags.items():
                message = message.replace(f"{option} names", f"{flag} names")
            raise GeError(message) from None

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        """xDSL's parse, after the text's splat constants are measured against --max-tensor-bytes;
        a value its type cannot hold (`dense<1.0e40> : tensor<f32>`, an i32 out of range), which
        xDSL reports as a Python exception rather than a parse error, is a one-line error."""
        text = chunk.read()
        check_splat_bytes(text.decode(errors="replace"), self.args.max_tensor_bytes, GeError)
        try:
            return super().parse_chunk(io.BytesIO(text), file_extension, start_offset)
        except OverflowError as error:  # struct.pack's words
            raise GeError(
                f"the input does not parse: a float constant is out of its type's range ({error})"
            ) from None
        except (
            ValueError,
            MemoryError,
            RecursionError,
            AssertionError,
        ) as error:  # xDSL asserts on complex splats
            what = (
                _one_line(str(error)) or f"xDSL cannot build one of its attributes ({type(error).__name__})"
            )
            raise GeError(f"the input does not parse: {what}") from None

    def apply_passes(self, prog: ModuleOp) -> None:
        _check_resources(prog, self.session.weights, self.args.weights)
        try:
            if not self.args.disable_verify:
                prog.verify()  # before sizes are read off its types
            check_max_tensor_bytes(prog, self.args.max_tensor_bytes, GeError)
        except VerifyException as error:
            if self.args.verify_diagnostics:  # the driver prints it for the test to check
                raise
            raise GeError(_invalid_op(prog, error)) from None
        # A session per module (one per --split-input-file chunk), over the one weight store.
        self.manager.run(prog, CompileSession(self.session.weights), self.ctx)
        if self.args.time_passes:
            print(self.manager.timing_report(), file=sys.stderr)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--weights",
            type=str,
            default=None,
            help="an .npz file whose arrays back the module's dense_resource<key> constants",
        )
        for when in ("before", "after"):
            arg_parser.add_argument(
                f"--print-ir-{when}",
                action="append",
                default=[],
                metavar="PASS",
                help=f"print the IR to standard error {when} PASS (repeatable)",
            )
        arg_parser.add_argument(
            "--load-pass-plugin",
            action="append",
            default=[],
            metavar="MODULE",
            help="import a module (dotted name or .py file) that registers passes with ge.register_pass",
        )
        arg_parser.add_argument(
            "--print-ir-after-all",
            action="store_true",
            help="print the IR to standard error after every pass",
        )
        arg_parser.add_argument(
            "--max-tensor-bytes",
            type=int,
            default=DEFAULT_MAX_TENSOR_BYTES,
            help=f"refuse a module with a tensor larger than this (default {DEFAULT_MAX_TENSOR_BYTES})",
        )
        arg_parser.error = _usage_error
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        width = max(len(name) for name in PASSES)
        levels = [
            f"  {f'ge-O{level}'.ljust(width)}  optimization level {level}: {', '.join(names)}"
            for level, names in PIPELINES.items()
        ]
        arg_parser.epilog = (
            "ge passes:\n"
            + "\n".join(f"  {name.ljust(width)}  {description}" for name, (_, description) in PASSES.items())
            + "\n\nge pipelines:\n"
            + "\n".join(levels)
        )


def main(args: Sequence[str] | None = None) -> None:
    try:
        try:
            tool = GeOptMain(description="ge modular optimizer driver", args=args)
        except (ValueError, ArgSpecParseError) as error:  # a malformed or unknown pass pipeline
            raise GeError(" ".join(str(error).split())) from None
        if tool.args.weights:
            tool.session.weights = WeightStore.load(tool.args.weights)
        _check_input(tool.args.input_file)
        tool.run()
    except ParseError as error:
        print(f"ge-opt: error: {error.span.get_location()}: {_one_line(error.msg)}", file=sys.stderr)
        sys.exit(1)
    except GeError as error:
        print(f"ge-opt: error: {_one_line(str(error))}", file=sys.stderr)
        sys.exit(1)
    except DiagnosticException as error:
        print(f"ge-opt: error: {_message(error)}", file=sys.stderr)
        sys.exit(1)
    except OSError as error:  # e.g. -o into a directory that does not exist
        where = f"cannot open '{error.filename}': " if error.filename else ""
        print(f"ge-opt: error: {where}{error.strerror or error}", file=sys.stderr)
        sys.exit(1)
    except NotImplementedError as error:  # xDSL parses, but cannot store, e.g. array<i648: ...>
        print(f"ge-opt: error: the input uses what xDSL cannot represent: {error}", file=sys.stderr)
        sys.exit(1)


def _print_between_passes(
    previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
) -> None:
    """xDSL's `--print-between-passes`: the IR after every pass but the last, on standard output."""
    if previous is not None and following is not None:
        print(f"IR after {previous.name}:")
        Printer(stream=sys.stdout).print_op(module)
        print("\n\n\n")


def _usage_error(message: str) -> NoReturn:
    print(f"ge-opt: error: {message} (ge-opt --help lists the options)", file=sys.stderr)
    sys.exit(2)


def _bad_pass(
    pipeline: str, available: Mapping[str, Callable[[], type[ModulePass]]], error: Exception
) -> str:
    """`error` with the pass whose options it is about."""
    try:
        specs = parse_pipeline(pipeline)
        for spec in specs:
            if spec.name in available:
                try:
                    available[spec.name]().from_pass_spec(spec)
                except ValueError as own:
                    return f"pass '{spec.name}': {_one_line(str(own))}"
    except (ValueError, ArgSpecParseError):
        pass
    return _one_line(str(error))


def _one_line(message: str) -> str:
    """The message on one line, characters that would not print escaped."""
    text = " ".join(message.split())
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def _invalid_op(module: ModuleOp, error: VerifyException) -> str:
    """`error` with the op it is about: the first op, outermost first, whose own checks fail (and
    the property or attribute whose constraint it breaks). A failure no single op reproduces
    (a pass's own check) is returned as it is."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, ValueError) as own:
            message = _message(own).removeprefix(f"'{op.name}': ")
            return f"{_describe(op)}{_broken_field(op)}: {message}"
    return _message(error)


def _message(error: Exception) -> str:
    """The first line of a diagnostic: xDSL prints the module after the message."""
    return _one_line(str(error).split("\n", 1)[0])


def _describe(op: Operation) -> str:
    results = ", ".join(f"%{r.name_hint}" for r in op.results if r.name_hint)
    return f"'{op.name}'" + (f" defining {results}" if results else "")


def _broken_field(op: Operation) -> str:
    if not isinstance(op, IRDLOperation):
        return ""
    definition = type(op).get_irdl_definition()
    for kind, fields, given in (
        ("property", definition.properties, op.properties),
        ("attribute", definition.attributes, op.attributes),
    ):
        for name, field in fields.items():
            if name not in given:
                continue
            try:
                field.constr.verify(given[name], VerificationContext())
            except VerifyException:
                return f", {kind} '{name}' = {given[name]}"
    return ""


def _check_input(path: str | None) -> None:
    """The input file exists, is MLIR text and reads as UTF-8 (None: standard input)."""
    if path is None:
        return
    if not path.endswith(".mlir"):
        raise GeError(f"'{path}' is not an .mlir file: ge-opt reads MLIR text (name it *.mlir)")
    try:
        with open(path, encoding="utf-8") as text:
            text.read()
    except FileNotFoundError:
        raise GeError(f"input file '{path}' does not exist") from None
    except IsADirectoryError:
        raise GeError(f"input '{path}' is a directory, not a file") from None
    except UnicodeDecodeError as error:
        raise GeError(f"'{path}' is not UTF-8 text (byte {error.start}): not MLIR") from None


def _check_resources(module: ModuleOp, weights: WeightStore | None, source: str | None) -> None:
    """With --weights, every `dense_resource<key>` of the module names an array of that file.
    (Without, the module is transformed as text; a pass that needs the data says so.)"""
    if source is None or weights is None:
        return
    for op in module.walk():
        for attribute in (*op.properties.values(), *op.attributes.values()):
            if isinstance(attribute, DenseResourceAttr) and attribute.resource_handle.data not in weights:
                key = attribute.resource_handle.data
                raise GeError(f"'{op.name}' reads dense_resource<{key}>, which {source} does not hold")


if __name__ == "__main__":
    main()
