"""Replay a take in a simulator: from its recorded states (exact review) or from its actions
(open loop from the initial state). Step, seek and play at any speed; the UI drives it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recordings.errors import RecordingsError, TakeError
from teleop.core.errors import choices
from recordings.take_events import apply_events, colour_rows_until
from recordings.takefile import Take
from teleop.robot import build_robot_spec, load_params
from teleop.sim.scene import Scene, compile_xml, model_fingerprint
from teleop.sim import Sim

MODES = ("states", "actions")


def scene_from_take(take: Take) -> Scene:
    """The exact model the take was recorded with, compiled from its ``model_file``."""
    return scene_for(take.meta.model_xml, take.meta.model_fingerprint, take.path)


def scene_for(model_xml: str, recorded_fingerprint: str, where) -> Scene:
    """Compile ``model_xml`` and check it is the model the take was recorded under."""
    model = compile_xml(model_xml)
    fingerprint = model_fingerprint(model)
    if fingerprint != recorded_fingerprint:
        raise TakeError(where, f"model_file compiles to model {fingerprint}, but the take was recorded "
                               f"under {recorded_fingerprint} (different MuJoCo build?)")
    params = load_params()
    _, layout = build_robot_spec(params)      # names only: joint/site names are the same for every task
    return Scene(model, model_xml, layout, params, fingerprint)


@dataclass(frozen=True)
class ReplayFrame:
    tick: int                 # index of the NEXT action to apply; 0 = initial state
    qpos: np.ndarray
    instruction: str
    progress: float
    latched: np.ndarray       # (K,) subtasks latched at this tick


class Replayer:
    """Position-based replay: ``seek(t)`` shows the state before action ``t``; ``step()`` advances."""

    def __init__(self, take: Take, mode: str = "states", sim: Sim | None = None, checkpoint_every: int = 25):
        if mode not in MODES:
            raise RecordingsError(f"replay mode {mode!r} is not one of {choices(MODES)}")
        self.take, self.mode = take, mode
        self.sim = sim or Sim(scene_from_take(take))
        self.checkpoint_every = checkpoint_every
        self._checkpoints: dict[int, np.ndarray] = {0: take.initial_state}
        self.tick = 0
        self._events = list(take.events)
        self._colour_events = [e for e in self._events if "geom_rgba" in e["effect"]]   # states mode: only colours
        self._base_rgba = self.sim.model.geom_rgba.copy()
        self.sim.set_state(take.initial_state)
        apply_events(self.sim.model, self.sim.data, self._events, 0)      # colours set at the reset

    @property
    def length(self) -> int:
        return self.take.length

    def frame(self) -> ReplayFrame:
        arrays, t = self.take.arrays, min(self.tick, self.length - 1)
        instruction = self.take.meta.instructions[int(arrays["instruction"][t])] if self.length else ""
        progress = float(arrays["progress"][t - 1]) if self.tick > 0 else 0.0
        latched = arrays["subtasks"][self.tick - 1] if self.tick > 0 else np.zeros_like(arrays["subtasks"][0])
        return ReplayFrame(self.tick, self.sim.data.qpos.copy(), instruction, progress, latched)

    def step(self) -> bool:
        """Advance one tick; False at the end."""
        if self.tick >= self.length:
            return False
        if self.mode == "states":
            nxt = self.tick + 1
            state = self.take.arrays["states"][nxt] if nxt < self.length else None
            if state is not None:
                self.sim.set_state(state)
                apply_events(self.sim.model, self.sim.data, self._colour_events, nxt)
            else:
                self._step_actions()
        else:
            self._step_actions()
        self.tick += 1
        if self.mode == "actions" and self.tick % self.checkpoint_every == 0:
            self._checkpoints.setdefault(self.tick, self.sim.get_state())
        return True

    def _step_actions(self) -> None:
        """Physics for the next action, then the scene events the take recorded for that tick
        (a plain model has no task code to fire them; the take says what they did)."""
        self.sim.step(self.take.arrays["actions"][self.tick])
        apply_events(self.sim.model, self.sim.data, self._events, self.tick + 1)

    def _show_colours(self, tick: int) -> None:
        """Colours are not in the serialised state: after jumping to ``tick``, paint the colours
        the recorded events had set by then."""
        rows = colour_rows_until(self._events, tick)
        model = self.sim.model
        model.geom_rgba[:] = self._base_rgba
        for geom, rgba in rows.items():
            model.geom_rgba[geom] = rgba

    def seek(self, tick: int) -> None:
        tick = int(np.clip(tick, 0, self.length))
        if self.mode == "states":
            if tick < self.length:
                self.sim.set_state(self.take.arrays["states"][tick])
                self._show_colours(tick)
                self.tick = tick
            else:
                self.seek(self.length - 1)
                self.step()
            return
        best = max(k for k in self._checkpoints if k <= tick)
        if not best <= self.tick <= tick:    # else continuing from here is cheaper than a checkpoint
            self.sim.set_state(self._checkpoints[best])
            self._show_colours(best)
            self.tick = best
        while self.tick < tick:
            self.step()

    def ticks_for(self, elapsed_s: float, speed: float) -> int:
        """Tick to show after ``elapsed_s`` wall seconds of playback at ``speed`` x real time."""
        return min(self.length, int(elapsed_s * speed * self.take.meta.control_hz))
