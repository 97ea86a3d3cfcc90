"""Export validated-pass takes to a LeRobotDataset v3, in parallel, resumably and atomically.

Pipeline: plan (which takes, in which order, with which settings) -> one single-episode shard per
take, rendered from a checked replay of its actions and encoded in a worker
(:mod:`recordings.export_shard`) -> ``lerobot``'s ``aggregate_datasets`` merges the shards in plan
order -> side files (``meta/bidex_episodes.jsonl``, ``meta/bidex_stats.json``,
``meta/bidex_export.json``) -> the finished folder is moved onto ``out`` and the work folder
removed (:mod:`recordings.export_finish`). Everything is built under ``<out>.partial/``: a killed
export leaves ``out`` untouched, and re-running the same export reuses every finished shard, or,
if it was killed while cleaning up, just finishes the cleanup.

A take that cannot be exported (unreadable: quarantined and named; changed since validation; not
reproducible) fails the export: every other shard is still built, nothing is moved onto ``out``,
and :class:`ExportIncomplete` carries the summary. A re-run exports the rest, reusing the shards.
"""
from __future__ import annotations

import json
import contextlib
import io
import logging
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from collections.abc import Callable

import h5py

from recordings import faults, provenance
from recordings.errors import TakeError
from recordings.batch import backend_name, run_batch
from recordings.cue_gap import take_gap
from recordings.export_finish import EXPORT_INFO, export_lock, finished_plan_sha, leftovers, move_into_place, plan_sha
from recordings.export_finish import mark_exported as mark_exported_takes, remove_trash, retire, work_dir
from recordings.export_progress import FrameProgress, take_frames
from recordings.export_shard import quiet_libraries, ExportSettings, ShardJob, write_shard
from recordings.render import stream_specs
from recordings.dataset_stats import write_exact_stats
from recordings.store import TakeStore
from recordings.takefile import DEMO, read_take
from teleop.core.conventions import SIDES
from teleop.core.errors import TeleopError, choices
from teleop.robot import build_robot_spec, default_control_hz, load_params

log = logging.getLogger(__name__)

EXPORTABLE = ("validated_pass", "exported")     # "exported" takes passed validation before
PLAN = "plan.json"


@dataclass(frozen=True)
class PlannedTake:
    take_id: str
    task_id: str
    path: str


@dataclass(frozen=True)
class ExportSummary:
    out: str
    episodes: int
    frames: int
    rendered: int                    # shards built by this run (frames_per_s counts only these)
    resumed: int                     # shards reused from an interrupted run
    failed: list[tuple[str, str]] = field(default_factory=list)    # (take_id, error)
    tasks: dict[str, int] = field(default_factory=dict)            # task_id -> episodes
    seconds: float = 0.0
    frames_per_s: float = 0.0
    streams: int = 0
    backend: str = "inline"
    render_devices: list[str] = field(default_factory=list)      # what rendered this run's shards
    quarantined: list[str] = field(default_factory=list)           # "file: reason (moved to ...)"

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_json(self) -> dict:
        return {**asdict(self), "failed": [list(f) for f in self.failed], "ok": self.ok}


class ExportIncomplete(TeleopError):
    """Some takes could not be exported; nothing was moved onto ``out``. ``summary`` says which."""

    def __init__(self, summary: ExportSummary):
        failures = "; ".join(f"{take_id}: {error}" for take_id, error in summary.failed)
        super().__init__(f"export to {summary.out} incomplete: {len(summary.failed)} take(s) failed: {failures}; "
                         f"finished shards are kept in {summary.out}.partial: run the same export again to resume")
        self.summary = summary


def state_names(layout) -> list[str]:
    """Names of the ``layout.obs_dim`` observation.state channels (see ``Sim.observation``)."""
    joints = list(layout.action_joints)
    ee = [f"{side}_wrist.{c}" for side in SIDES for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]
    return [f"{j}.pos" for j in joints] + [f"{j}.vel" for j in joints] + ee


