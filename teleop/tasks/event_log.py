"""What each scene event did, tick by tick, as plain data a take can carry.

Scene events (:mod:`teleop.tasks.events`) change the simulation outside physics: a reveal teleports
caps, counters write ``userdata``, colour events repaint geoms. A replay that only steps the
recorded actions through MuJoCo (no task code) diverges where they fire, so every change is logged
here with its tick and its exact effect, and :func:`apply_effect` re-applies it.

``tick`` is the simulator's tick after the step the event followed: the event ran after the
physics of ``actions[tick - 1]``, so ``states[tick]`` already includes it (tick 0: at reset).
An effect lists only what changed, as ``[index, value]`` pairs (``geom_rgba``: ``[geom, r, g, b,
a]``); values are float64 and survive JSON exactly (``repr`` round-trips).
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

# The mjData arrays an event may write; all are part of the serialised state (mjSTATE_INTEGRATION).
STATE_FIELDS = ("qpos", "qvel", "act", "userdata")


@dataclass(frozen=True)
class SceneEvent:
    tick: int
    event: str                  # the event's name in the task ("reveal_caps", "yellow_button.presses")
    type: str                   # its type ("reveal", "press_counter", ...; "colours" at reset)
    effect: dict                # field -> [[index, value], ...]; "geom_rgba" -> [[geom, r, g, b, a], ...]

    def to_json(self) -> dict:
        return {"tick": self.tick, "event": self.event, "type": self.type, "effect": self.effect}

    @classmethod
    def from_json(cls, raw: dict) -> SceneEvent:
        return cls(int(raw["tick"]), str(raw["event"]), str(raw["type"]), dict(raw["effect"]))


_SPEC = (mujoco.mjtState.mjSTATE_QPOS | mujoco.mjtState.mjSTATE_QVEL | mujoco.mjtState.mjSTATE_ACT
         | mujoco.mjtState.mjSTATE_USERDATA)


class _Snapshot:
    """The fields of STATE_FIELDS as one vector (``mj_getState``: one call, no allocation), so
    the per-tick "did this event change anything" test is a single bytes comparison."""

    def __init__(self, model: mujoco.MjModel):
        self.model = model
        self.before = np.empty(mujoco.mj_stateSize(model, _SPEC))
        self.after = np.empty_like(self.before)
        sizes = (model.nq, model.nv, model.na, model.nuserdata)      # mj_getState's order
        bounds = np.cumsum((0,) + sizes)
        self.slices = {f: slice(int(a), int(b)) for f, a, b in zip(STATE_FIELDS, bounds[:-1], bounds[1:])}

    def take(self, data: mujoco.MjData) -> None:
        mujoco.mj_getState(self.model, data, self.before, _SPEC)

    def diff(self, data: mujoco.MjData) -> dict:
        mujoco.mj_getState(self.model, data, self.after, _SPEC)
        if self.after.tobytes() == self.before.tobytes():          # the common case, by far
            return {}
        effect = {}
        for name, part in self.slices.items():
            old, new = self.before[part], self.after[part]
            changed = np.flatnonzero(old != new)
            if changed.size:
                effect[name] = [[int(i), float(new[i])] for i in changed]
        return effect


def _rgba(model: mujoco.MjModel, geoms: np.ndarray) -> list[list[float]]:
    return [[int(g), *(float(x) for x in model.geom_rgba[g])] for g in geoms]


class EventLog:
    """Collects :class:`SceneEvent` records for one episode of a task world."""

    def __init__(self, world):
        self.world = world
        self.records: list[SceneEvent] = []
        geoms = [world.objects[n].geoms for n in world.coloured]
        self._geoms = np.concatenate(geoms) if geoms else np.zeros(0, np.int64)
        self._shown = np.zeros((0, 4))
        self._opinions: dict[str, tuple] = {}
        self._snapshot: _Snapshot | None = None            # made with the first model seen
        self._userdata_changed = True

    def _colour_opinions(self, data) -> dict[str, tuple]:
        return {ev.name: tuple(ev.colour_of(data, o) for o in self.world.coloured) for ev in self.world.colour_events}

    def reset(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Start a new episode (after the reset's colours were applied): a colour differing from
        the compiled model at tick 0 is logged, so a replay from the model file starts right."""
        self.records = []
        self._snapshot = _Snapshot(model)
        self._userdata_changed = True
        self._opinions = self._colour_opinions(data)
        self._shown = self.world.base_rgba[self._geoms].copy()
        changed = self._changed(model)
        if changed.size:
            self.records.append(SceneEvent(0, "reset", "colours", {"geom_rgba": _rgba(model, changed)}))
        self._shown = model.geom_rgba[self._geoms].copy()

    def _changed(self, model) -> np.ndarray:
        rows = np.flatnonzero(np.any(model.geom_rgba[self._geoms] != self._shown, axis=1))
        return self._geoms[rows]

    def step(self, tick: int, event, data: mujoco.MjData) -> None:
        """Run ``event.update`` and log what it changed."""
        if self._snapshot is None:
            self._snapshot = _Snapshot(self.world.model)
        self._snapshot.take(data)
        event.update(data)
        effect = self._snapshot.diff(data)
        if effect:
            self.records.append(SceneEvent(tick, event.name, event.type, effect))
            self._userdata_changed |= "userdata" in effect

    def colours(self, tick: int, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """After the colours were pushed into the model: log repainted geoms, attributed to the
        colour events whose opinion changed (the last one with an opinion wins, as in rendering).

        Colours are a function of ``userdata`` alone (teleop.tasks.events): while it stays put
        they cannot have changed, which keeps this off the per-tick cost."""
        if not self._userdata_changed or not self._geoms.size:
            return
        self._userdata_changed = False
        changed = self._changed(model)
        opinions = self._colour_opinions(data)
        if changed.size:
            causes = [ev for ev in self.world.colour_events if opinions[ev.name] != self._opinions.get(ev.name)]
            rgba = {"geom_rgba": _rgba(model, changed)}
            for ev in causes or [None]:
                name, kind = (ev.name, ev.type) if ev is not None else ("colours", "colours")
                self.records.append(SceneEvent(tick, name, kind, rgba))
            self._shown = model.geom_rgba[self._geoms].copy()
        self._opinions = opinions


def apply_effect(model: mujoco.MjModel, data: mujoco.MjData, effect: dict) -> None:
    """Re-apply one logged effect to a plain MuJoCo model/data (no task code needed)."""
    for name in STATE_FIELDS:
        target = getattr(data, name)
        for index, value in effect.get(name, ()):
            target[int(index)] = value
    for row in effect.get("geom_rgba", ()):
        model.geom_rgba[int(row[0])] = row[1:5]
