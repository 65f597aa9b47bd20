"""ONNX's backend test suite over `ge.backend`, at O0 and at O3, and the outcome of every case.

The suite runs through `onnx.backend.test.BackendTest`, as onnxruntime runs it. Each case ends in
one of five outcomes; `make test` prints them (tests/conftest.py) and docs/supported_ops.md shows
the same figures (`figures.py`):
- passed: the outputs match at the suite's tolerance;
- passed with an override: they match only at the tolerance `overrides.toml` gives the case,
  with the reason (onnxruntime keeps its overrides the same way);
- spec-undefined: some expected elements are a conversion ONNX leaves undefined (an out-of-range
  float cast to an integer), computed by whichever ml_dtypes is installed; `ge` follows its own
  documented rule there, and every other element must match;
- refused: `ge` raises the `UnsupportedOperatorError` of the category `expected_failures.txt` lists;
- wrong: anything else, which fails the run, except wrong values in a case `rounding_ties.toml`
  lists, on a host whose BLAS rounds equal columns differently (reported as an expected failure).
"""

from __future__ import annotations

import functools
import sys
import tomllib
import unittest
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.backend.test
import onnx.backend.test.runner
from onnx import TensorProto

import ge.backend

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from oracle import run_onnxruntime, without_softmax  # noqa: E402
from sealed import reading_no_ir  # noqa: E402

EXPECTED_FAILURES = HERE / "expected_failures.txt"
OVERRIDES_FILE = HERE / "overrides.toml"
TIES_FILE = HERE / "rounding_ties.toml"

DEVICE_SUFFIX = "_cpu"
"""Every suite ships inside the onnx package (node cases are generated in memory from
onnx.backend.test.case.node; the "real" models are the light model-zoo CNNs stored with it);
`ge` runs each case once per level, as the CPU device of the suite."""

LEVELS = {"O0": 0, "O3": 3}
"""The optimization levels the suite runs at: no optimization, and the backend's default."""

SUITES = {
    "node": ("Node", "node"),
    "real": ("Real", "light models"),
    "simple": ("Simple", "simple"),
    "pytorch-converted": ("PyTorchConverted", "pytorch-converted"),
    "pytorch-operator": ("PyTorchOperator", "pytorch-operator"),
}
"""Each suite: onnx's loader kind -> its class name (`OnnxBackend<name>ModelTest`), and ours."""

OUTCOMES = ("passed", "passed with an override", "spec-undefined", "refused", "wrong")


@dataclass(frozen=True)
class Override:
    rtol: float | None
    atol: float | None
    reason: str


def overrides() -> dict[str, Override]:
    """Case name (without the device suffix) -> its tolerance and why, from `overrides.toml`."""
    table = {}
    for name, entry in tomllib.loads(OVERRIDES_FILE.read_text()).items():
        unknown = set(entry) - {"rtol", "atol", "reason"}
        if unknown or not entry.get("reason") or not {"rtol", "atol"} & set(entry):
            raise ValueError(f"{OVERRIDES_FILE.name}: [{name}] needs a reason and rtol or atol only")
        table[name] = Override(entry.get("rtol"), entry.get("atol"), entry["reason"])
    return table


def rounding_ties() -> dict[str, str]:
    """Case name (without the device suffix) -> why its expected outputs need exact ties kept,
    from `rounding_ties.toml`."""
    table = {}
    for name, entry in tomllib.loads(TIES_FILE.read_text()).items():
        if set(entry) != {"reason"} or len(str(entry["reason"]).split()) < 5:
            raise ValueError(f"{TIES_FILE.name}: [{name}] needs a reason and nothing else")
        table[name] = entry["reason"]
    return table


