"""`ge-opt`: xDSL's opt driver with the `ascend` dialects and `ge` passes registered.

```
ge-opt model.mlir -p 'ge-lower-graph-to-kernel,ge-lower-kernel-to-stream' --weights model.npz
```
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.universe import Universe
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from ge.context import make_context
from ge.errors import GeError
from ge.passes import PASSES
from ge.passes.pipelines import PIPELINES, level_pass
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

    def apply_passes(self, prog: ModuleOp) -> None:
        _check_resources(prog, getattr(self.ctx, "weights", None), self.args.weights)
        super().apply_passes(prog)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--weights",
            type=str,
            default=None,
            help="an .npz file whose arrays back the module's dense_resource<key> constants",
        )
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
            tool.ctx.weights = WeightStore.load(tool.args.weights)
        _check_input(tool.args.input_file)
        tool.run()
    except (GeError, ParseError, DiagnosticException) as error:
        print(f"ge-opt: error: {error}", file=sys.stderr)
        sys.exit(1)
    except NotImplementedError as error:  # xDSL parses, but cannot store, e.g. array<i648: ...>
        print(f"ge-opt: error: the input uses what xDSL cannot represent: {error}", file=sys.stderr)
        sys.exit(1)


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
