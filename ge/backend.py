"""`ge.backend`: the ONNX backend interface (`onnx.backend.base.Backend`), as onnxruntime.backend.

```python
import ge.backend
rep = ge.backend.prepare(onnx_model, "CPU")
outputs = rep.run([x])
```
`prepare` checks every operator and, when the input shapes are static and no input decides a
shape, compiles the model through the whole pipeline at once (O3 by default), so what `ge`
cannot compute is refused there. Otherwise programs are compiled at the first run, specialized on
the run's input shapes and on the values of inputs that decide shapes, and cached per signature.
A shape that depends on computed values is planned in segments, as GE's hybrid executor does:
the segment that computes the value runs first (itself a compiled, cached program) and hands on
its results; the next segment is planned with the value observed, starts where the first stopped
and reads those results as its inputs, so nothing is computed twice.

Each input signature compiled after the first is logged on the `ge` logger and counted in the
prepared model's `recompiles`, as `GraphExecutor` does.

Sequence inputs are lists of arrays and optional inputs may be None; sequence and optional outputs
come back the same way. A program is specialized on the length of each sequence and the shapes of
its elements, and has one graph input and output per element.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from .compiler import CompiledModel, GraphCompiler
from .dtypes import STRING
from .emulator import Emulator
from .errors import CompileError, GeError, InvalidModelError, RuntimeInputError
from .executor import bind_inputs
from .frontends.onnx import ValueNeeded, check_shapes, load_model, make_importer
from .frontends.onnx.importer import Importer, Resume, live_names, value_type
from .frontends.onnx.values import RunValue, Structure, assemble, dtypes_of, flatten, run_value, shapes_of
from .graph import Tensor
from .limits import DEFAULT_MAX_TENSOR_BYTES, check_max_tensor_bytes
from .recompiles import log_recompile

DEVICES = ("CPU", "NPU")
"""`ge` runs on its emulator of the AI Core, which the host CPU executes."""

OPTIONS = ("optimization_level", "target", "precision_mode", "max_streams", "sink", "max_tensor_bytes")
IGNORED_OPTIONS = ("rtol", "atol")
"""Keyword arguments the ONNX backend test runner passes to `prepare` for its own use."""

Key = tuple[Any, ...]


@dataclass
class _Step:
    """A compiled program: the final one, or a prefix that computes a value a later shape needs."""

    compiled: CompiledModel
    emulator: Emulator
    observes: str | None = None
    specialized: frozenset[str] = frozenset()
    structure: list[Structure] | None = None
    """Where each model output is among the program's outputs (None: a segment)."""
    resume: Resume | None = None
    """For a segment: where the next one starts, and what of this one's outputs (after the
    observed value) it reads."""

    def __post_init__(self) -> None:
        # Read from the IR once: a run looks at none of it (the emulator holds the run plan).
        self.inputs = self.compiled.inputs

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """The program's outputs on the inputs it reads, taken by name from `feeds`."""
        arrays = bind_inputs(self.inputs, {spec.name: feeds[spec.name] for spec in self.inputs})
        return self.emulator.run(arrays)


