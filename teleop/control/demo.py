"""The headless main job, end to end: the synthetic operator records takes of its scripted tasks,
successful ones are accepted (failures rejected with the reason), accepted takes are re-validated
by replay, and the validated ones are exported as a LeRobotDataset v3."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from recordings.store import TakeStore
from recordings.validate_batch import validate_store
from teleop.control.episode import Episode, EpisodeOptions
from teleop.control.synthetic.script import scripted_tasks
from teleop.core.errors import ConfigError
from teleop.tasks.proven import PROVEN_FILE, proven_ids


@dataclass(frozen=True)
class DemoSummary:
    takes: int
    accepted: int
    validated_pass: int
    exported_episodes: int
    frames: int
    duration_s: float            # recorded time across takes
    dataset_root: str
    store: str
    pass_rate: float

    def to_json(self) -> dict:
        return self.__dict__.copy()


def record_takes(store: TakeStore, tasks: list[str], episodes: int, on_take=None) -> list:
    takes = []
    for task in tasks:
        for episode in range(episodes):
            result, take = Episode(EpisodeOptions(task=task, device="synthetic", episode_index=episode)).run(
                store, operator="synthetic")
            if result.strict_success == 1:
                store.accept(take.meta.take_id)
            else:
                failing = next(s.name for s in result.subtasks if s.effective < 1)
                store.reject(take.meta.take_id, f"task not completed: {failing!r} ({result.progress:.0f}/100)")
            takes.append(take)
            if on_take is not None:
                on_take(task, episode, result)
    return takes


def demo_tasks(record: Path = PROVEN_FILE) -> list[str]:
    """The tasks the demo drives by default: those the committed record proves (``teleop tasks prove``)
    that still have an operator script."""
    scripted = set(scripted_tasks())
    tasks = [t for t in proven_ids(record) if t in scripted]
    if not tasks:
        raise ConfigError(f"no proven task in {record}: run `teleop tasks prove --write-record`, or name tasks "
                          f"with --tasks (scripted tasks: {sorted(scripted)})")
    return tasks


def run_demo(out: Path, tasks: list[str] | None = None, episodes: int = 2, workers: int = 1,
             progress: bool = False, on_take=None) -> DemoSummary:
    from recordings.export import export_dataset     # heavy (torch, lerobot): only when exporting

    out = Path(out)
    tasks = tasks or demo_tasks()
    with TakeStore(out / "store") as store:
        takes = record_takes(store, tasks, episodes, on_take)
        accepted = len(store.rows(status="accepted"))
        validation = validate_store(store, workers=workers, progress=progress)
    dataset = out / "dataset"
    summary = export_dataset(out / "store", dataset, workers=workers, progress=progress, overwrite=True)
    seconds = sum(t.length / t.meta.control_hz for t in takes)        # each take at the rate it ran
    return DemoSummary(len(takes), accepted, validation.passed, summary.episodes, summary.frames, round(seconds, 1),
                       str(dataset), str(out / "store"), round(validation.passed / max(1, len(takes)), 3))
