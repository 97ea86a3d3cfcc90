"""Rewind and continue: a new take made of a recorded take's first ``tick`` ticks, copied verbatim,
followed by whatever is recorded after them.

The new take keeps the original's initial state, seed and episode, so it replays from its own
initial state like any take (validation, export and review need nothing special). Its
``continued_from`` says where it came from ("<take_id>@<tick>"). The caller must have brought the
simulation to exactly the recorded state at ``tick`` before recording on (``Session.resume`` steps
the prefix's actions and checks the state bit for bit); this module only writes the rows.
"""
from __future__ import annotations

from dataclasses import replace
from collections.abc import Iterator

from recordings.errors import TakeError
from recordings.recorder import EpisodeRecorder, instruction_texts
from recordings.store import TakeStore
from recordings.take import new_take_id
from recordings.takefile import H5_PATHS, Take, TakeMeta


def check_tick(take: Take, tick: int) -> int:
    """``tick`` as an index into ``take`` (0: from the initial state; ``length``: after the last tick)."""
    tick = int(tick)
    if not 0 <= tick <= take.length:
        raise TakeError(take.path, f"tick {tick} is outside the take (0..{take.length})")
    return tick


def continued_meta(take: Take, tick: int, **changes) -> TakeMeta:
    """The metadata of a take continuing ``take`` at ``tick``: a fresh id, the original's episode
    and initial state, and ``changes`` (operator, device, retarget configuration of the new ticks)."""
    tick = check_tick(take, tick)
    source = take.meta
    return replace(source, **{"take_id": new_take_id(source.task_id), "created": 0.0, "software": {},
                              "continued_from": f"{source.take_id}@{tick}", **changes})


def prefix_rows(take: Take, tick: int) -> Iterator[dict]:
    """The first ``tick`` rows of ``take`` as journal rows (column name -> value)."""
    missing = [H5_PATHS[name] for name in H5_PATHS if name not in take.arrays]
    if missing and tick:
        raise TakeError(take.path, f"recorded before dataset(s) {missing} existed: it cannot be continued "
                                   "(record it again)")
    for t in range(check_tick(take, tick)):
        yield {name: take.arrays[name][t] for name in H5_PATHS}


class ContinuedRecorder(EpisodeRecorder):
    """An :class:`EpisodeRecorder` whose journal starts with ``take``'s first ``tick`` rows.

    Its metadata comes from the take, not from the runtime's current state (which is the state at
    ``tick``, not the take's initial state)."""

    def __init__(self, store: TakeStore, runtime, take: Take, tick: int, operator: str, device: str = "unknown",
                 frame_columns: tuple[str, ...] = (), **meta_extra):
        if tuple(frame_columns) != tuple(take.meta.frame_columns):
            raise TakeError(take.path, f"recorded with {len(take.meta.frame_columns)} operator-frame columns; this "
                                       f"session records {len(frame_columns)}: it cannot be continued here")
        instructions = instruction_texts(runtime.spec)
        if tuple(instructions) != tuple(take.meta.instructions):
            raise TakeError(take.path, "the task's instructions changed since the take was recorded")
        meta_extra = {k: v for k, v in meta_extra.items() if k not in ("seed_index", "episode_index")}
        self.store, self.rt = store, runtime
        self.instructions = instructions
        self.meta = continued_meta(take, tick, operator=operator, device=device, **meta_extra)
        self.writer = store.writer(self.meta)
        self._frame_dim = len(frame_columns)
        self._before = None
        self.source, self.tick = take, check_tick(take, tick)
        # the runtime already stepped the prefix (its events are the source's): only later ones are new
        self._start_tick = runtime.sim.tick - self.tick
        self._events_seen = len(runtime.event_log.records)

    def start(self) -> ContinuedRecorder:
        self.writer.open()
        for row in prefix_rows(self.source, self.tick):
            self.writer.append(**row)
        self.writer.add_events([e for e in self.source.events if int(e["tick"]) <= self.tick])
        if self.tick:
            self.writer.set_last_obs(self.rt.sim.observation())     # next_obs of the prefix's last tick
        return self
