"""Scene events in a take: journaled while recording, stored in the HDF5 file, applied on replay.

The records come from the task runtime's :class:`teleop.tasks.event_log.EventLog` (tick, event
name, type, exact effect). While recording they are appended to ``events.jsonl`` inside the take's
journal folder (flushed per line, so a crashed process loses none; fsynced on close); the final
take holds them as the JSON text dataset ``data/demo_0/scene_events``.

A replay of the actions through plain MuJoCo reproduces the recorded states only if it applies
them too: after stepping ``actions[t]`` apply the records with ``tick == t + 1``
(:func:`apply_events`); records with ``tick == 0`` belong before the first action (the reset).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from teleop.tasks.event_log import apply_effect

EVENTS_FILE = "events.jsonl"
H5_NAME = "scene_events"


class EventJournal:
    """Append-only JSON lines in a journal folder; the file is created at the first record."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / EVENTS_FILE
        self._fh = None

    def append(self, records: list[dict]) -> None:
        if not records:
            return
        if self._fh is None:
            self._fh = open(self.path, "a")
        self._fh.write("".join(json.dumps(r) + "\n" for r in records))
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None


def read_journal_events(folder: Path) -> list[dict]:
    """Every complete record of a journal folder (a torn last line, from a crash, is dropped)."""
    path = Path(folder) / EVENTS_FILE
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return out


def events_at(events: list[dict], tick: int) -> list[dict]:
    return [e for e in events if int(e["tick"]) == tick]


def apply_events(model, data, events: list[dict], tick: int) -> int:
    """Apply the records of ``tick`` to a plain MuJoCo model/data; returns how many there were.

    Recomputes the derived quantities afterwards (as the runtime does), so poses read at this tick
    describe the changed state."""
    import mujoco

    todo = events_at(events, tick)
    for record in todo:
        apply_effect(model, data, record["effect"])
    if todo:
        mujoco.mj_forward(model, data)
    return len(todo)


def colour_rows_until(events: list[dict], tick: int) -> dict[int, list[float]]:
    """geom -> rgba in force at ``tick`` (the last repaint at or before it): what frame ``tick``
    must be rendered with. Geoms never repainted are absent (the model's own colour)."""
    rows: dict[int, list[float]] = {}
    for record in events:
        if int(record["tick"]) > tick:
            continue
        for row in record["effect"].get("geom_rgba", ()):
            rows[int(row[0])] = list(row[1:5])
    return rows
