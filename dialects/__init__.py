"""The three `ascend` dialects (graph, kernel, stream) and the umbrella `ascend` dialect."""

from .ascend import Ascend
from .graph import Graph
from .kernel import Kernel
from .stream import Stream

ALL_DIALECTS = (Ascend, Graph, Kernel, Stream)

__all__ = ["ALL_DIALECTS", "Ascend", "Graph", "Kernel", "Stream"]
