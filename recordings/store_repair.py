"""What opening a store repairs: orphaned journals, stray temp files, and an index that disagrees
with the take files (stale, missing or extra rows, unreadable files, two files with one take id).

Safe while other processes record, validate or export in the same store: journals a live process
owns are skipped (:mod:`recordings.finalize`), every move happens under the store lock, and a file
another process removed meanwhile is simply no longer there.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from recordings.errors import TakeError
from recordings.finalize import JournalOutcome, recover_journals
from recordings.index import TakeIndex, TakeRow
from recordings.quarantine import Quarantined, quarantine
from recordings.takefile import file_stamp, read_take

log = logging.getLogger(__name__)


@dataclass
class OpenReport:
    recovered: list[Path] = field(default_factory=list)      # interrupted takes found and kept
    unreadable: list[tuple[Path, str]] = field(default_factory=list)    # (file as it was named, reason)
    quarantined: list[Quarantined] = field(default_factory=list)
    duplicates: list[tuple[str, Path, list[Path]]] = field(default_factory=list)   # (take id, kept, moved)
    cleaned: list[Path] = field(default_factory=list)        # journal leftovers of finished takes
    reindexed: int = 0                                       # rows (re)read from their files

    def problems(self) -> list[str]:
        """One line per file the store could not use, naming it and why."""
        return [q.line() for q in self.quarantined]

    def merge(self, other: OpenReport) -> None:
        for name in ("recovered", "unreadable", "quarantined", "duplicates", "cleaned"):
            getattr(self, name).extend(getattr(other, name))
        self.reindexed += other.reindexed


def recover(takes_dir: Path, quarantine_dir: Path, report: OpenReport) -> None:
    outcomes: list[JournalOutcome] = recover_journals(takes_dir, quarantine_dir)
    for o in outcomes:
        if o.action == "recovered":
            report.recovered.append(o.path)
        elif o.action == "cleaned":
            report.cleaned.append(o.journal)
        elif o.path is not None:
            report.quarantined.append(Quarantined(o.journal, o.path, o.reason))


def _canonical(take_id: str, paths: list[Path]) -> Path:
    """Which of several files with one take id keeps it: the one named after it, else the first by name."""
    named = [p for p in paths if p.name == f"{take_id}.h5"]
    return named[0] if named else sorted(paths)[0]


def reconcile(index: TakeIndex, takes_dir: Path, quarantine_dir: Path, report: OpenReport) -> None:
    """Make the index agree with the take files: re-read files whose stamp changed or that have no
    row, drop rows whose file is gone, quarantine unreadable files and duplicate take ids."""
    rows_by_path: dict[str, TakeRow] = {r.path: r for r in index.query()}
    ids: dict[str, list[Path]] = defaultdict(list)
    fresh: dict[Path, object] = {}          # path -> Take read now
    for path in sorted(takes_dir.glob("*.h5")):
        row = rows_by_path.get(str(path))
        try:
            if row is not None and row.file_stamp and row.file_stamp == file_stamp(path):
                ids[row.take_id].append(path)
                continue
            take = read_take(path)
        except FileNotFoundError:
            continue                        # moved away by another process meanwhile
        except TakeError as exc:
            if not path.exists():
                continue
            report.unreadable.append((path, str(exc)))
            _quarantine(index, path, exc.detail, row, quarantine_dir, report)
            continue
        fresh[path] = take
        ids[take.meta.take_id].append(path)
    for take_id, paths in ids.items():
        keep = _canonical(take_id, paths)
        extra = [p for p in paths if p != keep]
        if extra:
            report.duplicates.append((take_id, keep, extra))
            for p in extra:
                _quarantine(index, p, f"duplicate take id {take_id!r}: {keep.name} has the same id",
                            rows_by_path.get(str(p)), quarantine_dir, report, keep_row=True)
        row = index.get(take_id)
        if keep in fresh or row is None or row.path != str(keep):
            take = fresh.get(keep)
            try:
                index.upsert(take if take is not None else read_take(keep))
                report.reindexed += 1
            except TakeError as exc:
                report.unreadable.append((keep, str(exc)))
                _quarantine(index, keep, exc.detail, row, quarantine_dir, report)
    on_disk = {str(p) for paths in ids.values() for p in paths}
    for path, row in rows_by_path.items():
        if path not in on_disk and not Path(path).exists() and index.get(row.take_id) is not None \
                and index.get(row.take_id).path == path:
            index.remove(row.take_id)       # deleted or moved outside the store's API


def _quarantine(index: TakeIndex, path: Path, reason: str, row: TakeRow | None, quarantine_dir: Path,
                report: OpenReport, keep_row: bool = False) -> None:
    moved = quarantine(path, quarantine_dir, reason)
    if moved is None:
        return
    if not keep_row:
        index.remove_path(path)
    report.quarantined.append(Quarantined(path, moved, reason, row.take_id if row else None,
                                          row.status if row else None, row.task_id if row else None))