@dataclass
class GeBackendRep(BackendRep):
    """A prepared model: its compiled programs, cached per input signature."""

    model: onnx.ModelProto
    options: dict[str, Any]
    steps: dict[Key, _Step] = field(default_factory=dict)
    specialized: dict[Key, frozenset[str]] = field(default_factory=dict)
    recompiles: int = 0
    """How many input signatures were compiled beyond the first."""
    signatures: set[Key] = field(default_factory=set)

    def __post_init__(self) -> None:
        initializers = {i.name for i in self.model.graph.initializer}
        self.input_names = [i.name for i in self.model.graph.input if i.name not in initializers]
        make_importer(self.model)  # checks the opset and that every operator is supported
        declared = self._declared_inputs()
        if declared is not None:
            shapes, dtypes = declared
            try:
                self._plan(None, {}, shapes, dtypes)
            except ValueNeeded:
                pass  # an input decides a shape: compile at the first run

    def run(  # pyright: ignore[reportIncompatibleMethodOverride]  # a list, as onnxruntime's backend gives
        self, inputs: Any, **kwargs: Any
    ) -> list[RunValue]:
        """The model's outputs on `inputs` (a list in input order or a dict by name), compiling a
        program for a new input signature (counted in `recompiles`) or a new shape-deciding value."""
        values = self._feeds(inputs)  # strings given as Python objects come as fixed-width arrays
        feeds = {k: v for name, value in values.items() for k, v in flatten(name, value).items()}
        shapes = {name: shapes_of(value) for name, value in values.items()}
        dtypes = {name: dtypes_of(value) for name, value in values.items()}
        observed: dict[str, np.ndarray] = {}
        carried: dict[str, np.ndarray] = {}
        resume: Resume | None = None
        while True:
            signature = self._signature(shapes, dtypes)
            step = self.steps.get(self._key(signature, feeds, observed, resume))
            if step is None:
                step = self._plan(feeds, observed, shapes, dtypes, resume)
            outputs = step.run({**feeds, **carried})
            if step.observes is None:
                # Strings leave as Python strings, as ONNX keeps them.
                outputs = [o.astype(object) if o.dtype.kind == "U" else o for o in outputs]
                return list(outputs) if step.structure is None else assemble(step.structure, outputs)
            observed[step.observes] = outputs[0]
            if step.resume is not None:
                # The next segment starts where this one stopped and reads what it computed.
                carried = dict(zip(step.resume.inputs, outputs[1:], strict=True))
                constants = {**step.resume.constants, step.observes: outputs[0]}
                resume = Resume(step.resume.start, step.resume.inputs, constants)

    # ----------------------------------------------------------------------------------------

    def _signature(self, shapes: Mapping[str, Any], dtypes: Mapping[str, Any]) -> Key:
        return tuple((n, shapes[n], dtypes[n]) for n in self.input_names)

    def _key(
        self,
        signature: Key,
        feeds: Mapping[str, np.ndarray] | None,
        observed: Mapping[str, np.ndarray],
        resume: Resume | None = None,
    ) -> Key:
        names = sorted(self.specialized.get(signature, frozenset()))
        values = tuple((n, _fingerprint(feeds[n])) for n in names) if feeds is not None else ()
        seen = tuple(sorted((n, _fingerprint(v)) for n, v in observed.items()))
        if resume is None:
            return (signature, values, seen)
        segment = (resume.start, tuple(sorted((n, s, d) for n, (s, d) in resume.inputs.items())))
        return (signature, values, seen, segment)

    def _plan(self, feeds, observed, shapes, dtypes, resume: Resume | None = None) -> _Step:
        limit = self.options.get("max_tensor_bytes", DEFAULT_MAX_TENSOR_BYTES)
        importer = make_importer(self.model, feeds, observed, limit)
        following: Resume | None = None
        try:
            graph = importer.run(self.model.graph, shapes, resume)
            check_max_tensor_bytes(graph.module, limit, InvalidModelError)
            check_shapes(self.model, importer, shapes)
            observes = None
        except ValueNeeded as needed:
            if feeds is None:
                raise
            graph = needed.graph
            following = self._segment_end(importer, needed)
            outputs = [(needed.tensor, needed.name)]
            if following is not None:
                outputs += [(importer.tensor(n), n) for n in following.inputs]
            graph.set_outputs(outputs)
            observes = needed.name
        signature = self._signature(shapes, dtypes)
        if signature not in self.signatures:
            if self.signatures:
                self.recompiles += 1
                shown = ", ".join(
                    f"{name}={'absent' if shape is None else list(shape)}" for name, shape, _ in signature
                )  # an optional input may be absent
                log_recompile(f"model '{self.model.graph.name}'", shown, self.recompiles)
            self.signatures.add(signature)
        compiled = GraphCompiler().compile(graph, **self.options)
        step = _Step(
            compiled,
            Emulator(compiled.module, compiled.weight_blob),
            observes,
            frozenset(importer.specialized),
            importer.output_structure if observes is None else None,
            following,
        )
        if step.specialized:
            self.specialized[signature] = self.specialized.get(signature, frozenset()) | step.specialized
        if resume is None:
            self.steps[self._key(signature, feeds, importer.used_observations)] = step
        else:
            self.steps[self._key(signature, feeds, observed, resume)] = step
        return step

    def _segment_end(self, importer: Importer, needed: ValueNeeded) -> Resume | None:
        """How the next segment resumes after this one computes `needed`: from the node that asked,
        reading the values of earlier nodes that later ones need. None when a sequence or optional
        is among them (the next program then computes everything again)."""
        graph_inputs = {i.name for i in self.model.graph.input}
        inputs: dict[str, tuple[tuple[int, ...], str]] = {}
        constants: dict[str, np.ndarray] = {}
        for name in sorted(live_names(self.model.graph, needed.position)):
            value = importer.values.get(name)
            if value is None or name in graph_inputs or name == needed.name:
                continue
            if not isinstance(value, Tensor):
                return None
            known = importer.known_value(value)
            if known is not None:
                constants[name] = known
            else:
                inputs[name] = (tuple(value.shape), value.dtype)
        return Resume(needed.position, inputs, constants)

    def _declared_inputs(self) -> tuple[dict[str, tuple[int, ...]], dict[str, str]] | None:
        """Shapes and dtypes of the inputs as the model declares them, if all are static."""
        shapes, dtypes = {}, {}
        for value_info in self.model.graph.input:
            if value_info.name not in self.input_names:
                continue
            if not value_info.type.HasField("tensor_type"):
                return None  # a sequence or an optional: its structure is known at the first run
            shape, dtype = value_type(value_info)
            if any(d < 0 for d in shape) or not value_info.type.tensor_type.HasField("shape"):
                return None
            if dtype == STRING:
                return None  # the width of strings comes with the data
            shapes[value_info.name], dtypes[value_info.name] = tuple(shape), dtype
        return shapes, dtypes

    def _feeds(self, inputs: Any) -> dict[str, RunValue]:
        types = {i.name: i.type for i in self.model.graph.input}
        if isinstance(inputs, Mapping):
            unknown = sorted(set(inputs) - set(self.input_names), key=str)
            if unknown:
                raise RuntimeInputError(f"the model has no inputs {unknown}; it takes {self.input_names}")
            optional = {n for n in self.input_names if types[n].WhichOneof("value") == "optional_type"}
            missing = [n for n in self.input_names if n not in inputs and n not in optional]
            if missing:
                raise RuntimeInputError(f"inputs {missing} are missing; the model takes {self.input_names}")
            feeds = {k: run_value(types[k], inputs.get(k), k) for k in self.input_names}
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            if not isinstance(inputs, Sequence) or isinstance(inputs, str | bytes):
                raise RuntimeInputError(
                    f"inputs are an array, a list of them or a dict of them by name, got "
                    f"{type(inputs).__name__}; the model takes {self.input_names}"
                )
            arrays = list(inputs)
            if len(arrays) != len(self.input_names):
                raise RuntimeInputError(
                    f"the model takes {len(self.input_names)} inputs ({self.input_names}), "
                    f"{len(arrays)} given"
                )
            feeds = {n: run_value(types[n], a, n) for n, a in zip(self.input_names, arrays, strict=True)}
        for name, value in feeds.items():
            if isinstance(value, np.ndarray):
                _check_declared_shape(name, types[name], value.shape)
        return feeds


