"""The end of an export: put the built dataset in place, mark the takes, clean up; resumable.

Order (:data:`EXPORT_STEPS`, reported to :func:`recordings.faults.checkpoint`): the dataset built
in ``<out>.partial/dataset`` is moved onto ``out`` (``out`` is the old dataset or the new one, never
a mixture), the takes are marked exported, then ``<out>.partial`` is renamed to
``<out>.partial.trash`` in one step and only then deleted. So a kill at any point leaves either
an unfinished export (``out`` absent or old: re-running resumes from the finished shards) or a
finished ``out`` with leftovers beside it, which a plain re-run of the same export recognises by the
plan hash in ``out/meta/bidex_export.json`` and finishes (marks, cleans) without rendering again.
A half-deleted work folder is never reused: it is already a ``.trash`` folder when deletion starts.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator

from recordings import faults
from recordings.locks import OwnerLock
from teleop.core.errors import TeleopError

log = logging.getLogger(__name__)

EXPORT_STEPS = ("assembled", "moved", "marked", "work_retired", "shard_removed", "cleaned")
EXPORT_INFO = "bidex_export.json"


@contextmanager
def export_lock(out: Path) -> Iterator[None]:
    """One export per ``out`` at a time: two would build in the same ``<out>.partial``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = OwnerLock.try_acquire(out.parent / f".{out.name}.export.lock")
    if lock is None:
        raise TeleopError(f"another export to {out} is running; wait for it to finish or choose another --out")
    try:
        lock.describe_owner()
        yield
    finally:
        lock.release()


def work_dir(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def old_dir(out: Path) -> Path:
    return out.with_name(out.name + ".old")


def trash_dirs(out: Path) -> list[Path]:
    return sorted(out.parent.glob(f"{out.name}.partial.trash*"))


def leftovers(out: Path) -> list[Path]:
    """What an interrupted export leaves next to ``out``."""
    return [p for p in (work_dir(out), old_dir(out), *trash_dirs(out)) if p.exists()]


def plan_sha(plan: dict) -> str:
    return hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()


def finished_plan_sha(out: Path) -> str | None:
    """The plan hash of the complete dataset at ``out`` (None: no readable export info)."""
    try:
        return json.loads((out / "meta" / EXPORT_INFO).read_text())["plan_sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def move_into_place(built: Path, out: Path, overwrite: bool) -> None:
    """``out`` is either the old dataset or the complete new one, never a mixture."""
    old = old_dir(out)
    if out.exists():
        if not overwrite:
            raise TeleopError(f"{out} appeared during the export; the new dataset is kept at {built}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(out, old)
    os.replace(built, out)
    faults.checkpoint("moved")
    shutil.rmtree(old, ignore_errors=True)


def mark_exported(store, take_ids: list[str], out: Path) -> None:
    """Each take's status becomes ``exported`` (idempotent: a re-run after a kill redoes it)."""
    for take_id in take_ids:
        row = store.index.get(take_id)
        report = dict(row.report if row else {})
        report["exported_to"] = str(out)
        store.set_review(take_id, "exported", row.reason if row else "", report)
    faults.checkpoint("marked")


def retire(work: Path) -> None:
    """Remove the work folder: first renamed aside in one step, then deleted."""
    if work.exists():
        trash = work.with_name(work.name + ".trash")
        k = 1
        while trash.exists():
            trash = work.with_name(f"{work.name}.trash{k}")
            k += 1
        os.replace(work, trash)
        faults.checkpoint("work_retired")
    remove_trash(work.with_name(work.name[:-len(".partial")]))


def remove_trash(out: Path) -> None:
    """Delete retired work folders and a leftover ``<out>.old`` (only once ``out`` is complete)."""
    for trash in trash_dirs(out):
        shards = trash / "shards"
        for shard in sorted(shards.iterdir()) if shards.is_dir() else []:
            shutil.rmtree(shard, ignore_errors=True)
            faults.checkpoint("shard_removed")
        shutil.rmtree(trash, ignore_errors=True)
    if out.exists():
        shutil.rmtree(old_dir(out), ignore_errors=True)
    faults.checkpoint("cleaned")
