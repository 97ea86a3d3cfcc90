"""Journal -> take file, idempotently; and recovery of journals whose writer is gone.

Finalisation runs in this order, each step durable before the next (:data:`FINALIZE_STEPS`,
reported to :func:`recordings.faults.checkpoint`):

1. ``journal_read``: every CRC-valid record of ``<id>.partial/`` is read.
2. ``tmp_written``, ``h5_renamed``: ``<id>.h5`` is written as ``<id>.h5.tmp``, fsynced and renamed
   (:func:`write_take_h5`). A complete ``<id>.h5`` is never overwritten; an unreadable one is
   quarantined first.
3. ``marked_finished``: the journal gets its ``finished`` marker.
4. ``ticks_removed``, ``header_removed``, ``journal_removed``: the journal goes, tick data first.

So a crash anywhere leaves one of: a journal without a complete take file (recovered with every
tick, marked interrupted), or a complete take file plus journal leftovers (the leftovers are
removed; the take is never rewritten, so it is never truncated or re-marked interrupted).

Only the journal's owner finalises it: the writer, which holds the owner lock from the first
tick, or recovery after it took the lock of an orphan (its writer died: the kernel dropped the lock).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from recordings import faults
from recordings.errors import TakeError
from recordings.journal import DONE, HEADER, TICKS, atomic_write_text, fsync_dir, read_journal
from recordings.locks import OWNER_LOCK, OwnerLock, store_lock
from recordings.quarantine import quarantine
from recordings.take_events import read_journal_events
from recordings.takefile import (NEXT_OBS_LAST, REVIEW_TMP_SUFFIX, TMP_SUFFIX, Review, _meta_from_json, read_take,
                                 write_take_h5)

log = logging.getLogger(__name__)

JOURNAL_SUFFIX = ".partial"
FINALIZE_STEPS = ("journal_read", "tmp_written", "h5_renamed", "marked_finished", "ticks_removed",
                  "header_removed", "journal_removed")
RECOVERED_REASON = "interrupted: recovered from the journal"


def take_path(journal: Path) -> Path:
    """``<takes>/<id>.h5`` for the journal ``<takes>/<id>.partial``."""
    journal = Path(journal)
    return journal.with_name(journal.name[:-len(JOURNAL_SUFFIX)] + ".h5")


def _complete(path: Path):
    """The take at ``path`` if it is there and readable, else None."""
    if not path.exists():
        return None
    try:
        return read_take(path)
    except TakeError:
        return None


def finalize_journal(folder: Path, interrupted: bool, quarantine_dir: Path | None = None) -> Path:
    """Make ``<id>.h5`` from the journal ``folder`` (the caller owns its lock), then remove the
    journal; returns the take file. Safe to call again after a crash at any step."""
    folder = Path(folder)
    target = take_path(folder)
    quarantine_dir = quarantine_dir or folder.parent.parent / "quarantine"
    if not folder.exists():
        if target.exists():
            return target
        raise TakeError(folder, "the journal is gone and no take file was made from it")
    if (folder / DONE).exists():        # the take was complete before: only leftovers remain
        _remove_journal(folder)
        return target
    contents = read_journal(folder)
    faults.checkpoint("journal_read")
    existing = _complete(target)
    if existing is None:
        if target.exists():
            quarantine(target, quarantine_dir, "unreadable take file; rebuilt from its journal")
        header = contents.header
        try:
            meta = _meta_from_json(header["meta"], header["model_xml"], header["initial_state"], folder / HEADER)
        except (KeyError, TypeError, ValueError) as exc:
            raise TakeError(folder / HEADER, f"header is incomplete: {type(exc).__name__}: {exc}") from exc
        review = Review(reason=RECOVERED_REASON if interrupted else "")
        events = [e for e in read_journal_events(folder) if int(e["tick"]) <= contents.ticks]
        last = _next_obs_last(folder, contents.ticks)
        write_take_h5(target, meta, contents.arrays, review, interrupted, events, last)
    elif existing.length < contents.ticks:
        raise TakeError(target, f"a finished take file with {existing.length} ticks exists, but its journal holds "
                                f"{contents.ticks}: keeping both")
    atomic_write_text(folder / DONE, target.name)
    faults.checkpoint("marked_finished")
    _remove_journal(folder)
    return target


def _next_obs_last(folder: Path, ticks: int):
    """The recorder's observation after its last step, if saved for exactly ``ticks`` ticks (a torn
    tail loses ticks it was saved for); None makes the take file re-simulate it."""
    if not (folder / NEXT_OBS_LAST).exists():
        return None
    with np.load(folder / NEXT_OBS_LAST) as saved:
        return saved["obs"] if int(saved["ticks"]) == ticks else None


def _remove_journal(folder: Path) -> None:
    """Tick data first, then the header; the marker, the lock file and the folder last, under
    the store lock (recovery picks orphans under it, so it never takes a half-removed folder)."""
    for name, step in ((TICKS, "ticks_removed"), (HEADER, "header_removed")):
        (folder / name).unlink(missing_ok=True)
        faults.checkpoint(step)
    with store_lock(folder.parent):
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()
    fsync_dir(folder.parent)
    faults.checkpoint("journal_removed")


@dataclass(frozen=True)
class JournalOutcome:
    journal: Path
    action: str                 # "recovered" | "cleaned" (leftovers of a complete take) | "quarantined"
    path: Path | None = None    # the take file (recovered / completed) or the quarantine location
    reason: str = ""


def recover_journals(takes_dir: Path, quarantine_dir: Path) -> list[JournalOutcome]:
    """Finalise every orphaned journal (its owner lock is free) and remove stray temp files; a
    journal a live process owns is not touched. Never raises for one bad journal."""
    takes_dir = Path(takes_dir)
    orphans: list[tuple[Path, OwnerLock]] = []
    with store_lock(takes_dir):
        for folder in sorted(takes_dir.glob(f"*{JOURNAL_SUFFIX}")):
            lock = OwnerLock.try_acquire(folder / OWNER_LOCK) if folder.is_dir() else None
            if lock is not None:
                orphans.append((folder, lock))
        live = {f.name for f in takes_dir.glob(f"*{JOURNAL_SUFFIX}")} - {f.name for f, _ in orphans}
        _remove_stray_temps(takes_dir, live)
    outcomes = []
    for folder, lock in orphans:
        try:
            outcomes.append(_recover_one(folder, quarantine_dir))
        finally:
            lock.release()
    return outcomes


def _remove_stray_temps(takes_dir: Path, live_journals: set[str]) -> None:
    """``<id>.h5.tmp`` of a journal no live process owns, and any review temp (those are only made
    under the store lock, which the caller holds): crash leftovers, never the only copy."""
    for tmp in takes_dir.glob(f"*.h5{TMP_SUFFIX}"):
        if tmp.name[:-len(".h5" + TMP_SUFFIX)] + JOURNAL_SUFFIX not in live_journals:
            tmp.unlink(missing_ok=True)
    for tmp in takes_dir.glob(f"*.h5{REVIEW_TMP_SUFFIX}"):
        tmp.unlink(missing_ok=True)


def _recover_one(folder: Path, quarantine_dir: Path) -> JournalOutcome:
    finished = (folder / DONE).exists()
    ticks = folder / TICKS
    if not finished and not (folder / HEADER).exists() and not (ticks.exists() and ticks.stat().st_size):
        _remove_journal(folder)          # made but never written to (a crash during creation)
        return JournalOutcome(folder, "cleaned", reason="empty journal")
    had_take = _complete(take_path(folder)) is not None
    try:
        path = finalize_journal(folder, interrupted=True, quarantine_dir=quarantine_dir)
    except (TakeError, OSError) as exc:
        why = f"journal could not be recovered: {getattr(exc, 'detail', exc)}"
        moved = quarantine(folder, quarantine_dir, why)
        return JournalOutcome(folder, "quarantined", moved, why)
    if finished or had_take:
        log.info("%s: its take %s was already complete; removed the leftover journal", folder, path.name)
        return JournalOutcome(folder, "cleaned", path, "leftovers of a finished take")
    log.warning("recovered interrupted take %s from %s", path.name, folder)
    return JournalOutcome(folder, "recovered", path, RECOVERED_REASON)
