"""A folder of takes plus its index: the one object the UI and the CLI use to manage takes.

Layout: ``<root>/takes/*.h5`` (finished takes), ``<root>/takes/*.partial/`` (journals being
recorded, or left by a crash), ``<root>/trash/`` (deleted takes: recoverable, never silently
removed), ``<root>/index.sqlite``.
"""
from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from recordings.errors import TakeError
from recordings.index import TakeIndex, TakeRow
from recordings.take import TakeWriter
from recordings.takefile import STATUSES, Review, Take, TakeMeta, read_take, recover_interrupted, update_review

log = logging.getLogger(__name__)


@dataclass
class OpenReport:
    recovered: list[Path] = field(default_factory=list)      # interrupted takes found and kept
    unreadable: list[tuple[Path, str]] = field(default_factory=list)


class TakeStore:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.takes_dir = self.root / "takes"
        self.trash_dir = self.root / "trash"
        self.index = TakeIndex(self.root / "index.sqlite")

    def open(self) -> OpenReport:
        """Create folders, open the index, recover crashed recordings and index them."""
        self.takes_dir.mkdir(parents=True, exist_ok=True)
        self.trash_dir.mkdir(exist_ok=True)
        self.index.open()
        report = OpenReport(recovered=recover_interrupted(self.takes_dir))
        self._index_missing(report)
        return report

    def _index_missing(self, report: OpenReport) -> None:
        """Index take files the index does not know (e.g. finished just before a crash)."""
        known = {Path(r.path).name for r in self.index.query()}
        for path in sorted(self.takes_dir.glob("*.h5")):
            if path.name not in known:
                try:
                    self.index.upsert(read_take(path))
                except TakeError as exc:
                    report.unreadable.append((path, str(exc)))

    def close(self) -> None:
        self.index.close()

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    def rebuild_index(self) -> OpenReport:
        """Drop the index and re-read every take file; unreadable files are reported, not fatal."""
        report = OpenReport()
        self.index.clear()
        self._index_missing(report)
        return report

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
        update_review(path, Review(status, reason, report or {}))
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
