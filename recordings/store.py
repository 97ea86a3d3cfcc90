"""A folder of takes plus its index: the one object the UI and the CLI use to manage takes.

Layout: ``<root>/takes/*.h5`` (finished takes), ``<root>/takes/*.partial/`` (journals being
recorded, or left by a crash), ``<root>/trash/`` (deleted takes: recoverable, never silently
removed), ``<root>/quarantine/`` (files the store cannot use, each with a reason file),
``<root>/index.sqlite``.

Many processes may use one store at once (recorders, ``teleop validate``/``export``, the app):
a recording's journal belongs to its writer until it is finished; opening the store recovers only
journals whose writer is gone and repairs the index from the files (:mod:`recordings.store_repair`).
"""
from __future__ import annotations

import logging
import shutil
from pathlib import Path

from recordings import faults
from recordings.errors import TakeError
from recordings.index import TakeIndex, TakeRow
from recordings.locks import store_lock
from recordings.quarantine import QUARANTINE, Quarantined, quarantine
from recordings.store_repair import OpenReport, reconcile, recover
from recordings.take import TakeWriter
from recordings.takefile import STATUSES, Review, Take, TakeMeta, read_take, update_review

log = logging.getLogger(__name__)

__all__ = ["OpenReport", "TakeStore"]


class TakeStore:
    def __init__(self, root: Path):
        self.root = Path(root).absolute()      # rows hold absolute paths: any process, any cwd
        self.takes_dir = self.root / "takes"
        self.trash_dir = self.root / "trash"
        self.quarantine_dir = self.root / QUARANTINE
        self.index = TakeIndex(self.root / "index.sqlite")
        self.open_report = OpenReport()           # what the last open() found and repaired

    def open(self) -> OpenReport:
        """Create folders, open the index, recover orphaned journals, repair the index."""
        self.takes_dir.mkdir(parents=True, exist_ok=True)
        self.trash_dir.mkdir(exist_ok=True)
        self.index.open()
        report = OpenReport()
        recover(self.takes_dir, self.quarantine_dir, report)
        reconcile(self.index, self.takes_dir, self.quarantine_dir, report)
        self.open_report = report
        return report

    def repair(self) -> OpenReport:
        """What :meth:`open` does after the index is open (e.g. before a long batch)."""
        report = OpenReport()
        recover(self.takes_dir, self.quarantine_dir, report)
        reconcile(self.index, self.takes_dir, self.quarantine_dir, report)
        return report

    def close(self) -> None:
        self.index.close()

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    def rebuild_index(self) -> OpenReport:
        """Drop the index and re-read every take file; unreadable files are reported and
        quarantined, not fatal."""
        report = OpenReport()
        self.index.clear()
        reconcile(self.index, self.takes_dir, self.quarantine_dir, report)
        return report

    def quarantine(self, path: Path, reason: str) -> Quarantined | None:
        """Move an unusable file out of the way (with a reason file); None if it is already gone."""
        path = Path(path)
        row = next((r for r in self.index.query() if r.path == str(path)), None)
        moved = quarantine(path, self.quarantine_dir, reason)
        if moved is None:
            return None
        self.index.remove_path(path)
        return Quarantined(path, moved, reason, row.take_id if row else None, row.status if row else None,
                           row.task_id if row else None)

    def writer(self, meta: TakeMeta, flush_interval: float = 0.5) -> TakeWriter:
        return TakeWriter(self.takes_dir, meta, flush_interval)

    def add(self, path: Path) -> Take:
        take = read_take(path)
        self.index.upsert(take)
        return take

    def load(self, take_id: str) -> Take:
        return read_take(self.path(take_id))

    def path(self, take_id: str) -> Path:
        row = self.index.get(take_id)
        if row is None:
            raise TakeError(self.takes_dir / f"{take_id}.h5", "no such take in the index")
        return Path(row.path)

    def rows(self, **query) -> list[TakeRow]:
        return self.index.query(**query)

    def set_review(self, take_id: str, status: str, reason: str = "", report: dict | None = None) -> TakeRow:
        """Record a review decision in the take file (the truth), then in the index."""
        if status not in STATUSES:
            raise TakeError(self.path(take_id), f"status {status!r} is not one of {', '.join(STATUSES)}")
        path = self.path(take_id)
        update_review(path, Review(status, reason, report or {}))    # atomic: the old or the new file
        faults.checkpoint("review_written")     # a kill here leaves the row stale: open() repairs it
        self.index.upsert(read_take(path))
        return self.index.get(take_id)

    def accept(self, take_id: str) -> TakeRow:
        return self.set_review(take_id, "accepted")

    def reject(self, take_id: str, reason: str) -> TakeRow:
        if not reason.strip():
            raise TakeError(self.path(take_id), "a rejection needs a reason")
        return self.set_review(take_id, "rejected", reason)

    def delete(self, take_id: str) -> Path:
        """Move a take to the trash (recoverable with :meth:`restore`)."""
        path = self.path(take_id)
        target = self.trash_dir / path.name
        with store_lock(self.takes_dir):     # never while the file is being replaced
            shutil.move(str(path), target)
        self.index.remove(take_id)
        log.info("moved take %s to %s", take_id, target)
        return target

    def restore(self, take_id: str) -> Take:
        source = self.trash_dir / f"{take_id}.h5"
        if not source.exists():
            raise TakeError(source, "no such take in the trash")
        target = self.takes_dir / source.name
        shutil.move(str(source), target)
        return self.add(target)

    def trash(self) -> list[Path]:
        return sorted(self.trash_dir.glob("*.h5"))