def expected_failures() -> dict[str, str]:
    """Test name -> category, from the checked-in list."""
    table = {}
    for number, line in enumerate(EXPECTED_FAILURES.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, category = line.split()
        if name in table:
            raise ValueError(f"{EXPECTED_FAILURES.name}:{number}: '{name}' is listed twice")
        table[name] = category
    return table


OVERRIDES = overrides()
TIES = rounding_ties()


# --------------------------------------------------------------------------------------------
# Elements ONNX leaves undefined
# --------------------------------------------------------------------------------------------

_FLOATS = {
    TensorProto.FLOAT,
    TensorProto.FLOAT16,
    TensorProto.BFLOAT16,
    TensorProto.DOUBLE,
    TensorProto.FLOAT8E4M3FN,
    TensorProto.FLOAT8E4M3FNUZ,
    TensorProto.FLOAT8E5M2,
    TensorProto.FLOAT8E5M2FNUZ,
    TensorProto.FLOAT4E2M1,
}
_INTEGER_RANGES = {
    getattr(TensorProto, f"{'U' if unsigned else ''}INT{bits}"): (
        (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    )
    for bits in (2, 4, 8, 16, 32, 64)
    for unsigned in (False, True)
}


def undefined_elements(model: onnx.ModelProto, inputs: Sequence[Any]) -> list[np.ndarray | None]:
    """Per graph output, a mask of the elements whose value ONNX leaves undefined (None: none):
    a Cast or CastLike of a float graph input into an integer type, where the input truncated
    toward zero is outside the type's range, or NaN."""
    graph = model.graph
    initializers = {i.name for i in graph.initializer}
    declared = [i for i in graph.input if i.name not in initializers]
    feeds = {i.name: a for i, a in zip(declared, inputs, strict=False)}
    elem_types = {i.name: i.type.tensor_type.elem_type for i in graph.input}
    masks: dict[str, np.ndarray] = {}
    for node in graph.node:
        if node.op_type == "Cast":
            target = next((a.i for a in node.attribute if a.name == "to"), None)
        elif node.op_type == "CastLike" and len(node.input) > 1:
            target = elem_types.get(node.input[1])
        else:
            continue
        source = feeds.get(node.input[0])
        if target not in _INTEGER_RANGES or elem_types.get(node.input[0]) not in _FLOATS:
            continue
        if not isinstance(source, np.ndarray):
            continue
        low, high = _INTEGER_RANGES[target]
        with np.errstate(invalid="ignore"):
            whole = np.trunc(source.astype(np.float64))
            mask = ~((whole >= low) & (whole <= high))
        if mask.any():
            masks[node.output[0]] = mask
    return [masks.get(output.name) for output in graph.output]


# --------------------------------------------------------------------------------------------
# The runner
# --------------------------------------------------------------------------------------------


@dataclass
class CaseRun:
    """What the case running in this process has shown so far (reset before each case)."""

    name: str = ""
    model: onnx.ModelProto | None = None
    inputs: list[Any] = field(default_factory=list)
    override_used: bool = False
    undefined: int = 0
    compared: int = 0
    mismatched: bool = False
    """An output compared and did not match (rather than an error raised while running)."""

    def reset(self, name: str) -> None:
        """Forgets the last case: `name` (without the device suffix) runs next."""
        vars(self).update(vars(CaseRun(name=name)))

    def outcome(self) -> str:
        if self.undefined:
            return "spec-undefined"
        return "passed with an override" if self.override_used else "passed"


RUN = CaseRun()


class _RecordingRep:
    """A prepared model that remembers what it ran, for the comparison that follows. It runs
    twice: the first run compiles and plans what the inputs need and makes the first-run checks,
    and its outputs are compared; the second must read no IR (`reading_no_ir`) and give the same
    outputs, bit for bit."""

    def __init__(self, rep: ge.backend.GeBackendRep, model: onnx.ModelProto):
        self.rep, self.model = rep, model

    def run(self, inputs: Any, **kwargs: Any) -> list[Any]:
        RUN.model, RUN.inputs = self.model, list(inputs) if isinstance(inputs, list | tuple) else [inputs]
        first = self.rep.run(inputs, **kwargs)
        with reading_no_ir(step.compiled.module for step in self.rep.steps.values()):
            second = self.rep.run(inputs, **kwargs)
        _assert_same(first, second)
        return first


def _assert_same(first: Any, second: Any) -> None:
    """Two runs' outputs (arrays, or sequences and optionals of them) are equal, bit for bit."""
    if isinstance(first, list | tuple) or isinstance(second, list | tuple):
        assert type(first) is type(second) and len(first) == len(second), (first, second)
        for a, b in zip(first, second, strict=True):
            _assert_same(a, b)
    elif first is None or second is None:
        assert first is second
    else:
        a, b = np.asarray(first), np.asarray(second)
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
        assert a.tobytes() == b.tobytes() or a.dtype == object and (a == b).all(), "the second run differs"


def level_backend(level: int) -> type[ge.backend.GeBackend]:
    class Backend(ge.backend.GeBackend):
        @classmethod
        def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> Any:
            kwargs.setdefault("optimization_level", level)
            rep = super().prepare(model, device, **kwargs)
            return _RecordingRep(rep, model if isinstance(model, onnx.ModelProto) else rep.model)

    return Backend


class _BackendTest(onnx.backend.test.BackendTest):
    @classmethod
    def assert_similar_outputs(cls, ref_outputs, outputs, rtol, atol, model_dir=None):  # type: ignore[override]
        if isinstance(ref_outputs, np.ndarray) and isinstance(outputs, np.ndarray):
            # onnx's runner recurses into a sequence with each element as the list to compare,
            # which fails on a 0-d element (it has no len()): compare it as a one-item list.
            super().assert_similar_outputs([ref_outputs], [outputs], rtol, atol, model_dir)
            return
        ref_outputs, outputs = list(ref_outputs), list(outputs)
        if RUN.model is not None and len(ref_outputs) == len(outputs):
            masks = undefined_elements(RUN.model, RUN.inputs)
            for i, mask in enumerate(masks[: len(outputs)]):
                if mask is None:
                    continue
                ref, out = np.asarray(ref_outputs[i]), np.asarray(outputs[i])
                np.testing.assert_array_equal(out.shape, ref.shape, err_msg=f"Output {i} has incorrect shape")
                defined = ~np.broadcast_to(mask, ref.shape)
                if not defined.any():
                    raise AssertionError(f"output {i}: every element is undefined, nothing is compared")
                ref_outputs[i], outputs[i] = ref[defined], out[defined]
                RUN.undefined += int(mask.sum())
        RUN.compared += 1
        override = OVERRIDES.get(RUN.name)
        try:
            cls._compare(ref_outputs, outputs, rtol, atol, model_dir)
        except AssertionError:
            RUN.mismatched = True
            if override is None:
                raise
            rtol = override.rtol if override.rtol is not None else rtol
            atol = override.atol if override.atol is not None else atol
            cls._compare(ref_outputs, outputs, rtol, atol, model_dir)
            RUN.mismatched, RUN.override_used = False, True

    @classmethod
    def _compare(cls, ref_outputs, outputs, rtol, atol, model_dir) -> None:
        super().assert_similar_outputs(ref_outputs, outputs, rtol, atol, model_dir)


def tie_broken_by_rounding(level: str) -> bool:
    """Whether the case that just ran (one `rounding_ties.toml` lists) differs from its expected
    outputs only through its tied logits: the model without its closing softmax, run by `ge` at
    `level` on the same inputs, gives logits within 1e-6 (a few fp32 ulps) of onnxruntime's."""
    assert RUN.model is not None
    model = without_softmax(RUN.model)
    initializers = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    theirs = run_onnxruntime(model, dict(zip(names, RUN.inputs, strict=True)))
    ours = ge.backend.GeBackend.prepare(model, optimization_level=LEVELS[level]).run(RUN.inputs)
    return all(np.allclose(o, t, rtol=1e-6, atol=0) for o, t in zip(ours, theirs, strict=True))


def backend_test_classes(module: str, level: str = "O3") -> dict[str, type[unittest.TestCase]]:
    """The suite's unittest classes at `level`, each named `OnnxBackend<Suite>ModelTest_<level>`
    and holding the CPU variant of every case."""
    backend_test = _BackendTest(level_backend(LEVELS[level]), module)
    classes = {}
    for name, case in backend_test.test_cases.items():
        for test in [n for n in vars(case) if n.startswith("test_") and not n.endswith(DEVICE_SUFFIX)]:
            delattr(case, test)
        case.__name__ = case.__qualname__ = f"{name}_{level}"
        classes[case.__name__] = case
    return classes


def suite_of(class_name: str) -> tuple[str, str]:
    """(our suite name, level) of a class that `backend_test_classes` made."""
    base, level = class_name.rsplit("_", 1)
    onnx_name = base.removeprefix("OnnxBackend").removesuffix("ModelTest")
    return next(ours for name, ours in SUITES.values() if name == onnx_name), level


# --------------------------------------------------------------------------------------------
# The outcome each case must have, known before it runs
# --------------------------------------------------------------------------------------------


@functools.cache
def load_cases(kind: str) -> list[Any]:
    """onnx's cases of one suite; both levels and the predictions share one load (5 s for nodes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the case generators overflow on purpose
        return _load_model_tests(kind=kind)


# The runner loads every suite each time a BackendTest is made, once per level, and the
# predictions load them again: the runner's reference is pointed at the cached loader.
_load_model_tests = onnx.backend.test.runner.load_model_tests
onnx.backend.test.runner.load_model_tests = load_cases


@functools.cache
def predicted_outcomes() -> dict[str, dict[str, str]]:
    """Suite -> case (with the device suffix) -> the outcome it must end in, from the lists and
    from the cases' own data."""
    refused = expected_failures()
    table: dict[str, dict[str, str]] = {}
    for kind, (_, suite) in SUITES.items():
        cases = table.setdefault(suite, {})
        for case in load_cases(kind):
            name = case.name + DEVICE_SUFFIX
            if name in refused:
                cases[name] = "refused"
            elif any(
                m is not None for model, inputs in _data_sets(case) for m in undefined_elements(model, inputs)
            ):
                cases[name] = "spec-undefined"
            elif case.name in OVERRIDES:
                cases[name] = "passed with an override"
            else:
                cases[name] = "passed"
    return table


def _data_sets(case: Any) -> list[tuple[onnx.ModelProto, list[Any]]]:
    """The model and each input set a case runs (none for the light models, whose inputs the
    runner makes up: floats in [0, 1))."""
    if case.data_sets is not None:
        return [(case.model, [_array(i) for i in inputs]) for inputs, _ in case.data_sets]
    if case.model_dir is None:
        return []
    model = onnx.load(Path(case.model_dir) / "model.onnx")
    sets = []
    for directory in sorted(Path(case.model_dir).glob("test_data_set*")):
        inputs = sorted(directory.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
        sets.append((model, [_read_tensor(p) for p in inputs]))
    return sets


def _read_tensor(path: Path) -> Any:
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(path.read_bytes())
        return onnx.numpy_helper.to_array(tensor)
    except Exception:  # noqa: BLE001 - a sequence or an optional value: never cast out of range here
        return None


def _array(value: Any) -> Any:
    return onnx.numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else value


def counts(outcomes: dict[str, str]) -> dict[str, int]:
    """How many cases end in each outcome."""
    tally = dict.fromkeys(OUTCOMES, 0)
    for outcome in outcomes.values():
        tally[outcome] += 1
    return tally
