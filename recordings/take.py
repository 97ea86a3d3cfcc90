"""Recording a take: ticks go to a crash-safe journal, ``finish()`` makes the HDF5 file."""
from __future__ import annotations

import os
import secrets
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from recordings import provenance
from recordings.build import current_build
from recordings.finalize import finalize_journal
from recordings.journal import JournalWriter
from recordings.take_events import EventJournal
from recordings.takefile import NEXT_OBS_LAST, TakeMeta


def new_take_id(task_id: str) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{task_id[:40]}-{secrets.token_hex(3)}"


def software_versions() -> dict:
    """Python, the libraries, the app version and the source revision (:mod:`recordings.provenance`)
    with the whole build (:mod:`recordings.build`): a bit-exact replay is promised on the same build
    only, so the take says which one it was recorded on."""
    return {**provenance.software(), **current_build()}


class TakeWriter:
    """Records one take: ``append`` per tick (crash-safe), then ``finish`` or ``abort``."""

    def __init__(self, root: Path, meta: TakeMeta, flush_interval: float = 0.5):
        self.root = Path(root)
        self.meta = replace(meta, created=meta.created or time.time(), software=meta.software or software_versions())
        self.journal = JournalWriter(self.root / f"{meta.take_id}.partial", self._header(), self.meta.columns(),
                                     flush_interval)
        self.events = EventJournal(self.journal.folder)
        self._last_obs: np.ndarray | None = None

    def _header(self) -> dict:
        return {"meta": self.meta.to_json(), "model_xml": self.meta.model_xml,
                "initial_state": list(self.meta.initial_state)}

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self._close()
        self.journal.release()  # an unfinished take stays as a journal: recoverable, never lost

    def open(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.journal.open()

    def append(self, **values) -> None:
        self.journal.append(values)

    def add_events(self, records: list[dict]) -> None:
        """Scene-event records (``SceneEvent.to_json()``), ticks relative to the take's start."""
        self.events.append(records)

    def set_last_obs(self, obs: np.ndarray) -> None:
        """The observation after the latest appended tick's step (the take's last ``next_obs``)."""
        self._last_obs = np.asarray(obs, np.float32)

    def _close(self) -> None:
        self.journal.close()
        self.events.close()
        if self._last_obs is not None and self.journal.folder.exists():
            tmp = self.journal.folder / ("tmp-" + NEXT_OBS_LAST)
            np.savez(tmp, obs=self._last_obs, ticks=self.journal.ticks)
            os.replace(tmp, self.journal.folder / NEXT_OBS_LAST)

    @property
    def ticks(self) -> int:
        return self.journal.ticks

    def finish(self) -> Path:
        """Close the journal and make the final HDF5 file atomically; returns its path. Idempotent:
        after a failure it may be called again."""
        return self._finalize(interrupted=False)

    def abort(self) -> Path:
        """Stop recording but keep everything: the journal becomes an interrupted take."""
        return self._finalize(interrupted=True)

    def _finalize(self, interrupted: bool) -> Path:
        self._close()
        path = finalize_journal(self.journal.folder, interrupted)
        self.journal.release()      # only now: until the journal is gone, nobody else may touch it
        return path


def meta_for_episode(sim, task_id: str, seed_index: int, episode_index: int, operator: str,
                     instructions: tuple[str, ...], subtask_names: tuple[str, ...],
                     frame_columns: tuple[str, ...] = (), device: str = "unknown", **extra) -> TakeMeta:
    """Metadata for a take that starts from ``sim``'s current state (call right after reset)."""
    return TakeMeta(take_id=new_take_id(task_id), task_id=task_id, seed_index=seed_index,
                    episode_index=episode_index, operator=operator, model_xml=sim.scene.xml,
                    model_fingerprint=sim.scene.fingerprint, initial_state=tuple(sim.get_state()),
                    instructions=tuple(instructions), subtask_names=tuple(subtask_names),
                    frame_columns=tuple(frame_columns), device=device,
                    control_hz=sim.scene.params.physics.control_hz, **extra)
