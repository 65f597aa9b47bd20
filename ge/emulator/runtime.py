"""Emulator v0: executes an `ascend.stream` model over a real byte arena and the weight blob.

Every buffer is a view at its planned offset in one `uint8` arena, so a wrong offset shows up as
a wrong answer; views and concat slices are numpy views of their buffer. The arena, the views and
each launch's prepared kernel are built once, when the emulator is (`ge.emulator.plan`). Each launch reads its
input buffers in their device formats, computes its kernel (`ge.emulator.kernels`: cube work on
fractal tiles, the rest with the shared op semantics), and writes its output buffers. Launches
run in task order, which respects every event (a wait follows its record). Before the first run
the race detector (`ge.emulator.timeline.find_races`) checks the bytes each launch really touches
against the streams' happens-before order, so a missing event or a memory plan that reuses bytes
too early is an error, not a silently right answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ge.dialects.stream import model_of
from ge.errors import GeError

from .plan import RunPlan, accesses, bind
from .timeline import find_races

__all__ = ["Emulator", "accesses", "bind"]


class Emulator:
    """Runs one compiled model; `run` may be called many times, one call at a time. Building it
    builds the model's run plan (`ge.emulator.plan.RunPlan`: the arena, every view, each launch
    prepared). `check_races` (on by default: it costs milliseconds, once per emulator) runs the
    race detector before the first run. `arena` shares one arena among models that never run at
    once, such as the gears of one model."""

    def __init__(
        self,
        module: ModuleOp,
        weight_blob: bytes,
        check_races: bool = True,
        arena: np.ndarray | None = None,
    ):
        self.model = model_of(module)
        self.kernels = self.model.kernels()
        size = self.model.weight_size.value.data
        if len(weight_blob) != size:
            raise GeError(f"the weight blob has {len(weight_blob)} bytes, the model expects {size}")
        self.blob = np.frombuffer(weight_blob, np.uint8)
        self.plan = RunPlan(self.model, self.blob, self.kernels, arena)
        self.launches = 0
        """Launches run so far."""
        self.check_races = check_races
        self._race_free = False

    def run(self, inputs: Sequence[np.ndarray], launch_times: list[float] | None = None) -> list[np.ndarray]:
        """Runs the model on `inputs` (in the model's input order) and returns its outputs. Given a
        list, `launch_times` receives the wall time in seconds of each launch, in task order (the
        profiler's measured column); without one, nothing is timed. Inputs are read in place;
        outputs are fresh arrays the caller owns."""
        if self.check_races and not self._race_free:
            find_races(self.model, self.plan.accesses())
            self._race_free = True
        outputs = self.plan.run(inputs, launch_times)
        self.launches += self.plan.launch_count
        return outputs