def build_features(subtask_width: int, settings: ExportSettings) -> dict:
    """The LeRobot feature spec shared by every shard of one export."""
    _, layout = build_robot_spec(load_params())
    features = {
        "action": {"dtype": "float32", "shape": (len(layout.action_joints),), "names": list(layout.action_joints)},
        "observation.state": {"dtype": "float32", "shape": (layout.obs_dim,), "names": state_names(layout)},
        "subtask.progress": {"dtype": "float32", "shape": (1,), "names": ["progress"]},
        "subtask.latched": {"dtype": "float32", "shape": (subtask_width,),
                            "names": [f"subtask_{i}" for i in range(subtask_width)]},
    }
    for spec in stream_specs(layout.cameras, settings.width, settings.height):
        features[spec.key] = {"dtype": "video", "shape": spec.shape, "names": ["height", "width", "channels"],
                              "info": {"is_depth_map": spec.kind == "depth"}}
    return features


def select_takes(store: TakeStore, tasks: list[str] | None, lost: list[tuple[str, str]] = ()) -> list[PlannedTake]:
    """Validated-pass takes (optionally of ``tasks``), ordered by task, creation time, take id.
    ``lost``: exportable takes quarantined meanwhile, named if nothing is left."""
    rows = [r for status in EXPORTABLE for r in store.rows(status=status)]
    available = sorted({r.task_id for r in rows})
    if tasks:
        unknown = [t for t in tasks if t not in available]
        if unknown:
            raise TeleopError(f"{store.root}: no validated-pass takes for task(s) {', '.join(unknown)}; "
                              f"tasks with exportable takes: {choices(available) or 'none'}")
        rows = [r for r in rows if r.task_id in tasks]
    if not rows:
        why = "; ".join(f"{t}: {e}" for t, e in lost)
        raise TeleopError(f"{store.root}: no validated-pass takes to export (run 'teleop validate' first)"
                          + (f"; could not be read: {why}" if why else ""))
    rows.sort(key=lambda r: (r.task_id, r.created, r.take_id))
    return [PlannedTake(r.take_id, r.task_id, str(Path(r.path).absolute())) for r in rows]


def _peek(path: str) -> tuple[int, float]:
    """(number of subtasks, control rate) from a take's attributes, without reading its arrays."""
    try:
        with h5py.File(path, "r") as h5:
            meta = json.loads(h5[DEMO].attrs["meta"])
        return len(meta["subtask_names"]), float(meta.get("control_hz", default_control_hz()))
    except Exception as exc:  # noqa: BLE001 - any decoding failure (h5py raises RuntimeError too)
        raise TakeError(path, f"unreadable take file ({type(exc).__name__}: {exc})") from exc


def _lost_on_open(store: TakeStore, tasks: list[str] | None) -> list[tuple[str, str]]:
    """Exportable takes the store quarantined when it was opened: asked for, and failed."""
    return [(q.take_id, f"{q.reason}; moved to {q.moved_to}") for q in store.open_report.quarantined
            if q.status in EXPORTABLE and (not tasks or q.task_id in tasks)]


def _peek_all(store: TakeStore, takes: list[PlannedTake], failed: list, quarantined: list):
    """Drop (and quarantine) takes whose file cannot be read; returns (takes, peeks)."""
    kept, peeks = [], []
    for t in takes:
        try:
            peeks.append(_peek(t.path))
            kept.append(t)
        except TakeError as exc:
            moved = store.quarantine(Path(t.path), exc.detail)
            failed.append((t.take_id, f"{exc}" + (f"; moved to {moved.moved_to}" if moved else "")))
            if moved:
                quarantined.append(moved.line())
    return kept, peeks


def _plan(takes: list[PlannedTake], peeks: list[tuple[int, float]], settings: ExportSettings) -> dict:
    rates = sorted({hz for _, hz in peeks})
    if len(rates) != 1 or rates[0] != int(rates[0]):
        raise TeleopError(f"takes must share one integer control rate to form a dataset; found {rates} Hz")
    return {"takes": [asdict(t) for t in takes], "settings": asdict(settings), "fps": int(rates[0]),
            "subtask_width": max(1, max(k for k, _ in peeks))}


def _prepare_workdir(work: Path, plan: dict) -> None:
    """Write this plan into ``work``; shards of takes no longer planned are removed, the others
    are kept (each is reused only if its key still matches: see export_shard.finished_shard)."""
    text = json.dumps(plan, sort_keys=True)
    existing = work / PLAN
    shards = work / "shards"
    shards.mkdir(parents=True, exist_ok=True)
    if existing.exists() and existing.read_text() == text:
        return
    planned = {t["take_id"] for t in plan["takes"]}
    for shard in shards.iterdir():
        if shard.name.removesuffix(".tmp") not in planned:
            shutil.rmtree(shard, ignore_errors=True)
    tmp = work / (PLAN + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, existing)