def _check_declared_shape(name: str, type_proto: onnx.TypeProto, shape: tuple[int, ...]) -> None:
    """Refuses a tensor whose shape contradicts the model's declaration (its rank, or a dimension
    given as a number), as onnxruntime does."""
    if type_proto.WhichOneof("value") != "tensor_type" or not type_proto.tensor_type.HasField("shape"):
        return
    dims = type_proto.tensor_type.shape.dim
    if len(dims) != len(shape):
        raise RuntimeInputError(
            f"input '{name}' has rank {len(shape)} (shape {list(shape)}), the model declares rank {len(dims)}"
        )
    for axis, (dim, given) in enumerate(zip(dims, shape, strict=True)):
        if dim.HasField("dim_value") and dim.dim_value != given:
            raise RuntimeInputError(
                f"input '{name}' axis {axis}: the model declares {dim.dim_value}, {given} given "
                f"(shape {list(shape)})"
            )


def _fingerprint(array: np.ndarray) -> tuple[str, tuple[int, ...], bytes]:
    array = np.ascontiguousarray(array)
    return (array.dtype.str, array.shape, array.tobytes())


class GeBackend(Backend):
    """The ONNX backend interface over `ge`'s compiler and emulator."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        """Whether ge runs on `device`; unsupported operators are reported by `prepare`."""
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> GeBackendRep:
        """The model checked (every operator supported) and, when its input shapes are static and
        no input decides a shape, compiled; `kwargs` are compile options."""
        if not cls.supports_device(device):
            raise GeError(f"device '{device}' is not supported (ge runs on: {', '.join(DEVICES)})")
        unknown = set(kwargs) - set(OPTIONS) - set(IGNORED_OPTIONS)
        if unknown:
            raise CompileError(f"unknown backend options: {', '.join(sorted(unknown))}")
        options = {k: v for k, v in kwargs.items() if k in OPTIONS}
        options.setdefault("optimization_level", 3)
        return GeBackendRep(load_model(model), options)

    @classmethod
    def run_model(  # pyright: ignore[reportIncompatibleMethodOverride]  # a list, as run gives
        cls, model: Any, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> list[RunValue]:
        """`prepare(model, device, **kwargs).run(inputs)`."""
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(  # pyright: ignore[reportIncompatibleMethodOverride]  # a list, as run gives
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[int, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> list[RunValue]:
        """Runs one node on `inputs` (in the order of the node's inputs), as a one-node model."""
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        arrays = [np.asarray(a) for a in inputs]
        names = [n for n in node.input if n]
        values = [
            onnx.helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in zip(names, arrays, strict=True)
        ]
        outputs = [onnx.helper.make_empty_tensor_value_info(n) for n in node.output if n]
        graph = onnx.helper.make_graph([node], "run_node", values, outputs)
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
        return cls.prepare(model, device, **kwargs).run(dict(zip(names, arrays, strict=True)))

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """Whether `device` (`CPU`, optionally with an index such as `CPU:0`) is one ge emulates on."""
        return device.upper().split(":")[0] in DEVICES


is_compatible = GeBackend.is_compatible
prepare = GeBackend.prepare
run_model = GeBackend.run_model
run_node = GeBackend.run_node
supports_device = GeBackend.supports_device
