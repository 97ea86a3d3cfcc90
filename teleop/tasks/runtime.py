"""``TaskRuntime``: a task's Sim with deterministic resets, scene events and per-tick scoring."""
from __future__ import annotations

import numpy as np

from teleop.sim import Sim
from teleop.tasks.build import TaskScene, build_task, place_objects, placement_seed
from teleop.tasks.cues import Cue
from teleop.tasks.event_log import EventLog
from teleop.tasks.events import apply_colours
from teleop.tasks.scorer import EpisodeResult, Scorer, TickScore
from teleop.tasks.spec import TaskSpec
from teleop.tasks.world import Frame


class TaskRuntime:
    """One task scene, simulated and scored. ``sim`` is a plain :class:`teleop.sim.Sim`."""

    def __init__(self, task: TaskScene | TaskSpec | str, horizon: int | None = None):
        self.task = task if isinstance(task, TaskScene) else build_task(task)
        self.world = self.task.world
        self.sim = Sim(self.task.scene, reset_hook=self._reset_hook)
        # the default horizon counts ticks of this scene's own control rate (robot.yaml's control_hz)
        self.scorer = Scorer(self.world, horizon, control_hz=self.task.scene.params.physics.control_hz)
        self.initial_state: np.ndarray | None = None
        self.last: TickScore | None = None
        self.event_log = EventLog(self.world)     # what the scene events did, for the take
        self.cue = Cue(self.world, self.spec.cue) if self.spec.cue is not None else None
        self.cue_hidden = False                   # the cue is provably hidden in the current state

    @property
    def spec(self):
        return self.task.spec

    def _reset_hook(self, model, data, seed: int) -> None:
        place_objects(self.world, model, data, np.random.default_rng(seed))

    def reset(self, seed_index: int = 0, episode_index: int = 0) -> np.ndarray:
        """Place objects from the stable seed of (task id, seed index, episode index); score tick 0."""
        obs = self.sim.reset(placement_seed(self.spec.id, seed_index, episode_index))
        apply_colours(self.world, self.sim.model, self.sim.data)
        self.event_log.reset(self.sim.model, self.sim.data)
        self.initial_state = self.sim.get_state()
        self.scorer.reset(self.sim.data)
        self.last = self.scorer.update(self.sim.data, 0)
        self._observe_cue(reset=True)
        return obs

    def restore(self, state: np.ndarray) -> None:
        """Restore a serialised state (e.g. a take's initial state) and restart scoring from it."""
        self.sim.set_state(state)
        self.sim.tick = 0
        apply_colours(self.world, self.sim.model, self.sim.data)
        self.event_log.reset(self.sim.model, self.sim.data)
        self.scorer.reset(self.sim.data)
        self.last = self.scorer.update(self.sim.data, 0)
        self._observe_cue(reset=True)

    def after_step(self) -> TickScore:
        """Scene events (userdata), colours, then scoring of the current tick. What each event
        changed is logged with this tick (``event_log``), so a take can carry it."""
        tick, model, data = self.sim.tick, self.sim.model, self.sim.data
        for ev in self.world.events.values():
            self.event_log.step(tick, ev, data)
        apply_colours(self.world, model, data)
        self.event_log.colours(tick, model, data)
        self.last = self.scorer.update(self.sim.data, self.sim.tick)
        self._observe_cue()
        return self.last

    def _observe_cue(self, reset: bool = False) -> None:
        """Whether the scene hides the task's cue in the current state (after events and scoring,
        so ``cue_hidden`` describes the state the next action is applied to)."""
        if self.cue is None:
            self.cue_hidden = False
            return
        if reset:
            self.cue.reset(self.sim.data)
        self.cue_hidden = self.cue.hidden(Frame(self.world, self.sim.data, self.sim.tick))

    def step(self, action: np.ndarray) -> np.ndarray:
        obs = self.sim.step(action)
        self.after_step()
        return obs

    @property
    def done(self) -> bool:
        return self.last is not None and self.last.done

    @property
    def instruction(self) -> str:
        return self.spec.instruction_at(self.sim.tick)

    def result(self) -> EpisodeResult:
        return self.scorer.result()
