"""`ge-opt`: xDSL's opt driver with the `ascend` dialects and `ge` passes registered.

```
ge-opt model.mlir -p 'ge-lower-graph-to-kernel,ge-lower-kernel-to-stream' --weights model.npz
```
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from xdsl.universe import Universe
from xdsl.utils.exceptions import DiagnosticException, ParseError
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
        except ValueError as error:  # a malformed or unknown pass pipeline
            raise GeError(str(error)) from None
        if tool.args.weights:
            tool.ctx.weights = WeightStore.load(tool.args.weights)
        tool.run()
    except (GeError, ParseError, DiagnosticException) as error:
        print(f"ge-opt: error: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
