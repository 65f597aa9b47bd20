"""The trait of every op an `ascend.stream.model` holds: it sits directly in the model.

xDSL's `HasParent` names the parent op's class. The model's verifier checks the ops it holds by
their classes, so `model.py` imports the modules defining them; their parent check names the
model op by its name instead, which keeps the imports one-way, with the same error.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.traits import OpTrait
from xdsl.utils.exceptions import VerifyException

MODEL_OP_NAME = "ascend.stream.model"


class InModel(OpTrait):
    """The op's parent is an `ascend.stream.model` (as `HasParent(ModelOp)`; a detached op passes)."""

    def verify(self, op: Operation) -> None:
        parent = op.parent_op()
        if parent is not None and parent.name != MODEL_OP_NAME:
            raise VerifyException(f"'{op.name}' expects parent op '{MODEL_OP_NAME}'")
