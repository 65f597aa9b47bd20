"""lit configuration for the `ge` FileCheck tests; run `.venv/bin/lit -v lit_tests` from the root."""

# ruff: noqa: F821  (lit injects `config`)

import os
import sys

import lit.formats

config.name = "ge"
# lit's internal shell: lit 23 rejects `execute_external=True`, and `not` is one of its builtins.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Inputs"]

# `ge-opt` and `filecheck` are console scripts of the virtualenv whose Python runs lit.
bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bin_dir, config.environment.get("PATH", "")])
