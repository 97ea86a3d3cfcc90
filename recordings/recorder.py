"""Recording one episode of a task: the glue between a task runtime's tick and a take writer.

The session owns the tick: it calls :meth:`EpisodeRecorder.capture` just before it steps the
simulation (state and observation BEFORE the action, robomimic's convention) and
:meth:`EpisodeRecorder.append` after scoring, with the tick's real timing. The recorder never steps.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from recordings.errors import TakeError
from recordings.store import TakeStore
from recordings.take import TakeWriter, meta_for_episode
from recordings.takefile import FLAGS, TIMING, Take


def instruction_texts(spec) -> tuple[str, ...]:
    """Every instruction an episode of ``spec`` can show, in schedule order."""
    if spec.language_schedule:
        return tuple(seg.text for seg in spec.language_schedule)
    return (spec.instruction,)


def cue_meta(spec) -> dict:
    """What a take says about its task's memory cue: ``{kind, what}``, or ``{}`` without one."""
    return {} if spec.cue is None else {"kind": spec.cue.kind, "what": spec.cue.what}


class EpisodeRecorder:
    def __init__(self, store: TakeStore, runtime, operator: str, device: str = "unknown",
                 frame_columns: tuple[str, ...] = (), seed_index: int = 0, episode_index: int = 0, **meta_extra):
        self.store, self.rt = store, runtime
        spec = runtime.spec
        self.instructions = instruction_texts(spec)
        self.meta = meta_for_episode(runtime.sim, spec.id, seed_index, episode_index, operator, self.instructions,
                                     tuple(s.name for s in spec.subtasks), frame_columns, device,
                                     cue=cue_meta(spec), **meta_extra)
        self.writer: TakeWriter = store.writer(self.meta)
        self._frame_dim = len(frame_columns)
        self._before: tuple | None = None
        # Scene events are logged by the runtime with simulator ticks; the take counts from its start.
        self._start_tick = runtime.sim.tick
        self._events_seen = 0

    @property
    def take_id(self) -> str:
        return self.meta.take_id

    def start(self) -> EpisodeRecorder:
        self.writer.open()
        return self

    def capture(self) -> None:
        """Take the state, observation, instruction and whether the memory cue is hidden BEFORE
        this tick's step (robomimic's
        convention: ``states[t]`` is what ``actions[t]`` was applied to). Call it right before
        the session steps, then :meth:`append` after."""
        sim = self.rt.sim
        self._before = (sim.get_state(), sim.observation(), self.instructions.index(self.rt.instruction),
                        self.rt.cue_hidden)

    def append(self, action: np.ndarray, score, timing: dict, frame: np.ndarray | None = None,
               flags: dict | None = None) -> None:
        """Append the tick captured by :meth:`capture`: the action as applied (float32, what the
        take stores and replay applies), the score after the step, the tick's timing (ms, keys
        of ``TIMING``), the device frame vector and the tick's flags."""
        if self._before is None:
            raise TakeError(f"take {self.take_id}: append() without capture() before the step")
        (state, obs, instruction, cue_hidden), self._before = self._before, None
        flags = flags or {}
        self.writer.append(
            actions=np.asarray(action, np.float32), states=state, obs=obs, instruction=instruction,
            subtasks=np.array(score.latched, np.uint8), progress=score.progress,
            timing=np.array([timing[k] for k in TIMING]),
            frame=np.zeros(self._frame_dim) if frame is None else frame,
            flags=np.array([bool(flags.get(k, k == "engaged")) for k in FLAGS], np.uint8),
            cue_hidden=np.uint8(cue_hidden))
        self.writer.set_last_obs(self.rt.sim.observation())      # robomimic's next_obs of this tick
        self._journal_events()

    def _journal_events(self) -> None:
        """Hand the scene events logged since the last tick to the take (rare: most ticks have none)."""
        records = self.rt.event_log.records
        if len(records) < self._events_seen:      # the runtime was reset under us: its log restarted
            self._events_seen = 0
        new = records[self._events_seen:]
        self._events_seen = len(records)
        self.writer.add_events([{**r.to_json(), "tick": r.tick - self._start_tick} for r in new
                                if r.tick >= self._start_tick])

    def finish(self) -> Take:
        """Make the take final (atomic) and index it."""
        return self.store.add(self.writer.finish())

    def abort(self) -> Take:
        """Stop early, keeping everything recorded as an interrupted take."""
        return self.store.add(self.writer.abort())

    @property
    def path(self) -> Path:
        return self.store.takes_dir / f"{self.take_id}.h5"
