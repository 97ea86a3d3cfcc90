"""Recording one episode of a task: the glue between a task runtime's tick and a take writer.

``record(action)`` captures the state and observation BEFORE the action (robomimic's convention),
steps the runtime (physics + scene events + scoring) and appends the tick to the crash-safe journal.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from recordings.store import TakeStore
from recordings.take import TakeWriter, meta_for_episode
from recordings.takefile import FLAGS, TIMING, Take


def instruction_texts(spec) -> tuple[str, ...]:
    """Every instruction an episode of ``spec`` can show, in schedule order."""
    if spec.language_schedule:
        return tuple(seg.text for seg in spec.language_schedule)
    return (spec.instruction,)


class EpisodeRecorder:
    def __init__(self, store: TakeStore, runtime, operator: str, device: str = "unknown",
                 frame_columns: tuple[str, ...] = (), seed_index: int = 0, episode_index: int = 0, **meta_extra):
        self.store, self.rt = store, runtime
        spec = runtime.spec
        self.instructions = instruction_texts(spec)
        self.meta = meta_for_episode(runtime.sim, spec.id, seed_index, episode_index, operator, self.instructions,
                                     tuple(s.name for s in spec.subtasks), frame_columns, device, **meta_extra)
        self.writer: TakeWriter = store.writer(self.meta)
        self._frame_dim = len(frame_columns)

    @property
    def take_id(self) -> str:
        return self.meta.take_id

    def start(self) -> "EpisodeRecorder":
        self.writer.open()
        return self

    def record(self, action: np.ndarray, timing: dict | None = None, frame: np.ndarray | None = None,
               flags: dict | None = None):
        """Step the runtime with ``action`` and append the tick.

        Returns (TickScore, physics ms, scoring ms). The action is rounded to float32 BEFORE it is
        applied: the take stores float32 actions, and replay must apply exactly what was applied.
        """
        action = np.asarray(action, dtype=np.float32)
        sim = self.rt.sim
        state, obs = sim.get_state(), sim.observation()
        instruction = self.instructions.index(self.rt.instruction)
        t0 = time.perf_counter()
        sim.step(action)
        t1 = time.perf_counter()
        score = self.rt.after_step()
        t2 = time.perf_counter()
        timing = {**(timing or {}), "physics_ms": (t1 - t0) * 1e3, "score_ms": (t2 - t1) * 1e3}
        flags = flags or {}
        self.writer.append(
            actions=action, states=state, obs=obs, instruction=instruction,
            subtasks=np.array(score.latched, np.uint8), progress=score.progress,
            timing=np.array([timing.get(k, 0.0) for k in TIMING]),
            frame=np.zeros(self._frame_dim) if frame is None else frame,
            flags=np.array([bool(flags.get(k, k == "engaged")) for k in FLAGS], np.uint8))
        return score, timing["physics_ms"], timing["score_ms"]

    def finish(self) -> Take:
        """Make the take final (atomic) and index it."""
        return self.store.add(self.writer.finish())

    def abort(self) -> Take:
        """Stop early, keeping everything recorded as an interrupted take."""
        return self.store.add(self.writer.abort())

    @property
    def path(self) -> Path:
        return self.store.takes_dir / f"{self.take_id}.h5"
