"""Types shared by the semantics modules."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Implementation = Callable[..., np.ndarray]
"""`f(op, *operands) -> array`, computed in the compute dtype (float32 for 16-bit floats)."""
