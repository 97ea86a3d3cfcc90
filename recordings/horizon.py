"""A task's horizon from the store's accepted takes (the catalog's rule: ``max_steps``, else
1.2 x P90 of the accepted takes' lengths, else the default; :func:`teleop.tasks.scorer.horizon_steps`).

Accepted means an operator kept the take and nothing since said it fails: ``accepted`` (validation
pending), ``validated_pass`` and ``exported``. Interrupted takes (a crash ended them) are left out:
their length is where the crash happened, not how long the task took.
"""
from __future__ import annotations

from recordings.index import TakeIndex
from teleop.tasks.scorer import horizon_steps
from teleop.tasks.spec import TaskSpec

ACCEPTED = ("accepted", "validated_pass", "exported")


def accepted_lengths(index: TakeIndex, task_id: str) -> list[int]:
    """Tick counts of ``task_id``'s accepted, uninterrupted takes in the store's index."""
    return [row.ticks for status in ACCEPTED for row in index.query(task_id=task_id, status=status)
            if not row.interrupted and row.ticks > 0]


def store_horizon(index: TakeIndex, spec: TaskSpec, control_hz: float | None = None) -> int:
    """The horizon in control ticks of the next take of ``spec`` recorded into this store."""
    return horizon_steps(spec, accepted_lengths(index, spec.id), control_hz)
