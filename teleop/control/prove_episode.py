"""One proving episode: the synthetic operator drives a task through the real loop, the episode is
recorded as a take, and the take is re-validated by replaying it from its serialised initial state.

:func:`prove_episode` is a module-level function of plain data in and out, so
:func:`recordings.batch.run_batch` can run it inline, in worker processes or as Ray tasks; each
episode builds its own session, so its result does not depend on where or beside what it runs.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from recordings.cue_gap import take_gap
from recordings.store import TakeStore
from recordings.validate import validate_take
from teleop.control.episode import Episode, EpisodeOptions

OPERATOR = "prover"              # the operator name the prover's takes carry in the store
DEVICE = "synthetic"             # the only device that drives a task without a person


@dataclass(frozen=True)
class EpisodeItem:
    task_id: str
    episode_index: int           # placement seed: the resets' stable hash of (task, 0, episode_index)
    store: str                   # take store folder (shared by every worker)


@dataclass(frozen=True)
class EpisodeProof:
    task_id: str
    episode_index: int
    completed: bool              # strict success in the live episode
    validated: bool              # the take re-validated by replay with full success
    progress: float              # live episode progress, 0..100
    first_failing_subtask: str | None    # first incomplete subtask of the live episode (None: all done)
    take_id: str
    validation: str              # the validation's verdict in words
    information_gap_steps: int | None = None     # the take's longest cue-hidden interval (None: no cue)

    def to_json(self) -> dict:
        return asdict(self)


def prove_episode(item: EpisodeItem) -> dict:
    """Drive, record and re-validate one episode; returns :class:`EpisodeProof` as a dict."""
    episode = Episode(EpisodeOptions(task=item.task_id, device=DEVICE, episode_index=item.episode_index))
    with TakeStore(Path(item.store)) as store:
        result, take = episode.run(store, operator=OPERATOR)
        report = validate_take(store.path(take.meta.take_id))
        failing = next((s.name for s in result.subtasks if s.effective < 1), None)
        gap = take_gap(take) if take.meta.cue else None
        if report.passed:
            store.accept(take.meta.take_id)
        else:
            store.reject(take.meta.take_id, f"not proven: {report.reason}")
    return EpisodeProof(item.task_id, item.episode_index, result.strict_success == 1, report.passed,
                        float(result.progress), failing, take.meta.take_id, report.reason,
                        None if gap is None else gap.gap_steps).to_json()
