"""Prove tasks: how often the synthetic operator completes each one, measured end to end.

For every selected task, episodes ``first .. first + n - 1`` are driven by the synthetic operator
through the real device -> engage -> retarget -> physics -> scorer loop, recorded as takes and
re-validated by replay (:mod:`teleop.control.prove_episode`). A task is proven when at least
:data:`PROVEN_SHARE` of its episodes re-validate with full success. A task without an operator
script cannot be driven: it is reported unproven, failing at its first subtask, with the reason.
"""
from __future__ import annotations

import datetime
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from recordings.batch import ItemResult, run_batch
from teleop.control.prove_episode import EpisodeItem, prove_episode
from teleop.control.synthetic.script import scripted_tasks
from teleop.core.errors import ConfigError, choices
from teleop.tasks.loader import all_specs
from teleop.tasks.proven import ProvenEntry
from teleop.tasks.spec import TaskSpec

PROVEN_SHARE = 0.6               # a task is proven when >= 60 % of its episodes re-validate (issue 16)
NO_SCRIPT = "no operator script"


@dataclass(frozen=True)
class TaskProof:
    id: str
    axis: str
    episodes: int                # episodes driven
    completed: int               # strict success in the live episode
    validated: int               # re-validated by replay with full success
    mean_progress: float         # live progress, 0..100, mean over the episodes
    first_failing_subtask: str | None   # the most frequent first incomplete subtask (None: none failed)
    wall_s: float                # summed wall time of this task's episodes (recording + validation)
    reason: str | None = None    # why the task could not be driven or an episode crashed (None: all ran)
    information_gap_median: float | None = None   # memory tasks: median gap over the validated episodes

    @property
    def proven(self) -> bool:
        return self.episodes > 0 and self.validated >= PROVEN_SHARE * self.episodes

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ProveReport:
    tasks: tuple[TaskProof, ...]
    first_episode: int
    wall_s: float

    @property
    def proven_ids(self) -> list[str]:
        return [t.id for t in self.tasks if t.proven]

    def to_json(self) -> dict:
        return {"tasks": [t.to_json() for t in self.tasks],
                "summary": {"tasks": len(self.tasks), "proven": len(self.proven_ids), "proven_ids": self.proven_ids},
                "wall_s": self.wall_s}

    def record_entries(self, commit: str, date: str | None = None) -> dict[str, ProvenEntry]:
        """The committed record's entries for these tasks (``teleop.tasks.proven``)."""
        day = date or datetime.date.today().isoformat()
        return {t.id: ProvenEntry(t.proven, t.validated, t.episodes, self.first_episode, day, commit,
                                  t.information_gap_median) for t in self.tasks}


def select_tasks(ids: list[str] | None = None, axis: str | None = None) -> list[TaskSpec]:
    """The shipped tasks named by ``ids`` (default: all), kept to ``axis`` when given."""
    specs = {s.id: s for s in all_specs()}
    axes = sorted({s.axis for s in specs.values()})
    if axis is not None and axis not in axes:
        raise ConfigError(f"--axis {axis!r} is not one of {choices(axes)}")
    unknown = [i for i in ids or () if i not in specs]
    if unknown:
        raise ConfigError(f"unknown task id(s) {choices(unknown)}; valid ids: {choices(sorted(specs))}")
    chosen = [specs[i] for i in dict.fromkeys(ids)] if ids else list(specs.values())
    chosen = [s for s in chosen if axis is None or s.axis == axis]
    if not chosen:
        raise ConfigError(f"no task of axis {axis!r} among {choices(ids or [])}; give ids of that axis or drop --axis")
    return chosen


def _unscripted(spec: TaskSpec) -> TaskProof:
    return TaskProof(spec.id, spec.axis, 0, 0, 0, 0.0, spec.subtasks[0].name, 0.0, NO_SCRIPT)


def _aggregate(spec: TaskSpec, results: list[ItemResult]) -> TaskProof:
    proofs = [r.value for r in results if r.ok]
    crashed = [r.error for r in results if not r.ok]
    order = {s.name: i for i, s in enumerate(spec.subtasks)}
    failing = Counter(p["first_failing_subtask"] for p in proofs if not p["validated"] and p["first_failing_subtask"])
    if crashed:                  # an episode that crashed never got past the start
        failing[spec.subtasks[0].name] += len(crashed)
    first = min(failing, key=lambda name: (-failing[name], order[name])) if failing else None
    progress = sum(p["progress"] for p in proofs) / len(results)
    reason = f"{len(crashed)} episode(s) crashed: {crashed[0]}" if crashed else None
    gaps = [p["information_gap_steps"] for p in proofs if p["validated"] and p["information_gap_steps"] is not None]
    return TaskProof(spec.id, spec.axis, len(results), sum(p["completed"] for p in proofs),
                     sum(p["validated"] for p in proofs), round(progress, 2), first,
                     round(sum(r.seconds for r in results), 2), reason,
                     float(statistics.median(gaps)) if gaps else None)


def prove(specs: list[TaskSpec], seeds: int, first_episode: int = 0, workers: int = 1, ray_address: str | None = None,
          store: Path | None = None, progress: bool = False) -> ProveReport:
    """Drive ``seeds`` episodes of every scripted task among ``specs`` (in ``workers`` processes or on
    the Ray cluster at ``ray_address``; then ``store`` must be a folder every node sees)."""
    if seeds < 1:
        raise ConfigError(f"--seeds must be at least 1 (got {seeds})")
    if first_episode < 0:
        raise ConfigError(f"--first-episode must be >= 0 (got {first_episode})")
    start = time.perf_counter()
    scripted = set(scripted_tasks())
    driven = [s for s in specs if s.id in scripted]
    with tempfile.TemporaryDirectory(prefix="teleop-prove-") as tmp:
        root = str(Path(store) if store is not None else Path(tmp))
        items = [EpisodeItem(s.id, first_episode + k, root) for s in driven for k in range(seeds)]
        results = run_batch(prove_episode, items, workers=workers, ray_address=ray_address, progress=progress,
                            desc="prove")
    by_task = {s.id: results[i * seeds:(i + 1) * seeds] for i, s in enumerate(driven)}
    proofs = tuple(_aggregate(s, by_task[s.id]) if s.id in by_task else _unscripted(s) for s in specs)
    return ProveReport(proofs, first_episode, round(time.perf_counter() - start, 1))