def export_dataset(store_root: str | Path, out: str | Path, tasks: list[str] | None = None, workers: int = 1,
                   ray_address: str | None = None, progress: bool | Callable = True, overwrite: bool = False,
                   settings: ExportSettings | None = None, mark_exported: bool = True) -> ExportSummary:
    """Export the store's validated-pass takes to a LeRobotDataset v3 at ``out``; returns the summary.

    ``progress``: True shows a per-frame bar with the time left on stderr; a callable receives an
    :class:`~recordings.export_progress.ExportProgress` (at most 4 a second, and per take).
    Raises :class:`ExportIncomplete` if any take could not be exported: then nothing is moved to
    ``out`` (finished shards stay in ``<out>.partial/`` so a re-run only redoes the rest).
    """
    settings = settings or ExportSettings()
    t0 = time.perf_counter()
    out = Path(out).absolute()     # workers (Ray ones too) may run in another directory
    if workers < 1:
        raise TeleopError(f"--workers must be at least 1 (got {workers})")
    if out.exists() and not overwrite and not leftovers(out):
        raise TeleopError(f"{out} already exists; choose another --out or pass --overwrite")
    work = work_dir(out)
    with export_lock(out), TakeStore(store_root) as store:
        failed = _lost_on_open(store, tasks)
        quarantined = [q.line() for q in store.open_report.quarantined]
        takes = select_takes(store, tasks, failed)
        takes, peeks = _peek_all(store, takes, failed, quarantined)
        plan = _plan(takes, peeks, settings)
        features = build_features(plan["subtask_width"], settings)
        backend = backend_name(workers, ray_address)
        if out.exists() and not overwrite:
            if failed or finished_plan_sha(out) != plan_sha(plan):
                raise TeleopError(f"{out} already exists; choose another --out or pass --overwrite")
            return _finish_interrupted(store, out, takes, plan, features, mark_exported, t0, backend)
        remove_trash(out)                                # retired work folders of earlier runs
        _prepare_workdir(work, plan)
        digests = {t.take_id: (store.index.get(t.take_id).report or {}).get("digest", "") for t in takes}
        jobs = [ShardJob(t.path, str(work / "shards" / t.take_id), features, plan["subtask_width"], plan["fps"],
                         settings, render_worker=i, validated_digest=digests[t.take_id])
                for i, t in enumerate(takes)]
        _remove_stale_attempts(work / "shards")
        results = _run_shards(jobs, workers, ray_address, progress)
        for r in results:
            if not r.ok:
                failed.append((takes[r.index].take_id, _shard_failure(store, takes[r.index], r.error, quarantined)))
        done = [r.value for r in results if r.ok]
        summary = _summary(out, takes, done, failed, time.perf_counter() - t0, features, backend, quarantined)
        if failed:
            raise ExportIncomplete(summary)
        _assemble(takes, jobs, plan, work, settings, features)
        faults.checkpoint("assembled")
        move_into_place(work / "dataset", out, overwrite)
        if mark_exported:
            mark_exported_takes(store, [t.take_id for t in takes], out)
        retire(work)
    return summary


def _shard_failure(store: TakeStore, planned: PlannedTake, error: str, quarantined: list) -> str:
    """A failed shard's error; if its take file turns out unreadable here too, it is quarantined."""
    try:
        read_take(Path(planned.path))
    except TakeError as exc:
        moved = store.quarantine(Path(planned.path), exc.detail)
        if moved is not None:
            quarantined.append(moved.line())
            return f"{exc}; moved to {moved.moved_to}"
    return error


def _finish_interrupted(store, out: Path, takes, plan, features, mark: bool, t0: float, backend: str) -> ExportSummary:
    """``out`` is this very export, complete; a kill stopped its cleanup: mark the takes, clean up."""
    log.info("%s is complete for this plan; finishing its interrupted cleanup", out)
    if mark:
        mark_exported_takes(store, [t.take_id for t in takes], out)
    retire(work_dir(out))
    frames = [json.loads(line)["frames"] for line in (out / "meta" / "bidex_episodes.jsonl").read_text().splitlines()]
    counts: dict[str, int] = {}
    for t in takes:
        counts[t.task_id] = counts.get(t.task_id, 0) + 1
    return ExportSummary(str(out), len(takes), sum(frames), 0, len(takes), [], counts,
                         round(time.perf_counter() - t0, 3), 0.0, sum(f["dtype"] == "video" for f in features.values()),
                         backend)


