"""A take's information gap: how long its task's memory cue is provably hidden (MIKASA-Robo-VLA).

The per-tick flags come from the take's ``cue_hidden`` dataset (the task runtime's hiding rule,
:mod:`teleop.tasks.cues`, evaluated on ``states[t]``). The gap counts only ticks at which the cue
is provably absent; the longest contiguous run of them is what a policy's memory must bridge.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class InformationGap:
    hidden_steps: int        # ticks at which the cue is provably hidden
    gap_steps: int           # the longest run of consecutive hidden ticks (the information gap)


def information_gap(hidden) -> InformationGap:
    """Count and longest contiguous run of the true entries of a per-tick flag array."""
    flags = np.asarray(hidden, bool).ravel()
    if not flags.any():
        return InformationGap(0, 0)
    edges = np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return InformationGap(int(flags.sum()), int((ends - starts).max()))


def take_gap(take) -> InformationGap | None:
    """The take's gap; None for a take recorded before ``cue_hidden`` existed."""
    hidden = take.arrays.get("cue_hidden")
    return None if hidden is None else information_gap(hidden)


def median_gap(gaps) -> float | None:
    """The median information gap of some episodes (None: none)."""
    values = [g.gap_steps for g in gaps if g is not None]
    return float(statistics.median(values)) if values else None


UNMEASURED_STATUSES = ("rejected", "validated_fail")    # takes a reviewer or a replay refused: not evidence


def store_gap_medians(store_root, task_ids) -> dict[str, float | None]:
    """Task id -> the median information gap over the store's takes of that task (interrupted and
    refused takes left out; takes without ``cue_hidden`` skipped); None where there is none."""
    import h5py

    from recordings.store import TakeStore
    from recordings.takefile import DEMO

    out: dict[str, float | None] = {}
    with TakeStore(store_root) as store:
        for task_id in task_ids:
            gaps = []
            for row in store.rows(task_id=task_id):
                if row.interrupted or row.status in UNMEASURED_STATUSES:
                    continue
                with h5py.File(row.path, "r") as h5:
                    if "cue_hidden" in h5[DEMO]:
                        gaps.append(information_gap(h5[DEMO]["cue_hidden"][()]))
            out[task_id] = median_gap(gaps)
    return out
