"""The one log line every cache of compiled programs writes when new input sizes compile again.

The executor (a graph with symbolic dimensions), `ge.backend` (a new input signature) and the
`torch.compile` backend (a new shape Dynamo left symbolic) each count their recompiles and log
them the same way, on the `ge` logger at INFO, so no compile for new sizes happens silently.
"""

from __future__ import annotations

import logging

LOG = logging.getLogger("ge")


def log_recompile(what: str, signature: str, recompiles: int) -> None:
    """`recompiling graph 'main' for new input sizes batch=3 (recompile 1)`; the first compile is
    not a recompile and is not logged."""
    LOG.info("recompiling %s for new input sizes %s (recompile %d)", what, signature, recompiles)