def _remove_stale_attempts(shards: Path) -> None:
    """Half-built shard folders of a killed run (no worker of this export has started yet)."""
    for tmp in shards.glob("*.tmp*"):
        shutil.rmtree(tmp, ignore_errors=True)


def _run_shards(jobs: list[ShardJob], workers: int, ray_address: str | None, progress) -> list:
    tracker = FrameProgress([take_frames(j.take_path) for j in jobs], show=progress is True,
                            callback=progress if callable(progress) else None)

    def finished(result) -> None:
        tracker.take(result.index, result.ok, bool(result.ok and result.value.skipped))

    try:
        return run_batch(write_shard, jobs, workers=workers, ray_address=ray_address, progress=False,
                         reports=tracker.frame, on_result=finished)
    finally:
        tracker.close()


def _summary(out: Path, takes: list[PlannedTake], done: list, failed: list, seconds: float, features: dict,
             backend: str, quarantined: list) -> ExportSummary:
    counts: dict[str, int] = {}
    for t in takes:
        counts[t.task_id] = counts.get(t.task_id, 0) + 1
    rendered = [d for d in done if not d.skipped]
    return ExportSummary(str(out), 0 if failed else len(done), sum(d.frames for d in done), len(rendered),
                         len(done) - len(rendered), failed, counts, round(seconds, 3),
                         round(sum(d.frames for d in rendered) / seconds, 2) if seconds else 0.0,
                         sum(f["dtype"] == "video" for f in features.values()), backend,
                         sorted({d.render_device for d in rendered if d.render_device}), quarantined)


def _assemble(takes: list[PlannedTake], jobs: list[ShardJob], plan: dict, work: Path,
              settings: ExportSettings, features: dict) -> None:
    """Merge the shards in plan order and write the side files (deterministic: safe to redo)."""
    from lerobot.datasets.aggregate import aggregate_datasets
    quiet_libraries()                                 # libav chatters about every concatenated mp4
    target = work / "dataset"
    shutil.rmtree(target, ignore_errors=True)
    with contextlib.redirect_stderr(io.StringIO()):     # its tqdm bars ignore TQDM_DISABLE once imported
        aggregate_datasets([settings.repo_id] * len(jobs), settings.repo_id,
                           roots=[Path(j.shard_dir) for j in jobs], aggr_root=target)
    with open(target / "meta" / "bidex_episodes.jsonl", "w") as fh:
        for index, planned in enumerate(takes):
            take = read_take(Path(planned.path))
            fh.write(json.dumps(_episode_record(index, take)) + "\n")
    # Last, so nothing of lerobot's (save_episode, aggregate_datasets) can overwrite them.
    write_exact_stats(target, features, [t.task_id for t in takes])
    export_info = {"settings": plan["settings"], "fps": plan["fps"], "subtask_width": plan["subtask_width"],
                   "plan_sha256": plan_sha(plan), "created": time.time(), "software": provenance.software()}
    (target / "meta" / EXPORT_INFO).write_text(json.dumps(export_info, indent=2))


def _cue_record(take) -> dict:
    """The episode's memory cue and MIKASA-Robo-VLA's information gap (None where the take has no
    ``cue_hidden``: recorded before it existed)."""
    gap = take_gap(take)
    return {"cue": take.meta.cue or None, "cue_hidden_steps": None if gap is None else gap.hidden_steps,
            "information_gap_steps": None if gap is None else gap.gap_steps}


def _episode_record(index: int, take) -> dict:
    m = take.meta
    return {"episode_index": index, "take_id": m.take_id, "task_id": m.task_id, "seed_index": m.seed_index,
            "take_episode_index": m.episode_index, "frames": take.length, "operator": m.operator,
            "device": m.device, "model_fingerprint": m.model_fingerprint, "instructions": list(m.instructions),
            "subtask_names": list(m.subtask_names), "initial_state": list(m.initial_state),
            "scene_events": list(take.events), "software": m.software,
            "retarget_config_hash": m.retarget_config_hash, **_cue_record(take)}
