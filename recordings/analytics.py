"""Throughput of a take store, per operator and task: what an operator's hour buys.

From the index (verdicts, times) and a few small datasets of each take file (latches, tick flags):

- ``accepted_per_hour``: accepted takes per hour of working time. Working time is the span of each
  working session (consecutive takes less than ``BREAK_S`` apart), so breaks do not count;
- ``acceptance_rate``: accepted / decided (accepted + rejected);
- ``rejection_reasons``: count per reason (the quick-pick part before any ": details");
- ``between_takes_s``: from the end of one take to the start of the next (p50, p90), breaks excluded;
- ``latch_s``: seconds from the take's start to each subtask's first latch (p50 over the takes
  that latched it);
- ``tracking_loss_share``: of the ticks after the robot first followed the operator, the share it
  held its pose instead (tracking lost, stale or dropped frames, released clutch).

"Accepted" is the operator's verdict: accepted, validated (pass or fail) or exported. Takes in the
trash are not counted. Used by ``teleop stats`` and the window's Throughput dock.
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field

import h5py
import numpy as np

from recordings.takefile import DEMO, FLAGS, H5_PATHS

BREAK_S = 600.0
ACCEPTED = ("accepted", "validated_pass", "validated_fail", "exported")
ALL = "*"


@dataclass(frozen=True)
class TakeFacts:
    """What the statistics need of one take (from its row and its file)."""
    take_id: str
    operator: str
    task_id: str
    status: str
    reason: str
    start: float
    duration_s: float
    latch_s: dict = field(default_factory=dict)      # subtask -> seconds to its first latch
    followed_ticks: int = 0                          # ticks after the robot first followed
    held_ticks: int = 0                              # of those, ticks it held instead


def facts_of(row) -> TakeFacts:
    """One index row plus its file's latches and tick flags (a missing file: the row alone)."""
    latch, followed, held = {}, 0, 0
    try:
        with h5py.File(row.path, "r") as h5:
            demo = h5[DEMO]
            meta = json.loads(demo.attrs["meta"])
            hz = float(meta.get("control_hz", 25.0))
            latched = demo[H5_PATHS["subtasks"]][()]
            flags = demo[H5_PATHS["flags"]][()]
        for k, name in enumerate(meta.get("subtask_names", [])):
            ticks = np.flatnonzero(latched[:, k]) if latched.size else []
            if len(ticks):
                latch[name] = (int(ticks[0]) + 1) / hz
        engaged = flags[:, FLAGS.index("engaged")].astype(bool) if flags.size else np.zeros(0, bool)
        if engaged.any():
            after = engaged[int(np.argmax(engaged)):]
            followed, held = int(after.size), int((~after).sum())
    except (OSError, KeyError, ValueError):
        pass
    return TakeFacts(row.take_id, row.operator, row.task_id, row.status, row.reason or "", float(row.created),
                     float(row.duration_s), latch, followed, held)


def _pct(values, q) -> float | None:
    return round(float(np.percentile(values, q)), 2) if len(values) else None


def _sessions(takes: list[TakeFacts]) -> tuple[float, list[float]]:
    """(working seconds, gaps between takes) of takes sorted by start; long gaps are breaks."""
    working, gaps = 0.0, []
    start = end = None
    for t in takes:
        if end is not None and t.start - end > BREAK_S:
            working += end - start
            start = None
        elif end is not None:
            gaps.append(max(0.0, t.start - end))
        start = t.start if start is None else start
        end = max(end or 0.0, t.start + t.duration_s)
    if start is not None:
        working += end - start
    return working, gaps


@dataclass(frozen=True)
class GroupStats:
    operator: str
    task_id: str
    takes: int
    accepted: int
    rejected: int
    undecided: int
    acceptance_rate: float | None
    accepted_per_hour: float | None
    working_h: float
    recorded_h: float
    between_takes_s: dict
    rejection_reasons: dict
    latch_s: dict
    tracking_loss_share: float | None


def group_stats(operator: str, task_id: str, takes: list[TakeFacts]) -> GroupStats:
    takes = sorted(takes, key=lambda t: t.start)
    accepted = sum(t.status in ACCEPTED for t in takes)
    rejected = sum(t.status == "rejected" for t in takes)
    working, gaps = _sessions(takes)
    reasons = Counter(t.reason.split(":")[0].strip() or "no reason" for t in takes if t.status == "rejected")
    latches: dict[str, list[float]] = defaultdict(list)
    for t in takes:
        for name, seconds in t.latch_s.items():
            latches[name].append(seconds)
    followed = sum(t.followed_ticks for t in takes)
    return GroupStats(
        operator, task_id, len(takes), accepted, rejected, len(takes) - accepted - rejected,
        round(accepted / (accepted + rejected), 3) if accepted + rejected else None,
        round(accepted / (working / 3600.0), 1) if working > 0 else None,
        round(working / 3600.0, 3), round(sum(t.duration_s for t in takes) / 3600.0, 3),
        {"p50": _pct(gaps, 50), "p90": _pct(gaps, 90), "n": len(gaps)}, dict(reasons.most_common()),
        {name: {"p50": _pct(v, 50), "n": len(v)} for name, v in latches.items()},
        round(sum(t.held_ticks for t in takes) / followed, 4) if followed else None)


def throughput(rows, operator: str | None = None) -> dict:
    """Statistics per (operator, task), per operator over every task (task ``*``), and overall."""
    facts = [facts_of(r) for r in rows if operator is None or r.operator == operator]
    by_group: dict[tuple[str, str], list[TakeFacts]] = defaultdict(list)
    for f in facts:
        by_group[(f.operator, f.task_id)].append(f)
        by_group[(f.operator, ALL)].append(f)
    groups = [asdict(group_stats(op, task, takes)) for (op, task), takes in sorted(by_group.items())]
    overall = asdict(group_stats(operator or ALL, ALL, facts))
    return {"operator": operator, "takes": len(facts), "overall": overall, "groups": groups}


def store_throughput(store, operator: str | None = None) -> dict:
    return {"store": str(store.root), **throughput(store.rows(), operator)}
