"""`ge`: a graph compiler and executor for Ascend-style NPUs, on xDSL.

```python
import ge
graph = ge.GraphParser().parse_onnx("model.onnx")
compiled = ge.GraphCompiler().compile(graph, target="Ascend910B2", optimization_level=0)
executor = ge.GraphExecutor()
executor.load_graph(compiled)
outputs = executor.run(inputs)
```
"""

from .compiler import CompiledModel, GraphCompiler, TensorSpec
from .errors import (
    CheckError,
    CompileError,
    GeError,
    InvalidModelError,
    RuntimeInputError,
    UnsupportedOperatorError,
    VerificationError,
)
from .executor import GraphExecutor
from .graph import Graph, Node, Tensor
from .memory import MemoryOptimizer
from .optimizer import GraphOptimizer
from .parser import GraphParser
from .passes.registration import register_fusion_pattern, register_pass, unregister_pass
from .profiler import GraphProfiler, KernelProfile, ProfileReport

__all__ = [
    "CheckError",
    "CompileError",
    "CompiledModel",
    "GeError",
    "Graph",
    "GraphCompiler",
    "GraphExecutor",
    "GraphOptimizer",
    "GraphParser",
    "GraphProfiler",
    "InvalidModelError",
    "KernelProfile",
    "MemoryOptimizer",
    "Node",
    "ProfileReport",
    "RuntimeInputError",
    "Tensor",
    "TensorSpec",
    "UnsupportedOperatorError",
    "VerificationError",
    "register_fusion_pattern",
    "register_pass",
    "unregister_pass",
]
